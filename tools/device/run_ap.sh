#!/usr/bin/env bash
# Device run AP: round 44's worst shape (96x488x352x36, batched) against the same batch with
# no edge tile for 32x64 blocks (96x512x352x36) and a third shape (128x512x352x36): every
# config timed at the three (sweep_ap.csv; 96x488x352x36 a second time, after round 44's
# sweep), then ncu counters of the pick and its relatives at the first two.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_ap.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line ap
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_ap.txt
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout 200 python3 tools/device/acceptance.py sweep \
  --shapes 96x488x352x36,96x512x352x36,128x512x352x36 --sweep-file sweep_ap.csv \
  --budget-s 150 --out $OUT 2>&1 | tail -4
m=$NCU_ISSUE_METRICS,smsp__warps_active.max.per_cycle_active
m=$m,sm__ctas_launched.sum,sm__ctas_launched.max
m=$m,smsp__cycles_active.avg,smsp__cycles_active.max,dram__bytes_read.sum,lts__t_bytes.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
for s in 96x488x352x36 96x512x352x36; do
  ncu_configs ap $s 32x64x16/8x8/p4/db 32x64x16/8x8/p4 32x64x8/8x4/p4 32x128x32/8x4/p4/db
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_ap.txt
ls -la $OUT
