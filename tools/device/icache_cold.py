"""Is a launch's code cold? The first pass of straight-line code against later passes
(kernels/micro/icache.cu mb_icache), NVIDIA GPU machine.

    PYTHONPATH=. python3 tools/device/icache_cold.py OUT_DIR

Run AC (icache.py) timed loops that run their body many times: the steady fetch rate. A
short GEMM launch runs its code only a few times, and its first pass may fetch every
instruction from further away (L2 or DRAM) if the SM's instruction caches do not keep
the kernel's code from one launch to the next. This measures that first pass. For each
body of NBODY straight-line FFMAs (about NBODY x 16 bytes of sm_90 code) and
reps = 1, 2, 4 passes of it, nb blocks of 128 threads (one warp per scheduler each) on
every SM run once per launch; per launch, each block's cycles between its first and last
pass (in-kernel clock64, launch overhead excluded) and the launch's event time. Three
orders of launches:
  same      the same kernel launched back to back (its code was just run on every SM)
  other     another kernel (a different NBODY) runs on every SM in between
  flushed   a 256-MiB memset runs in between (the code is also out of the L2)
Per (NBODY, reps, nb, order): the median over REPEATS launches of the median block's
cycles, and the median event time. The first pass's cost beyond a warm pass is
cycles(reps=1) - (cycles(reps=2) - cycles(reps=1)); per instruction it is that over NBODY.
Writes OUT_DIR/icache_cold.json and prints a table.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from micro_tool import open_runtime, write_doc

BODIES = (256, 1024, 2048, 4096, 8192, 12288)
REPS = (1, 2, 4)
BLOCKS_PER_SM = (1, 4)
ORDERS = ("same", "other", "flushed")
THREADS = 128
REPEATS = 15
ENTRY = "mb_icache"
FLUSH_BYTES = 256 << 20


def main() -> int:
    from gemmmodel import KERNELS_DIR

    out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    rt, info, _ = open_runtime()
    sms = int(info["sms"])
    mods = {b: rt.compile_file(f"{KERNELS_DIR}/micro/icache.cu", [ENTRY],
                               {"NBODY": b, "BARRIER": 0}) for b in BODIES}
    flush = rt.alloc(FLUSH_BYTES)
    grid_max = sms * max(BLOCKS_PER_SM)
    timing, smids = rt.alloc(8 * 4 * grid_max), rt.alloc(4 * grid_max)
    sink = rt.alloc(4 * grid_max * THREADS)

    def launch(body, reps, nb):
        rt.launch(mods[body], ENTRY, (sms * nb, 1, 1), (THREADS, 1, 1),
                  [np.int32(reps), np.float32(0.999), np.float32(1e-3), timing, smids, sink])

    rows = []
    for body in BODIES:
        other = BODIES[0] if body != BODIES[0] else BODIES[1]
        for nb in BLOCKS_PER_SM:
            for reps in REPS:
                for order in ORDERS:
                    cycles, events = [], []
                    for i in range(REPEATS + 1):
                        launch(body, reps, nb)           # its code has run on every SM
                        if order == "other":
                            launch(other, 1, nb)
                        elif order == "flushed":
                            rt.memset_u32(flush, i, FLUSH_BYTES // 4)
                        rt.synchronize()
                        t = rt.time_s(lambda: launch(body, reps, nb))
                        tim = rt.download(timing, (sms * nb, 4), np.uint64).astype(np.float64)
                        if i == 0:
                            continue
                        cycles.append(float(np.median(tim[:, 0])))
                        events.append(t)
                    rows.append({"body_ffma": body, "reps": reps, "blocks_per_sm": nb,
                                 "order": order, "cycles_median": float(np.median(cycles)),
                                 "cycles_p20": float(np.percentile(cycles, 20)),
                                 "cycles_p80": float(np.percentile(cycles, 80)),
                                 "event_s_median": float(np.median(events))})
    for buf in (flush, timing, smids, sink):
        rt.free(buf)
    # the first pass's extra cycles per instruction, per (body, nb, order)
    by = {(r["body_ffma"], r["blocks_per_sm"], r["order"], r["reps"]): r for r in rows}
    summary = []
    for body in BODIES:
        for nb in BLOCKS_PER_SM:
            for order in ORDERS:
                c1 = by[(body, nb, order, 1)]["cycles_median"]
                c2 = by[(body, nb, order, 2)]["cycles_median"]
                extra = c1 - (c2 - c1)
                summary.append({"body_ffma": body, "blocks_per_sm": nb, "order": order,
                                "first_pass_cycles": c1, "warm_pass_cycles": c2 - c1,
                                "first_pass_extra_cycles": extra,
                                "extra_per_instruction": extra / body})
                print(f"NBODY {body:6d} nb {nb} {order:8s}: first pass {c1:9.0f} clk, warm "
                      f"pass {c2 - c1:9.0f}, extra {extra:8.0f} ({extra / body:5.2f}/instr); "
                      f"event reps=1 {by[(body, nb, order, 1)]['event_s_median'] * 1e6:6.2f} us",
                      flush=True)
    write_doc(out_dir, "icache_cold.json", rt, info,
              "tools/device/icache_cold.py, kernels/micro/icache.cu", indent=1,
              repeats=REPEATS, flush_bytes=FLUSH_BYTES, rows=rows, summary=summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
