#!/usr/bin/env bash
# Device run H3 (after H2, same warm H100): the template and batched suites (the fit's
# training set on the H200: kernels.csv + template.csv) and the loaded-latency tables the
# model reads (LDS and L2 under load), for calibration/h100/.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
q=name,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,driver_version
cal=/tmp/cal3; mkdir -p "$cal"
nvidia-smi --query-gpu=$q --format=csv | tee $OUT/gpu_h3.txt
t0=$(date +%s)
timeout 440 python3 -m gemmmodel calibrate --suite template,batched --out "$cal" --budget-s 400 2>&1 \
  | grep -v "^\[" | tail -8
echo "calibrate $(( $(date +%s) - t0 )) s" | tee -a $OUT/gpu_h3.txt
tar czf $OUT/cal_h3.tgz -C /tmp cal3
timeout 50 python3 tools/device/smem_latency_loaded.py $OUT 2>&1 | tail -3
timeout 50 python3 tools/device/global_latency_loaded.py $OUT 2>&1 | tail -3
nvidia-smi --query-gpu=$q --format=csv,noheader | tee -a $OUT/gpu_h3.txt
