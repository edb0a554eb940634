#!/usr/bin/env bash
# Device run BP (session 71): round 74's small batched shapes, cold and warm. The model
# picked 32x32x16/4x4/p4/db there and the best were BK 32 builds. tools/device/
# short_launch.py times 16 configs (4 block tiles x BK 16 / 32 x single / register-staged
# double buffer) at the six shapes with inputs rotated past the L2 (as the sweep) and with
# one input set kept in the L2 (short_launch_bp.csv). Then ncu's warp states and per-SASS
# stall samples of the picked and the best BK 32 build at 128x64x96x32 (ncu_bp_*.txt).
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bp.sh
set -u
. tools/device/ncu_configs.sh
run_header bp
export SHORT_SHAPES=64x64x64x48,96x96x32x40,128x64x96x32,80x80x160x30,256x128x64x24,48x192x128x36
cfgs=""
for t in 32x32 32x64 64x32 64x64; do
  for v in 16/4x4/p4 16/4x4/p4/db 32/4x4/p4 32/4x4/p4/db; do cfgs="$cfgs,${t}x$v"; done
done
export SHORT_CONFIGS=${cfgs#,}
timeout 300 python3 tools/device/short_launch.py $OUT > $OUT/short_launch_bp.txt 2>&1
mv $OUT/short_launch.csv $OUT/short_launch_bp.csv
tail -3 $OUT/short_launch_bp.txt
m=$NCU_ISSUE_METRICS
ncu_source bp 128x64x96x32 32x32x16/4x4/p4/db 32x32x32/4x4/p4/db 32x64x32/4x4/p4/db
gzip -9 $OUT/ncu_bp_src_128x64x96x32.txt
ls -la $OUT
