#!/usr/bin/env bash
# Device run AV (session 59): where a block tile's A copies cost at 8192x256x8192, one of
# the issue's nine shapes. There 64x256x16/8x8/db (the best, 853 us), 128x128x16/8x8/db
# (993 us) and 256x64x16/8x8/db all run 128 blocks of 8 warps, one per SM, with the same
# FMAs, fragment reads and warp tile per SM; they differ only in how much of each tile is
# A (4-byte cp.async gathers: 32, 64, 128 copy instructions per tile) and B (16-byte
# copies). The model puts 128x128 0.03 log behind 64x256, measured 0.16 (every committed
# sweep: +0.16 measured against +0.03 predicted, docs/model.md "Session 59"). The pick
# 64x128x16/8x8/p4/db and 64x128x16/8x8/db run two 4-warp blocks per SM; 64x256x16/8x8
# and 128x128x16/8x8 are the register-staged single buffers of the first two.
# (1) ncu counters, warp-state and scheduler sections of the seven, each launched once
#     (ncu_av_8192x256x8192.txt, metrics ncu_av_metrics.txt)
# (2) ncu warp-state samples per SASS instruction (SourceCounters) of 64x256x16/8x8/db and
#     128x128x16/8x8/db (ncu_av2_8192x256x8192.txt, ncu_av2_src_8192x256x8192.txt)
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_av.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line av
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_av.txt
SIZE=8192x256x8192
m=$NCU_ISSUE_METRICS
ncu_known av .sum l1tex__data_pipe_lsu_wavefronts l1tex__data_pipe_lsu_wavefronts_mem_shared \
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared smsp__inst_executed_op_ldgsts \
  smsp__inst_executed_op_shared_ld smsp__inst_executed_pipe_lsu \
  l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts \
  l1tex__m_xbar2l1tex_read_sectors lts__t_sectors_srcunit_tex_op_read dram__bytes_read
ncu_known av .avg.pct_of_peak_sustained_active l1tex__data_pipe_lsu_wavefronts \
  l1tex__throughput lts__throughput sm__pipe_fma_cycles_active sm__inst_executed_pipe_lsu \
  l1tex__lsuin_requests l1tex__f_wavefronts
echo "$m" > $OUT/ncu_av_metrics.txt
rm -f $OUT/ncu_av_query.txt
python3 tools/device/ncu_launch.py configs --size $SIZE 64x256x16/8x8/db | tail -1
ncu_configs av $SIZE 64x256x16/8x8/db 128x128x16/8x8/db 256x64x16/8x8/db \
  64x128x16/8x8/p4/db 64x128x16/8x8/db 64x256x16/8x8 128x128x16/8x8
m=$NCU_ISSUE_METRICS
ncu_source av2 $SIZE 64x256x16/8x8/db 128x128x16/8x8/db
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_av.txt
ls -la $OUT
