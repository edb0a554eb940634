#!/usr/bin/env bash
# Device run AF: held-out round 39 (tools/device/run_f.sh; its ranking is committed first),
# then a re-sweep of earlier rounds' shapes in reverse search-space order, with fresh inputs
# (selection_resweep_af.csv): how far a second measurement's best moves from the first's,
# i.e. the top-1 / top-3 a perfect predictor of one sweep would score against another.
#   GEMMMODEL_COMMIT=<sha> HELDOUT_SHAPES=<round 39 shapes> RESWEEP_SHAPES=<swept shapes> \
#     bash tools/device/run_af.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
ROUND=heldout39 SWEEP_BUDGET=${SWEEP_BUDGET:-150} bash tools/device/run_f.sh
timeout 330 python3 tools/device/acceptance.py sweep --shapes "${RESWEEP_SHAPES}" --reverse \
  --sweep-file selection_resweep_af.csv --budget-s ${RESWEEP_BUDGET:-300} --out $OUT 2>&1 | tail -20
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader \
  | tee $OUT/gpu_af.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_af.txt
wc -l $OUT/*.csv
