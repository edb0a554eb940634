#!/usr/bin/env bash
# Device run AW (session 59): are a cp.async double buffer's copies in series with its
# issue at the fitted shapes too? Run AV found, at 8192x256x8192 for five cp.async builds
# with one or two blocks per SM, that the cycles an SM does not issue per tile iteration
# are the copies' shared-memory write wavefronts plus about 400 (docs/model.md "Session
# 59"). This run counts the same at two of the fitted shapes (calibration/h200/
# template.csv), for cp.async builds with more blocks per SM and every depth:
#   4096x4096x4096 and 8192x256x2048, each config launched once (ncu_aw_<size>.txt);
#   shared-memory wavefronts split into loads (the fragment reads) and the rest.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_aw.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line aw
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_aw.txt
copy_metrics aw
ncu_configs aw 4096x4096x4096 128x64x8/8x8/db 64x64x8/8x8/db 32x64x16/8x8/db 64x32x16/8x8/db \
  128x128x8/8x8/db 64x64x16/8x8/db 128x64x16/8x4/db 64x256x16/8x8/db 128x128x16/8x8/db \
  32x64x8/8x4/db
ncu_configs aw 8192x256x2048 128x128x16/4x8/db 32x32x32/4x8/db 64x64x16/8x4/db 64x256x16/8x8/db \
  128x128x16/8x8/db 256x64x16/8x8/db 32x64x16/8x4/db 128x32x8/8x8/db
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_aw.txt
ls -la $OUT
