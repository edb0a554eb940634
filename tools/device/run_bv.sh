#!/usr/bin/env bash
# Device run BV (session 74): the cold tile load at two or more blocks per SM. Run BU found
# 180-250 ns a tile cold at one and two 32x32 blocks per SM (1024x256x4096); the model's
# cold.py term is on below 1.5 resident blocks only, and held-out rounds put BK 8 double
# buffers too fast at 2-3 blocks per SM but not at 8. Here one round of blocks at 1, 2, 3,
# 4, 6 and 8 blocks per SM (batched 64x64 tiles of K 4096: 33-264 batches give 132-1056
# blocks of 32x32 on the H200's 132 SMs; a 32x64 build gets half) and two 2-D launches of
# about 3 and 8 32x32 blocks per SM, each timed cold (inputs rotated past the L2) and warm
# (one input set): short_launch_bv.csv.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bv.sh
set -u
. tools/device/ncu_configs.sh
run_header bv
export SHORT_EDGE=0
export SHORT_SHAPES=64x64x4096x33,64x64x4096x66,64x64x4096x99,64x64x4096x132,64x64x4096x198,64x64x4096x264,768x512x4096,1024x1024x2048
export SHORT_CONFIGS=32x32x8/4x4/db,32x32x8/4x8/p4/db,32x32x8/8x4/p4/db,32x32x16/4x4/p4/db,32x32x32/4x4/db,32x64x8/8x4/p4/db
timeout 560 python3 tools/device/short_launch.py $OUT > $OUT/short_launch_bv.txt 2>&1
mv $OUT/short_launch.csv $OUT/short_launch_bv.csv
tail -40 $OUT/short_launch_bv.txt
