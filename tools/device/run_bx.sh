#!/usr/bin/env bash
# Device run BX (session 75): the instruction-fetch floor at one warp per scheduler against
# K. Run BW's ncu counted no fetch stall for batched BK 32 8x4 builds of 73-97 KiB at K
# 4096-6144, run BP 0.4-0.8 warps per issue at K = 96, and the model's whole-code floor is
# right at short K and 0.12 log too slow past 64 tiles per block (docs/model.md "Session
# 75"). Here one round of 132 batched 64x64 blocks (one per SM) at K = 64 ... 8192 for
# 64x64x32/8x4/p4/db (one warp per scheduler) and 64x64x32/4x4/p4/db (two): times
# (short_launch_bx.csv; one input set does not fit in the L2 past K = 2048, so the cold
# time is the one to use) and ncu warp states of each launch (ncu_bx_<shape>.txt).
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bx.sh
set -u
. tools/device/ncu_configs.sh
run_header bx
C="64x64x32/8x4/p4/db 64x64x32/4x4/p4/db"
S=""
for k in 64 128 256 512 1024 2048 4096 8192; do S="$S 64x64x${k}x132"; done
export SHORT_CONFIGS=${C// /,} SHORT_EDGE=0 SHORT_SHAPES=$(echo $S | tr ' ' ',')
timeout 300 python3 tools/device/short_launch.py $OUT > $OUT/short_launch_bx.txt 2>&1
mv $OUT/short_launch.csv $OUT/short_launch_bx.csv
m=$NCU_ISSUE_METRICS
for size in $S; do
  ncu_configs bx $size $C
done
tail -17 $OUT/short_launch_bx.txt
