#!/usr/bin/env bash
# Device run Z: where the register-staged BK 8 double buffer spends its time at the small
# batched shapes the model picks it for (issue 8's most frequent miss: rounds 14-23 pick
# 32x32x8/4x4/p4/db or 32x32x8/4x8/p4/db where a BK 16 single buffer or a large tile wins).
# Per-instruction warp-state samples (SourceCounters, SASS view) and the warp-state and
# scheduler sections, for the model's pick and the measured best at two shapes:
#   176x112x448x50: 32x32x8/4x4/p4/db (picked), 32x32x8/4x4/p4, 32x32x16/4x4/p4, 64x64x16/8x4/p4 (best)
#   136x200x520x44: 32x32x8/4x8/p4/db (picked), 64x256x32/8x8/p4 (best)
# Results under $OUT (ncu_z_<shape>.txt raw counters, ncu_z_src_<shape>.txt the SASS source page).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line z
m=$NCU_ISSUE_METRICS
ncu_source z 176x112x448x50 32x32x8/4x4/p4/db 32x32x8/4x4/p4 32x32x16/4x4/p4 64x64x16/8x4/p4
ncu_source z 136x200x520x44 32x32x8/4x8/p4/db 64x256x32/8x8/p4
ls -la $OUT
