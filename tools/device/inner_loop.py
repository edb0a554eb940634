"""The template's inner loop alone at 1-8 warps per scheduler (kernels/micro/inner_loop.cu
mb_inner_loop), NVIDIA GPU machine.

    PYTHONPATH=. python3 tools/device/inner_loop.py OUT_DIR

For each thread tile (4x4, 4x8, 8x4, 8x8) and depth BK (8, 16, 32), one template config of
4-warp blocks (32x32x8/4x4: 2 warps) runs its compute() loop `reps` times with its LDS
tiles filled once: no global loads, no barriers. The launch puts exactly `nb` blocks on
every SM (grid = SMs x nb, dynamic shared memory sized so that no more than nb fit), so
the warps per scheduler are w = nb x warps per block / 4. Per point: the median of each
SM's span (first block start to last block end, %globaltimer) over the SMs and REPEATS
launches, in cycles at the clock the blocks ran at; the SM ids and the start/end times
prove the placement (every SM ran nb blocks, all at once). Writes
OUT_DIR/inner_loop.json and prints the FMA issue rate per scheduler (warp FMA instructions
per clock; 1.0 = the FP32 pipe's peak on sm_90).
"""

from __future__ import annotations

import sys
from collections import Counter

import numpy as np

from micro_tool import open_runtime, write_doc

CONFIGS = ("64x128x8/8x8/p4", "64x128x16/8x8/p4", "64x128x32/8x8/p4",
           "64x64x8/8x4/p4", "64x64x16/8x4/p4", "64x64x32/8x4/p4",
           "64x64x8/4x8/p4", "64x64x16/4x8/p4", "64x64x32/4x8/p4",
           "32x32x8/4x4/p4", "32x64x16/4x4/p4", "32x64x32/4x4/p4")
MAX_W = 8
REPEATS = 5
WARP_FMA_PER_LAUNCH = 400_000  # warp FMA instructions per warp and launch (~0.2-4 ms)
SMEM_PER_SM = 228 * 1024       # sm_90 shared memory per SM; probed below via occupancy


def prefer_all_shared(rt, module, entry: str = "mb_inner_loop") -> None:
    """Ask for the largest shared-memory carveout for `entry`, so the occupancy query holds
    at launch."""
    from gemmmodel.runtime.cuda import check_cu

    d = rt.driver
    enum = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
    check_cu(d, d.cuFuncSetAttribute(module.function(entry), enum, 100),
             "cuFuncSetAttribute(PREFERRED_SHARED_MEMORY_CARVEOUT)")


def concurrent(starts, ends) -> int:
    """Most intervals [start, end) open at one time."""
    events = sorted([(float(a), 1) for a in starts] + [(float(b), -1) for b in ends])
    best = cur = 0
    for _, step in events:
        cur += step
        best = max(best, cur)
    return best


def blocks_smem(rt, module, threads: int, nb: int, static: int) -> int | None:
    """Dynamic shared bytes with which exactly nb blocks fit on an SM (None: cannot)."""
    most = rt.occupancy(module, "mb_inner_loop", threads, 0)
    if most <= nb:
        return 0 if most == nb else None
    lo, hi = 0, SMEM_PER_SM - static
    while hi - lo > 128:   # largest dynamic size that still lets nb blocks fit
        mid = (lo + hi) // 2
        if rt.occupancy(module, "mb_inner_loop", threads, mid) >= nb:
            lo = mid
        else:
            hi = mid
    return lo if rt.occupancy(module, "mb_inner_loop", threads, lo) == nb else None


def open_config(rt, name: str):
    """(TileConfig, module, function attributes) of `name`'s inner-loop build, set up for
    the largest dynamic shared memory and carveout."""
    from gemmmodel import KERNELS_DIR
    from gemmmodel.template import parse_name

    cfg = parse_name(name)
    module = rt.compile_file(f"{KERNELS_DIR}/micro/inner_loop.cu", ["mb_inner_loop"],
                             cfg.defines())
    attrs = rt.function_attributes(module, "mb_inner_loop")
    rt.set_max_dynamic_shared(module, "mb_inner_loop",
                              SMEM_PER_SM - attrs["static_smem_bytes"] - 1024)
    prefer_all_shared(rt, module)
    return cfg, module, attrs


