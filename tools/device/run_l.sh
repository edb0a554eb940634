#!/usr/bin/env bash
# Device run L: the whole template search space at low occupancy, for the lone-warp question
# (docs/model.md section 10, after the thirteenth change): square launches of 1024, 1536 and
# 2048 (64x128 tiles: 128, 288 and 512 blocks on 132 SMs) at two K each, so that the cost
# per tile iteration can be separated from the per-block fixed cost. Every shape is a
# multiple of every tile (plain builds). Not a selection round: no ranking is recorded.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_l.txt
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout 420 python3 tools/device/acceptance.py sweep \
  --shapes 1024x1024x2048,1024x1024x8192,1536x1536x2048,1536x1536x8192,2048x2048x8192 \
  --sweep-file occupancy_sweep.csv --budget-s 380 --out $OUT 2>&1 | tail -6
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee -a $OUT/gpu_l.txt
wc -l $OUT/*.csv
