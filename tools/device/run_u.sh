#!/usr/bin/env bash
# Device run U: per-block stamps (tools/device/tail_stamps.py) of the same bounds-checked
# builds at 3000x1000x1024 (edge tiles in the last block row and column) and at
# 3072x1024x1024 (+edge: EDGE=1 forced, no edge tile). The LOKO rows at 3000x1000x1024 are
# predicted 0.12 log too fast on average while the same builds run 0.17 log slower per
# useful FLOP there than at 3072x1024x1024 (run P): is that the edge blocks, their place
# in the launch, or every block? Under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=.
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_u.txt
CONFIGS=64x128x32/8x4/db,64x128x32/8x4,128x64x32/8x4,64x64x16/8x4,64x32x32/8x8/db,64x64x8/8x8/db,32x32x16/4x4,128x128x16/8x8,32x64x8/4x8/db,128x32x16/8x4
timeout 400 python3 tools/device/tail_stamps.py $OUT 3000x1000x1024:$CONFIGS 3072x1024x1024+edge:$CONFIGS
