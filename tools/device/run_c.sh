#!/usr/bin/env bash
# Device run C: re-time the batched selection shapes with the host-enqueue hold (run B timed
# them without it, so Python launch cost dominated), then predict --verify at 4096^3.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_c.txt
cp tools/device/sweep_nonbatched.csv $OUT/selection_sweep.csv
PRECOMPILE_ONLY=batched python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -1
timeout 300 python3 tools/device/acceptance.py sweep --shapes 64x64x32x30,128x128x64x20,128x512x256x10 --budget-s 280 --out $OUT 2>&1 | tail -4
timeout 120 python3 -m gemmmodel predict --gpu h200 --size 4096x4096x4096 --top 5 --verify --json > $OUT/predict_verify_4096.json 2> $OUT/predict_verify.err; echo "verify rc=$?"; tail -3 $OUT/predict_verify.err
timeout 60 python3 -m gemmmodel run --kernel batched,cublas --size 64x64x32x30,128x128x64x20,128x512x256x10 --check 2>&1 | tail -8
wc -l $OUT/*.csv
