#!/usr/bin/env bash
# Device run AQ (session 49): round 47's register double-buffer lead. At 3600x9000x700 and
# 4400x3600x1400 (bounds-checked builds) 128x128x8/8x8/p4/db ran 1041 and 1050 us where the
# model predicted 1348 and 1340 (its instruction-fetch floor: 3591 instructions of code at
# 4 warps per scheduler, eta_fetch 0.62), while its single-buffer twin was predicted within
# 2 %. Which is it: fetch stalls the model charges but the GPU does not pay, or an issue
# pipe that the /db build beats?
# (1) per-block stamps (tools/device/tail_stamps.py) of the two pairs (with and without /p4)
#     at 3600x9000x700 and with the bounds-checked build forced at 3584x8960x704 (every block
#     takes the unchecked path);
# (2) ncu warp states and issue counters of the same four launches at 3600x9000x700.
# Results under $OUT (tail_stamps_aq.json, ncu_aq_3600x9000x700.txt, gpu_aq.txt).
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_aq.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line aq
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_aq.txt
CONFIGS=128x128x8/8x8/p4,128x128x8/8x8/p4/db,128x128x8/8x8,128x128x8/8x8/db
timeout 300 python3 tools/device/tail_stamps.py $OUT 3600x9000x700:$CONFIGS \
  3584x8960x704+edge:$CONFIGS 2>&1 | tail -30
mv $OUT/tail_stamps.json $OUT/tail_stamps_aq.json
m=$NCU_ISSUE_METRICS
ncu_configs aq 3600x9000x700 ${CONFIGS//,/ }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_aq.txt
ls -la $OUT
