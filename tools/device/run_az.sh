#!/usr/bin/env bash
# Device run AZ (session 62): does the launch end with the CU that holds the most edge blocks?
# Run U's stamps at 3000x1000x1024 show SMs with k = 1, 2, 3 edge blocks in one round ending
# later the more they hold (64x64x8/8x8/db: 194, 200, 231 us against 164 us with none), and
# the high-occupancy builds (BK 8, many blocks per SM) are the ones the model put too fast
# there. A held-out check of that term: every search-space config timed at two new shapes
# with edge blocks (bounds-checked builds, EDGE=1) and at the tile-multiple twin of each
# with EDGE=1 forced (no edge block), as run P did at 3000x1000x1024 / 3072x1024x1024:
#   2000x2000x1024 (az_edge_a.csv) against 2048x2048x1024+edge (az_twin_a.csv)
#   1000x3000x2048 (az_edge_b.csv) against 1024x3072x2048+edge (az_twin_b.csv)
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_az.sh
set -u
. tools/device/ncu_configs.sh
run_header az
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
sweep_file 2000x2000x1024 az_edge_a.csv 125
sweep_file 2048x2048x1024 az_twin_a.csv 125 --force-edge
sweep_file 1000x3000x2048 az_edge_b.csv 125
sweep_file 1024x3072x2048 az_twin_b.csv 125 --force-edge
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_az.txt
wc -l $OUT/az_*.csv
