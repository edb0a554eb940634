#!/usr/bin/env bash
# Device run AE (session 41): does the bounds-checked build's whole code (54-87 KiB against
# 24-27 KiB for the plain build) slow its interior blocks? The model's instruction-fetch
# floor (twenty-third change) takes the build's whole code, so at non-multiple single shapes
# it prices 128x256x16/8x8/p4 (the measured best at eight such shapes) 16-18 % too slow
# (eta_fetch 0.61 at 54.5 KiB, 4 warps per scheduler), where the main loop is 20 KiB.
# (1) per-block stamps (tools/device/tail_stamps.py): the plain and the bounds-checked
#     (+edge) builds at 2048x2048x6144 (no edge tile: every block runs the unchecked path),
#     and the bounds-checked build at 2000x2000x6000 (edge and interior blocks);
# (2) ncu warp states (no_instruction stalls per issue) of the same launches.
# Results under $OUT (tail_stamps_ae.json, ncu_ae_<shape>.txt, gpu_ae.txt).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line ae
CONFIGS=128x256x16/8x8/p4,128x256x16/8x8,64x64x16/8x4/p4/db,128x64x16/8x8/p4/db,128x128x16/8x8/p4
timeout 300 python3 tools/device/tail_stamps.py $OUT 2048x2048x6144:$CONFIGS \
  2048x2048x6144+edge:$CONFIGS 2000x2000x6000:$CONFIGS 2>&1 | tail -40
mv $OUT/tail_stamps.json $OUT/tail_stamps_ae.json
m=$NCU_ISSUE_METRICS
ncu_configs ae 2048x2048x6144 ${CONFIGS//,/ }
ncu_configs ae 2000x2000x6000 ${CONFIGS//,/ }
ls -la $OUT
