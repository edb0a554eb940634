#!/usr/bin/env bash
# Device run BU (session 73): round 76's few-block long-K launches (one block per SM or
# fewer, 256-1024 tiles of K) put the cp.async BK 8 double buffers 0.6-0.95 log below their
# measured times. Is that run BQ/BR's cold tile load? tools/device/short_launch.py times 8
# configs cold (inputs rotated past the L2) and warm (one input set kept in the L2) with the
# sweeps' tile-multiple builds (SHORT_EDGE=0: /db is the cp.async double buffer) at
# 512x256x8192 (round 76), 256x256x8192 and 1024x256x4096 (one input set fits in the L2),
# and 2048x512x2048 (several blocks per SM): short_launch_bu.csv.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bu.sh
set -u
. tools/device/ncu_configs.sh
run_header bu
export SHORT_EDGE=0
export SHORT_SHAPES=512x256x8192,256x256x8192,1024x256x4096,2048x512x2048
export SHORT_CONFIGS=32x32x8/4x4/db,32x32x8/4x4,32x32x32/4x4/db,32x64x32/4x4/p4/db,32x64x8/8x4/p4/db,32x32x16/4x8,128x128x8/8x8,64x64x16/8x4/p4/db
timeout 500 python3 tools/device/short_launch.py $OUT > $OUT/short_launch_bu.txt 2>&1
mv $OUT/short_launch.csv $OUT/short_launch_bu.csv
tail -40 $OUT/short_launch_bu.txt
