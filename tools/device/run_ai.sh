#!/usr/bin/env bash
# Device run AI: the sweeps' timing with the 1 ms minimum hold (runner.hold_for, after run
# AG): six small batched shapes of run AF swept twice in a row, search-space order then
# reverse order, fresh inputs each time (selection_resweep_ai1.csv, _ai2.csv, with stamps).
# Do the two agree now where runs AF and AH did not? Results under $OUT.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_ai.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
SHAPES=${AI_SHAPES:-120x328x576x36,232x168x512x36,144x296x608x32,176x264x640x30,216x184x576x32,152x312x672x26}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee $OUT/gpu_ai.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_ai.txt
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout 200 python3 tools/device/acceptance.py sweep --stamps --shapes $SHAPES \
  --sweep-file selection_resweep_ai1.csv --budget-s 180 --out $OUT 2>&1 | tail -7
timeout 200 python3 tools/device/acceptance.py sweep --stamps --reverse --shapes $SHAPES \
  --sweep-file selection_resweep_ai2.csv --budget-s 180 --out $OUT 2>&1 | tail -7
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_ai.txt
wc -l $OUT/*.csv
