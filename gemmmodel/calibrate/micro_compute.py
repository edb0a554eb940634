"""Compute-side microbenchmarks (kernels/micro/fma.cu, smem.cu): the SM clock, FP32 FMA peak,
the latency-hiding curve (throughput vs warps per SM x independent chains), and shared-memory
bandwidth and bank-conflict cost by stride for 32-, 64- and 128-bit accesses.

Per-SM rates use the clock each kernel measured for itself (SM cycles / %globaltimer ns of
block 0), not a nominal clock. FLOP counts an FMA as 2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gemmmodel.calibrate.context import DeviceFacts
from gemmmodel.calibrate.plan import Measurement, estimate_bench_s, rows_for

COMPILE_S = 0.5           # assumed NVRTC compile + load time per module (estimates only)
CLOCK_SPIN_S = 5e-3       # length of the clock-measuring spin
FMA_PER_ITER = 256        # = MB_FMA_PER_ITER in fma.cu
FMA_ITERS = 2048
FMA_WARPS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)
FMA_ILPS = (1, 2, 4, 8)
FMA_PEAK_ILP = 8
FMA_PEAK_THREADS = 256
FMA_PEAK_WAVES = 4        # resident-grid waves of the peak launch
FMA_CHAIN_LATENCY_CYCLES = 4   # estimates only (assumption)
SMEM_BITS = (32, 64, 128)
SMEM_STRIDES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64)
SMEM_THREADS = 1024       # one block per SM
SMEM_ITERS = 64
SMEM_LOADS_PER_ITER = 32  # = MB_LOADS_PER_ITER in smem.cu
NEVER = -12345.0          # the kernels' sums cannot reach this


def _timing(rt, buf, blocks: int = 1) -> np.ndarray:
    """[cycles, ns] per block (uint64) from a kernel's timing buffer."""
    return rt.download(buf, (blocks, 2), np.uint64)


def _clock(cycles: float, ns: float) -> float | None:
    return cycles / ns * 1e9 if ns > 0 else None


# ---- clock -------------------------------------------------------------------------------
def _run_clock(ctx) -> list[dict[str, Any]]:
    rt = ctx.rt
    module = ctx.micro_module("fma.cu", ["mb_clock_spin"])
    spin = int(ctx.device.clock_hz * CLOCK_SPIN_S)
    timing = rt.alloc(16)
    try:
        result = ctx.time(lambda i: rt.launch(module, "mb_clock_spin", (1, 1, 1), (1, 1, 1),
                                              [spin, timing]), warmup=2, min_reps=5)
        cycles, ns = (float(x) for x in _timing(rt, timing)[0])
    finally:
        rt.free(timing)
    hz = _clock(cycles, ns)
    ctx.cache["clock_hz"] = hz
    return rows_for({"clock_hz": hz}, timing=result, work=cycles, work_unit="cycles",
                    clock_hz=hz, note="one thread spinning on clock64; ns from %globaltimer")


# ---- FMA ---------------------------------------------------------------------------------
def fma_launch_shape(warps_per_sm: int, dev: DeviceFacts) -> tuple[int, int]:
    """(blocks per SM, threads per block) giving `warps_per_sm` resident warps per SM."""
    per_block_max = 1024 // 32
    blocks = math.ceil(warps_per_sm / per_block_max)
    return blocks, warps_per_sm * 32 // blocks


def _run_fma(ctx, ilp: int, blocks: int, threads: int, iters: int,
             note: str = "") -> list[dict[str, Any]]:
    rt, dev = ctx.rt, ctx.device
    module = ctx.micro_module("fma.cu", ["mb_fma"], {"ILP": ilp})
    resident = rt.occupancy(module, "mb_fma", threads, 0)
    timing, sink = rt.alloc(16 * blocks), rt.alloc(4 * blocks * threads)
    try:
        result = ctx.time(lambda i: rt.launch(module, "mb_fma", (blocks, 1, 1), (threads, 1, 1),
                                              [iters, 0.999, 1e-3, NEVER, sink, timing]))
        cycles, ns = (float(x) for x in _timing(rt, timing)[0])
    finally:
        rt.free(timing)
        rt.free(sink)
    flop = 2.0 * FMA_PER_ITER * iters * blocks * threads
    rate = flop / result.median_s
    hz = _clock(cycles, ns)
    per_clk = rate / (dev.sms * hz) if hz else None
    return rows_for({"flop_per_s": rate, "flop_per_clk_per_sm": per_clk}, timing=result,
                    work=flop, work_unit="FLOP", clock_hz=hz,
                    note=f"{note}resident_blocks_per_sm={resident}")


