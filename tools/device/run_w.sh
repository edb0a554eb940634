#!/usr/bin/env bash
# Device run W: registers per thread of the strided-batched entry and of the bounds-checked
# uniform build for every config of the H200 search space, as NVRTC builds them on the GPU
# machine (tools/device/batched_registers.py). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=.
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee $OUT/gpu_w.txt
python3 -c "import cuda.bindings.nvrtc as n; print('nvrtc', n.nvrtcVersion())" | tee -a $OUT/gpu_w.txt
timeout 500 python3 tools/device/batched_registers.py $OUT --gpu h200 --jobs 12 | tail -5
