#!/usr/bin/env bash
# Device run Q: ncu counters behind BK 8 against its BK 16 twin (docs/model.md section 10,
# session 24: the model has BK 8 4-5 % too fast against the twin; at 144x144x288x48 both
# spend ~600 clocks per tile iteration more than predicted outside the inner loop). The
# same four 32x32 4x4 configs at the batched shape (bounds-checked build, strided-batched
# entry) and at 2048^3 (plain builds): issue counters with the warp-state and scheduler
# sections. Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line q
CFGS="32x32x8/4x4/p4/db 32x32x16/4x4/p4/db 32x32x8/4x4/p4 32x32x16/4x4/p4"
m=$NCU_ISSUE_METRICS,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_global_ld.sum
m=$m,smsp__inst_executed_op_branch.sum
ncu_configs q 144x144x288x48 $CFGS
ncu_configs q 2048x2048x2048 $CFGS
ls -la $OUT
