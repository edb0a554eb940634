"""Launch / spawn microbenchmarks (kernels/micro/launch.cu).

Launch: empty and tiny kernels for block sizes 32 … 1024 and grids of 1 … 4^10 (~1M) blocks.
Each timed sample enqueues `inner` launches behind a spin kernel (Runtime.time_s hold_s), so
the events see back-to-back launches on the GPU, not Python's enqueue gaps; the time per
launch is the sample / inner. The summary fits t = overhead + blocks / rate per block size
(overhead = the per-launch intercept, rate = spawn blocks/s).
"""

from __future__ import annotations

import math
from typing import Any

from gemmmodel.calibrate.context import DeviceFacts
from gemmmodel.calibrate.plan import Measurement, estimate_bench_s, rows_for
from gemmmodel.runtime.runner import HOST_ENQUEUE_S  # host cost of one launch (assumption)

LAUNCH_KINDS = ("empty", "tiny")
LAUNCH_THREADS = (32, 64, 128, 256, 512, 1024)
LAUNCH_GRIDS = tuple(4 ** i for i in range(11))   # 1 … 1,048,576 blocks
SAMPLE_TARGET_S = 100e-6  # aim for samples at least this long
EST_LAUNCH_S = 3e-6       # assumed per-launch cost, estimates and `inner` sizing only
EST_BLOCKS_PER_S = 1e9    # assumed spawn rate, estimates and `inner` sizing only
COMPILE_S = 0.5           # assumed NVRTC compile + load per module (estimates only)


def launch_inner(blocks: int) -> int:
    """Launches per timed sample so that a sample lasts about SAMPLE_TARGET_S."""
    est = EST_LAUNCH_S + blocks / EST_BLOCKS_PER_S
    return max(1, min(64, math.ceil(SAMPLE_TARGET_S / est)))


def _run_launch(ctx, kind: str, threads: int, blocks: int) -> list[dict[str, Any]]:
    rt = ctx.rt
    entry = f"mb_{kind}"
    module = ctx.micro_module("launch.cu", [entry])
    out = rt.alloc(4 * blocks) if kind == "tiny" else None
    args = [out] if out is not None else []
    inner = launch_inner(blocks)
    try:
        result = ctx.time(lambda i: rt.launch(module, entry, (blocks, 1, 1), (threads, 1, 1),
                                              args),
                          inner=inner, hold_s=HOST_ENQUEUE_S * (inner + 1))
    finally:
        if out is not None:
            rt.free(out)
    t = result.median_s
    clock = ctx.cache.get("clock_hz") or ctx.device.clock_hz
    src = "measured" if ctx.cache.get("clock_hz") else "device maximum"
    return rows_for({"launch_time_s": t, "blocks_per_s": blocks / t,
                     "threads_per_clk": blocks * threads / (t * clock)},
                    timing=result, work=blocks, work_unit="blocks", clock_hz=clock,
                    note=f"inner={inner}; threads_per_clk at the {src} SM clock")


def launch_measurements(dev: DeviceFacts, budget_s: float) -> list[Measurement]:
    """The launch sweep, in run order."""
    out: list[Measurement] = []
    for kind in LAUNCH_KINDS:
        for threads in LAUNCH_THREADS:
            for blocks in LAUNCH_GRIDS:
                est_launch = EST_LAUNCH_S + blocks / EST_BLOCKS_PER_S
                inner = launch_inner(blocks)
                sample = inner * est_launch + HOST_ENQUEUE_S * (inner + 1)
                est = estimate_bench_s(sample, budget_s) + COMPILE_S * (threads == 32
                                                                        and blocks == 1)
                out.append(Measurement(
                    "micro", "launch", {"kernel": kind, "threads": threads, "blocks": blocks},
                    est, lambda ctx, k=kind, t=threads, b=blocks: _run_launch(ctx, k, t, b)))
    return out
