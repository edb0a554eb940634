#!/usr/bin/env bash
# Device run H1: the first run on an H100 (a GPU this project had never run; issue 8 on a
# second GPU). Every search-space config timed at issue 8's nine shapes; both rankings were
# recorded before this ran (calibration/h100/selection_predictions.csv: the sm_90 spec with
# the a-priori efficiencies; selection_predictions_from_h200.csv: the H200's calibration
# carried over, gemmmodel.model.calib.transfer_calib). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
q=name,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,driver_version,memory.total,power.limit
nvidia-smi --query-gpu=$q --format=csv | tee $OUT/gpu_h1.txt
t0=$(date +%s)
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
echo "precompile $(( $(date +%s) - t0 )) s" | tee -a $OUT/gpu_h1.txt
t0=$(date +%s)
timeout ${SWEEP_TIMEOUT:-400} python3 tools/device/acceptance.py sweep \
  --sweep-file selection_sweep.csv --budget-s ${SWEEP_BUDGET:-360} --out $OUT 2>&1 | tail -12
echo "sweep $(( $(date +%s) - t0 )) s" | tee -a $OUT/gpu_h1.txt
nvidia-smi --query-gpu=$q --format=csv,noheader | tee -a $OUT/gpu_h1.txt
wc -l $OUT/*.csv
