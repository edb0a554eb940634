"""Runtime tests on a real GPU (marker gpu; skipped with the reason where none is found)."""

import numpy as np
import pytest

from gemmmodel import KERNELS_DIR
from gemmmodel.errors import NoGpu

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def rt():
    from gemmmodel.runtime import get_runtime

    try:
        runtime = get_runtime()
    except NoGpu as err:
        pytest.skip(str(err))
    yield runtime
    runtime.close()


SAXPY = """
#include "gemm_port.h"
GM_KERNEL void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


def test_device_info_has_the_provenance_keys(rt):
    info = rt.device_info()
    for key in ("name", "arch", "sms", "l2_bytes", "total_memory_bytes", "clock_source"):
        assert info.get(key) is not None, key
    assert info["sms"] > 0 and info["l2_bytes"] > 0


def test_compile_launch_download(rt):
    module = rt.compile(SAXPY, ["saxpy"], include_dirs=[KERNELS_DIR])
    n = 10_000
    rng = np.random.default_rng()
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    xb, yb = rt.upload(x), rt.upload(y)
    rt.launch(module, "saxpy", ((n + 255) // 256, 1, 1), (256, 1, 1), [n, 2.5, xb, yb])
    rt.synchronize()
    got = rt.download(yb, (n,))
    # the GPU fuses a*x+y into one FMA (one rounding); |values| < 3.5, so 1 ulp < 5e-7
    np.testing.assert_allclose(got, 2.5 * x.astype(np.float64) + y, rtol=0, atol=1e-6)
    rt.free(xb)
    rt.free(yb)
    attrs = rt.function_attributes(module, "saxpy")
    assert attrs["regs"] > 0
    assert rt.occupancy(module, "saxpy", 256) >= 1


def test_bench_times_a_kernel(rt):
    from gemmmodel.runtime.measure import bench

    module = rt.compile(SAXPY, ["saxpy"], include_dirs=[KERNELS_DIR])
    n = 1 << 24
    xb, yb = rt.alloc(4 * n), rt.alloc(4 * n)
    rt.memset_f32(xb, 1.0)
    rt.memset_f32(yb, 0.0)
    res = bench(lambda i: rt.launch(module, "saxpy", (n // 256, 1, 1), (256, 1, 1),
                                    [n, 1.0, xb, yb]), timer=rt.time_s, budget_s=0.5)
    # 3 x 64 MiB moved: well over 10 µs and under 100 ms on any GPU this tool targets
    assert 1e-5 < res.median_s < 0.1
    assert res.p20_s <= res.median_s <= res.p80_s
    rt.free(xb)
    rt.free(yb)


def _catalogue_entries():
    from gemmmodel.catalogue import load_catalogue

    return dict(load_catalogue())


def test_every_catalogue_kernel_is_correct(rt):
    from gemmmodel.runtime.check import check_gemm

    entries = _catalogue_entries()
    if not entries:
        pytest.skip("kernels/catalogue.toml not written yet")
    failures = []
    for kid, entry in entries.items():
        # the smallest shape >= 192 in each dimension that the kernel supports
        m, n, k = (-(-192 // int(entry.multiple_of.get(d, 1))) * int(entry.multiple_of.get(d, 1))
                   for d in "MNK")
        plan = entry.plan(m, n, k)
        module = rt.compile_plan(plan)

        def launch(a, b, c, alpha, beta, plan=plan, module=module, m=m, n=n, k=k):
            rt.launch_plan(module, plan, m, n, k, alpha, a, b, beta, c)
        for alpha, beta in ((1.0, 0.0), (0.75, -0.5)):
            res = check_gemm(rt, launch, m, n, k, alpha=alpha, beta=beta)
            if not res.passed:
                failures.append(f"{kid} {m}x{n}x{k} alpha={alpha} beta={beta}: "
                                f"rel_err {res.rel_err:.3g}, {res.nan_count} NaN")
    assert not failures, "\n".join(failures)


def test_vendor_blas_is_true_fp32(rt):
    from gemmmodel.errors import ToolMissing
    from gemmmodel.runtime.check import check_gemm
    from gemmmodel.runtime.vendor import vendor_blas

    try:
        blas = vendor_blas(rt)
    except ToolMissing as err:
        pytest.skip(str(err))
    m, n, k = 512, 384, 1024

    def launch(a, b, c, alpha, beta):
        blas.sgemm(m, n, k, alpha, a, b, beta, c)
    res = check_gemm(rt, launch, m, n, k)
    assert res.passed and res.rel_err < 1e-5  # TF32 would give ~3e-4


def test_inner_loop_micro_places_blocks_and_stays_under_the_peak(rt):
    """Run N's microbenchmark (tools/device/inner_loop.py) on this GPU: every SM holds nb
    blocks at once, the FMA rate per scheduler stays at or below the FP32 peak (1 warp FMA
    per clock), and two warps per scheduler issue faster than one (H200: 0.66 -> 0.81)."""
    import sys

    from gemmmodel import PROJECT_DIR

    if rt.vendor != "nvidia":
        pytest.skip("the inner-loop microbenchmark is NVIDIA-only (%globaltimer, %smid)")
    sys.path.insert(0, str(PROJECT_DIR / "tools" / "device"))
    import inner_loop

    sms = int(rt.device_info()["sms"])
    name = "64x128x16/8x8/p4"
    cfg, module, attrs = inner_loop.open_config(rt, name)
    rows = [inner_loop.measure(rt, sms, name, cfg, module, attrs, nb, repeats=2)
            for nb in (1, 2)]
    for nb, row in zip((1, 2), rows):
        assert row["sms_used"] == sms and row["blocks_per_sm_seen"] == [nb]
        assert row["min_blocks_at_once"] == nb
        assert 0.2 < row["fma_rate_per_scheduler"] <= 1.02
    assert rows[1]["fma_rate_per_scheduler"] > 1.05 * rows[0]["fma_rate_per_scheduler"]


def test_batched_entry_registers_match_the_committed_device_table(rt):
    """calibration/<gpu>/build_registers.csv (device runs W and H6) holds what this GPU's
    compiler gives the strided-batched entry; the model takes a batched launch's registers
    from it."""
    from gemmmodel.batched import compile_batched
    from gemmmodel.compile.table import device_build_registers
    from gemmmodel.template import parse_name
    from gemmmodel.template.plan import BATCHED_ENTRIES

    gpu_name = str(rt.device_info().get("name", ""))
    folder = "h200" if "H200" in gpu_name else "h100" if "H100" in gpu_name else None
    if folder is None:
        pytest.skip("the committed tables are the H200's and the H100's")
    table = device_build_registers(folder)
    for name in ("32x32x8/8x4/db", "64x64x16/8x4/p4"):
        regs = rt.function_attributes(compile_batched(rt, parse_name(name)),
                                      BATCHED_ENTRIES[(False, False)])["regs"]
        assert regs == table[("batched", name)], name


def test_global_copies_cost_the_sm_by_lines(rt):
    """Runs H6c / AR's microbenchmark (tools/device/cp_async_rows.py) on this GPU: a warp
    instruction whose lanes span 16 lines (the A tile's copies at BK 8) costs 2.5-4.5x one
    that spans 4 (BK 32), for 4-byte cp.async and for ld.global.v4 alike, at about one
    clock per line (gemmmodel/model/lines.py)."""
    import sys

    from gemmmodel import PROJECT_DIR

    if rt.vendor != "nvidia":
        pytest.skip("cp.async and the row kernels are NVIDIA sm_80+ only")
    sys.path.insert(0, str(PROJECT_DIR / "tools" / "device"))
    import cp_async_rows as tool

    sms = int(rt.device_info()["sms"])
    src = rt.upload(np.random.default_rng().uniform(-1, 1, 8 * tool.WINDOW_WORDS)
                    .astype(np.float32))
    timing, sink = rt.alloc(16 * sms), rt.alloc(4 * sms * tool.THREADS)
    try:
        for kind, nbytes, entry in tool.KINDS:
            if nbytes == 16 and kind == "cp_async":
                continue
            clk = {}
            for lanes in (2, 8):
                module = rt.compile_file(KERNELS_DIR / "micro" / "smem.cu", [entry],
                                         {"CP_ROW_LANES": lanes, "CP_BYTES": nbytes, "VEC": 1})
                clk[lanes] = tool.measure(rt, sms, module, entry, 4128, src, timing,
                                          sink)["cycles_per_warp_instruction"]
            assert 2.5 < clk[2] / clk[8] < 4.5, (kind, clk)
            assert 12.0 < clk[2] < 22.0, (kind, clk)        # 16 lines: ~1 clock each
    finally:
        for buf in (src, timing, sink):
            rt.free(buf)
