#!/usr/bin/env bash
# Device run BJ (session 68): why register-staged double buffers with a short fragment
# lookahead are predicted fast at three or more resident blocks per SM. Over the held-out
# sweeps the bounds-checked 64x32x16/4x4/db (its loop reads a fragment and uses it at once:
# D = 0.5 FMAs, device SASS) is -0.07 log too fast at u = 4 and the 64x64x16/8x4/p4/db
# (D = 41) +0.09 too slow at u = 3 (round 68: the model picked the first and measured it at
# 84.8 % of the second). This counts the warp states, issue counters and per-SASS stall
# samples of both and of their single buffers at 1100x1100x3000 (round 68's worst shape,
# bounds-checked builds): ncu_bj_<size>.txt and ncu_bj_src_<size>.txt.gz.
#   GEMMMODEL_COMMIT=<sha> bash tools/device/run_bj.sh
set -u
. tools/device/ncu_configs.sh
stall_metrics bj
ncu_source bj 1100x1100x3000 64x32x16/4x4/db 64x64x16/8x4/p4/db 64x32x16/4x4 64x64x16/8x4/p4
gzip -9 $OUT/ncu_bj_src_*.txt
ls -la $OUT
