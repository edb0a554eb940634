#!/usr/bin/env bash
# Device run H6 (H100): (1) registers per thread of the strided-batched entry and of the
# bounds-checked build for every search-space config as the GPU machine's NVRTC builds them
# (tools/device/batched_registers.py, the H200's run W): calibration/h100 had none, so the
# H100 model took nvcc's table for batched launches (32x32x32/4x4/p4/db: 168 registers
# against NVRTC's 245 on the H200); (2) the cost of one global copy or load per warp
# instruction against the rows its lanes span, in the template's access pattern
# (tools/device/cp_async_rows.py). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
q=name,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,driver_version
nvidia-smi --query-gpu=$q --format=csv | tee $OUT/gpu_h6.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_h6.txt
python3 -c "import cuda.bindings.nvrtc as n; print('nvrtc', n.nvrtcVersion())" | tee -a $OUT/gpu_h6.txt
t0=$(date +%s)
timeout 120 python3 tools/device/cp_async_rows.py $OUT 2>&1 | tail -40
echo "cp_async_rows $(( $(date +%s) - t0 )) s" | tee -a $OUT/gpu_h6.txt
t0=$(date +%s)
timeout 420 python3 tools/device/batched_registers.py $OUT --gpu h100 --jobs 14 | tail -3
echo "build registers $(( $(date +%s) - t0 )) s" | tee -a $OUT/gpu_h6.txt
nvidia-smi --query-gpu=$q --format=csv,noheader | tee -a $OUT/gpu_h6.txt
