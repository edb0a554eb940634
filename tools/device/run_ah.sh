#!/usr/bin/env bash
# Device run AH: three small batched shapes of run AF swept again as the sweeps run
# (acceptance.py sweep, search-space order) with each config's wall-clock start and end
# (--stamps) while nvidia-smi logs clocks and power every 100 ms (smi_ah.csv): do the slow
# stretches of run AF come with the clocks? Results under $OUT.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_ah.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee $OUT/gpu_ah.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_ah.txt
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 100 > $OUT/smi_ah.csv 2>&1 &
SMI=$!
date +%s.%N > $OUT/smi_ah_start_unix.txt
timeout 240 python3 tools/device/acceptance.py sweep --stamps \
  --shapes ${AH_SHAPES:-120x328x576x36,232x168x512x36,144x296x608x32} \
  --sweep-file selection_resweep_ah.csv --budget-s 200 --out $OUT 2>&1 | tail -5
kill $SMI
wc -l $OUT/*.csv