def measure(rt, sms: int, name: str, cfg, module, attrs, nb: int,
            repeats: int = REPEATS) -> dict | None:
    """One point: nb blocks on every SM (None where nb do not fit), timed `repeats` times
    after a warm-up (module docstring)."""
    threads = cfg.bm * cfg.bn // (cfg.tm * cfg.tn)
    warps = threads // 32
    fma_per_rep = cfg.tm * cfg.tn * cfg.bk     # warp FMA instructions per warp and rep
    reps = max(1, WARP_FMA_PER_LAUNCH // fma_per_rep)
    dyn = blocks_smem(rt, module, threads, nb, attrs["static_smem_bytes"])
    if dyn is None:
        return None
    grid = sms * nb
    timing = rt.alloc(8 * 4 * grid)
    smids = rt.alloc(4 * grid)
    sink = rt.alloc(4 * grid * threads)
    spans, clocks, together, secs = [], [], [], []
    for i in range(repeats + 1):   # the first launch is a warm-up
        secs.append(rt.time_s(lambda: rt.launch(
            module, "mb_inner_loop", (grid, 1, 1), (threads, 1, 1),
            [np.int32(reps), timing, smids, sink], shared_bytes=dyn)))
        t = rt.download(timing, (grid, 4), np.uint64).astype(np.float64)
        sm = rt.download(smids, (grid,), np.uint32)
        if i == 0:
            continue
        clocks.append(float(np.median(t[:, 0] / t[:, 1])))   # cycles per ns
        per_sm = [t[sm == s] for s in np.unique(sm)]
        spans.append(float(np.median([b[:, 3].max() - b[:, 2].min() for b in per_sm])))
        together.append(min(concurrent(b[:, 2], b[:, 3]) for b in per_sm))
    counts = Counter(sm.tolist())
    rt.free(timing)
    rt.free(smids)
    rt.free(sink)
    w = nb * warps / 4
    span_clk = float(np.median(spans)) * float(np.median(clocks))
    fma_per_scheduler = nb * warps * reps * fma_per_rep / 4
    return {"config": name, "tm": cfg.tm, "tn": cfg.tn, "bk": cfg.bk,
            "threads": threads, "regs": attrs["regs"], "blocks_per_sm": nb,
            "dynamic_smem_bytes": dyn, "warps_per_scheduler": w, "reps": reps,
            "sm_span_ns_median": float(np.median(spans)),
            "sm_clock_ghz": float(np.median(clocks)),
            "kernel_s_median": float(np.median(secs[1:])),
            "sms_used": len(counts), "blocks_per_sm_seen": sorted(set(counts.values())),
            "min_blocks_at_once": int(min(together)),
            "fma_rate_per_scheduler": fma_per_scheduler / span_clk,
            "cycles_per_kstep_per_warp": span_clk / (reps * cfg.bk) / w}


def main() -> int:
    rt, info, out_dir = open_runtime()
    sms = int(info["sms"])
    rows = []
    for name in CONFIGS:
        cfg, module, attrs = open_config(rt, name)
        warps = cfg.bm * cfg.bn // (cfg.tm * cfg.tn) // 32
        for nb in range(1, 4 * MAX_W // warps + 1):
            row = measure(rt, sms, name, cfg, module, attrs, nb)
            if row is None:
                break
            rows.append(row)
            print(f"{name:20s} regs {attrs['regs']:3d} nb {nb:2d} "
                  f"w {row['warps_per_scheduler']:4.2f} placed {row['blocks_per_sm_seen']} "
                  f"on {row['sms_used']} SMs, >= {row['min_blocks_at_once']} at once: FMA rate "
                  f"{row['fma_rate_per_scheduler']:.3f}", flush=True)
    write_doc(out_dir, "inner_loop.json", rt, info,
              "tools/device/inner_loop.py, kernels/micro/inner_loop.cu", indent=1,
              repeats=REPEATS, warp_fma_per_launch=WARP_FMA_PER_LAUNCH, rows=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
