"""The numpy reference of the strided-batched SGEMM, the fuzz cases, the pass rule, and
run_cli_case end to end on a FakeRuntime with a numpy kernel."""

from __future__ import annotations

import numpy as np
import pytest

from gemmmodel.batched import (
    case_arrays,
    check_case,
    fuzz_cases,
    reference_strided_batched,
    run_cli_case,
    tight_case,
)
from gemmmodel.batched_cases import CASE_KEYS, compare
from gemmmodel.errors import BadArgument
from gemmmodel.runtime.fake import FakeRuntime
from gemmmodel.template import BATCHED_ENTRIES


def naive(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch):
    """Triple loop straight from the BLAS definition (column-major, X_i = X + i*stride)."""
    out = c.astype(np.float64).copy()
    for z in range(batch):
        for i in range(m):
            for j in range(n):
                acc = 0.0
                for p in range(k):
                    av = a[z * sa + (i + p * lda if ta == "N" else p + i * lda)]
                    bv = b[z * sb + (p + j * ldb if tb == "N" else j + p * ldb)]
                    acc += float(av) * float(bv)
                idx = z * sc + i + j * ldc
                out[idx] = alpha * acc + (beta * float(c[idx]) if beta != 0.0 else 0.0)
    return out


CASES = [
    ("N", "N", 3, 4, 2, 1.0, 0.0, 3, 4, 3, 1),
    ("T", "N", 3, 2, 5, -0.5, 2.0, 7, 6, 4, 2),     # ld > rows everywhere
    ("N", "T", 4, 3, 1, 2.0, 1.0, 4, 3, 5, 3),      # K = 1
    ("C", "C", 2, 5, 3, 1.0, -1.0, 3, 5, 2, 2),
]


