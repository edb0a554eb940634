#!/usr/bin/env bash
# Device run BG (session 66): where the register-staged double buffers of round 65's M
# family lose against their single buffers. Round 65 (N = 1400, K = 1200, every build
# bounds-checked) has, at M = 350 (one round, one block per SM), 32x128x32/4x4/p4/db
# measured 0.25 log slower than the model predicts while its single buffer is within 0.04;
# at two blocks per SM (32x64x32/4x4/p4 and /db) both are within 0.10. At M = 11200
# (8 rounds) 128x64x16/8x8/p4 and its /db run at the same time per round, where the model
# puts the single buffer 0.10 log slow and the /db 0.07 fast. This counts the warp states,
# the issue counters and the per-SASS stall samples (ncu_source) of those six launches:
# ncu_bg_350x1400x1200.txt, ncu_bg_11200x1400x1200.txt and their _src_ pages (gzipped).
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bg.sh
set -u
. tools/device/ncu_configs.sh
run_header bg
m=$NCU_ISSUE_METRICS
ncu_known bg .sum smsp__inst_executed_op_shared_ld l1tex__data_pipe_lsu_wavefronts_mem_shared
ncu_known bg .avg.pct_of_peak_sustained_active l1tex__data_pipe_lsu_wavefronts sm__pipe_fma_cycles_active
rm -f $OUT/ncu_bg_query.txt
ncu_source bg 350x1400x1200 32x128x32/4x4/p4/db 32x128x32/4x4/p4 32x64x32/4x4/p4/db 32x64x32/4x4/p4
ncu_source bg 11200x1400x1200 128x64x16/8x8/p4/db 128x64x16/8x8/p4
gzip -9 $OUT/ncu_bg_src_*.txt
ls -la $OUT
