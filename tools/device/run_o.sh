#!/usr/bin/env bash
# Device run O: ncu counters behind the sixteenth change (docs/model.md section 10): where
# the spill reloads of the bounds-checked 8x8 builds hit. At 3000x1000x1024 (bounds-checked
# builds) the one-warp 64x32x32/8x8/db spills (255 registers, 78 LDL per tile iteration) and
# runs at ~2x its prediction; its single-buffer twin, two 8x8 /db tiles that spill less, and
# the measured best there (64x128x32/8x4/db, no spills); the plain builds of the same /db
# tiles at 3072x1024x1024. Two passes: the issue counters with the warp-state and scheduler
# sections, then local-memory and L1 counters only. Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line o
EDGE_CFGS="64x32x32/8x8/db 64x32x32/8x8 64x64x32/8x8/db 64x128x32/8x8/db 64x128x32/8x4/db"
PLAIN_CFGS="64x32x32/8x8/db 64x64x32/8x8/db 64x128x32/8x8/db"
m=$NCU_ISSUE_METRICS
ncu_configs o 3000x1000x1024 $EDGE_CFGS
ncu_configs o 3072x1024x1024 $PLAIN_CFGS
# local memory: instructions, L1 sectors hit / missed, and the L2 sectors they cause
m=gpu__time_duration.sum,smsp__inst_executed_op_local_ld.sum,smsp__inst_executed_op_local_st.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum
f=$OUT/ncu_o_local_3000x1000x1024.txt
timeout 150 ncu --csv --page raw -k regex:sgemm --metrics $m \
  python3 tools/device/ncu_launch.py configs --size 3000x1000x1024 $EDGE_CFGS > $f 2>&1
grep "==ERROR==" $f | head -3; echo "local: $(grep -c '^"' $f) rows"
ls -la $OUT
