#!/usr/bin/env bash
# Device run AL: round 40's six shapes swept a second time with the checked hold (reverse
# search-space order, fresh inputs), to tell the model's misses there from the sweep's.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_al.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
SHAPES="${AL_SHAPES:-168x232x560x38,216x120x640x42,2300x2900x1500,3500x1300x2700,3328x2304x2560,7168x384x3072}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_al.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_al.txt
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout ${AL_TIMEOUT:-300} python3 tools/device/acceptance.py sweep --stamps --reverse \
  --shapes "$SHAPES" --sweep-file selection_resweep_al.csv --budget-s ${AL_BUDGET:-290} \
  --out $OUT 2>&1 | tail -2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_al.txt
wc -l $OUT/*.csv
