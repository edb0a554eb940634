#!/usr/bin/env bash
# Device run BK (session 68): where a register-staged double buffer's last edge block ends a
# launch. Rounds 68 and 69's best config, 64x64x16/8x4/p4/db, is predicted 0.10-0.17 log too
# slow at its bounds-checked build, most of it the model's t_edge (96 of 357 us at
# 1100x1100x3000, one round of blocks); edge_tail_scale_db comes from eleven stamped
# launches of two or more rounds. Per-block stamps (tools/device/tail_stamps.py) of it, its
# single buffer and round 68's pick 64x32x16/4x4/db with its single buffer, at
# 1100x1100x3000 (one round), 1800x1800x1600 (two) and 3600x1800x1600 (four). Written as
# block_stamps_bk.json (not tail_stamps*.json: these are not edge_tail_scale's training
# data). GEMMMODEL_COMMIT=<sha> bash tools/device/run_bk.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line bk
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_bk.txt
CONFIGS=64x64x16/8x4/p4/db,64x64x16/8x4/p4,64x32x16/4x4/db,64x32x16/4x4
timeout 400 python3 tools/device/tail_stamps.py $OUT 1100x1100x3000:$CONFIGS \
  1800x1800x1600:$CONFIGS 3600x1800x1600:$CONFIGS 2>&1 | tail -20
mv $OUT/tail_stamps.json $OUT/block_stamps_bk.json
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_bk.txt
ls -la $OUT
