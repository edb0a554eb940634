#!/usr/bin/env bash
# Device run AO: the instruction-fetch microbenchmark (tools/device/icache.py) at the same
# warps per scheduler made of one block or of several, with and without a __syncthreads
# after every pass of the body: does fetch at w depend on how many blocks make up w?
# (Run AN: a batched 64x128 8x8 pick, two blocks per SM, stalls on no_instruction twice as
# often as the one-block 128x128 best at the same w and code size.)
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_ao.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=.
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
  --format=csv,noheader | tee $OUT/gpu_ao.txt
echo "commit $GEMMMODEL_COMMIT" >> $OUT/gpu_ao.txt
ARGS="--blocks-of 128,256,512 --w 2,4 --bodies 1536,2560,4096,5120,6144,9216"
timeout 250 python3 tools/device/icache.py $OUT $ARGS --barrier --name icache_ao_barrier.json
timeout 250 python3 tools/device/icache.py $OUT $ARGS --name icache_ao.json
ls -la $OUT
