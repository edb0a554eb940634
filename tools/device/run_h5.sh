#!/usr/bin/env bash
# Device run H5: the instruction-fetch table on the H100 (tools/device/icache.py at the
# grid of the H200's run AC: 19 code sizes x 1-8 warps per scheduler), the last table the
# H200 model reads that calibration/h100/ lacked. Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=.
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_h5.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_h5.txt
t0=$(date +%s)
timeout 540 python3 tools/device/icache.py $OUT 2>&1 | tail -25
echo "icache $(( $(date +%s) - t0 )) s" | tee -a $OUT/gpu_h5.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee -a $OUT/gpu_h5.txt
