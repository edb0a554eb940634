#!/usr/bin/env bash
# Device run BA (session 64): what does the strided-batched entry cost beyond a 2-D launch
# of the same blocks? Session 63 left the batched register-staged builds without checked
# tiles 0.15 log faster in the model than measured (batched single buffers 0.05, 2-D builds
# +0.01), worst for short launches. Each batched shape MxNxKxB is paired with the 2-D shape
# (M*B)xNxK, the B slices of A stacked: every config with BM dividing M gets the same number
# of blocks, each with the same tile work and K loop. The 2-D builds run bounds-checked
# (EDGE=1 forced), as the batched entry always is. What differs: B and C per slice (the
# batched launch reads B slices once each, the 2-D launch one B), and the grid's z index.
#   1. Every search-space config timed at both shapes of two pairs:
#        256x192x448x48 (ba_batched_a.csv) and 12288x192x448 +edge (ba_stacked_a.csv)
#        128x128x128x64 (ba_batched_b.csv) and 8192x128x128 +edge (ba_stacked_b.csv)
#   2. ncu (run AW's copy metrics, DRAM and L2 counters, warp states) of three configs at
#      the first pair: ncu_ba_256x192x448x48.txt, ncu_ba_12288x192x448.txt.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_ba.sh
set -u
. tools/device/ncu_configs.sh
run_header ba
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
sweep_file 256x192x448x48 ba_batched_a.csv 85
sweep_file 12288x192x448 ba_stacked_a.csv 85 --force-edge
sweep_file 128x128x128x64 ba_batched_b.csv 85
sweep_file 8192x128x128 ba_stacked_b.csv 85 --force-edge
copy_metrics ba
ncu_known ba .sum dram__bytes_read lts__t_sectors_srcunit_tex_op_read_lookup_hit \
  lts__t_sectors_srcunit_tex_op_read
C="64x64x16/4x8/db 32x64x32/8x4/p4/db 64x64x16/4x8"
ncu_configs ba 256x192x448x48 $C
E=""
for c in $C; do E="$E $c+edge"; done
ncu_configs ba 12288x192x448 $E
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_ba.txt
wc -l $OUT/ba_*.csv
