"""Memory microbenchmarks (kernels/micro/bandwidth.cu, latency.cu): DRAM read / write / copy
bandwidth, the L2 working-set sweep, and pointer-chase latencies (L1, L2, DRAM, shared).

Sizes follow the device: DRAM buffers are max(8 x L2, 1 GiB) so no cache holds them; the L2
sweep runs from 1 MiB to 4 x L2 in steps of sqrt(2); the chases use 16 KiB (L1-sized on every
NVIDIA GPU since sm_70: an assumption of this suite, not a spec value), L2 / 4 and 4 x L2.
Bandwidth counts bytes moved by the kernel (copy = read + write). Latencies come from the
in-kernel SM cycle counter and %globaltimer around the timed steps only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gemmmodel.calibrate.context import DeviceFacts
from gemmmodel.calibrate.plan import Measurement, estimate_bench_s, rows_for

MiB = 1 << 20
GiB = 1 << 30
F4_BYTES = 16                 # one float4
THREADS = 256                 # block size of the bandwidth kernels
L2_SWEEP_READ_BYTES = 2 * GiB  # bytes read per L2-sweep launch
CHASE_SLOT_BYTES = 128        # one chase step per 128-byte line
CHASE_LEVELS = ("l1", "l2", "dram")
CHASE_STEPS = {"l1": 100_000, "l2": 40_000, "dram": 10_000}
SMEM_CHASE_WORDS = 8192       # = MB_SMEM_CHASE_WORDS in latency.cu
SMEM_CHASE_STEPS = 100_000
COMPILE_S = 0.5               # assumed NVRTC compile + load time per module (estimates only)
NEVER = -1.0                  # buffers hold 1.0: a sum never equals this


def dram_bytes(dev: DeviceFacts) -> int:
    """Size of each DRAM benchmark buffer: max(8 x L2, 1 GiB), at most 1/8 of device memory."""
    size = max(8 * dev.l2_bytes, GiB)
    if dev.total_memory_bytes:
        size = min(size, dev.total_memory_bytes // 8)
    return size // F4_BYTES * F4_BYTES


def l2_sweep_sizes(dev: DeviceFacts) -> list[int]:
    """Working sets from 1 MiB to 4 x L2 in steps of sqrt(2), rounded to 64 KiB."""
    sizes, i = [], 0
    while True:
        size = round(MiB * 2 ** (i / 2) / 65536) * 65536
        if size > 4 * dev.l2_bytes:
            return sizes
        sizes.append(size)
        i += 1


def chase_steps(level: str, dev: DeviceFacts) -> int:
    """Timed steps of one chase launch. The timed launches repeat one path, so for DRAM the
    path itself must touch more distinct lines than the L2 holds (2.5 x L2 / 128 B), or every
    launch after the first reads lines the previous one left in L2 (run A on the H200 read
    281 cycles for "DRAM" with 10,000 steps, the same as its L2 chase)."""
    steps = CHASE_STEPS[level]
    if level == "dram" and dev.l2_bytes:
        steps = max(steps, -(-5 * dev.l2_bytes // (2 * CHASE_SLOT_BYTES)))
    return steps


def chase_footprint(level: str, dev: DeviceFacts) -> int:
    """Bytes the chase walks through for one level (see module doc)."""
    return {"l1": 16 * 1024, "l2": dev.l2_bytes // 4,
            "dram": max(4 * dev.l2_bytes, 64 * MiB)}[level]


def _grid(dev: DeviceFacts) -> int:
    return dev.sms * max(1, dev.max_threads_per_sm // THREADS)


def _stream_time_s(nbytes: float, dev: DeviceFacts) -> float:
    bw = dev.dram_bandwidth_Bps or 1e12  # estimate only; 1 TB/s assumed if unknown
    return nbytes / bw


# ---- DRAM --------------------------------------------------------------------------------
def _run_dram(ctx, kind: str, nbytes: int) -> list[dict[str, Any]]:
    rt, dev = ctx.rt, ctx.device
    module = ctx.micro_module("bandwidth.cu", [f"mb_dram_{kind}"])
    n4 = nbytes // F4_BYTES
    bufs = [rt.alloc(nbytes)]
    if kind == "copy":
        bufs.append(rt.alloc(nbytes))
    sink = rt.alloc(4)
    try:
        for buf in bufs:
            rt.memset_f32(buf, 1.0)
        grid, block = (_grid(dev), 1, 1), (THREADS, 1, 1)
        args = {"read": [bufs[0], n4, NEVER, sink], "write": [bufs[0], n4, 2.0],
                "copy": [bufs[0], bufs[-1], n4]}[kind]
        result = ctx.time(lambda i: rt.launch(module, f"mb_dram_{kind}", grid, block, args))
    finally:
        for buf in bufs + [sink]:
            rt.free(buf)
    moved = nbytes * (2 if kind == "copy" else 1)
    return rows_for({"bandwidth_Bps": moved / result.median_s}, timing=result, work=moved,
                    work_unit="B", note=f"grid={grid[0]}x{THREADS}")


def _run_l2(ctx, ws_bytes: int) -> list[dict[str, Any]]:
    rt, dev = ctx.rt, ctx.device
    module = ctx.micro_module("bandwidth.cu", ["mb_l2_read"])
    n4 = ws_bytes // F4_BYTES
    total = max(n4, round(L2_SWEEP_READ_BYTES / F4_BYTES / n4) * n4)
    buf, sink = rt.alloc(ws_bytes), rt.alloc(4)
    try:
        rt.memset_f32(buf, 1.0)
        grid, block = (_grid(dev), 1, 1), (THREADS, 1, 1)
        result = ctx.time(lambda i: rt.launch(module, "mb_l2_read", grid, block,
                                              [buf, n4, total, NEVER, sink]))
    finally:
        rt.free(buf)
        rt.free(sink)
    moved = total * F4_BYTES
    return rows_for({"bandwidth_Bps": moved / result.median_s}, timing=result, work=moved,
                    work_unit="B", note=f"reps={total // n4}")


# ---- latency -----------------------------------------------------------------------------
def cyclic_permutation(n: int, rng: np.random.Generator) -> np.ndarray:
    """next[i] for a random single cycle through all n items (Sattolo-style via a shuffle)."""
    order = rng.permutation(n)
    nxt = np.empty(n, dtype=np.int64)
    nxt[order] = np.roll(order, -1)
    return nxt


def chase_chain(footprint_bytes: int, rng: np.random.Generator) -> np.ndarray:
    """uint64 array of footprint/8 words; word 16*s holds the word index of the next slot."""
    words_per_slot = CHASE_SLOT_BYTES // 8
    slots = max(2, footprint_bytes // CHASE_SLOT_BYTES)
    chain = np.zeros(slots * words_per_slot, dtype=np.uint64)
    chain[::words_per_slot] = cyclic_permutation(slots, rng) * words_per_slot
    # chase starts at word 0: make sure slot 0 is on the cycle (it is: one cycle covers all)
    return chain


def _latency_rows(out: np.ndarray, steps: int, result, footprint: int) -> list[dict[str, Any]]:
    cycles, ns = float(out[1]), float(out[2])
    clock = cycles / ns * 1e9 if ns > 0 else None
    return rows_for({"latency_cycles": cycles / steps,
                     "latency_s": ns * 1e-9 / steps if ns > 0 else None,
                     "clock_hz": clock}, timing=result, work=steps, work_unit="steps",
                    clock_hz=clock, note=f"footprint_bytes={footprint}")


def _run_chase(ctx, level: str, footprint: int) -> list[dict[str, Any]]:
    rt = ctx.rt
    module = ctx.micro_module("latency.cu", ["mb_chase_prepare", "mb_chase"])
    chain = chase_chain(footprint, np.random.default_rng(footprint))
    slots = len(chain) // (CHASE_SLOT_BYTES // 8)
    steps = chase_steps(level, ctx.device)
    warm = 2 * slots if level == "l1" else 0
    buf, out = rt.upload(chain), rt.alloc(3 * 8)
    try:
        rt.launch(module, "mb_chase_prepare", (ctx.device.sms * 4, 1, 1), (256, 1, 1),
                  [buf, len(chain)])
        result = ctx.time(lambda i: rt.launch(module, "mb_chase", (1, 1, 1), (1, 1, 1),
                                              [buf, warm, steps, out]),
                          warmup=2, min_reps=5)
        host = rt.download(out, (3,), np.uint64)
    finally:
        rt.free(buf)
        rt.free(out)
    return _latency_rows(host, steps, result, footprint)


def _run_smem_chase(ctx) -> list[dict[str, Any]]:
    rt = ctx.rt
    module = ctx.micro_module("latency.cu", ["mb_smem_chase"])
    nxt = cyclic_permutation(SMEM_CHASE_WORDS, np.random.default_rng(7)).astype(np.uint32)
    buf, out = rt.upload(nxt), rt.alloc(3 * 8)
    try:
        result = ctx.time(lambda i: rt.launch(module, "mb_smem_chase", (1, 1, 1), (256, 1, 1),
                                              [buf, SMEM_CHASE_WORDS, SMEM_CHASE_STEPS, out]),
                          warmup=2, min_reps=5)
        host = rt.download(out, (3,), np.uint64)
    finally:
        rt.free(buf)
        rt.free(out)
    return _latency_rows(host, SMEM_CHASE_STEPS, result, SMEM_CHASE_WORDS * 4)


# ---- plan --------------------------------------------------------------------------------
def memory_measurements(dev: DeviceFacts, budget_s: float) -> list[Measurement]:
    """DRAM, L2 sweep and latency measurements, in run order."""
    out: list[Measurement] = []
    size = dram_bytes(dev)
    for i, kind in enumerate(("read", "write", "copy")):
        moved = size * (2 if kind == "copy" else 1)
        est = estimate_bench_s(_stream_time_s(moved, dev), budget_s) + (COMPILE_S if i == 0
                                                                        else 0.0)
        out.append(Measurement("micro", f"dram_{kind}", {"bytes": size}, est,
                               lambda ctx, k=kind, s=size: _run_dram(ctx, k, s)))
    for i, ws in enumerate(l2_sweep_sizes(dev)):
        est = estimate_bench_s(_stream_time_s(L2_SWEEP_READ_BYTES, dev) / 2, budget_s)
        out.append(Measurement("micro", "l2_read", {"ws_bytes": ws},
                               est + (COMPILE_S if i == 0 else 0.0),
                               lambda ctx, w=ws: _run_l2(ctx, w)))
    for level in CHASE_LEVELS:
        fp = chase_footprint(level, dev)
        # assumed latencies for the estimate only: 50 / 400 / 1000 cycles per step
        per_step = {"l1": 50, "l2": 400, "dram": 1000}[level] / dev.clock_hz
        kernel_s = chase_steps(level, dev) * per_step * (3 if level == "l1" else 1)
        est = estimate_bench_s(kernel_s, budget_s, warmup=2, min_reps=5) + fp / 2e9
        out.append(Measurement("micro", "chase", {"level": level, "footprint_bytes": fp},
                               est + COMPILE_S * (level == "l1"),
                               lambda ctx, lv=level, f=fp: _run_chase(ctx, lv, f)))
    est = estimate_bench_s(SMEM_CHASE_STEPS * 40 / dev.clock_hz, budget_s, warmup=2,
                           min_reps=5)
    out.append(Measurement("micro", "smem_chase", {"footprint_bytes": SMEM_CHASE_WORDS * 4},
                           est, _run_smem_chase))
    return out
