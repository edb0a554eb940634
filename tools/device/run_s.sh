#!/usr/bin/env bash
# Device run S: ncu issue counters and stall reasons behind the eighteenth round's misses
# (docs/selection.md): BK 16 against BK 32 twins at 3200^3 (plain builds; the model
# over-charges 128x64x16/8x8/p4 outside the inner loop) and at 2200x1400x3400 (bounds-
# checked /db builds; the model under-charges BK 16 there). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line s
m=$NCU_ISSUE_METRICS,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
m=$m,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_branch.sum
ncu_configs s 3200x3200x3200 128x64x16/8x8/p4 128x64x32/8x8/p4 128x128x32/8x8/p4 128x128x16/8x8/p4
ncu_configs s 2200x1400x3400 64x128x16/8x4/db 64x128x32/8x4/db 64x128x8/8x8/p4/db 64x128x16/8x4/p4/db
ls -la $OUT
