#!/usr/bin/env bash
# Device run BE (session 64): where a register-staged double buffer waits at short K. Run BA
# found the model puts these builds 0.10-0.17 log too fast at K = 448 / 128 even in 2-D
# launches, with ncu's long_scoreboard near zero and short_scoreboard 0.6-0.8 per issue.
# This counts the warp states and the per-SASS stall samples (ncu_source) of the two worst
# register-staged builds and their single buffers at run BA's stacked twin 12288x192x448,
# all bounds-checked (EDGE=1 forced): ncu_be_12288x192x448.txt and
# ncu_be_src_12288x192x448.txt.gz.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_be.sh
set -u
. tools/device/ncu_configs.sh
run_header be
m=$NCU_ISSUE_METRICS
E=""
for c in 64x32x8/8x8/p4/db 64x32x8/8x8/p4 32x64x32/8x4/p4/db 32x64x32/8x4/p4; do
  E="$E $c+edge"
done
ncu_source be 12288x192x448 $E
gzip -9 $OUT/ncu_be_src_12288x192x448.txt
ls -la $OUT
