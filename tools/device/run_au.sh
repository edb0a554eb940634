#!/usr/bin/env bash
# Device run AU (session 58): is the cp.async tall-tile cost a matter of K? Over every
# committed H200 sweep, a cp.async double buffer whose block tile is taller than wide
# (BM > BN) runs slower than predicted against its mirror (BN x BM, the rest the same) by a
# median +0.014 log at the 46 shapes whose K is a power of two, and +0.065 at the 108 whose
# K is not (tools/mirror_bias.py). K is the row pitch of A (row-major, lda = K), which the
# cp.async path gathers with 4-byte copies (kernels/template/sgemm_tile.cu fetch_async).
# Every fitted shape has a power-of-two K. This run holds M = N = 2048 and varies K only.
#   MODE=sweep: the whole search space at 2048x2048xK, K = 2048, 2304, 2560, 3072, 4096
#               (tools/device/acceptance.py sweep; calibration/h200/kpitch_sweep.csv)
#   MODE=ncu:   ncu memory and warp-state counters of two mirror pairs at K = 2048 and 2304,
#               each launched once (ncu_au_<size>.txt)
#   MODE=ncu2:  which shared-memory wavefronts grow: loads, stores and the cp.async writes
#               counted apart, for BK 32 builds with and without padding (64x64x32/8x8,
#               128x32x32/8x4) at K = 2048 and 2304 (ncu_au2_<size>.txt)
#   MODE=check: the same sweep at another M x N, 4096x1024xK, K = 2048, 2304, 2816, 4096
#               (kpitch_check_4096x1024.csv): a test of the factor read from the first sweep
#               (gemmmodel/model/pitch.py), which never reads this file
#   GEMMMODEL_COMMIT=<sha> MODE=sweep|ncu|ncu2|check bash tools/device/run_au.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line au
# at_both_k TAG CONFIG...: the metrics in $m (into ncu_TAG_metrics.txt) and the warp states of
# each config launched once at K = 2048 and 2304 (ncu_TAG_<size>.txt), compiled first
at_both_k() {
  local tag=$1 size; shift
  echo "$m" > $OUT/ncu_${tag}_metrics.txt
  for size in 2048x2048x2048 2048x2048x2304; do
    python3 tools/device/ncu_launch.py configs --size $size "$@" | tail -1
    ncu_configs $tag $size "$@"
  done
  rm -f $OUT/ncu_au_query.txt
}
echo "commit $GEMMMODEL_COMMIT mode ${MODE:-sweep}" >> $OUT/gpu_au.txt
if [ "${MODE:-sweep}" = sweep ] || [ "$MODE" = check ]; then
  shapes=2048x2048x2048,2048x2048x2304,2048x2048x2560,2048x2048x3072,2048x2048x4096
  file=kpitch_sweep.csv
  if [ "$MODE" = check ]; then
    shapes=4096x1024x2048,4096x1024x2304,4096x1024x2816,4096x1024x4096
    file=kpitch_check_4096x1024.csv
  fi
  python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
  timeout 450 python3 tools/device/acceptance.py sweep --shapes $shapes \
    --sweep-file $file --per-config-s ${PER_CONFIG_S:-0.08} \
    --budget-s ${SWEEP_BUDGET:-430} --out $OUT 2>&1 | tail -7
elif [ "$MODE" = ncu2 ]; then
  m=$NCU_ISSUE_METRICS
  ncu_known au .sum l1tex__data_pipe_lsu_wavefronts_mem_shared \
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st \
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st \
    l1tex__data_bank_writes_pipe_lsu_mem_shared_op_ldgsts l1tex__data_bank_conflicts_pipe_lsu_mem_shared \
    smsp__inst_executed_op_shared_ld smsp__inst_executed_op_ldgsts \
    l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts l1tex__m_xbar2l1tex_read_sectors
  at_both_k au2 64x64x32/8x8/db 64x64x32/8x8/p4/db 128x32x32/8x4/db 128x32x32/8x4/p4/db
else
  m=$NCU_ISSUE_METRICS
  ncu_known au .sum l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts \
    l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts \
    l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_lookup_hit \
    l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_lookup_miss \
    l1tex__m_xbar2l1tex_read_sectors lts__t_sectors_srcunit_tex_op_read \
    lts__t_sectors_srcunit_tex_op_read_lookup_hit lts__t_sectors_srcunit_tex_op_read_lookup_miss \
    dram__bytes_read l1tex__data_pipe_lsu_wavefronts l1tex__data_pipe_lsu_wavefronts_mem_shared \
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared
  ncu_known au .avg.pct_of_peak_sustained_active l1tex__data_pipe_lsu_wavefronts \
    l1tex__throughput lts__throughput
  at_both_k au 128x64x16/8x8/p4/db 64x128x16/8x8/p4/db 256x64x16/8x8/db 64x256x16/8x8/db
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_au.txt
ls -la $OUT
