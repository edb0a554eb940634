#!/usr/bin/env bash
# Device run V: where register-staged double buffers with BK 8 wait. At the batched shapes
# (bounds-checked builds) the model puts /db BK 8 0.15 log (median, 1476 pairs) too fast
# against its single-buffer twin, BK 16/32 within 0.02 (docs/model.md section 10, session 29).
# ncu's SourceCounters section samples warp stalls per SASS instruction; each config is
# profiled once into $OUT/v_<tag>.ncu-rep and its source page exported as CSV
# ($OUT/v_<tag>_sass.csv), with the warp-state section's raw counters ($OUT/v_<tag>_raw.csv).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee $OUT/gpu_v.txt
one() {  # one SIZE CONFIG: profile, export the SASS source page and the raw counters
  local size=$1 cfg=$2 tag
  tag=$(echo "${size}_${cfg}" | tr '/' '-')
  timeout 120 ncu -k regex:sgemm --section SourceCounters --section WarpStateStats \
    --section SchedulerStats --section LaunchStats -f -o $OUT/v_$tag \
    python3 tools/device/ncu_launch.py configs --size $size $cfg > $OUT/v_${tag}_log.txt 2>&1
  timeout 60 ncu -i $OUT/v_$tag.ncu-rep --page source --csv --print-source sass \
    > $OUT/v_${tag}_sass.csv 2> $OUT/v_${tag}_sass.err
  timeout 60 ncu -i $OUT/v_$tag.ncu-rep --page raw --csv > $OUT/v_${tag}_raw.csv 2>&1
  echo "$tag: sass $(wc -l < $OUT/v_${tag}_sass.csv) lines, raw $(wc -l < $OUT/v_${tag}_raw.csv)"
}
for c in 32x32x8/8x4 32x32x8/8x4/db 32x32x16/8x4 32x32x16/8x4/db; do one 272x272x544x24 $c; done
for c in 64x64x8/8x4 64x64x8/8x4/db 64x64x16/8x4/p4; do one 352x176x704x36 $c; done
head -c 1500 $OUT/v_272x272x544x24_32x32x8-8x4-db_sass.csv
cat $OUT/v_272x272x544x24_32x32x8-8x4-db_sass.err | head -5
ls -la $OUT | head -40
