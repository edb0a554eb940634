"""Block placement of a partial last wave (kernels/micro/placement.cu), NVIDIA GPU machine.

    PYTHONPATH=. python3 tools/device/block_placement.py OUT_DIR

For capacities of 1, 2, 3, 4 and 8 blocks per SM (set by dynamic shared memory, checked with
the driver's occupancy calculator) and grids of 1.25, 1.45, 1.75 and 2.45 waves, every
block spins SPIN_NS on one thread and records its SM and start/end time. Per launch:
  rounds_busiest  = max over SMs of blocks run / capacity, rounded up (the even spread
                    ceil(blocks / SMs) / capacity is what the model assumed)
  tail_per_sm_max = most blocks one SM took after the first wave ended
  makespan / SPIN_NS (= rounds the slowest SM ran)
Writes OUT_DIR/block_placement.json (raw per-block SM ids and times included) and prints a
table.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from micro_tool import open_micro, write_doc

SPIN_NS = 200_000
CAPACITIES = (1, 2, 3, 4, 8)
WAVES = (1.25, 1.45, 1.75, 2.45)
THREADS = 256
REPS = 3


def main() -> int:
    rt, info, module, out_dir = open_micro("placement.cu", ["mb_placement"])
    sms = int(info["sms"])
    smem_sm = int(info["shared_bytes_per_sm"])
    optin = int(info["shared_bytes_per_block_optin"])
    rt.set_max_dynamic_shared(module, "mb_placement", optin)
    runs = []
    for cap in CAPACITIES:
        # the largest dynamic shared memory that still fits `cap` blocks per SM
        shared = min(optin, smem_sm // cap - 1024)
        while shared > 0 and rt.occupancy(module, "mb_placement", THREADS, shared) < cap:
            shared -= 1024
        got = rt.occupancy(module, "mb_placement", THREADS, shared)
        for waves in WAVES:
            blocks = int(round(waves * sms * got))
            for rep in range(REPS):
                rec = rt.alloc(24 * blocks)
                rt.launch(module, "mb_placement", (blocks, 1, 1), (THREADS, 1, 1),
                          [np.uint64(SPIN_NS), rec], shared)
                rt.synchronize()
                data = rt.download(rec, (blocks, 3), np.uint64).astype(np.int64)
                rt.free(rec)
                sm, t0, t1 = data[:, 0], data[:, 1] - data[:, 1].min(), data[:, 2] - data[:, 1].min()
                first_end = t1[np.argsort(t0)[:sms * got]].min()
                per_sm = np.bincount(sm, minlength=sms)
                tail = np.bincount(sm[t0 >= first_end], minlength=sms)
                runs.append({"capacity": got, "shared_bytes": shared, "waves": waves,
                             "blocks": blocks, "rep": rep,
                             "max_blocks_per_sm": int(per_sm.max()),
                             "even_spread_blocks": math.ceil(blocks / sms),
                             "tail_blocks": int((t0 >= first_end).sum()),
                             "tail_per_sm_max": int(tail.max()),
                             "sms_with_tail": int((tail > 0).sum()),
                             "makespan_rounds": float(t1.max()) / SPIN_NS,
                             "sm": sm.tolist(), "start_ns": t0.tolist(), "end_ns": t1.tolist()})
                r = runs[-1]
                print(f"cap {got} waves {waves:4.2f} blocks {blocks:5d} rep {rep}: max/SM "
                      f"{r['max_blocks_per_sm']} (even {r['even_spread_blocks']}), tail "
                      f"{r['tail_blocks']} on {r['sms_with_tail']} SMs, <= {r['tail_per_sm_max']}"
                      f"/SM, makespan {r['makespan_rounds']:.2f} spins", flush=True)
    write_doc(out_dir, "block_placement.json", rt, info,
              "tools/device/block_placement.py, kernels/micro/placement.cu",
              spin_ns=SPIN_NS, threads=THREADS, runs=runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
