"""Argument checks of sgemm_strided_batched: every bad argument gives one clear BadArgument
line, and nothing is uploaded, compiled or launched (a FakeRuntime records everything)."""

from __future__ import annotations

import numpy as np
import pytest

from gemmmodel.batched import (
    BIG_CONFIG,
    SMALL_CONFIG,
    check_arguments,
    choose_config,
    sgemm_strided_batched,
)
from gemmmodel.errors import BadArgument, InvalidConfig
from gemmmodel.runtime.base import DeviceBuffer
from gemmmodel.runtime.fake import FakeRuntime
from gemmmodel.template import TileConfig

# A valid call: m=5, n=4, k=3, batch 2, A 'N' (5 x 3, lda 6), B 'T' (stored 4 x 3, ldb 4).
GOOD = {"trans_a": "N", "trans_b": "T", "m": 5, "n": 4, "k": 3, "alpha": 1.5, "lda": 6,
        "stride_a": 20, "ldb": 4, "stride_b": 12, "beta": 0.0, "ldc": 5, "stride_c": 20,
        "batch_count": 2}
ORDER = ("trans_a", "trans_b", "m", "n", "k", "alpha", "A", "lda", "stride_a", "B", "ldb",
         "stride_b", "beta", "C", "ldc", "stride_c", "batch_count")


def arrays(**sizes):
    a = np.zeros(sizes.get("a", 6 * 2 + 5 + 20), np.float32)
    b = np.zeros(sizes.get("b", 4 * 2 + 4 + 12), np.float32)
    c = np.zeros(sizes.get("c", 5 * 3 + 5 + 20), np.float32)
    return a, b, c


def call(rt, arrs=None, **changes):
    a, b, c = arrs or arrays()
    kw = {**GOOD, "A": a, "B": b, "C": c, **changes}
    return sgemm_strided_batched(*(kw[key] for key in ORDER), runtime=rt)


BAD = [
    ({"trans_a": "X"}, "trans_a='X': must be 'N', 'T' or 'C'"),
    ({"trans_b": 1}, "trans_b=1: must be 'N', 'T' or 'C'"),
    ({"trans_a": "NT"}, "trans_a='NT'"),
    ({"m": 0}, "m=0: must be >= 1"),
    ({"n": -3}, "n=-3: must be >= 1"),
    ({"k": 0}, "k=0: must be >= 1"),
    ({"m": 2.5}, "m=2.5: must be an integer"),
    ({"batch_count": 0}, "batch_count=0: must be >= 1"),
    ({"lda": 4}, "lda=4 < 5, the rows of A as stored (trans_a='N': A is 5 x 3 column-major)"),
    ({"trans_a": "T", "lda": 2}, "lda=2 < 3, the rows of A as stored (trans_a='T': A is 3 x 5"),
    ({"ldb": 3}, "ldb=3 < 4, the rows of B as stored (trans_b='T': B is 4 x 3"),
    ({"trans_b": "N", "ldb": 2}, "ldb=2 < 3, the rows of B as stored (trans_b='N'"),
    ({"ldc": 4}, "ldc=4 < 5, the rows of C as stored (C is 5 x 4 column-major)"),
    ({"stride_c": 19}, "stride_c=19 < 20 = ldc*(n-1)+m, the extent of one C matrix"),
    ({"stride_a": -1}, "stride_a=-1: must be >= 0"),
    ({"alpha": "1"}, "alpha='1': must be a real number"),
    ({"beta": 1j}, "beta=1j: must be a real number"),
    ({"lda": 2**30, "stride_a": 0}, "A spans"),
]


@pytest.mark.parametrize("changes,message", BAD)
def test_bad_scalar_argument_is_one_line_and_launches_nothing(changes, message):
    rt = FakeRuntime()
    with pytest.raises(BadArgument) as info:
        call(rt, **changes)
    text = str(info.value)
    assert text.startswith(message), text
    assert "\n" not in text
    assert rt.launches == [] and rt.compiled == [] and rt.memory == {}


