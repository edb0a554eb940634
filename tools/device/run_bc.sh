#!/usr/bin/env bash
# Device run BC (session 64): do short launches wait on cold data? tools/device/
# short_launch.py times a few configs at short shapes with input sets rotated past the L2
# (as every sweep) and with one set kept in the L2: short_launch.csv.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bc.sh
set -u
. tools/device/ncu_configs.sh
run_header bc
timeout 400 python3 tools/device/short_launch.py $OUT 2>&1 | tail -40