def _run_fma_curve(ctx, ilp: int, warps: int) -> list[dict[str, Any]]:
    blocks_per_sm, threads = fma_launch_shape(warps, ctx.device)
    return _run_fma(ctx, ilp, blocks_per_sm * ctx.device.sms, threads, FMA_ITERS,
                    note=f"blocks_per_sm={blocks_per_sm} threads={threads} ")


def _run_fma_peak(ctx) -> list[dict[str, Any]]:
    dev = ctx.device
    blocks = dev.sms * max(1, dev.max_threads_per_sm // FMA_PEAK_THREADS) * FMA_PEAK_WAVES
    return _run_fma(ctx, FMA_PEAK_ILP, blocks, FMA_PEAK_THREADS, FMA_ITERS // FMA_PEAK_WAVES)


# ---- shared memory -----------------------------------------------------------------------
def _run_smem(ctx, bits: int, stride: int) -> list[dict[str, Any]]:
    rt, dev = ctx.rt, ctx.device
    vec = bits // 32
    module = ctx.micro_module("smem.cu", ["mb_smem_stride"], {"VEC": vec})
    blocks = dev.sms
    timing, sink = rt.alloc(16 * blocks), rt.alloc(4 * blocks * SMEM_THREADS)
    try:
        result = ctx.time(lambda i: rt.launch(module, "mb_smem_stride", (blocks, 1, 1),
                                              (SMEM_THREADS, 1, 1),
                                              [stride, SMEM_ITERS, NEVER, sink, timing]))
        cycles, ns = (float(x) for x in _timing(rt, timing)[0])
    finally:
        rt.free(timing)
        rt.free(sink)
    accesses = (SMEM_THREADS // 32) * SMEM_ITERS * SMEM_LOADS_PER_ITER  # warp accesses / SM
    per_access = cycles / accesses
    access_bytes = 32 * bits // 8
    total_bytes = float(blocks * accesses * access_bytes)
    return rows_for({"cycles_per_access": per_access,
                     "bytes_per_clk_per_sm": access_bytes / per_access if per_access else None,
                     "bandwidth_Bps": total_bytes / result.median_s},
                    timing=result, work=blocks * accesses, work_unit="accesses",
                    clock_hz=_clock(cycles, ns),
                    note=f"stride in {bits}-bit elements = {stride * vec} words")


# ---- plan --------------------------------------------------------------------------------
def compute_measurements(dev: DeviceFacts, budget_s: float) -> list[Measurement]:
    """Clock, FMA and shared-memory measurements, in run order."""
    out = [Measurement("micro", "clock", {},
                       estimate_bench_s(CLOCK_SPIN_S, budget_s, warmup=2, min_reps=5)
                       + COMPILE_S, _run_clock)]
    peak = dev.fp32_flop_per_s or 1e13  # estimate only
    peak_flop = (2.0 * FMA_PER_ITER * (FMA_ITERS // FMA_PEAK_WAVES) * FMA_PEAK_THREADS
                 * dev.sms * max(1, dev.max_threads_per_sm // FMA_PEAK_THREADS) * FMA_PEAK_WAVES)
    out.append(Measurement("micro", "fma_peak", {"ilp": FMA_PEAK_ILP},
                           estimate_bench_s(peak_flop / peak, budget_s) + COMPILE_S,
                           _run_fma_peak))
    max_warps = dev.max_threads_per_sm // 32
    for ilp in FMA_ILPS:
        for j, warps in enumerate(w for w in FMA_WARPS if w <= max_warps):
            # estimate: time of the longer of issue-bound and latency-bound execution
            cycles = FMA_PER_ITER * FMA_ITERS * max(warps / 4, FMA_CHAIN_LATENCY_CYCLES / ilp)
            est = estimate_bench_s(cycles / dev.clock_hz, budget_s)
            est += COMPILE_S if j == 0 and ilp != FMA_PEAK_ILP else 0.0
            out.append(Measurement("micro", "fma_curve", {"ilp": ilp, "warps": warps}, est,
                                   lambda ctx, i=ilp, w=warps: _run_fma_curve(ctx, i, w)))
    for bits in SMEM_BITS:
        for j, stride in enumerate(SMEM_STRIDES):
            degree = math.gcd(stride * bits // 32, 32)  # rough, for the estimate only
            cycles = (SMEM_THREADS // 32) * SMEM_ITERS * SMEM_LOADS_PER_ITER * degree * bits / 32
            est = estimate_bench_s(cycles / dev.clock_hz, budget_s) + COMPILE_S * (j == 0)
            out.append(Measurement("micro", "smem_stride", {"bits": bits, "stride": stride},
                                   est, lambda ctx, b=bits, s=stride: _run_smem(ctx, b, s)))
    return out
