#!/usr/bin/env bash
# Device run AM: round 41's six shapes swept a second time (reverse search-space order,
# fresh inputs), and ncu counters of the small batched 4x4 picks against their measured best
# and their 4x8 / 8x4 twins at the two small batched shapes the model missed with a 4x4 pick
# (round 41's 248x152x384x30, round 40's 216x120x640x42).
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_am.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line am
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_am.txt
SHAPES="248x152x384x30,104x296x512x40,1100x4600x1300,2304x4352x1280,384x6144x2560,4500x900x3600"
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout 200 python3 tools/device/acceptance.py sweep --stamps --reverse \
  --shapes "$SHAPES" --sweep-file selection_resweep_am.csv --budget-s 190 \
  --out $OUT 2>&1 | tail -2
m=$NCU_ISSUE_METRICS,smsp__warps_active.max.per_cycle_active,smsp__warps_launched.max
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__ctas_launched.sum,smsp__cycles_active.avg
ncu_configs am 248x152x384x30 32x32x16/4x4/p4 32x32x16/4x8/p4 32x32x16/8x4/p4 \
  64x64x16/8x4/p4 64x64x16/4x4/p4 64x64x16/4x8/p4
ncu_configs am 216x120x640x42 32x32x16/4x4/p4 32x32x16/8x4/p4 64x64x16/8x4/p4 64x64x16/4x4/p4
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_am.txt
wc -l $OUT/*.csv
