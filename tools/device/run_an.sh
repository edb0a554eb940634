#!/usr/bin/env bash
# Device run AN: ncu counters at round 41's worst shape for the model (104x296x512x40): the
# model's pick (64x128x32/8x8/p4, two 64x128 blocks per SM, measured 20 % slower than
# predicted) against the measured best (128x128x32/8x8/p4, one 128x128 block per SM) and
# their 8x4 / BK 16 relatives.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_an.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line an
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_an.txt
m=$NCU_ISSUE_METRICS,smsp__warps_active.max.per_cycle_active,smsp__warps_launched.max
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__ctas_launched.sum,smsp__cycles_active.avg
m=$m,dram__bytes_read.sum,lts__t_bytes.sum
ncu_configs an 104x296x512x40 64x128x32/8x8/p4 128x128x32/8x8/p4 64x128x16/8x4/p4/db \
  128x128x32/8x4/p4 64x128x16/8x8/p4/db
ls -la $OUT
