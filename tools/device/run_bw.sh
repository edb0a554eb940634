#!/usr/bin/env bash
# Device run BW (session 75): two questions the last rounds left open.
# 1. Sharers (session 74, next lead 2): run BV found batched launches at four to eight 32x32
#    blocks per SM pay the cold tile load and 2-D launches there do not. Here four 32x32
#    blocks per SM (528 blocks on the H200's 132 SMs) in one round, with each A and B tile
#    read by 1, 2, 4 or 22-24 blocks: batched 32x32x4096x528, 64x64x4096x132,
#    128x128x4096x33 and 2-D 768x704x4096, cold (inputs rotated past the L2) and warm (one
#    input set; only the 2-D one fits in the L2). Batched launches run the register-staged
#    /db, 2-D tile multiples the cp.async one (SHORT_EDGE=0), so 768x704x4096 is timed a
#    second time with the bounds-checked (register-staged) builds (SHORT_EDGE=1):
#    short_launch_bw.csv, short_launch_bw_edge.csv.
# 2. Round 79's BK 32 builds at one warp per scheduler, predicted 0.16-0.46 log too slow
#    (the batched ones at an instruction-fetch floor of eta 0.41, the 2-D ones not): ncu warp
#    states and issue counters of nine of its launches, each once (ncu_bw_<shape>.txt).
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bw.sh
set -u
. tools/device/ncu_configs.sh
run_header bw
C="32x32x8/8x4/p4/db,32x32x8/4x4/db,32x32x16/4x4/p4/db,32x32x32/4x4/db,32x32x8/8x4/p4"
export SHORT_CONFIGS=$C SHORT_EDGE=0
export SHORT_SHAPES=32x32x4096x528,64x64x4096x132,128x128x4096x33,768x704x4096
timeout 300 python3 tools/device/short_launch.py $OUT > $OUT/short_launch_bw.txt 2>&1
mv $OUT/short_launch.csv $OUT/short_launch_bw.csv
export SHORT_EDGE=1 SHORT_SHAPES=768x704x4096
timeout 120 python3 tools/device/short_launch.py $OUT > $OUT/short_launch_bw_edge.txt 2>&1
mv $OUT/short_launch.csv $OUT/short_launch_bw_edge.csv
m=$NCU_ISSUE_METRICS
for job in "96x64x6144x30 32x32x32/4x4/p4/db 32x32x32/8x4/p4/db 32x64x32/4x4/p4/db 32x64x32/8x4/p4/db" \
           "128x64x4096x40 64x64x32/4x4/p4/db 64x64x32/8x4/p4/db" \
           "704x448x4096 32x32x32/4x4/p4/db 32x32x32/8x4/p4/db 32x64x32/8x4/p4/db"; do
  set -- $job; size=$1; shift
  # compile outside ncu first (NVRTC of a batched BK 32 build takes seconds)
  timeout 120 python3 tools/device/ncu_launch.py configs --size $size "$@" | tail -1
  ncu_configs bw $size "$@"
done
tail -22 $OUT/short_launch_bw.txt
tail -6 $OUT/short_launch_bw_edge.txt
