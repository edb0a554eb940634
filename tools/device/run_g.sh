#!/usr/bin/env bash
# Device run G: ncu counters (warp stall reasons, issue activity, L2/DRAM bytes) of template
# configs where the model mis-ranks: small-block latency-bound launches (1280x512x256, the
# unbatched twin of 128x512x256x10: same blocks and per-block work), 3072^3 (1-warp 32x64
# blocks vs 4-warp 128x64 blocks) and 6144x1024x2048 (raster order /s8). Results under $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv,noheader | tee $OUT/gpu_g.txt
m=smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
m=$m,gpu__time_duration.sum,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
m=$m,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg,sm__cycles_active.avg
m=$m,lts__t_bytes.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,smsp__warps_active.avg.per_cycle_active
. tools/device/ncu_configs.sh
ncu_configs g 1280x512x256 32x32x8/4x4/p4 32x32x8/4x4/p4/db 32x32x16/4x4/p4/db 32x32x32/4x4/p4/db 64x64x32/4x4/p4/db 32x64x16/4x4/p4/db
ncu_configs g 3072x3072x3072 32x64x32/8x8/p4 32x64x16/8x8/p4 128x64x16/8x8/p4 64x128x16/8x8/p4 64x64x32/8x8/p4
ncu_configs g 6144x1024x2048 128x128x32/8x8/p4 128x128x16/8x8/p4 128x128x16/8x8/p4/s8 128x64x16/8x8/p4 64x256x16/8x8/p4/db
ls -la $OUT
