#!/usr/bin/env bash
# Device run B: cubin precompile, the issue-8 selection sweep (every config x 9 shapes,
# resumable), every config's correctness at a non-multiple shape, the issue-5 template grid.
# Pass SWEEP_IN=path/to/selection_sweep.csv to resume a sweep. Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
start=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_b.txt
[ -n "${SWEEP_IN:-}" ] && cp "$SWEEP_IN" $OUT/selection_sweep.csv
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
shapes=2048x2048x2048,4096x4096x4096,8192x256x8192,256x8192x4096,1024x1024x16384,64x64x32x30,128x128x64x20,128x512x256x10,8192x8192x8192
left=$(( ${SWEEP_BUDGET:-330} ))
timeout $((left + 60)) python3 tools/device/acceptance.py sweep --shapes $shapes --budget-s $left --out $OUT 2>&1 | grep -v "^\[fuzz" | tail -12
timeout 90 python3 tools/device/acceptance.py edges --out $OUT 2>&1 | tail -1
used=$(( $(date +%s) - start )); rest=$(( 540 - used ))
if [ $rest -gt 40 ]; then
  timeout $((rest + 20)) python3 -m gemmmodel calibrate --suite template --out /tmp/cal --budget-s $((rest - 20)) 2>&1 | grep -v "^\[" | tail -6
  tar czf $OUT/cal_b.tgz -C /tmp cal
fi
wc -l $OUT/*.csv
