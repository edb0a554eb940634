#!/usr/bin/env bash
# Device run BT (session 72): where a second resident block does or does not hide a
# cp.async double buffer's fragment wait. ncu's copy and issue counters and warp states
# (copy_metrics) of builds whose device SASS reads the fragments 0-2 FMAs ahead: the
# 16-warp 128x128x16/4x8/db and /8x4/db at 8192x512x2048 (about two blocks per SM, one
# round), 128x32x32/8x8/db (D 1.2, -0.15 log at four blocks per SM) and 128x32x32/4x8/db
# (D 1.7, right) at 8192x256x2048, and the per-SASS stall samples of the last two.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bt.sh
set -u
. tools/device/ncu_configs.sh
run_header bt
copy_metrics bt
ncu_configs bt 8192x512x2048 128x128x16/4x8/db 128x128x16/8x4/db 128x128x16/4x8 128x128x16/8x8/db
ncu_source bt 8192x256x2048 128x32x32/8x8/db 128x32x32/4x8/db 128x32x32/8x8 128x64x32/4x8/db
gzip -9 $OUT/ncu_bt_src_8192x256x2048.txt
ls -la $OUT
