"""Test cases for the strided-batched SGEMM (gemmmodel.batched): fuzzing, checking, CLI runs.

    fuzz_cases(n, seed)            n argument sets (dicts) for the GPU acceptance run
    check_case(case, runtime=...)  run one case on the GPU and compare with the reference
    run_cli_case("64x64x32x30", "NT", runtime=...)   `gemmmodel run --kernel batched`

Pass rule of a case (float32 arithmetic against the float64 reference, u = 2**-24):
  |C_gpu - C_ref| <= 2 (k + 3) u (|alpha| |op(A)| |op(B)| + |beta| |C|)  element-wise
  (the classic dot-product bound gamma_k, doubled, plus the alpha / beta roundings),
  no NaN where the reference has none, and every element of C's memory outside the
  matrices (ld gaps, gaps between batches) bit-for-bit unchanged. A and B are filled with
  NaN outside their matrices, so a kernel that reads a wrong element shows it as NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import gemmmodel.batched as core
from gemmmodel.errors import BadArgument

UNIT_ROUNDOFF = 2.0 ** -24
SIZES = (1, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129)
LD_EXTRA = (0, 0, 0, 1, 3, 4, 7, 16)
STRIDE_EXTRA = (0, 0, 1, 5, 64)
BATCHES = (1, 1, 2, 3, 5, 8, 17)
ALPHAS = (1.0, 1.0, -1.0, 0.5, 2.5, 0.0)
BETAS = (0.0, 0.0, 0.0, 1.0, -0.5, 2.0)
#: Cases every fuzz run starts with: the contest shapes, sizes 1 and 127, K = 1.
FIXED = ((64, 64, 32, 30), (128, 128, 64, 20), (128, 512, 256, 10), (1, 1, 1, 1),
         (127, 127, 127, 2), (127, 1, 1, 3), (1, 127, 1, 3), (33, 17, 1, 4))
CASE_KEYS = ("trans_a", "trans_b", "m", "n", "k", "alpha", "lda", "stride_a", "ldb",
             "stride_b", "beta", "ldc", "stride_c", "batch_count")


def _stride(rng, extent: int, batch: int, may_broadcast: bool) -> int:
    if batch > 1 and may_broadcast and rng.random() < 0.08:
        return 0  # every batch reads the same matrix
    return extent + int(rng.choice(STRIDE_EXTRA))


def _case(rng, m: int, n: int, k: int, batch: int, ta: str, tb: str) -> dict[str, Any]:
    rows_a, cols_a = (m, k) if ta == "N" else (k, m)
    rows_b, cols_b = (k, n) if tb == "N" else (n, k)
    lda = rows_a + int(rng.choice(LD_EXTRA))
    ldb = rows_b + int(rng.choice(LD_EXTRA))
    ldc = m + int(rng.choice(LD_EXTRA))
    beta = float(rng.choice(BETAS))
    return {
        "trans_a": ta, "trans_b": tb, "m": m, "n": n, "k": k,
        "alpha": float(rng.choice(ALPHAS)), "beta": beta,
        "lda": lda, "ldb": ldb, "ldc": ldc,
        "stride_a": _stride(rng, lda * (cols_a - 1) + rows_a, batch, True),
        "stride_b": _stride(rng, ldb * (cols_b - 1) + rows_b, batch, True),
        "stride_c": _stride(rng, ldc * (n - 1) + m, batch, False),
        "batch_count": batch,
        "nan_c": bool(beta == 0.0 and rng.random() < 0.7),
        "seed": int(rng.integers(0, 2**31)),
    }


def fuzz_cases(n: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """`n` argument sets: FIXED shapes first (all four op pairs of each), then random odd
    sizes, both transposes (and 'C'), ld > rows, padded / zero strides, alpha, beta
    (beta = 0 mostly with a NaN-poisoned C: key nan_c)."""
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    for m, nn, k, batch in FIXED:
        for ta in "NT":
            for tb in "NT":
                out.append(_case(rng, m, nn, k, batch, ta, tb))
    while len(out) < n:
        m, nn = int(rng.choice(SIZES)), int(rng.choice(SIZES))
        k = 1 if rng.random() < 0.1 else int(rng.choice(SIZES))
        ta, tb = (str(rng.choice(["N", "T", "T", "C"])) for _ in range(2))
        out.append(_case(rng, m, nn, k, int(rng.choice(BATCHES)), ta, tb))
    return out[:n]


def _problem(case: dict[str, Any]):
    return core.check_arguments(*(case[key] for key in CASE_KEYS))


def case_arrays(case: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat float32 A, B, C for a case: values in [-1, 1] inside the matrices, NaN outside
    A's and B's matrices; C random (or all NaN with nan_c), gaps included."""
    p = _problem(case)
    rng = np.random.default_rng(case.get("seed", 0))
    out = []
    for name in ("A", "B"):
        flat = np.full(p.needed(name), np.nan, dtype=np.float32)
        for i in range(p.batch_count):
            view = core.matrix_view(flat, p, name, i)
            view[...] = rng.uniform(-1, 1, size=view.shape).astype(np.float32)
        out.append(flat)
    c = rng.uniform(-1, 1, size=p.needed("C")).astype(np.float32)
    if case.get("nan_c"):
        c[:] = np.nan
    out.append(c)
    return out[0], out[1], out[2]


