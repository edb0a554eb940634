#!/usr/bin/env bash
# Device run AJ: every batched shape of the committed sweeps (rounds 1-39, timed with the
# 60 us hold) timed again with the 1 ms minimum hold (runner.hold_for), search-space order,
# fresh inputs. Two calls (the device keeps nothing between calls but the warm cubin cache):
#   GEMMMODEL_COMMIT=<sha> AJ_SHAPES=<first half> AJ_FILE=selection_resweep_aj1.csv bash tools/device/run_aj.sh
#   GEMMMODEL_COMMIT=<sha> AJ_SHAPES=<second half> AJ_FILE=selection_resweep_aj2.csv bash tools/device/run_aj.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_aj.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_aj.txt
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout ${AJ_TIMEOUT:-560} python3 tools/device/acceptance.py sweep --stamps --shapes "$AJ_SHAPES" \
  --sweep-file "$AJ_FILE" --budget-s ${AJ_BUDGET:-540} --out $OUT 2>&1 | tail -3
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_aj.txt
wc -l $OUT/*.csv
