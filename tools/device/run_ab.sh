#!/usr/bin/env bash
# Device run AB: the twenty-fourth round's two misses (docs/selection.md): 8x8 thread tiles
# in blocks of one or two warps, one warp per scheduler, ran 0.54-0.60 of their predicted
# speed while the 8x4 and 4x4 tiles at the same shapes were within 10 %.
#   1100x900x5200: 32x64x8/8x8/p4/db (picked, 69 %), 32x64x16/8x4/p4 (best)
#   176x104x448x40: 64x64x32/8x8/p4/db (picked, 56 %), 64x64x32/8x4/p4 (best)
# (1) per-block stamps (tools/device/tail_stamps.py) at 1100x900x5200 and, with the
#     bounds-checked build forced, at 1088x896x5200 (no edge tile): are the edge blocks
#     (checked loads every tile) the slow ones, or every block?
# (2) ncu warp-state samples per SASS instruction (SourceCounters) and the warp-state and
#     scheduler sections for the picks and the best at both shapes.
# Results under $OUT (tail_stamps_ab.json, ncu_ab_<shape>.txt, ncu_ab_src_<shape>.txt).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line ab
CONFIGS=32x64x8/8x8/p4/db,32x64x8/8x8/p4,32x64x16/8x8/p4,32x64x16/8x4/p4,32x64x8/8x4/p4/db,64x32x8/8x8/p4/db
timeout 240 python3 tools/device/tail_stamps.py $OUT 1100x900x5200:$CONFIGS 1088x896x5200+edge:$CONFIGS \
  2>&1 | tail -40
mv $OUT/tail_stamps.json $OUT/tail_stamps_ab.json
m=$NCU_ISSUE_METRICS
ncu_source ab 1100x900x5200 32x64x8/8x8/p4/db 32x64x16/8x4/p4
ncu_source ab 176x104x448x40 64x64x32/8x8/p4/db 64x64x32/8x4/p4
ls -la $OUT