def compare(case: dict[str, Any], a, b, c_before, c_after) -> dict[str, Any]:
    """Check a result against the reference (pass rule in the module docstring)."""
    p = _problem(case)
    args = [case[key] for key in CASE_KEYS]
    ref_args = args[:6] + [a] + args[6:8] + [b] + args[8:11] + [c_before] + args[11:]
    ref = core.reference_strided_batched(*ref_args)
    scale = core.reference_strided_batched(*ref_args, abs_product=True)
    bound = 2.0 * (p.k + 3) * UNIT_ROUNDOFF * scale + 1e-30
    mask = core.matrix_mask(p, c_after.size)
    got = c_after.astype(np.float64)
    err = np.where(mask, np.abs(got - ref), 0.0)
    nan_count = int(np.isnan(got[mask]).sum())
    bad_nan = int((np.isnan(got) & ~np.isnan(ref) & mask).sum())
    outside = c_after.view(np.uint32)[~mask] != c_before.view(np.uint32)[~mask]
    err = np.nan_to_num(err, nan=np.inf)
    ratio = float(np.max(err / bound)) if err.size else 0.0
    ref_max = float(np.max(np.abs(np.where(mask, ref, 0.0)))) or 1.0
    return {"passed": bool(ratio <= 1.0 and bad_nan == 0 and not outside.any()),
            "max_err": float(np.max(err)), "max_err_over_bound": ratio,
            "rel_err": float(np.max(err) / ref_max), "nan_count": nan_count,
            "outside_changed": int(outside.sum())}


def check_case(case: dict[str, Any], runtime=None, config=None) -> dict[str, Any]:
    """Run one case (numpy arrays through sgemm_strided_batched) and compare it."""
    a, b, c = case_arrays(case)
    before = c.copy()
    args = [case[key] for key in CASE_KEYS]
    core.sgemm_strided_batched(*args[:6], a, *args[6:8], b, *args[8:11], c, *args[11:],
                               config=config, runtime=runtime)
    return {**compare(case, a, b, before, c), "case": dict(case)}


def _parse_trans(trans: str) -> tuple[str, str]:
    text = str(trans or "NN").strip().upper()
    if len(text) != 2 or any(ch not in "NTC" for ch in text):
        raise BadArgument(f"--trans {trans!r}: expected two of N, T, C (e.g. NN, NT, TN, TT)")
    return text[0], text[1]


def tight_case(m: int, n: int, k: int, batch: int, ta: str, tb: str, *, alpha: float = 1.0,
               beta: float = 0.0, nan_c: bool = False, seed: int = 0) -> dict[str, Any]:
    """A case with ld = rows and strides = one matrix (packed arrays)."""
    rows_a = m if ta == "N" else k
    rows_b = k if tb == "N" else n
    return {"trans_a": ta, "trans_b": tb, "m": m, "n": n, "k": k, "alpha": alpha, "beta": beta,
            "lda": rows_a, "ldb": rows_b, "ldc": m, "stride_a": m * k, "stride_b": k * n,
            "stride_c": m * n, "batch_count": batch, "nan_c": nan_c, "seed": seed}


def run_cli_case(size_str: str, trans: str = "NN", *, runtime=None, config=None,
                 check: bool = True, budget_s: float = 1.0, seed: int = 0) -> dict[str, Any]:
    """`gemmmodel run --kernel batched --size MxNxKxBATCH --trans XY`: check (beta = 0 with
    C poisoned by NaN, then alpha = 0.75, beta = -0.5) and time one launch with packed
    arrays. Returns the runner's row keys (median_s, …, passed) plus config and launch."""
    from gemmmodel.catalogue import parse_size
    from gemmmodel.runtime.runner import time_gemm

    m, n, k, batch = parse_size(size_str, dims=4)
    ta, tb = _parse_trans(trans)
    if runtime is None:
        from gemmmodel.runtime import get_runtime

        runtime = get_runtime()
    p = _problem(tight_case(m, n, k, batch, ta, tb))
    cfg = core.resolve_config(config, p, runtime)
    entry, grid, block = core.launch_spec(p, cfg)
    out: dict[str, Any] = {"trans": ta + tb, "config": cfg.name, "entry": entry,
                           "grid": list(grid), "block": list(block), "status": "ok"}
    if check:
        results = [check_case(tight_case(m, n, k, batch, ta, tb, alpha=al, beta=be,
                                         nan_c=be == 0.0, seed=seed + i), runtime, cfg)
                   for i, (al, be) in enumerate(((1.0, 0.0), (0.75, -0.5)))]
        out["rel_err"] = max(r["rel_err"] for r in results)
        out["nan_count"] = sum(r["nan_count"] for r in results)
        out["passed"] = all(r["passed"] for r in results)
        out["checks"] = [{key: val for key, val in r.items() if key != "case"} for r in results]
    module = core.compile_batched(runtime, cfg)

    def launch(a_buf, b_buf, c_buf) -> None:
        runtime.launch(module, entry, grid, block, core.kernel_args(p, a_buf, b_buf, c_buf))

    res = time_gemm(runtime, launch, m, n, k, batch=batch, budget_s=budget_s, seed=seed)
    out.update({"median_s": res.median_s, "p20_s": res.p20_s, "p80_s": res.p80_s,
                "spread": res.spread, "reps": res.reps, "noisy": res.noisy})
    return out
