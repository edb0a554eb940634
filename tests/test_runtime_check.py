"""check.py: error metric, reference with beta, NaN poisoning, row sampling, fresh inputs;
base.py: argument packing; fake.py: the CPU stand-in runtime they run on."""

import ctypes
import math

import numpy as np
import pytest

from gemmmodel.errors import BadArgument
from gemmmodel.runtime.base import (
    DeviceBuffer,
    compile_options,
    gemm_args,
    pack_param_array,
    to_ctypes,
)
from gemmmodel.runtime.check import (
    TOLERANCE,
    check_gemm,
    choose_rows,
    compare,
    random_inputs,
    reference,
)
from gemmmodel.runtime.fake import FakeRuntime, sgemm_reference_kernel


def test_reference_includes_beta_c0_hand_worked():
    a = np.array([[1, 2], [3, 4]], dtype=np.float32)
    b = np.array([[5, 6], [7, 8]], dtype=np.float32)
    c0 = np.array([[1, -1], [2, 0]], dtype=np.float32)
    # A@B = [[19, 22], [43, 50]]; 2*A@B + 0.5*C0
    ref = reference(a, b, c0, alpha=2.0, beta=0.5)
    np.testing.assert_allclose(ref, [[38.5, 43.5], [87.0, 100.0]])
    assert reference(a, b, None, 1.0, 0.0)[1, 1] == 50.0
    np.testing.assert_allclose(reference(a, b, c0, 1.0, 1.0, rows=np.array([1])), [[45, 50]])
    with pytest.raises(BadArgument):
        reference(a, b, None, 1.0, 1.0)


def test_compare_metric():
    ref = np.array([[3.0, 4.0]])            # ||ref|| = 5
    rel, max_abs, nan, ok = compare(np.array([[3.0, 4.0]], dtype=np.float32), ref)
    assert rel == 0.0 and max_abs == 0.0 and nan == 0 and ok
    rel, max_abs, nan, ok = compare(np.array([[3.0, 4.0005]], dtype=np.float32), ref)
    assert rel == pytest.approx(0.0005 / 5, rel=1e-3) and not ok   # 1e-4 > 1e-5
    rel, max_abs, nan, ok = compare(np.array([[np.nan, 4.0]], dtype=np.float32), ref)
    assert math.isinf(rel) and nan == 1 and not ok


def test_choose_rows_full_or_sampled():
    rng = np.random.default_rng(1)
    assert choose_rows(4096, 4096, 4096, rng) is None
    rows = choose_rows(8192, 8192, 8192, rng, sample_rows=100)
    assert rows[0] == 0 and rows[-1] == 8191 and len(rows) == 102
    assert len(np.unique(rows)) == len(rows)


def _gemm_runtime(kernel=sgemm_reference_kernel):
    return FakeRuntime(kernels={"sgemm_fake": kernel})


def _launcher(rt, m, n, k):
    module = rt.compile("// fake", ["sgemm_fake"])

    def launch(a, b, c, alpha, beta):
        rt.launch(module, "sgemm_fake", (1, 1, 1), (64, 1, 1),
                  gemm_args(m, n, k, alpha, a, b, beta, c))
    return launch


@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (0.75, -0.5)])
def test_correct_kernel_passes_with_fp32_error(alpha, beta):
    rt = _gemm_runtime()
    res = check_gemm(rt, _launcher(rt, 64, 48, 96), 64, 48, 96, alpha=alpha, beta=beta)
    assert res.passed, res
    assert res.rel_err < 1e-6 and res.nan_count == 0
    assert res.poisoned == (beta == 0.0)
    assert rt.memory == {}  # every buffer freed


def _skip_last_row(rt, grid, block, values, shared):
    m, n = values[0], values[1]
    c = rt.view(values[7], (m, n))
    saved = c[-1].copy()
    sgemm_reference_kernel(rt, grid, block, values, shared)
    c[-1] = saved


