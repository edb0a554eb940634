#!/usr/bin/env bash
# Device run BR (session 71): does a long one-round 2-D launch pay run BQ's cold cost per
# tile? tools/device/short_launch.py times 6 configs cold (inputs rotated past the L2) and
# warm (one input set kept in the L2) at 2-D shapes whose one input set fits in the L2:
# 2048x256x2048 (one or two blocks per SM, 64-256 tiles of K), 256x256x8192 (few blocks,
# long K), 2048x256x512, 8192x256x256 and 1024x1024x1024 (bounds-checked builds, as
# short_launch.py times 2-D shapes): short_launch_br.csv.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_br.sh
set -u
. tools/device/ncu_configs.sh
run_header br
export SHORT_SHAPES=2048x256x2048,256x256x8192,2048x256x512,8192x256x256,1024x1024x1024
export SHORT_CONFIGS=64x64x16/8x4/p4,64x64x16/8x4/p4/db,64x64x8/8x4/p4,64x64x32/8x4/p4,32x32x16/4x4/p4,128x64x16/8x8/p4
timeout 500 python3 tools/device/short_launch.py $OUT > $OUT/short_launch_br.txt 2>&1
mv $OUT/short_launch.csv $OUT/short_launch_br.csv
tail -40 $OUT/short_launch_br.txt
