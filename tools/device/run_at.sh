#!/usr/bin/env bash
# Device run AT (session 57): are the 4x8 cp.async double buffers' LDS passes what the model
# charges? LOKO over-predicts BK 32 4x8 /db builds by +0.067 log on average (32 rows) and
# their 8x4 twins by +0.016; the model puts 10 LDS passes per k step on a 4x8 warp's
# fragment reads (one float4 of A at 2 passes, two of B at 4) against 8 for 8x4, and both
# are LDS-bound in it. ncu counts the shared-memory wavefronts (loads, stores, cp.async
# writes) and the warp states of five 4x8 / 8x4 twin pairs at 8192x256x2048 (plain builds,
# the LOKO shape where both are measured), each launched once. Results under $OUT.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_at.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line at
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_at.txt
m=$NCU_ISSUE_METRICS
ncu_known at .sum l1tex__data_pipe_lsu_wavefronts l1tex__data_pipe_lsu_wavefronts_mem_shared \
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st \
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st \
    l1tex__data_bank_writes_pipe_lsu_mem_shared_op_ldgsts l1tex__data_bank_conflicts_pipe_lsu_mem_shared \
    smsp__inst_executed_op_shared_ld smsp__inst_executed_op_shared_st smsp__inst_executed_op_ldgsts \
    l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts
ncu_known at .avg.pct_of_peak_sustained_active l1tex__data_pipe_lsu_wavefronts l1tex__throughput \
  > /dev/null
echo "$m" > $OUT/ncu_at_metrics.txt
C="64x64x32/4x8/db 64x64x32/8x4/db 32x128x32/4x8/db 32x128x32/8x4/db 64x32x32/4x8/db \
64x32x32/8x4/db 32x32x32/4x8/db 32x32x32/8x4/db 64x64x16/4x8/db 64x64x16/8x4/db"
python3 tools/device/ncu_launch.py configs --size 8192x256x2048 $C | tail -1
timeout 400 ncu --csv --page raw -k regex:sgemm --section WarpStateStats \
  --section SchedulerStats --metrics $m python3 tools/device/ncu_launch.py configs \
  --size 8192x256x2048 $C > $OUT/ncu_at_8192x256x2048.txt 2>&1
grep "==ERROR==" $OUT/ncu_at_8192x256x2048.txt | head -3
echo "8192x256x2048: $(grep -c '^"' $OUT/ncu_at_8192x256x2048.txt) rows"
rm -f $OUT/ncu_at_query.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_at.txt
ls -la $OUT