BAD_ARRAYS = [
    ({"a": 36}, "A has 36 elements, needs 37"),
    ({"b": 23}, "B has 23 elements, needs 24"),
    ({"c": 39}, "C has 39 elements, needs 40"),
]


@pytest.mark.parametrize("sizes,message", BAD_ARRAYS)
def test_array_too_small(sizes, message):
    rt = FakeRuntime()
    with pytest.raises(BadArgument, match=message):
        call(rt, arrays(**sizes))
    assert rt.launches == [] and rt.memory == {}


def test_array_type_checks():
    rt = FakeRuntime()
    a, b, c = arrays()
    with pytest.raises(BadArgument, match="A has dtype float64: must be float32"):
        call(rt, (a.astype(np.float64), b, c))
    with pytest.raises(BadArgument, match="B is not contiguous"):
        call(rt, (a, np.zeros(48, np.float32)[::2], c))
    ro = c.copy()
    ro.flags.writeable = False
    with pytest.raises(BadArgument, match="C is read-only"):
        call(rt, (a, b, ro))
    with pytest.raises(BadArgument, match="C must be a float32 numpy array or a device buffer"):
        call(rt, (a, b, list(c)))
    with pytest.raises(BadArgument, match=r"C buffer has 100 B, needs 160 B"):
        call(rt, (a, b, DeviceBuffer(ptr=0x1000, nbytes=100)))
    assert rt.launches == [] and rt.memory == {}


def scalars(**changes):
    """GOOD's scalar arguments in check_arguments order."""
    kw = {**GOOD, **changes}
    return [kw[key] for key in ORDER if key not in ("A", "B", "C")]


def test_stride_rules():
    """A/B may overlap or broadcast (read-only); C may not overlap unless batch_count == 1."""
    p = check_arguments(*scalars(stride_a=0, stride_b=1))
    assert (p.stride_a, p.stride_b, p.batch_count) == (0, 1, 2)
    p = check_arguments("N", "N", 5, 4, 3, 1.0, 5, 1, 3, 1, 0.0, 5, 0, 1)
    assert p.batch_count == 1 and p.stride_c == 0
    with pytest.raises(BadArgument, match="batches of C would overlap"):
        check_arguments("N", "N", 5, 4, 3, 1.0, 5, 1, 3, 1, 0.0, 5, 0, 2)


def test_conjugate_transpose_is_transpose_and_case_is_ignored():
    p = check_arguments("c", "n", 5, 4, 3, 1.0, 3, 15, 3, 12, 0.0, 5, 20, 1)
    assert (p.trans_a, p.trans_b) == ("T", "N")


def test_valid_call_launches_the_row_major_problem():
    """C^T = op(B)^T op(A)^T: M' = n, N' = m, A' = B (transposed: trans_b='T'), B' = A."""
    rt = FakeRuntime(info={"sms": 132})
    a, b, c = arrays()
    call(rt, (a, b, c))
    (launch,) = rt.launches
    assert launch["entry"] == "sgemm_tile_batched_tn"
    cfg = choose_config(check_arguments(*scalars()), 132)
    assert cfg.name == SMALL_CONFIG
    assert launch["grid"] == (1, 1, 2) and launch["block"] == (cfg.threads, 1, 1)
    (n_, m_, k_, alpha, _b, ldb, sb, _a, lda, sa, beta, _c, ldc, sc, batch) = \
        launch["args"]
    assert (n_, m_, k_, ldb, sb, lda, sa, ldc, sc, batch) == (4, 5, 3, 4, 12, 6, 20, 5, 20, 2)
    assert alpha == pytest.approx(1.5) and beta == 0.0
    options = rt.compiled[0]["options"]
    assert "-DGM_BATCHED=1" in options and "-DEDGE=1" in options
    assert len(rt.compiled[0]["entries"]) == 4
    assert rt.memory == {}  # uploads freed


