#!/usr/bin/env bash
# Device run BQ (session 71): where does the cold first touch of run BP fade as K grows?
# tools/device/short_launch.py times 8 configs cold (inputs rotated past the L2) and warm
# (one input set kept in the L2) at a batched family 64x64xKx48, K = 64 ... 2048 (192 blocks
# of 32x32, one round) and at 8192x256xK, K = 128, 512, 2048 (bounds-checked builds, as
# short_launch.py times 2-D shapes): short_launch_bq.csv.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bq.sh
set -u
. tools/device/ncu_configs.sh
run_header bq
export SHORT_SHAPES=64x64x64x48,64x64x128x48,64x64x256x48,64x64x512x48,64x64x1024x48,64x64x2048x48,8192x256x128,8192x256x512,8192x256x2048
export SHORT_CONFIGS=32x32x16/4x4/p4,32x32x16/4x4/p4/db,32x32x32/4x4/p4,32x32x32/4x4/p4/db,64x64x16/8x4/p4,64x64x16/8x4/p4/db,64x64x32/8x4/p4,128x64x16/8x8/p4
timeout 500 python3 tools/device/short_launch.py $OUT > $OUT/short_launch_bq.txt 2>&1
mv $OUT/short_launch.csv $OUT/short_launch_bq.csv
tail -80 $OUT/short_launch_bq.txt
