#!/usr/bin/env bash
# Device run P: what the bounds-checked build (EDGE=1) costs on interior tiles. Every
# search-space config timed at tile-multiple shapes twice: its plain build (EDGE=0, cp.async
# double buffer on sm_90) and its bounds-checked build (EDGE=1: register-staged double
# buffer, the fast/checked branch in the loop), which shapes that are not a tile multiple
# and batched launches run. No block of these shapes takes the checked path, so the ratio
# is the fast path's own cost. Results under $OUT (edge_cost_plain.csv, edge_cost_edge.csv).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
SHAPES="${P_SHAPES:-3072x1024x1024,2048x2048x2048}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_p.txt
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout 200 python3 tools/device/acceptance.py sweep --shapes $SHAPES \
  --sweep-file edge_cost_plain.csv --budget-s 180 --out $OUT 2>&1 | tail -3
timeout 200 python3 tools/device/acceptance.py sweep --shapes $SHAPES --force-edge \
  --sweep-file edge_cost_edge.csv --budget-s 180 --out $OUT 2>&1 | tail -3
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee -a $OUT/gpu_p.txt
python3 tools/device/edge_pairs.py $OUT/edge_cost_plain.csv $OUT/edge_cost_edge.csv
