#!/usr/bin/env bash
# Device run D: re-measure the DRAM pointer chase (fixed path length) into calibration/h200,
# and capture ncu shared-memory counters for a few catalogue kernels (bank-conflict check).
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=.
export GEMMMODEL_COMMIT="${GEMMMODEL_COMMIT:-unknown}"
cp -r calibration/h200 /tmp/h200
timeout 120 python3 -m gemmmodel calibrate --suite micro --only chase --out /tmp/h200 --budget-s 100 2>&1 | grep -v "^\[" | tail -4
cp /tmp/h200/micro.csv /tmp/h200/summary.json /tmp/h200/provenance.json $OUT/
m=gpu__time_duration.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
for k in 2 3 3.3 4 5 7 7.3 7.7 8.3 8.4 9 10; do
  e=sgemm_${k//./_}
  timeout 40 ncu --csv --page raw --launch-count 1 -k regex:"^${e}\$" --metrics $m \
    python3 -m gemmmodel run --kernel $k --size 1024x1024x1024 --budget 0.02 2>/dev/null | grep '^"' > /tmp/ncu_$k.csv
  if [ -s $OUT/ncu_lds.csv ]; then tail -n +3 /tmp/ncu_$k.csv >> $OUT/ncu_lds.csv; else cp /tmp/ncu_$k.csv $OUT/ncu_lds.csv; fi
done
wc -l $OUT/ncu_lds.csv
python3 - <<'PY'
import json; s=json.load(open('/tmp/h200/summary.json'))['headline']
for k in ('latency_l2_cycles','latency_dram_cycles','latency_dram_s'): print(k, s[k]['measured'])
PY
