#!/usr/bin/env bash
# Device run AD: why 4x4 thread tiles run slower than predicted in one-round launches with
# short K (session 36: near-best configs' log error, 4x4 -0.10 to -0.14 at one round and
# K <= 4096, the other tiles within 0.03; at three or more rounds 4x4 is not biased).
# At 1000^3 (one round, bounds-checked build; 32x32x16/4x4/p4 predicted 22 % too fast,
# 64x64x16/4x4/p4 16 %, 64x64x16/8x4/p4 7 %, 64x64x16/4x8/p4 0 %) and, as the many-round
# reference, at 2048^3 (two to three rounds, 4x4 within 6 %):
# (1) per-block stamps (tools/device/tail_stamps.py): do the blocks of one round start and
#     end together, and how long does one block take?
# (2) ncu: shared-memory wavefronts (loads, stores), issue activity, busiest-SM cycles,
#     warp-state samples per SASS instruction (SourceCounters).
# Results under $OUT (tail_stamps_ad.json, ncu_ad_<shape>.txt, ncu_ad_src_<shape>.txt).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line ad
CONFIGS=32x32x16/4x4/p4,64x64x16/4x4/p4,64x64x16/8x4/p4,64x64x16/4x8/p4
timeout 200 python3 tools/device/tail_stamps.py $OUT 1000x1000x1000:$CONFIGS 2048x2048x2048:$CONFIGS \
  2>&1 | tail -30
mv $OUT/tail_stamps.json $OUT/tail_stamps_ad.json
m=$NCU_ISSUE_METRICS,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
m=$m,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
ncu_source ad 1000x1000x1000 32x32x16/4x4/p4 64x64x16/4x4/p4 64x64x16/8x4/p4 64x64x16/4x8/p4
ncu_configs ad 2048x2048x2048 32x32x16/4x4/p4 64x64x16/4x4/p4 64x64x16/8x4/p4 64x64x16/4x8/p4
gzip -f $OUT/ncu_ad_src_*.txt
ls -la $OUT
