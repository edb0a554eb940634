#!/usr/bin/env bash
# Device run BD (session 64): the DRAM latency under load. Run X measured the L2 latency
# beside background warps streaming L2-resident data (global_latency_loaded.json); the
# model scales its whole tile-load latency, DRAM misses included, by that L2 ratio. This
# runs the same tool with a 512-MiB chain and a 512-MiB stream: the chase misses to DRAM
# beside warps that stream from DRAM (dram_latency_loaded.json).
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bd.sh
set -u
. tools/device/ncu_configs.sh
run_header bd
GL_CHAIN_MIB=512 GL_STREAM_MIB=512 GL_NAME=dram_latency_loaded.json timeout 300 \
  python3 tools/device/global_latency_loaded.py $OUT 2>&1 | tail -20
