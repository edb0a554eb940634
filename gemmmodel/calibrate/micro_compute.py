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
from gemmmodel.calibrate.plan import Measurement, Skip, estimate_bench_s, rows_for

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
#: Lane -> element patterns of mb_smem_pattern (element index per lane, in accesses of the
#: pattern's width). They are the shapes a register-tiled GEMM reads its fragments with:
#: whole-warp, half-warp and 8-lane broadcasts, repeated groups of distinct words, and the
#: unique-address references. The bank-conflict simulator is checked against them.
SMEM_PATTERNS = {
    "all_same": [0] * 32,
    "lane_div_16": [lane // 16 for lane in range(32)],
    "lane_div_8": [lane // 8 for lane in range(32)],
    "lane_div_4": [lane // 4 for lane in range(32)],
    "lane_div_2": [lane // 2 for lane in range(32)],
    "lane_mod_4": [lane % 4 for lane in range(32)],
    "lane_mod_8": [lane % 8 for lane in range(32)],
    "lane_mod_16": [lane % 16 for lane in range(32)],
    "unique": list(range(32)),
    "lane_mod_16_x2": [2 * (lane % 16) for lane in range(32)],
    "lane_div_8_x8": [8 * (lane // 8) for lane in range(32)],
    "lane_mod_8_x8": [8 * (lane % 8) for lane in range(32)],
    "half_swap": [(lane % 16) + 16 * (1 - lane // 16) for lane in range(32)],
    "quarter_pairs": [(lane % 8) + 8 * ((lane // 8) % 2) for lane in range(32)],
}
SMEM_PATTERN_BITS = (32, 64, 128)
CP_ASYNC_CASES = ((4, 4, 1), (4, 1, 1), (4, 1, 33), (4, 4, 68), (16, 4, 1), (16, 4, 4))
CP_ASYNC_THREADS = 1024
CP_ASYNC_ITERS = 64
CP_ASYNC_PER_ITER = 8     # = MB_CP_PER_ITER in smem.cu


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
def _time_smem(ctx, entry: str, bits: int, first_arg) -> tuple[Any, float, float, int, int]:
    """Time one smem.cu read kernel (`first_arg`: its stride or lane table) on every SM:
    (bench result, cycles, ns, blocks, warp accesses per SM)."""
    rt, dev = ctx.rt, ctx.device
    module = ctx.micro_module("smem.cu", [entry], {"VEC": bits // 32})
    blocks = dev.sms
    timing, sink = rt.alloc(16 * blocks), rt.alloc(4 * blocks * SMEM_THREADS)
    try:
        result = ctx.time(lambda i: rt.launch(module, entry, (blocks, 1, 1),
                                              (SMEM_THREADS, 1, 1),
                                              [first_arg, SMEM_ITERS, NEVER, sink, timing]))
        cycles, ns = (float(x) for x in _timing(rt, timing)[0])
    finally:
        rt.free(timing)
        rt.free(sink)
    accesses = (SMEM_THREADS // 32) * SMEM_ITERS * SMEM_LOADS_PER_ITER  # warp accesses / SM
    return result, cycles, ns, blocks, accesses


def _run_smem(ctx, bits: int, stride: int) -> list[dict[str, Any]]:
    result, cycles, ns, blocks, accesses = _time_smem(ctx, "mb_smem_stride", bits, stride)
    per_access = cycles / accesses
    access_bytes = 32 * bits // 8
    total_bytes = float(blocks * accesses * access_bytes)
    return rows_for({"cycles_per_access": per_access,
                     "bytes_per_clk_per_sm": access_bytes / per_access if per_access else None,
                     "bandwidth_Bps": total_bytes / result.median_s},
                    timing=result, work=blocks * accesses, work_unit="accesses",
                    clock_hz=_clock(cycles, ns),
                    note=f"stride in {bits}-bit elements = {stride * bits // 32} words")


def _run_smem_pattern(ctx, bits: int, pattern: str) -> list[dict[str, Any]]:
    table = ctx.rt.upload(np.asarray(SMEM_PATTERNS[pattern], dtype=np.int32))
    try:
        result, cycles, ns, blocks, accesses = _time_smem(ctx, "mb_smem_pattern", bits, table)
    finally:
        ctx.rt.free(table)
    return rows_for({"cycles_per_access": cycles / accesses}, timing=result,
                    work=blocks * accesses, work_unit="accesses", clock_hz=_clock(cycles, ns),
                    note=f"lane -> element: {SMEM_PATTERNS[pattern]}")


def _run_cp_async(ctx, nbytes: int, src_stride: int, dst_stride: int) -> list[dict[str, Any]]:
    rt, dev = ctx.rt, ctx.device
    arch = str(getattr(rt, "arch", "") or "").removeprefix("sm_")
    if arch.isdigit() and int(arch) < 80:
        raise Skip(f"cp.async needs sm_80 or newer; this GPU is sm_{arch}")
    module = ctx.micro_module("smem.cu", ["mb_cp_async"], {"CP_BYTES": nbytes, "VEC": 1})
    blocks = dev.sms
    src = rt.upload(np.random.default_rng(7).uniform(-1, 1, 8 * 65536).astype(np.float32))
    timing = rt.alloc(16 * blocks)
    try:
        result = ctx.time(lambda i: rt.launch(module, "mb_cp_async", (blocks, 1, 1),
                                              (CP_ASYNC_THREADS, 1, 1),
                                              [src, src_stride, dst_stride, CP_ASYNC_ITERS,
                                               timing]))
        cycles, ns = (float(x) for x in _timing(rt, timing)[0])
    finally:
        rt.free(src)
        rt.free(timing)
    instr = (CP_ASYNC_THREADS // 32) * CP_ASYNC_ITERS * CP_ASYNC_PER_ITER  # warp instr / SM
    per_instr = cycles / instr
    return rows_for({"cycles_per_warp_instruction": per_instr,
                     "bytes_per_clk_per_sm": 32 * nbytes / per_instr if per_instr else None},
                    timing=result, work=blocks * instr, work_unit="warp instructions",
                    clock_hz=_clock(cycles, ns),
                    note=f"cp.async {nbytes} B, source stride {src_stride} words, "
                         f"shared stride {dst_stride} x {nbytes // 4} words per lane")


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
    for bits in SMEM_PATTERN_BITS:
        for j, pattern in enumerate(SMEM_PATTERNS):
            cycles = (SMEM_THREADS // 32) * SMEM_ITERS * SMEM_LOADS_PER_ITER * bits / 32
            est = estimate_bench_s(cycles / dev.clock_hz, budget_s) + COMPILE_S * (j == 0)
            out.append(Measurement("micro", "smem_pattern", {"bits": bits, "pattern": pattern},
                                   est, lambda ctx, b=bits, p=pattern:
                                   _run_smem_pattern(ctx, b, p)))
    for j, (nbytes, src_stride, dst_stride) in enumerate(CP_ASYNC_CASES):
        cycles = (CP_ASYNC_THREADS // 32) * CP_ASYNC_ITERS * CP_ASYNC_PER_ITER * 4
        est = estimate_bench_s(cycles / dev.clock_hz, budget_s) + COMPILE_S * (j < 2)
        out.append(Measurement("micro", "cp_async",
                               {"bytes": nbytes, "src_stride": src_stride,
                                "dst_stride": dst_stride}, est,
                               lambda ctx, n=nbytes, a=src_stride, b=dst_stride:
                               _run_cp_async(ctx, n, a, b)))
    return out
