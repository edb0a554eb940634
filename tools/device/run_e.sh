#!/usr/bin/env bash
# Device run E: LDS lane-pattern and cp.async microbenchmarks (timed, into a copy of
# calibration/h200), ncu wavefront counts of the same patterns, and ncu counters (shared
# wavefronts, instructions, warp stall reasons) of template configs. Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_e.txt
cp -r calibration/h200 /tmp/h200
only=${ONLY:-smem_pattern,cp_async}
timeout 200 python3 -m gemmmodel calibrate --suite micro --only $only --out /tmp/h200 --budget-s 150 2>&1 | grep -v "^\[" | tail -4
cp /tmp/h200/micro.csv /tmp/h200/summary.json /tmp/h200/provenance.json $OUT/
base=smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
[ -z "${SKIP_PATTERNS:-}" ] && timeout 150 ncu --csv --page raw -k regex:mb_smem_pattern --metrics $base \
  python3 tools/device/ncu_launch.py patterns > $OUT/ncu_patterns.txt 2>&1
tail -2 $OUT/ncu_patterns.txt | cut -c1-200
cfgs="64x256x16/8x8/p4/db 64x256x16/8x8/db 64x256x16/8x8/p4 64x256x16/8x8 128x64x16/8x8/p4 128x128x32/8x8/p4 128x128x32/8x8 128x256x16/8x8/db 128x128x16/8x8/p4/db 128x128x16/8x8/p4 128x128x8/8x8 64x64x16/4x4 64x64x32/4x4/db 128x128x16/4x8 128x128x16/8x4 32x128x16/8x8/db"
more=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg
for size in 2048x2048x2048 1024x1024x16384; do
  list=$cfgs; [ $size = 1024x1024x16384 ] && list="32x128x16/8x8/db 64x128x16/8x8/p4/db 32x128x32/8x4/p4/db 64x128x32/4x4/db 32x128x32/4x4/p4/db 64x64x32/4x4/p4/db"
  f=$OUT/ncu_configs_${size}.txt
  timeout 200 ncu --csv --page raw -k regex:sgemm --section WarpStateStats --section SchedulerStats \
    --metrics $base,$more python3 tools/device/ncu_launch.py configs --size $size $list > $f 2>&1
  if grep -q "==ERROR==" $f; then
    echo "retry $size without the extra metrics"; grep "==ERROR==" $f | head -3
    timeout 200 ncu --csv --page raw -k regex:sgemm --section WarpStateStats --metrics $base,gpu__time_duration.sum \
      python3 tools/device/ncu_launch.py configs --size $size $list > $f 2>&1
  fi
  grep -c '^"' $f
done
ls -la $OUT
