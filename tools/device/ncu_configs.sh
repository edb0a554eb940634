# Sourced by the ncu device runs (run_g.sh, run_k.sh, run_m.sh, run_z.sh, run_ab.sh,
# run_ac.sh): ncu_configs TAG SIZE CONFIG... counts
# the metrics in $m plus the warp-state and scheduler sections for each template config
# launched once at SIZE (tools/device/ncu_launch.py) into $OUT/ncu_<TAG>_<SIZE>.txt.
ncu_configs() {
  local tag=$1 size=$2; shift 2
  local f=$OUT/ncu_${tag}_${size}.txt
  timeout 170 ncu --csv --page raw -k regex:sgemm --section WarpStateStats --section SchedulerStats \
    --metrics $m python3 tools/device/ncu_launch.py configs --size $size "$@" > $f 2>&1
  grep "==ERROR==" $f | head -3
  echo "$size: $(grep -c '^"' $f) rows"
}

# ncu_source TAG SIZE CONFIG...: ncu_configs, then the per-SASS-instruction warp samples
# (SourceCounters, source page) of the same launches into $OUT/ncu_<TAG>_src_<SIZE>.txt.
ncu_source() {
  local tag=$1 size=$2; shift 2
  ncu_configs $tag $size "$@"
  local f=$OUT/ncu_${tag}_src_${size}.txt
  timeout 150 ncu --csv --page source --print-source sass --section SourceCounters \
    -k regex:sgemm python3 tools/device/ncu_launch.py configs --size $size "$@" > $f 2>&1
  grep "==ERROR==" $f | head -3; echo "$size source: $(wc -l < $f) lines"
}

# gpu_line TAG: the GPU name, clocks and driver into $OUT/gpu_<TAG>.txt (and stdout).
gpu_line() {
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
    --format=csv,noheader | tee $OUT/gpu_$1.txt
}

# ncu_known TAG SUFFIX METRIC...: appends METRIC$SUFFIX to $m for each METRIC this ncu knows
# (ncu --query-metrics, listed once into $OUT/ncu_<TAG>_query.txt); names the unknown ones.
ncu_known() {
  local q=$OUT/ncu_$1_query.txt suffix=$2 x; shift 2
  [ -s "$q" ] || ncu --query-metrics > "$q" 2>&1
  for x in "$@"; do
    if grep -q "^$x " "$q"; then m=$m,$x$suffix; else echo "no metric $x"; fi
  done
}

# The issue and occupancy counters runs K and M both take (each appends its own to $m).
NCU_ISSUE_METRICS=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed.max
NCU_ISSUE_METRICS=$NCU_ISSUE_METRICS,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
NCU_ISSUE_METRICS=$NCU_ISSUE_METRICS,smsp__issue_active.avg.pct_of_peak_sustained_active
NCU_ISSUE_METRICS=$NCU_ISSUE_METRICS,smsp__issue_active.max.pct_of_peak_sustained_active
NCU_ISSUE_METRICS=$NCU_ISSUE_METRICS,sm__cycles_elapsed.avg,sm__cycles_active.avg,sm__cycles_active.max
NCU_ISSUE_METRICS=$NCU_ISSUE_METRICS,smsp__warps_active.avg.per_cycle_active,smsp__warps_launched.sum
NCU_ISSUE_METRICS=$NCU_ISSUE_METRICS,launch__registers_per_thread

# copy_metrics TAG: $m = the issue counters plus the shared-memory wavefronts split into
# loads (fragment reads) and the rest (the cp.async copies), and the pipes' busy shares
# (runs AW and AX), listed into $OUT/ncu_<TAG>_metrics.txt.
copy_metrics() {
  m=$NCU_ISSUE_METRICS
  ncu_known $1 .sum l1tex__data_pipe_lsu_wavefronts_mem_shared \
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st \
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared smsp__inst_executed_op_ldgsts \
    smsp__inst_executed_op_shared_ld l1tex__m_xbar2l1tex_read_sectors
  ncu_known $1 .avg.pct_of_peak_sustained_active l1tex__data_pipe_lsu_wavefronts lts__throughput \
    sm__pipe_fma_cycles_active
  echo "$m" > $OUT/ncu_$1_metrics.txt
  rm -f $OUT/ncu_$1_query.txt
}

# run_header TAG: the environment of a device run (unbuffered Python, the checkout on the
# path, a cubin cache, GEMMMODEL_COMMIT), then its GPU line and commit into $OUT/gpu_<TAG>.txt.
run_header() {
  export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
  export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
  gpu_line $1
  echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_$1.txt
}

# sweep_file SHAPE FILE BUDGET_S [--force-edge]: every search-space config timed at SHAPE
# into $OUT/FILE (tools/device/acceptance.py sweep), killed 15 s after its budget (runs AZ, BA).
sweep_file() {
  timeout $(($3 + 15)) python3 tools/device/acceptance.py sweep --shapes $1 --sweep-file $2 \
    --budget-s $3 --out $OUT ${4:-} 2>&1 | tail -1
}

# stall_metrics TAG: run_header TAG, then $m = the issue counters plus the shared-memory and
# global instruction counts and the LSU and FMA pipes' busy shares (runs BI and BJ).
stall_metrics() {
  run_header $1
  m=$NCU_ISSUE_METRICS
  ncu_known $1 .sum smsp__inst_executed_op_shared_ld smsp__inst_executed_op_shared_st \
    smsp__inst_executed_op_global_ld l1tex__data_pipe_lsu_wavefronts_mem_shared
  ncu_known $1 .avg.pct_of_peak_sustained_active l1tex__data_pipe_lsu_wavefronts \
    sm__pipe_fma_cycles_active
  rm -f $OUT/ncu_$1_query.txt
}
