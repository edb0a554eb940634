#!/usr/bin/env bash
# Device run M: ncu counters behind two selection misses of the model (docs/model.md §10).
# (1) cp.async double buffering at a full launch: the same tile with and without /db at
#     4096^3, where /db is 8 % faster for 64x256x16/8x8/p4 (u = 2 blocks per SM) and 32 %
#     slower for 128x64x16/8x8/p4 (u = 4); the model predicts +3 % and +5 %.
# (2) lone 8x8 warps (one warp per scheduler) of the bounds-checked build at 1000^3, 2x
#     slower than predicted, against the measured best there (64x128x32/8x4/db, 2 warps)
#     and the plain build of the same tile at 1024^3.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line m
m=$NCU_ISSUE_METRICS,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,lts__t_sectors_srcunit_tex.sum
m=$m,dram__bytes_read.sum,smsp__inst_executed_op_ldgsts.sum
m=$m,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
ncu_configs m 4096x4096x4096 64x256x16/8x8/p4 64x256x16/8x8/p4/db 128x64x16/8x8/p4 128x64x16/8x8/p4/db 128x128x16/8x8/p4 128x128x16/8x8/p4/db
ncu_configs m 1000x1000x1000 64x128x8/8x8/p4/db 64x128x16/8x8/p4/db 64x128x32/8x4/db 64x128x32/8x4
ncu_configs m 1024x1024x1024 64x128x8/8x8/p4/db 64x128x16/8x8/p4/db 64x128x32/8x4/db
ls -la $OUT
