#!/usr/bin/env bash
# Device run H2 (after H1, same warm H100): the microbenchmarks and the catalogue kernels
# with cuBLAS (calibrate --suite micro,kernels) for calibration/h100/, then the GPU tests.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
q=name,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,driver_version
cal=/tmp/cal; mkdir -p "$cal"
nvidia-smi --query-gpu=$q --format=csv | tee $OUT/gpu_h2.txt
t0=$(date +%s)
timeout 330 python3 -m gemmmodel calibrate --suite micro,kernels --out "$cal" --budget-s 300 2>&1 \
  | grep -v "^\[" | tail -20
echo "calibrate $(( $(date +%s) - t0 )) s" | tee -a $OUT/gpu_h2.txt
nvidia-smi --query-gpu=$q --format=csv,noheader | tee -a $OUT/gpu_h2.txt
tar czf $OUT/cal_h2.tgz -C /tmp cal
timeout 170 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/ 2>&1 | tail -4 | tee $OUT/gpu_tests_h2.txt
