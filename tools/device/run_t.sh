#!/usr/bin/env bash
# Device run T: per-block SM and start/end stamps of real template launches (tools/device/
# tail_stamps.py) where ncu run S saw equal work but unequal SM-active shares. Under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=.
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_t.txt
timeout 300 python3 tools/device/tail_stamps.py $OUT \
  3200x3200x3200:128x64x16/8x8/p4,128x128x32/8x8/p4,128x128x16/8x8/p4 \
  2200x1400x3400:64x128x16/8x4/db,64x128x32/8x4/db \
  6144x1024x2048:128x128x32/8x8/p4,128x64x16/8x8/p4
