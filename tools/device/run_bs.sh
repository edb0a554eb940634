#!/usr/bin/env bash
# Device run BS (session 72): the 16-warp cp.async double buffers. 128x128x16/4x8/db and
# /8x4/db are 0.13-0.19 log too fast in LOKO at every shape (session 71's tau diagnostic);
# their single-buffer twins and the 8-warp 128x128x16/8x8/db are not. ncu's copy and issue
# counters (copy_metrics), warp states and per-SASS stall samples of the five builds at
# 8192x256x2048 (one block per SM) and 4096^3 (two) into $OUT/ncu_bs_*.txt.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bs.sh
set -u
. tools/device/ncu_configs.sh
run_header bs
copy_metrics bs
cfgs="128x128x16/4x8/db 128x128x16/4x8 128x128x16/8x4/db 128x128x16/8x8/db 64x128x16/8x4/db"
ncu_source bs 8192x256x2048 $cfgs
ncu_configs bs 4096x4096x4096 $cfgs
gzip -9 $OUT/ncu_bs_src_8192x256x2048.txt
ls -la $OUT
