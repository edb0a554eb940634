#!/usr/bin/env bash
# Device run BF (session 65): what a tile round costs a block that waits for its loads, by
# its position in the launch, with the data fresh (never touched since the 2-GiB pool last
# wrapped), rotated past the L2 as the sweep's input sets, or warm in the L2
# (tools/device/cold_touch.py, kernels/micro/cold_touch.cu): cold_touch.json.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bf.sh
set -u
. tools/device/ncu_configs.sh
run_header bf
timeout 400 python3 tools/device/cold_touch.py $OUT 2>&1 | tail -150
