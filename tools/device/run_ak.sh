#!/usr/bin/env bash
# Device run AK: the three batched shapes whose launches run under 15 us (64x64x32x30,
# 128x128x64x20, 96x96x128x48) timed again with the checked hold (runner.HeldTimer), twice
# in a row (search-space order, then reversed; fresh inputs each). Run AJ timed their
# groups of ~50 launches behind a 1-1.6 ms hold that the host's enqueue outlasted.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_ak.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
SHAPES="${AK_SHAPES:-64x64x32x30,128x128x64x20,96x96x128x48}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_ak.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_ak.txt
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout ${AK_TIMEOUT:-250} python3 tools/device/acceptance.py sweep --stamps --shapes "$SHAPES" \
  --sweep-file selection_resweep_ak1.csv --budget-s ${AK_BUDGET:-240} --out $OUT 2>&1 | tail -2
timeout ${AK_TIMEOUT:-250} python3 tools/device/acceptance.py sweep --stamps --reverse \
  --shapes "$SHAPES" --sweep-file selection_resweep_ak2.csv --budget-s ${AK_BUDGET:-240} \
  --out $OUT 2>&1 | tail -2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_ak.txt
wc -l $OUT/*.csv
python3 - <<'PY'
import os, pandas as pd
for f in ("selection_resweep_ak1.csv", "selection_resweep_ak2.csv"):
    d = pd.read_csv(os.path.join(os.environ["OUT"], f))
    print(f, d.groupby("shape").agg(n=("config", "size"), best_us=("median_s", "min"),
          noisy=("noisy", "mean"), retimed=("hold_retimed", "sum"),
          host_bound=("host_bound", "sum"), hold_ms=("hold_s", "max")).to_string())
PY