def test_unwritten_row_shows_as_nan_when_beta_is_zero():
    rt = _gemm_runtime(_skip_last_row)
    res = check_gemm(rt, _launcher(rt, 32, 40, 16), 32, 40, 16, beta=0.0)
    assert not res.passed and res.nan_count == 40
    assert res.to_dict()["rel_err"] is None  # JSON-safe


def test_unwritten_row_shows_as_error_when_beta_is_nonzero():
    rt = _gemm_runtime(_skip_last_row)
    res = check_gemm(rt, _launcher(rt, 32, 40, 16), 32, 40, 16, alpha=1.0, beta=0.5)
    assert not res.passed and res.nan_count == 0 and res.rel_err > 1e-2


def _tf32_like(rt, grid, block, values, shared):
    """Operands rounded to a 10-bit mantissa, as TF32 tensor cores do."""
    m, n, k, _, a_ptr, b_ptr, _, _ = values
    for ptr, shape in ((a_ptr, (m, k)), (b_ptr, (k, n))):
        x = rt.view(ptr, shape)
        bits = x.view(np.uint32)
        bits &= np.uint32(0xFFFFE000)
    sgemm_reference_kernel(rt, grid, block, values, shared)


def test_tf32_like_error_fails_the_fp32_tolerance():
    rt = _gemm_runtime(_tf32_like)
    res = check_gemm(rt, _launcher(rt, 64, 64, 256), 64, 64, 256)
    assert 1e-4 < res.rel_err < 1e-2 and not res.passed
    assert res.tolerance == TOLERANCE


def test_inputs_are_fresh_per_check_and_reproducible_by_seed():
    rt = _gemm_runtime()
    launch = _launcher(rt, 8, 8, 8)
    first = check_gemm(rt, launch, 8, 8, 8)
    second = check_gemm(rt, launch, 8, 8, 8)
    assert first.seed != second.seed
    a1, _, _ = random_inputs(4, 4, 4, np.random.default_rng(first.seed))
    a2, _, _ = random_inputs(4, 4, 4, np.random.default_rng(first.seed))
    np.testing.assert_array_equal(a1, a2)
    assert a1.dtype == np.float32 and np.all(np.abs(a1) <= 1) and np.any(a1 != 0)


def test_args_pack_to_exact_c_types():
    buf = DeviceBuffer(ptr=0xDEAD00, nbytes=64)
    vals = to_ctypes([3, 2.5, buf, np.int64(7), np.uint32(9), ctypes.c_short(4)])
    assert [type(v) for v in vals] == [ctypes.c_int32, ctypes.c_float, ctypes.c_void_p,
                                       ctypes.c_long, ctypes.c_uint32, ctypes.c_short]
    assert vals[2].value == 0xDEAD00 and vals[3].value == 7
    params = pack_param_array(vals)
    assert [params[i] for i in range(len(vals))] == [ctypes.addressof(v) for v in vals]
    g = gemm_args(1, 2, 3, 1.5, buf, buf, 0.0, buf)
    assert [type(v) for v in to_ctypes(g)][:4] == [ctypes.c_int32] * 3 + [ctypes.c_float]
    with pytest.raises(BadArgument):
        to_ctypes([2**31])
    with pytest.raises(BadArgument):
        to_ctypes([True])
    buf.freed = True
    with pytest.raises(BadArgument):
        to_ctypes([buf])


def test_compile_options_and_module_cache():
    opts = compile_options("-arch=sm_90", {"TN": 4, "BM": 64, "EDGE": True}, ["/k"])
    assert opts == ["-arch=sm_90", "--std=c++17", "-I/k", "-DBM=64", "-DEDGE=1", "-DTN=4"]
    rt = FakeRuntime()
    m1 = rt.compile("src", ["e"], {"A": 1})
    assert rt.compile("src", ["e"], {"A": 1}) is m1
    assert rt.compile("src", ["e"], {"A": 2}) is not m1
    assert len(rt.compiled) == 2
    with pytest.raises(BadArgument):
        m1.function("missing")
