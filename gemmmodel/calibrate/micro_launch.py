"""Launch / spawn microbenchmarks (kernels/micro/launch.cu) and the occupancy oracle.

Launch: empty and tiny kernels for block sizes 32 … 1024 and grids of 1 … 4^10 (~1M) blocks.
Each timed sample enqueues `inner` launches behind a spin kernel (Runtime.time_s hold_s), so
the events see back-to-back launches on the GPU, not Python's enqueue gaps; the time per
launch is the sample / inner. The summary fits t = overhead + blocks / rate per block size
(overhead = the per-launch intercept, rate = spawn blocks/s).

Occupancy: blocks per SM from the driver's calculator (Runtime.occupancy) for every
catalogue kernel and every template config of gemmmodel.template.search_space(spec), with
the registers per thread the compiler gave each.
"""

from __future__ import annotations

import math
from typing import Any

from gemmmodel.calibrate.context import DeviceFacts
from gemmmodel.calibrate.plan import Measurement, Skip, estimate_bench_s, rows_for
from gemmmodel.errors import BadArgument

LAUNCH_KINDS = ("empty", "tiny")
LAUNCH_THREADS = (32, 64, 128, 256, 512, 1024)
LAUNCH_GRIDS = tuple(4 ** i for i in range(11))   # 1 … 1,048,576 blocks
HOST_ENQUEUE_S = 30e-6    # assumption: host cost of one Python launch (sizes the hold)
SAMPLE_TARGET_S = 100e-6  # aim for samples at least this long
EST_LAUNCH_S = 3e-6       # assumed per-launch cost, estimates and `inner` sizing only
EST_BLOCKS_PER_S = 1e9    # assumed spawn rate, estimates and `inner` sizing only
OCCUPANCY_SHAPE = (4096, 4096, 4096)
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


def _occupancy_rows(ctx, plan) -> list[dict[str, Any]]:
    rt = ctx.rt
    module = rt.compile_plan(plan)
    threads = plan.threads_per_block
    blocks = rt.occupancy(module, plan.entry, threads, plan.shared_bytes)
    attrs = rt.function_attributes(module, plan.entry)
    note = (f"threads={threads} static_smem_bytes={attrs.get('static_smem_bytes')} "
            f"dynamic_smem_bytes={plan.shared_bytes} local_bytes={attrs.get('local_bytes')}")
    return rows_for({"occupancy_blocks_per_sm": blocks, "regs_per_thread": attrs.get("regs")},
                    note=note)


def _run_occupancy_catalogue(ctx, kernel_id: str) -> list[dict[str, Any]]:
    from gemmmodel.catalogue import resolve

    ref = resolve(kernel_id)
    try:
        plan = ref.plan(*OCCUPANCY_SHAPE)
    except BadArgument as err:
        raise Skip(f"no launch plan at {OCCUPANCY_SHAPE}: {err}") from None
    return _occupancy_rows(ctx, plan)


def _run_occupancy_template(ctx, config: Any) -> list[dict[str, Any]]:
    try:
        plan = config.plan(*OCCUPANCY_SHAPE)
    except BadArgument as err:
        raise Skip(f"no launch plan at {OCCUPANCY_SHAPE}: {err}") from None
    return _occupancy_rows(ctx, plan)


def _unavailable(reason: str):
    def run(ctx) -> list[dict[str, Any]]:
        raise Skip(reason)
    return run


def catalogue_ids() -> tuple[list[str], str]:
    """(catalogue ids in file order, '' or why the catalogue could not be read)."""
    try:
        from gemmmodel.catalogue import load_catalogue

        return list(load_catalogue()), ""
    except Exception as err:  # the catalogue is another part: record why it is missing
        return [], f"catalogue not readable: {type(err).__name__}: {err}"


def template_configs(spec: Any) -> tuple[list[Any], str]:
    """(template configs of search_space(spec), '' or why there are none)."""
    if spec is None:
        return [], "no GPU spec for this device: template search space needs one (--gpu)"
    try:
        from gemmmodel.template import search_space
    except ImportError as err:
        return [], f"gemmmodel.template not importable: {err}"
    try:
        return list(search_space(spec)), ""
    except Exception as err:
        return [], f"template.search_space failed: {type(err).__name__}: {err}"


def launch_measurements(dev: DeviceFacts, budget_s: float, spec: Any) -> list[Measurement]:
    """Launch sweep, then the occupancy oracle, in run order."""
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
    ids, why = catalogue_ids()
    if why:
        out.append(Measurement("micro", "occupancy", {"kernel": "catalogue"}, 0.0,
                               _unavailable(why)))
    for kid in ids:
        out.append(Measurement("micro", "occupancy", {"kernel": kid}, COMPILE_S,
                               lambda ctx, k=kid: _run_occupancy_catalogue(ctx, k)))
    configs, why = template_configs(spec)
    if why:
        out.append(Measurement("micro", "occupancy_template", {"config": "search_space"}, 0.0,
                               _unavailable(why)))
    for cfg in configs:
        out.append(Measurement("micro", "occupancy_template", {"config": cfg.name}, COMPILE_S,
                               lambda ctx, c=cfg: _run_occupancy_template(ctx, c)))
    return out
