"""The FFMA issue rate of a hot loop inside larger code (kernels/micro/icache_phase.cu
mb_icache_phase), NVIDIA GPU machine: device run BL (docs/model.md "Session 69").

    PYTHONPATH=. python3 tools/device/icache_phase.py OUT_DIR

Each pass of the kernel runs a loop of NHOT straight-line FFMAs `trips` times, then NCOLD
straight-line FFMAs once (the code a GEMM runs once per block around its main loop). For
NHOT x NCOLD in the grid below (hot 24 or 48 KiB, cold 0-128 KiB of sm_90 code), trips 4,
16 and 64 per pass, w = 1, 2 and 4 warps per scheduler (w blocks of four warps on every SM,
one warp per scheduler each), with the blocks' passes in step (skew 0) or out of step
(skew > 0: each block starts its first pass part of the way through its trips), the
launch runs until every warp has issued about WARP_FMA_PER_LAUNCH FFMAs. Per point: the
median over SMs and REPEATS launches of each SM's span in cycles, as tools/device/icache.py.
Writes OUT_DIR/icache_phase.json; run AC's rates at the whole code's and at the loop's size,
and their mix by instruction share, are compared with it offline (tests/test_icache_phase.py).
REPEATS, WARP_FMA_PER_LAUNCH and the launch timing (timed_spans) are icache.py's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from icache import (
    REPEATS,
    SMEM_PER_SM,
    THREADS,
    WARP_FMA_PER_LAUNCH,
    _ints,
    blocks_smem,
    timed_spans,
)
from inner_loop import prefer_all_shared
from micro_tool import open_runtime, write_doc

HOT = (1536, 3072)                       # FFMAs: 24 and 48 KiB
COLD = (0, 2048, 4096, 6144, 8192)       # 0, 32, 64, 96, 128 KiB
TRIPS = (4, 16, 64)
WARPS_PER_SCHEDULER = (1, 2, 4)
SKEWS = (0, 7919)                        # in step; out of step (a prime multiplier)
ENTRY = "mb_icache_phase"


def measure(rt, sms: int, module, hot: int, cold: int, trips: int, skew: int,
            nb: int) -> dict | None:
    per_pass = trips * hot + cold
    passes = max(1, WARP_FMA_PER_LAUNCH // per_pass)
    dyn = blocks_smem(rt, module, nb, THREADS, ENTRY)
    if dyn is None:
        return None
    grid = sms * nb
    timing, smids = rt.alloc(8 * 4 * grid), rt.alloc(4 * grid)
    sink = rt.alloc(4 * grid * THREADS)

    def launch():
        rt.launch(module, ENTRY, (grid, 1, 1), (THREADS, 1, 1),
                  [np.int32(passes), np.int32(trips), np.int32(skew), np.float32(0.999),
                   np.float32(1e-3), timing, smids, sink], shared_bytes=dyn)

    spans, clocks, together, counts = timed_spans(rt, launch, grid, timing, smids)
    for buf in (timing, smids, sink):
        rt.free(buf)
    # FFMAs one warp issues: the first pass skips the trips its skew starts it past
    offsets = [(b * skew) % trips if skew > 0 else 0 for b in range(grid)]
    ffma = passes * per_pass - float(np.mean(offsets)) * hot
    span_clk = float(np.median(spans)) * float(np.median(clocks))
    return {"hot_ffma": hot, "cold_ffma": cold, "trips": trips, "skew": skew,
            "passes": passes, "blocks_per_sm": nb, "warps_per_scheduler": nb,
            "hot_kib": hot * 16 / 1024, "code_kib": (hot + cold) * 16 / 1024,
            "sm_span_ns_median": float(np.median(spans)),
            "sm_clock_ghz": float(np.median(clocks)), "sms_used": len(counts),
            "blocks_per_sm_seen": sorted(set(counts.values())),
            "min_blocks_at_once": int(min(together)),
            "fma_rate_per_scheduler": nb * ffma / span_clk}


def main() -> int:
    from gemmmodel import KERNELS_DIR

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", nargs="?", default=".")
    ap.add_argument("--hot", type=_ints, default=HOT)
    ap.add_argument("--cold", type=_ints, default=COLD)
    ap.add_argument("--trips", type=_ints, default=TRIPS)
    ap.add_argument("--w", type=_ints, default=WARPS_PER_SCHEDULER)
    ap.add_argument("--name", default="icache_phase.json")
    args = ap.parse_args(sys.argv[1:])
    rt, info, _ = open_runtime()
    sms = int(info["sms"])
    rows = []
    for hot in args.hot:
        for cold in args.cold:
            module = rt.compile_file(f"{KERNELS_DIR}/micro/icache_phase.cu", [ENTRY],
                                     {"NHOT": hot, "NCOLD": cold})
            rt.set_max_dynamic_shared(module, ENTRY, SMEM_PER_SM - 1024)
            prefer_all_shared(rt, module, ENTRY)
            for w in args.w:
                for trips in args.trips:
                    for skew in SKEWS if cold else (0,):
                        row = measure(rt, sms, module, hot, cold, trips, skew, w)
                        if row is None:
                            print(f"hot {hot} cold {cold}: {w} blocks per SM do not fit")
                            continue
                        rows.append(row)
                        print(f"hot {row['hot_kib']:3.0f} KiB code {row['code_kib']:4.0f} KiB "
                              f"trips {trips:3d} skew {skew:5d} w {w}: placed "
                              f"{row['blocks_per_sm_seen']}, >= {row['min_blocks_at_once']} "
                              f"at once: FFMA rate {row['fma_rate_per_scheduler']:.3f}",
                              flush=True)
    write_doc(Path(args.out_dir), args.name, rt, info,
              "tools/device/icache_phase.py, kernels/micro/icache_phase.cu", indent=1,
              repeats=REPEATS, warp_fma_per_launch=WARP_FMA_PER_LAUNCH, rows=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