def test_device_buffers_stay_on_the_device():
    rt = FakeRuntime()
    a, b, c = arrays()
    bufs = [rt.upload(x) for x in (a, b, c)]
    out = call(rt, tuple(bufs))
    assert out is bufs[2] and len(rt.launches) == 1 and len(rt.memory) == 3


def test_config_choice_for_the_contest_cases_and_a_big_problem():
    for m, n, k, batch in ((64, 64, 32, 30), (128, 128, 64, 20), (128, 512, 256, 10)):
        p = check_arguments("N", "N", m, n, k, 1.0, m, m * k, k, k * n, 0.0, m, m * n, batch)
        assert choose_config(p, 132).name == SMALL_CONFIG
    p = check_arguments("N", "N", 4096, 4096, 64, 1.0, 4096, 0, 64, 0, 0.0, 4096, 0, 1)
    assert choose_config(p, 132).name == BIG_CONFIG


BAD_CONFIGS = [
    # (config, device arch, the start of the error): GPU limits where the arch has a spec,
    # the GPU-independent rules where it has none
    ("128x256x32/8x8/db", "sm_90", "invalid tile config 128x256x32/8x8/db: LDS 98304 B"),
    ("128x128x8/16x16", "sm_90", "invalid tile config 128x128x8/16x16: registers: about 358"),
    ("64x64x16/4x4/w32x32", "sm_90", "invalid tile config 64x64x16/4x4/w32x32: warp tile"),
    (TileConfig(100, 128, 8, 8, 8), "fake_0", "invalid tile config 100x128x8/8x8: BM=100 is"),
]


@pytest.mark.parametrize("config,arch,message", BAD_CONFIGS)
def test_invalid_config_is_rejected_before_compiling(config, arch, message):
    rt = FakeRuntime(info={"arch": arch})
    kw = {**GOOD, "A": arrays()[0], "B": arrays()[1], "C": arrays()[2]}
    with pytest.raises(InvalidConfig) as info:
        sgemm_strided_batched(*(kw[key] for key in ORDER), runtime=rt, config=config)
    assert str(info.value).startswith(message), str(info.value)
    assert rt.launches == [] and rt.compiled == [] and rt.memory == {}


@pytest.mark.parametrize("config,arch", [(BIG_CONFIG, "sm_90"), ("64x64x16/4x4/w32x32", "gfx908")])
def test_valid_explicit_config_runs_on_a_known_arch(config, arch):
    rt = FakeRuntime(info={"arch": arch})
    kw = {**GOOD, "A": arrays()[0], "B": arrays()[1], "C": arrays()[2]}
    sgemm_strided_batched(*(kw[key] for key in ORDER), runtime=rt, config=config)
    assert len(rt.launches) == 1 and "-DBM=64" in rt.compiled[0]["options"]


def test_row_major_problem_is_the_transposed_blas_call():
    from gemmmodel.batched import reference_strided_batched, row_major_problem

    m, n, k, batch = 3, 5, 4, 2
    p = row_major_problem(m, n, k, batch)
    assert (p.m, p.n, p.k, p.batch_count) == (n, m, k, batch)
    assert (p.lda, p.stride_a, p.ldb, p.stride_b, p.ldc, p.stride_c) == \
        (n, k * n, k, m * k, n, m * n)
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (batch, m, k))
    b = rng.uniform(-1, 1, (batch, k, n))
    # the BLAS call takes B first (kernel_args(p, B, A, C)); C comes out row-major A @ B
    out = reference_strided_batched(p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, b.ravel(),
                                    p.lda, p.stride_a, a.ravel(), p.ldb, p.stride_b, p.beta,
                                    np.full(batch * m * n, np.nan), p.ldc, p.stride_c,
                                    p.batch_count)
    assert np.allclose(out.reshape(batch, m, n), a @ b)
