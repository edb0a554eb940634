#!/usr/bin/env bash
# Device run F: the held-out selection round (issue 8). Every search-space config timed at
# shapes that no sweep and no fit has used; the ranking was recorded before this ran
# (calibration/h200/selection_predictions_${ROUND}.csv; ROUND=heldout, heldout2, ...). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_f.txt
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout 420 python3 tools/device/acceptance.py sweep --shapes ${HELDOUT_SHAPES} \
  --sweep-file selection_sweep_${ROUND:-heldout}.csv --budget-s ${SWEEP_BUDGET:-380} --out $OUT 2>&1 | tail -6
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee -a $OUT/gpu_f.txt
wc -l $OUT/*.csv
