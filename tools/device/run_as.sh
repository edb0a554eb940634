#!/usr/bin/env bash
# Device run AS (session 56): why the bounds-checked builds (EDGE=1) of BK 32 8x8 /db tiles
# run 1.5x their plain twins at run P's tile multiples (32x128x32/8x8/db 350 against 231 us
# at 3072x1024x1024, the same blocks per SM), while the checked path never runs there. The
# model charges them an instruction-fetch floor from their whole code (130-160 KiB: eta
# 0.33 at two warps per scheduler); run AQ found no fetch stall at four warps per scheduler
# for a BK 8 build whose whole code is 56 KiB but whose main loop is 11 KiB.
# ncu warp states and issue counters, each launch once, at 3072x1024x1024: plain and forced
# EDGE=1 (`+edge`, tools/device/ncu_launch.py) for three BK 32 8x8 /db tiles at w = 2, one
# BK 8 8x8 /db at w = 3 and a BK 16 4x8 /db at w = 4; and the real edge shape
# 3000x1000x1024 for two of them. Results under $OUT (ncu_as_*.txt, gpu_as.txt).
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_as.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
. tools/device/ncu_configs.sh
gpu_line as
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_as.txt
m=$NCU_ISSUE_METRICS
C="32x128x32/8x8/db 64x64x32/8x8/db 128x64x32/8x8/db 64x64x8/8x8/db 64x128x16/4x8/db"
E=""
for c in $C; do E="$E $c $c+edge"; done
# precompile outside ncu (NVRTC of the BK 32 8x8 EDGE=1 builds takes seconds each), then
# count: ncu_configs' own 170 s limit is too short for ten launches with compiles
python3 tools/device/ncu_launch.py configs --size 3072x1024x1024 $E | tail -2
python3 tools/device/ncu_launch.py configs --size 3000x1000x1024 32x128x32/8x8/db 64x64x8/8x8/db | tail -1
for job in "3072x1024x1024 $E" "3000x1000x1024 32x128x32/8x8/db 64x64x8/8x8/db"; do
  set -- $job; size=$1; shift
  timeout 400 ncu --csv --page raw -k regex:sgemm --section WarpStateStats \
    --section SchedulerStats --metrics $m python3 tools/device/ncu_launch.py configs \
    --size $size "$@" > $OUT/ncu_as_$size.txt 2>&1
  grep "==ERROR==" $OUT/ncu_as_$size.txt | head -3
  echo "$size: $(grep -c '^"' $OUT/ncu_as_$size.txt) rows"
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee -a $OUT/gpu_as.txt
ls -la $OUT
