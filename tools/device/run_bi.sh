#!/usr/bin/env bash
# Device run BI (session 67): what a tile iteration costs at one block per SM as BK changes.
# Over the held-out sweeps the model puts single buffers at one block per SM fast by -0.134
# log (shape-demeaned) at BK = 8, +0.009 at BK = 16 and +0.015 at BK = 32; round 66 (1400 x
# 1400 x K, 121 blocks) has 128x128x16/8x8/p4 about 400 clk per tile iteration slower than
# the model, 128x128x32/8x8/p4 within +0.06. This counts the warp states, the issue counters
# and the per-SASS stall samples of the three BK of 128x128/8x8/p4 (one 8-warp block per
# SM) at 1400x1400x4000 (bounds-checked builds) and 1408x1408x4096 (the plain builds, 121
# blocks): ncu_bi_<size>.txt and ncu_bi_src_<size>.txt.gz.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bi.sh
set -u
. tools/device/ncu_configs.sh
stall_metrics bi
for size in 1400x1400x4000 1408x1408x4096; do
  ncu_source bi $size 128x128x8/8x8/p4 128x128x16/8x8/p4 128x128x32/8x8/p4
done
gzip -9 $OUT/ncu_bi_src_*.txt
ls -la $OUT
