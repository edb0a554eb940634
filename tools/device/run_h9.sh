#!/usr/bin/env bash
# Device run H9: do the template's own loops spend the L1 data pipe by lines, as the line
# term (gemmmodel/model/lines.py, session 54) charges? ncu counts the L1 wavefronts and the
# global / LDGSTS requests and sectors of single and cp.async double-buffered builds at
# 2304^3 (plain builds): BK 8, 16 and 32, and the second held-out round's open pair
# (the single 128x64x16/8x8/p4, measured best, against 64x128x16/8x8/p4/db). Metrics that
# this ncu does not know are dropped first (ncu --query-metrics). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
. tools/device/ncu_configs.sh
gpu_line h9
ncu --version | tail -1 | tee -a $OUT/gpu_h9.txt
m=$NCU_ISSUE_METRICS
ncu_known h9 .sum l1tex__data_pipe_lsu_wavefronts l1tex__data_pipe_lsu_wavefronts_mem_shared \
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st \
    l1tex__t_requests_pipe_lsu_mem_global_op_ld l1tex__t_sectors_pipe_lsu_mem_global_op_ld \
    l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts \
    l1tex__t_requests l1tex__t_sectors l1tex__data_bank_conflicts_pipe_lsu_mem_shared \
    smsp__inst_executed_op_ldgsts smsp__inst_executed_op_global_ld
ncu_known h9 .avg.pct_of_peak_sustained_active l1tex__throughput l1tex__data_pipe_lsu_wavefronts \
  > /dev/null
echo "$m" > $OUT/ncu_h9_metrics.txt
ncu_configs h9 2304x2304x2304 128x32x8/8x8 128x32x8/8x8/db 128x32x32/8x8 128x32x32/8x8/db \
  64x64x16/8x8/p4 64x64x16/8x8/p4/db 128x64x16/8x8/p4 64x128x16/8x8/p4/db 64x128x16/8x8/p4
gpu_line h9_after
ls -la $OUT
