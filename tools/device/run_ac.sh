#!/usr/bin/env bash
# Device run AC: the FMA issue rate of a straight-line FFMA loop against its code size
# (tools/device/icache.py, kernels/micro/icache.cu): where the loop no longer runs from the
# instruction cache. Run AB found 45 % of the warp samples of 64x64x32/8x8/p4/db (batched
# entry, ~147 KiB of code) at 176x104x448x40 on stall_no_inst. Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=.
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_ac.txt
timeout 500 python3 tools/device/icache.py $OUT 2>&1 | tail -45
# Warp states of plain (cp.async) builds with ~36 KiB and ~24 KiB main loops at one warp per
# scheduler (1024x1024x16384: 128 blocks of 4 warps), the BK 32 one 1.4x slower than the model
. tools/device/ncu_configs.sh
m=$NCU_ISSUE_METRICS
export GEMMMODEL_CUBIN_CACHE=/tmp/cubins
ncu_configs ac 1024x1024x16384 64x128x32/8x8/db 64x128x16/8x8/p4/db 64x128x32/8x8/p4
