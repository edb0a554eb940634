#!/usr/bin/env bash
# Device run K: ncu counters of one-warp 8x8 blocks at a low-occupancy launch, where the
# model predicts them 2x too fast (seventh held-out round, 4000x300x3000: 625 blocks,
# ~1.2 warps per scheduler), against the measured best there (64x64x16/8x4/p4/db, 4 warps),
# a 4x4 one-warp block, the same one-warp tile without bounds checks at a similar launch
# (4096x320x3072) and at a full launch (4096^3). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line k
m=$NCU_ISSUE_METRICS,smsp__warps_active.max.per_cycle_active,smsp__warps_launched.max
ncu_configs k 4000x300x3000 32x64x8/8x8/p4/db 32x64x8/8x8/p4 64x64x16/8x4/p4/db 32x64x16/4x4/p4/db
ncu_configs k 4096x320x3072 32x64x8/8x8/p4 64x64x16/8x4/p4
ncu_configs k 4096x4096x4096 32x64x8/8x8/p4
ls -la $OUT
