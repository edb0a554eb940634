#!/usr/bin/env bash
# Device runs H4 and H7: the H100's held-out rounds (ROUND=heldout, the default, run H4;
# ROUND=heldout2, run H7). Every search-space config timed at six shapes that no GPU had
# swept; three rankings were recorded before this ran
# (calibration/h100/selection_predictions_${ROUND}.csv: the H100's own calibration and fit;
# ..._from_h200_${ROUND}.csv: the H200's carried over; ..._neighbours_${ROUND}.csv: the H100
# model corrected by the H200's measured neighbours). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
q=name,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,driver_version
nvidia-smi --query-gpu=$q --format=csv | tee $OUT/gpu_${RUN:-h4}.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_${RUN:-h4}.txt
t0=$(date +%s)
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
echo "precompile $(( $(date +%s) - t0 )) s" | tee -a $OUT/gpu_${RUN:-h4}.txt
t0=$(date +%s)
timeout 330 python3 tools/device/acceptance.py sweep --shapes ${HELDOUT_SHAPES} \
  --sweep-file selection_sweep_${ROUND:-heldout}.csv --budget-s 300 --out $OUT 2>&1 | tail -8
echo "sweep $(( $(date +%s) - t0 )) s" | tee -a $OUT/gpu_${RUN:-h4}.txt
nvidia-smi --query-gpu=$q --format=csv,noheader | tee -a $OUT/gpu_${RUN:-h4}.txt
wc -l $OUT/*.csv
