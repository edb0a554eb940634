"""Correctness check of one SGEMM launch against a float64 reference on the CPU.

C = alpha * A @ B + beta * C0, row-major, float32 on the device. Inputs are fresh random
uniform(-1, 1) float32 for every check (never zeros: they hide unwritten outputs). With
beta == 0 the output is poisoned with NaN before the launch, so an element the kernel never
writes shows up as NaN (BLAS semantics: C is not read when beta == 0, so a kernel that
computes beta * C also shows NaN there). With beta != 0 the output must hold C0, and an
unwritten element shows up as a large error instead.

Metric: rel_err = ||C - ref||_F / ||ref||_F over the checked rows, in float64; pass iff
rel_err < 1e-5 and no NaN/Inf anywhere in C. FP32 accumulation over K = 4096 of
uniform(-1, 1) products lands near 1e-7..1e-6; TF32 (10-bit mantissa) lands near 3e-4
(METHOD.md), so 1e-5 separates true FP32 from TF32 with margin either way.

Reference cost: all rows up to M*N*K = 4096**3 (a float64 matmul of 1.4e11 FLOP, about a
second on a 16-core host with a multithreaded BLAS). Above that a random subset of rows
(default 512, plus the first and the last row) is checked: each row of C depends on all of
B and one row of A, so every column-tile of the kernel is exercised; a fault confined to
unsampled rows can escape, which is why the NaN count covers every element of C.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from gemmmodel.errors import BadArgument

TOLERANCE = 1e-5
FULL_REFERENCE_MAX_MNK = 4096 ** 3
SAMPLE_ROWS = 512


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check; rel_err and max_abs_err are inf when C holds NaN/Inf."""

    rel_err: float
    max_abs_err: float
    nan_count: int          # NaN or Inf elements anywhere in C
    passed: bool
    tolerance: float
    rows_checked: int
    rows_total: int
    alpha: float
    beta: float
    seed: int
    poisoned: bool          # output NaN-poisoned before the launch (beta == 0)

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("rel_err", "max_abs_err"):
            if not math.isfinite(out[key]):
                out[key] = None
        return out


def random_inputs(m: int, n: int, k: int, rng: np.random.Generator):
    """A (m×k), B (k×n), C0 (m×n): float32 uniform(-1, 1), C-contiguous."""
    def draw(rows: int, cols: int) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, size=(rows, cols)).astype(np.float32)
    return draw(m, k), draw(k, n), draw(m, n)


def choose_rows(m: int, n: int, k: int, rng: np.random.Generator,
                sample_rows: int = SAMPLE_ROWS,
                full_max_mnk: int = FULL_REFERENCE_MAX_MNK) -> np.ndarray | None:
    """Rows to check: None (all) when m*n*k <= full_max_mnk, else a sorted random subset
    of `sample_rows` rows that always holds row 0 and row m-1."""
    if m * n * k <= full_max_mnk or m <= sample_rows + 2:
        return None
    picks = rng.choice(np.arange(1, m - 1), size=sample_rows, replace=False)
    return np.unique(np.concatenate([[0, m - 1], picks]))


def reference(a: np.ndarray, b: np.ndarray, c0: np.ndarray | None, alpha: float, beta: float,
              rows: np.ndarray | None = None) -> np.ndarray:
    """alpha * A @ B + beta * C0 in float64, for `rows` of C only when given."""
    a64 = a.astype(np.float64) if rows is None else a[rows].astype(np.float64)
    ref = alpha * (a64 @ b.astype(np.float64))
    if beta != 0.0:
        if c0 is None:
            raise BadArgument("beta != 0 needs C0 for the reference")
        ref += beta * (c0 if rows is None else c0[rows]).astype(np.float64)
    return ref


def compare(c: np.ndarray, ref: np.ndarray, rows: np.ndarray | None = None,
            tol: float = TOLERANCE) -> tuple[float, float, int, bool]:
    """(rel_err, max_abs_err, nonfinite_count, passed) of device result `c` vs `ref`."""
    nonfinite = int(np.count_nonzero(~np.isfinite(c)))
    got = (c if rows is None else c[rows]).astype(np.float64)
    if got.shape != ref.shape:
        raise BadArgument(f"result shape {got.shape} != reference shape {ref.shape}")
    if not np.all(np.isfinite(got)):
        rel, max_abs = math.inf, math.inf
    else:
        diff = got - ref
        norm = float(np.linalg.norm(ref))
        rel = float(np.linalg.norm(diff)) / norm if norm > 0 else float(np.linalg.norm(diff))
        max_abs = float(np.max(np.abs(diff))) if diff.size else 0.0
    return rel, max_abs, nonfinite, bool(nonfinite == 0 and rel < tol)


def check_gemm(runtime, launch: Callable, m: int, n: int, k: int, *, alpha: float = 1.0,
               beta: float = 0.0, seed: int | None = None, tol: float = TOLERANCE,
               sample_rows: int = SAMPLE_ROWS) -> CheckResult:
    """Run `launch(a_buf, b_buf, c_buf, alpha, beta)` once on fresh inputs and check it.

    `runtime` gives upload/alloc/memset_f32/download/synchronize/free. The seed is drawn
    fresh (OS entropy) unless given, and recorded in the result for reproduction."""
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    a, b, c0 = random_inputs(m, n, k, rng)
    bufs = []
    try:
        a_buf = runtime.upload(a)
        bufs.append(a_buf)
        b_buf = runtime.upload(b)
        bufs.append(b_buf)
        poisoned = beta == 0.0
        if poisoned:
            c_buf = runtime.alloc(c0.nbytes)
            bufs.append(c_buf)
            runtime.memset_f32(c_buf, float("nan"))
        else:
            c_buf = runtime.upload(c0)
            bufs.append(c_buf)
        launch(a_buf, b_buf, c_buf, alpha, beta)
        runtime.synchronize()
        c = runtime.download(c_buf, (m, n), np.float32)
    finally:
        for buf in bufs:
            runtime.free(buf)
    rows = choose_rows(m, n, k, rng, sample_rows)
    ref = reference(a, b, None if poisoned else c0, alpha, beta, rows)
    rel, max_abs, nonfinite, passed = compare(c, ref, rows, tol)
    return CheckResult(rel_err=rel, max_abs_err=max_abs, nan_count=nonfinite, passed=passed,
                       tolerance=tol, rows_checked=m if rows is None else len(rows),
                       rows_total=m, alpha=alpha, beta=beta, seed=seed, poisoned=poisoned)
