#!/usr/bin/env bash
# Device run A: cubin precompile, calibration (micro, kernels, batched), batched fuzz,
# template edge correctness, an ncu export. Results under $OUT; short summary last.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=. GEMMMODEL_CUBIN_CACHE=/tmp/cubins
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
cal=/tmp/cal; mkdir -p "$cal"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv | tee $OUT/gpu.txt
python3 tools/device/acceptance.py precompile --out $OUT 2>&1 | tail -2
timeout 330 python3 -m gemmmodel calibrate --suite micro,kernels,batched --out "$cal" --budget-s 300 2>&1 | grep -v "^\[" | tail -25
timeout 60 python3 tools/device/acceptance.py fuzz --n 1000 --out $OUT 2>&1 | tail -1
timeout 60 python3 tools/device/acceptance.py edges --out $OUT 2>&1 | tail -1
timeout 45 ncu --csv --page raw --launch-count 4 -k regex:sgemm_7_ \
  --metrics gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
  python3 -m gemmmodel run --kernel 7.3,7.4 --size 1024x1024x1024 --budget 0.05 > $OUT/ncu_raw.csv 2> $OUT/ncu.err; echo "ncu rc=$?"
tar czf $OUT/cal.tgz -C /tmp cal
ls -la $OUT
