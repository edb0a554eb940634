#!/usr/bin/env bash
# Device run AY (session 61): why a bounds-checked build (EDGE=1) runs a lone block much
# slower than its plain build (EDGE=0) does, while two or three blocks per SM run both at the
# same rate. Run U's stamps at 3072x1024x1024 (forced EDGE=1): 128x64x32/8x4's last-round
# blocks, alone on their SMs, take 135 us for 32 tiles (4.2 us a tile); run L's plain build
# alone at 1024x1024x8192 takes 2.8 us a tile; the model puts both near 3.1 us.
# 1. Every search-space config timed at 1024x1024x8192 (128 blocks of 128x64: one per SM for
#    most configs) as its plain build and as its forced EDGE=1 build (as run P did at
#    3072x1024x1024 and 2048^3): ay_plain.csv, ay_edge.csv.
# 2. ncu warp states and per-SASS stall samples of three pairs at that shape (plain and
#    `+edge`): ncu_ay_1024x1024x8192.txt, ncu_ay_src_1024x1024x8192.txt.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_ay.sh
set -u
. tools/device/ncu_configs.sh
run_header ay
SIZE=1024x1024x8192
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout 230 python3 tools/device/acceptance.py sweep --shapes $SIZE \
  --sweep-file ay_plain.csv --budget-s 210 --out $OUT 2>&1 | tail -2
timeout 230 python3 tools/device/acceptance.py sweep --shapes $SIZE --force-edge \
  --sweep-file ay_edge.csv --budget-s 210 --out $OUT 2>&1 | tail -2
m=$NCU_ISSUE_METRICS
C="128x64x32/8x4 64x128x32/8x4/db 64x128x32/4x8"
E=""
for c in $C; do E="$E $c $c+edge"; done
python3 tools/device/ncu_launch.py configs --size $SIZE $E | tail -1
ncu_source ay $SIZE $E
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_ay.txt
python3 tools/device/edge_pairs.py $OUT/ay_plain.csv $OUT/ay_edge.csv
