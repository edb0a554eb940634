#!/usr/bin/env bash
# Device run V: where register-staged double buffers with BK 8 wait. At the batched shapes
# (bounds-checked builds) the model puts /db BK 8 0.15 log (median, 1476 pairs) too fast
# against its single-buffer twin, BK 16/32 within 0.02 (docs/model.md section 10, session 29).
# ncu's SourceCounters section samples warp stalls per SASS instruction; each config is
# profiled once into $W/v_<tag>.ncu-rep and its source page exported as CSV
# (v_<tag>_sass.csv), with the warp-state section's raw counters (v_<tag>_raw.csv); the CSVs
# come back packed as $OUT/v.tar.gz (the device returns at most 8 files).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
W=/tmp/run_v; rm -rf $W; mkdir -p $W
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee $OUT/gpu_v.txt
one() {  # one SIZE CONFIG: profile, export the SASS source page and the raw counters
  local size=$1 cfg=$2 tag
  tag=$(echo "${size}_${cfg}" | tr '/' '-')
  timeout 120 ncu -k regex:sgemm --section SourceCounters --section WarpStateStats \
    --section SchedulerStats --section LaunchStats -f -o $W/v_$tag \
    python3 tools/device/ncu_launch.py configs --size $size $cfg > $W/v_${tag}_log.txt 2>&1
  timeout 60 ncu -i $W/v_$tag.ncu-rep --page source --csv --print-source sass \
    > $W/v_${tag}_sass.csv 2> $W/v_${tag}_sass.err
  timeout 60 ncu -i $W/v_$tag.ncu-rep --page raw --csv > $W/v_${tag}_raw.csv 2>&1
  echo "$tag: sass $(wc -l < $W/v_${tag}_sass.csv) lines, raw $(wc -l < $W/v_${tag}_raw.csv)"
}
for c in 32x32x8/8x4 32x32x8/8x4/db 32x32x16/8x4 32x32x16/8x4/db; do one 272x272x544x24 $c; done
for c in 64x64x8/8x4 64x64x8/8x4/db 64x64x16/8x4/p4; do one 352x176x704x36 $c; done
(cd $W && tar czf $OUT/v.tar.gz *.csv *_log.txt *.err)
ls -la $OUT
