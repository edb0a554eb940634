#!/usr/bin/env bash
# Device run N: the template's inner loop alone (kernels/micro/inner_loop.cu) at 1-8 warps
# per scheduler, for the lone-warp question of docs/model.md section 10 (the sweeps put
# every thread tile at w = 1 15-19 % slower than the model, and the 4x8 / 8x4 tiles at
# w = 2 14 % faster). Writes $OUT/inner_loop.json and $OUT/gpu_n.txt.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line n
timeout 400 python3 tools/device/inner_loop.py $OUT
gpu_line n_after
