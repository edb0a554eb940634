"""The FMA issue rate of a loop against its code size (kernels/micro/icache.cu mb_icache),
NVIDIA GPU machine.

    PYTHONPATH=. python3 tools/device/icache.py OUT_DIR

For each body of NBODY straight-line FFMAs (about NBODY x 16 bytes of sm_90 code; the
loop around it adds a few instructions) and w = 1, 2, 3, 4, 6, 8 warps per scheduler (nb blocks
of four warps on every SM, dynamic shared memory sized so that no more than nb fit), the
loop runs until every warp has issued about WARP_FMA_PER_LAUNCH FFMAs. Per point: the
median of each SM's span (first block start to last block end, %globaltimer) over the SMs
and REPEATS launches, in cycles at the clock the blocks ran at; the SM ids and start/end
times prove the placement. Writes OUT_DIR/icache.json and prints the rate per scheduler
(warp FFMA instructions per clock; 1.0 = the FP32 pipe's peak on sm_90): where it falls
with the body's size, the loop no longer runs from the instruction cache.

    PYTHONPATH=. python3 tools/device/icache.py OUT_DIR --blocks-of 256,128 --w 2,4 \
        --bodies 2560,5120 --barrier --name icache_ao.json

runs the same loop in blocks of other sizes (--blocks-of: threads per block, a multiple of
128) at the given warps per scheduler, with a __syncthreads after every pass of the body
(--barrier): whether the fetch rate at w depends on how many blocks (code streams that a
barrier does not hold together) make up those warps (run AO).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from inner_loop import concurrent, prefer_all_shared
from micro_tool import open_runtime, write_doc

BODIES = (512, 1024, 1536, 1792, 2048, 2176, 2304, 2560, 2816, 3072, 4096, 5120, 6144, 7168,
          8192, 9216, 10240, 12288, 16384)
WARPS_PER_SCHEDULER = (1, 2, 3, 4, 6, 8)
THREADS = 128                      # four warps: one per scheduler
REPEATS = 5
WARP_FMA_PER_LAUNCH = 1 << 21
SMEM_PER_SM = 228 * 1024
ENTRY = "mb_icache"


def blocks_smem(rt, module, nb: int, threads: int = THREADS,
                entry: str = ENTRY) -> int | None:
    """Dynamic shared bytes with which exactly nb blocks of `entry` fit on an SM (None:
    cannot)."""
    def fits(dyn):
        return rt.occupancy(module, entry, threads, dyn)
    if fits(0) <= nb:
        return 0 if fits(0) == nb else None
    lo, hi = 0, SMEM_PER_SM - 1024
    while hi - lo > 128:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) >= nb else (lo, mid)
    return lo if fits(lo) == nb else None


def timed_spans(rt, launch, grid: int, timing, smids) -> tuple[list, list, list, Counter]:
    """REPEATS + 1 calls of `launch()` (the first a warm-up) of a kernel that writes
    mb_store_block_stamps: per timed launch the median over SMs of each SM's span (first
    block start to last block end, ns), the median clock (cycles per ns) and the fewest
    blocks an SM held at once; and how many blocks each SM ran (the last launch)."""
    spans, clocks, together = [], [], []
    for i in range(REPEATS + 1):
        launch()
        rt.synchronize()
        t = rt.download(timing, (grid, 4), np.uint64).astype(np.float64)
        sm = rt.download(smids, (grid,), np.uint32)
        if i == 0:
            continue
        clocks.append(float(np.median(t[:, 0] / t[:, 1])))
        per_sm = [t[sm == s] for s in np.unique(sm)]
        spans.append(float(np.median([b[:, 3].max() - b[:, 2].min() for b in per_sm])))
        together.append(min(concurrent(b[:, 2], b[:, 3]) for b in per_sm))
    return spans, clocks, together, Counter(sm.tolist())


def measure(rt, sms: int, module, body: int, nb: int, threads: int = THREADS) -> dict | None:
    """nb blocks of `threads` on every SM: w = nb * threads / 128 warps per scheduler."""
    reps = max(1, WARP_FMA_PER_LAUNCH // body)
    dyn = blocks_smem(rt, module, nb, threads)
    if dyn is None:
        return None
    grid = sms * nb
    timing, smids = rt.alloc(8 * 4 * grid), rt.alloc(4 * grid)
    sink = rt.alloc(4 * grid * threads)
    def launch():
        rt.launch(module, ENTRY, (grid, 1, 1), (threads, 1, 1),
                  [np.int32(reps), np.float32(0.999), np.float32(1e-3), timing, smids, sink],
                  shared_bytes=dyn)

    spans, clocks, together, counts = timed_spans(rt, launch, grid, timing, smids)
    for buf in (timing, smids, sink):
        rt.free(buf)
    span_clk = float(np.median(spans)) * float(np.median(clocks))
    w = nb * threads // THREADS                   # warps per scheduler (four schedulers)
    fma_per_scheduler = w * reps * body
    return {"body_ffma": body, "blocks_per_sm": nb, "threads_per_block": threads,
            "warps_per_scheduler": w, "reps": reps,
            "dynamic_smem_bytes": dyn, "sm_span_ns_median": float(np.median(spans)),
            "sm_clock_ghz": float(np.median(clocks)), "sms_used": len(counts),
            "blocks_per_sm_seen": sorted(set(counts.values())),
            "min_blocks_at_once": int(min(together)),
            "fma_rate_per_scheduler": fma_per_scheduler / span_clk}


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", nargs="?", default=".")
    ap.add_argument("--bodies", type=_ints, default=BODIES, help="NBODY values")
    ap.add_argument("--w", type=_ints, default=WARPS_PER_SCHEDULER,
                    help="warps per scheduler")
    ap.add_argument("--blocks-of", type=_ints, default=(THREADS,),
                    help="threads per block (multiples of 128); default 128")
    ap.add_argument("--barrier", action="store_true",
                    help="a __syncthreads after every pass of the body (BARRIER=1)")
    ap.add_argument("--name", default="icache.json", help="output file in out_dir")
    args = ap.parse_args(argv)
    if any(t % THREADS for t in args.blocks_of):
        ap.error(f"--blocks-of: multiples of {THREADS} threads")
    return args


def main() -> int:
    from gemmmodel import KERNELS_DIR

    args = parse_args(sys.argv[1:])
    rt, info, _ = open_runtime()
    out_dir = Path(args.out_dir)
    sms = int(info["sms"])
    rows = []
    for body in args.bodies:
        module = rt.compile_file(f"{KERNELS_DIR}/micro/icache.cu", [ENTRY],
                                 {"NBODY": body, "BARRIER": int(args.barrier)})
        rt.set_max_dynamic_shared(module, ENTRY, SMEM_PER_SM - 1024)
        prefer_all_shared(rt, module, ENTRY)
        attrs = rt.function_attributes(module, ENTRY)
        for threads in args.blocks_of:
            for w in args.w:
                nb, rest = divmod(w * THREADS, threads)
                if rest or nb < 1:
                    continue
                row = measure(rt, sms, module, body, nb, threads)
                if row is None:
                    print(f"NBODY {body}: {nb} blocks of {threads} per SM do not fit",
                          flush=True)
                    continue
                row["regs"] = attrs["regs"]
                row["barrier"] = bool(args.barrier)
                rows.append(row)
                print(f"NBODY {body:6d} ({body * 16 / 1024:6.0f} KiB) w {w} ({nb} x {threads}"
                      f"{', barrier' if args.barrier else ''}): placed "
                      f"{row['blocks_per_sm_seen']} on {row['sms_used']} SMs, >= "
                      f"{row['min_blocks_at_once']} at once: FFMA rate "
                      f"{row['fma_rate_per_scheduler']:.3f}", flush=True)
    write_doc(out_dir, args.name, rt, info, "tools/device/icache.py, kernels/micro/icache.cu",
              indent=1, repeats=REPEATS, warp_fma_per_launch=WARP_FMA_PER_LAUNCH,
              barrier=bool(args.barrier), rows=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
