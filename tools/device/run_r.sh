#!/usr/bin/env bash
# Device run R: ncu's shared-memory store counters for the bounds-checked (register-staged)
# /db builds at 2200x1400x3400 (the eighteenth round's miss, docs/selection.md): the model
# charges the unpadded transposed-A stores BK/4 passes each (an 8-way conflict at BK 32);
# wavefronts per store instruction say whether they cost that. Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line r
CFGS="64x128x16/8x4/db 64x128x32/8x4/db 64x128x16/8x4/p4/db 64x128x32/8x4/p4/db 64x128x8/8x8/p4/db"
m=gpu__time_duration.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_shared_ld.sum
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum
ncu_configs r 2200x1400x3400 $CFGS
ls -la $OUT
