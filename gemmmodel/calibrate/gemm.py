"""Check and time one GEMM launch in a sweep, on inputs made once per shape.

A sweep runs dozens of kernels on each shape, so the inputs are drawn once per shape (fixed
seed), their float64 reference is computed once, and the device input sets (rotated past the
L2 as gemmmodel.runtime.runner.time_gemm does: measure.rotations_needed, at most
MEMORY_FRACTION of device memory) are uploaded once and kept for the next kernel (the last
MAX_SHAPES shapes; `release` frees them at the end of a run). Per kernel, nothing is drawn
or uploaded: set 0 is checked, then all sets are timed.

Check (gemmmodel.runtime.check's metric): C of set 0 poisoned with NaN, beta = 0, one launch
(timed with one event pair), rel_err = ||C - ref||_F / ||ref||_F in float64 over the checked
rows (every row up to 4096³, else 514 sampled rows), pass iff rel_err < 1e-5 and no NaN/Inf
anywhere in C. Timing: measure.bench over the sets, with time_gemm's short-kernel policy
(several launches per sample behind a spin hold when one launch is under SHORT_KERNEL_S).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gemmmodel.runtime.check import TOLERANCE, choose_rows, compare, random_inputs, reference
from gemmmodel.runtime.measure import rotations_needed
from gemmmodel.runtime.runner import MEMORY_FRACTION, group_timer

MAX_SHAPES = 4
MAX_INNER = 64


@dataclass(frozen=True)
class ShapeInputs:
    """Host inputs of one shape (packed row-major batches when batch > 1), the float64
    reference of the checked rows, the device input sets [(A, B, C), …]."""

    m: int
    n: int
    k: int
    batch: int
    a: np.ndarray
    b: np.ndarray
    rows: np.ndarray | None
    ref: np.ndarray
    seed: int
    sets: tuple


@dataclass(frozen=True)
class GemmCheck:
    rel_err: float
    nan_count: int
    passed: bool
    rows_checked: int
    launch_s: float      # device time of the checked launch (one event pair)
    seed: int


def _make(rt, info: dict, m: int, n: int, k: int, batch: int) -> ShapeInputs:
    seed = 1000003 * m + 1009 * n + 17 * k + batch
    rng = np.random.default_rng(seed)
    if batch == 1:
        a, b, _ = random_inputs(m, n, k, rng)
        rows = choose_rows(m, n, k, rng)
        ref = reference(a, b, None, 1.0, 0.0, rows)
    else:
        a = rng.uniform(-1.0, 1.0, size=(batch, m, k)).astype(np.float32)
        b = rng.uniform(-1.0, 1.0, size=(batch, k, n)).astype(np.float32)
        rows, ref = None, np.matmul(a.astype(np.float64), b.astype(np.float64))
    c_bytes = 4 * batch * m * n
    total = info.get("total_memory_bytes")
    n_sets = rotations_needed(a.nbytes + b.nbytes + c_bytes, info.get("l2_bytes"),
                              max_total_bytes=int(MEMORY_FRACTION * total) if total else None)
    sets = []
    try:
        for _ in range(n_sets):
            sets.append((rt.upload(a), rt.upload(b), rt.alloc(c_bytes)))
    except BaseException:
        for bufs in sets:
            for buf in bufs:
                rt.free(buf)
        raise
    return ShapeInputs(m, n, k, batch, a, b, rows, ref, seed, tuple(sets))


def shape_inputs(ctx, m: int, n: int, k: int, batch: int = 1) -> ShapeInputs:
    """The inputs of a shape, made on first use and kept in ctx.cache (last MAX_SHAPES)."""
    held: dict = ctx.cache.setdefault("gemm_shapes", {})
    key = (m, n, k, batch)
    if key in held:
        held[key] = held.pop(key)  # most recently used last
        return held[key]
    while len(held) >= MAX_SHAPES:
        _free(ctx, held.pop(next(iter(held))))
    info = ctx.cache.get("device_info") or ctx.rt.device_info()
    ctx.cache["device_info"] = info
    held[key] = _make(ctx.rt, info, m, n, k, batch)
    return held[key]


def _free(ctx, inputs: ShapeInputs) -> None:
    blas = ctx.cache.get("blas")
    for bufs in inputs.sets:
        for buf in bufs:
            if blas is not None:
                blas.forget(buf)
            ctx.rt.free(buf)


def release(ctx) -> None:
    """Free every cached device input set (end of a run)."""
    held = ctx.cache.pop("gemm_shapes", {})
    for inputs in held.values():
        _free(ctx, inputs)


def check(ctx, inputs: ShapeInputs, launch: Callable[..., None]) -> GemmCheck:
    """One NaN-poisoned, timed launch on set 0, compared with the float64 reference."""
    rt = ctx.rt
    a, b, c = inputs.sets[0]
    rt.memset_f32(c, float("nan"))
    launch_s = rt.time_s(lambda: launch(a, b, c))
    m, n, batch = inputs.m, inputs.n, inputs.batch
    out = rt.download(c, (batch * m, n), np.float32)
    if batch == 1:
        rel, _, nonfinite, passed = compare(out, inputs.ref, inputs.rows, TOLERANCE)
        checked = m if inputs.rows is None else len(inputs.rows)
    else:
        rel, _, nonfinite, passed = compare(out, inputs.ref.reshape(batch * m, n), None,
                                            TOLERANCE)
        checked = batch * m
    return GemmCheck(rel_err=rel, nan_count=nonfinite, passed=passed, rows_checked=checked,
                     launch_s=launch_s, seed=inputs.seed)


def time_sets(ctx, inputs: ShapeInputs, launch: Callable[..., None], first_s: float):
    """measure.bench of launch(A, B, C) rotating over the shape's sets (BenchResult)."""
    rt, sets = ctx.rt, inputs.sets
    inner, timer = group_timer(rt, lambda: launch(*sets[0]), first_s=first_s,
                               max_inner=MAX_INNER, tries=2)
    return ctx.time(lambda i: launch(*sets[i]), n_rotations=len(sets), inner=inner,
                    timer=timer)