@pytest.mark.parametrize("ta,tb,m,n,k,alpha,beta,lda,ldb,ldc,batch", CASES)
def test_reference_matches_the_naive_loop(ta, tb, m, n, k, alpha, beta, lda, ldb, ldc, batch):
    rows_a, cols_a = (m, k) if ta == "N" else (k, m)
    rows_b, cols_b = (k, n) if tb == "N" else (n, k)
    sa = lda * (cols_a - 1) + rows_a + 3           # padded strides
    sb = ldb * (cols_b - 1) + rows_b + 1
    sc = ldc * (n - 1) + m + 2
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (batch - 1) * sa + lda * (cols_a - 1) + rows_a).astype(np.float32)
    b = rng.uniform(-1, 1, (batch - 1) * sb + ldb * (cols_b - 1) + rows_b).astype(np.float32)
    c = rng.uniform(-1, 1, (batch - 1) * sc + ldc * (n - 1) + m).astype(np.float32)
    args = (ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch)
    want = naive(*args)   # 'C' takes the transposed branch there, as it must for real data
    got = reference_strided_batched(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert got.dtype == np.float64


def test_reference_never_reads_c_when_beta_is_zero():
    a, b = np.ones(6, np.float32), np.ones(6, np.float32)
    c = np.full(9, np.nan, np.float32)
    got = reference_strided_batched("N", "N", 2, 3, 2, 1.0, a, 2, 0, b, 2, 0, 0.0, c, 3, 0, 1)
    mask = np.ones(9, bool)
    mask[[2, 5, 8]] = False                       # ldc = 3 > m = 2: row 2 is a gap
    assert np.all(got[mask] == 2.0) and np.all(np.isnan(got[~mask]))


def test_reference_broadcasts_a_with_stride_zero():
    a = np.array([1, 2, 3, 4], np.float32)          # one 2 x 2 A for both batches
    b = np.arange(8, dtype=np.float32)              # two 2 x 2 B
    c = np.zeros(8, np.float32)
    got = reference_strided_batched("N", "N", 2, 2, 2, 1.0, a, 2, 0, b, 2, 4, 0.0, c, 2, 4, 2)
    amat = a.reshape(2, 2, order="F")
    for z in range(2):
        bz = b[4 * z:4 * z + 4].reshape(2, 2, order="F")
        np.testing.assert_allclose(got[4 * z:4 * z + 4].reshape(2, 2, order="F"), amat @ bz)


@pytest.mark.parametrize("seed", [0, 2026])  # 2026: tools/device/acceptance.py fuzz default
def test_fuzz_cases_cover_what_the_acceptance_run_needs(seed):
    """The 1000 cases behind calibration/h200/batched_fuzz.json are fuzz_cases(1000, 2026)."""
    cases = fuzz_cases(1000, seed=seed)
    assert len(cases) == 1000 and cases == fuzz_cases(1000, seed=seed)
    assert {(c["trans_a"], c["trans_b"]) for c in cases} >= {("N", "N"), ("N", "T"), ("T", "N"),
                                                           ("T", "T")}
    assert any(c["trans_a"] == "C" for c in cases)
    assert any(c["k"] == 1 for c in cases)
    assert any(1 in (c["m"], c["n"]) for c in cases) and any(127 in (c["m"], c["n"])
                                                             for c in cases)
    assert any(c["lda"] > (c["m"] if c["trans_a"] == "N" else c["k"]) for c in cases)
    assert any(c["ldc"] > c["m"] for c in cases)
    assert any(c["stride_a"] == 0 and c["batch_count"] > 1 for c in cases)
    assert any(c["stride_c"] > c["ldc"] * (c["n"] - 1) + c["m"] and c["batch_count"] > 1
               for c in cases)
    assert any(c["alpha"] not in (0.0, 1.0) for c in cases)
    assert any(c["beta"] not in (0.0, 1.0) for c in cases)
    assert sum(c["nan_c"] for c in cases) > 100
    assert all(c["beta"] == 0.0 for c in cases if c["nan_c"])
    shapes = {(c["m"], c["n"], c["k"], c["batch_count"]) for c in cases}
    assert {(64, 64, 32, 30), (128, 128, 64, 20), (128, 512, 256, 10)} <= shapes
    for case in cases[:200]:   # every case passes the argument checks
        c = case_arrays(case)[2]
        assert np.isnan(c).all() == case["nan_c"]


def test_pass_rule_catches_wrong_results():
    case = tight_case(7, 5, 4, 2, "T", "N", alpha=1.0, beta=0.5, seed=2)
    case.update(ldc=9, stride_c=9 * 4 + 7 + 3)
    a, b, c = case_arrays(case)
    args = [case[key] for key in CASE_KEYS]
    good = reference_strided_batched(*args[:6], a, *args[6:8], b, *args[8:11], c,
                                     *args[11:]).astype(np.float32)
    assert compare(case, a, b, c, good)["passed"]
    off = good.copy()
    off[0] += 1e-3                                   # a wrong element of C_0
    assert not compare(case, a, b, c, off)["passed"]
    gap = good.copy()
    gap[7] = 123.0                                   # row 7 of column 0: an ldc gap
    res = compare(case, a, b, c, gap)
    assert not res["passed"] and res["outside_changed"] == 1


def numpy_batched_kernel(rt, grid, block, values, shared_bytes, *, ta, tb):
    """The kernel's contract in numpy: the row-major problem C' = A' B' per batch, with
    A' / B' stored transposed when ta / tb (sgemm_tile.cu gemm<TA, TB>)."""
    m, n, k, alpha, a_ptr, lda, sa, b_ptr, ldb, sb, beta, c_ptr, ldc, sc, batch = values
    a, b, c = (rt.memory[p].view(np.float32) for p in (a_ptr, b_ptr, c_ptr))
    st = np.lib.stride_tricks.as_strided
    for z in range(batch):
        am = st(a[z * sa:], (m, k), (4, 4 * lda) if ta else (4 * lda, 4))
        bm = st(b[z * sb:], (k, n), (4, 4 * ldb) if tb else (4 * ldb, 4))
        cm = st(c[z * sc:], (m, n), (4 * ldc, 4))
        out = alpha * (am.astype(np.float64) @ bm)
        if beta != 0.0:
            out += beta * cm
        cm[...] = out.astype(np.float32)


def numpy_runtime() -> FakeRuntime:
    kernels = {entry: (lambda *a, ta=ta, tb=tb: numpy_batched_kernel(*a, ta=ta, tb=tb))
               for (ta, tb), entry in BATCHED_ENTRIES.items()}
    return FakeRuntime(kernels=kernels, info={"sms": 132})


def test_fuzz_cases_pass_through_the_host_mapping():
    rt = numpy_runtime()
    for case in fuzz_cases(60, seed=5):
        if case["m"] * case["n"] * case["batch_count"] > 200_000:
            continue
        res = check_case(case, runtime=rt)
        assert res["passed"], res


def test_run_cli_case_checks_and_times():
    rt = numpy_runtime()
    out = run_cli_case("20x12x9x3", "TN", runtime=rt, budget_s=0.05)
    assert out["passed"] and out["nan_count"] == 0 and out["status"] == "ok"
    assert out["trans"] == "TN" and out["entry"] == "sgemm_tile_batched_nt"
    assert out["median_s"] == pytest.approx(1e-3)   # the FakeRuntime's cost per launch
    assert out["grid"] == [1, 1, 3]
    with pytest.raises(BadArgument, match="--trans 'NX'"):
        run_cli_case("20x12x9x3", "NX", runtime=rt)
    with pytest.raises(BadArgument, match="bad size"):
        run_cli_case("20x12", "NN", runtime=rt)
