#!/usr/bin/env bash
# Device run AX (session 60): a held-out check of copy_exposure (gemmmodel/model/
# copy_exposure.py). copy_exposure was fitted to the ncu cycles of runs AV and AW; this run
# counts the same for cp.async builds and shapes that neither run profiled:
#   256x8192x2048 (the mirror of AW's skinny shape) and 2048x2048x2048,
#   each config launched once (ncu_ax_<size>.txt), with the metrics of run AW.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_ax.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line ax
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_ax.txt
copy_metrics ax
ncu_configs ax 256x8192x2048 32x64x8/8x8/db 64x64x8/8x8/db 128x64x8/8x8/db 64x32x16/8x8/db \
  32x32x32/4x8/db 64x64x32/8x8/db 128x128x16/8x4/db 64x128x16/8x4/db 32x128x8/8x8/db \
  64x32x8/4x8/db
ncu_configs ax 2048x2048x2048 64x64x8/8x8/db 128x64x16/8x8/db 64x128x32/8x4/db 32x64x8/8x4/db \
  128x128x8/8x8/db 64x32x32/4x8/db
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_ax.txt
ls -la $OUT
