#!/usr/bin/env bash
# Device run AG: what moves the times of small batched launches between sweeps (run AF)?
# tools/device/batched_timing.py times a few batched configs behind the sweeps' short hold
# and behind a 1 ms hold, alternating, with the host's enqueue time per launch, while
# nvidia-smi logs the clocks every 50 ms (smi_ag.csv). Results under $OUT.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_ag.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee $OUT/gpu_ag.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_ag.txt
nproc >> $OUT/gpu_ag.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 50 > $OUT/smi_ag.csv 2>&1 &
SMI=$!
timeout 300 python3 tools/device/batched_timing.py --out $OUT --seconds ${SECONDS_AG:-120} 2>&1 | tail -24
kill $SMI
wc -l $OUT/*.csv
