# Sourced by the ncu device runs (run_g.sh, run_k.sh): ncu_configs TAG SIZE CONFIG... counts
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
