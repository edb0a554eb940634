"""Correctness check for sweeps: one launch on fixed inputs per shape, NaN-poisoned output.

The method and metric are gemmmodel.runtime.check's (uniform(-1, 1) inputs, beta = 0 with C
poisoned by NaN, rel_err = ||C - ref||_F / ||ref||_F in float64 over the checked rows, pass iff
rel_err < 1e-5 and no NaN/Inf anywhere in C). What differs: a sweep checks dozens of kernels
on one shape, so the inputs and the float64 reference are made once per shape (fixed seed)
and cached, instead of once per kernel. The checked launch is also timed (one event pair),
which tells the sweep whether the kernel is too slow to repeat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gemmmodel.runtime.check import TOLERANCE, choose_rows, compare, random_inputs, reference

MAX_SHAPES = 4


@dataclass(frozen=True)
class ShapeInputs:
    """Host inputs of one GEMM shape and the float64 reference of the checked rows."""

    a: np.ndarray
    b: np.ndarray
    rows: np.ndarray | None   # None = every row
    ref: np.ndarray
    seed: int


@dataclass(frozen=True)
class SweepCheck:
    rel_err: float
    nan_count: int
    passed: bool
    rows_checked: int
    launch_s: float           # device time of the checked launch (one event pair)
    seed: int


def shape_inputs(cache: dict, m: int, n: int, k: int, batch: int = 1) -> ShapeInputs:
    """Inputs + reference for (m, n, k[, batch]), made once and kept in `cache`.

    batch > 1: packed row-major batches (A: batch*m x k rows ...) checked in full."""
    key = ("shape_inputs", m, n, k, batch)
    if key not in cache:
        seed = 1000003 * m + 1009 * n + 17 * k + batch
        rng = np.random.default_rng(seed)
        if batch == 1:
            a, b, _ = random_inputs(m, n, k, rng)
            rows = choose_rows(m, n, k, rng)
            ref = reference(a, b, None, 1.0, 0.0, rows)
        else:
            a = rng.uniform(-1.0, 1.0, size=(batch, m, k)).astype(np.float32)
            b = rng.uniform(-1.0, 1.0, size=(batch, k, n)).astype(np.float32)
            rows = None
            ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
        # keep the last MAX_SHAPES shapes (a sweep cycles through a few; 8192³ holds ~0.5 GB)
        held = [x for x in cache if isinstance(x, tuple) and x[0] == "shape_inputs"]
        for old in held[: max(0, len(held) - MAX_SHAPES + 1)]:
            del cache[old]
        cache[key] = ShapeInputs(a=a, b=b, rows=rows, ref=ref, seed=seed)
    return cache[key]


def check_launch(rt, cache: dict, launch: Callable[..., Any], m: int, n: int, k: int, *,
                 batch: int = 1, forget: Callable[[Any], None] | None = None) -> SweepCheck:
    """Upload the shape's inputs, poison C with NaN, time one `launch(a, b, c)`, compare.
    `forget(buf)` runs before each buffer is freed (vendor BLAS views)."""
    inp = shape_inputs(cache, m, n, k, batch)
    out_shape = (m, n) if batch == 1 else (batch, m, n)
    bufs = []
    try:
        a_buf = rt.upload(inp.a)
        bufs.append(a_buf)
        b_buf = rt.upload(inp.b)
        bufs.append(b_buf)
        c_buf = rt.alloc(4 * int(np.prod(out_shape)))
        bufs.append(c_buf)
        rt.memset_f32(c_buf, float("nan"))
        launch_s = rt.time_s(lambda: launch(a_buf, b_buf, c_buf))
        rt.synchronize()
        c = rt.download(c_buf, out_shape, np.float32)
    finally:
        for buf in bufs:
            if forget is not None:
                forget(buf)
            rt.free(buf)
    if batch == 1:
        rel, _, nonfinite, passed = compare(c, inp.ref, inp.rows, TOLERANCE)
        checked = m if inp.rows is None else len(inp.rows)
    else:
        rel, _, nonfinite, passed = compare(c.reshape(batch * m, n),
                                            inp.ref.reshape(batch * m, n), None, TOLERANCE)
        checked = batch * m
    return SweepCheck(rel_err=rel, nan_count=nonfinite, passed=passed, rows_checked=checked,
                      launch_s=launch_s, seed=inp.seed)
