#!/usr/bin/env bash
# Device run BB (session 64): is a short launch's code cold? Batched launches under 10 us
# run 0.25 log slower than the model puts them, more the larger their code (held-out
# sweeps; session 64). tools/device/icache_cold.py times the first pass of straight-line
# code against later passes, after the same kernel, another kernel, or an L2 flush:
# icache_cold.json.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bb.sh
set -u
. tools/device/ncu_configs.sh
run_header bb
timeout 300 python3 tools/device/icache_cold.py $OUT 2>&1 | tail -40
