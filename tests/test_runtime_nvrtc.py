"""NVRTC compiles (no GPU needed): gemm_port.h, -D defines, errors, catalogue sources.

Skipped with the reason when cuda-python or the NVRTC library is not installed.
"""

import pytest

from gemmmodel import KERNELS_DIR
from gemmmodel.errors import CompileError, GemmModelError
from gemmmodel.runtime.base import compile_options


def _nvrtc():
    try:
        from gemmmodel.runtime.cuda import import_cuda, nvrtc_version

        nvrtc = import_cuda()[1]
        nvrtc_version(nvrtc)
        return nvrtc
    except (GemmModelError, RuntimeError, OSError) as err:
        pytest.skip(f"NVRTC not usable here: {type(err).__name__}: {str(err)[:120]}")


SOURCE = """
#include "gemm_port.h"
#if SCALE != 3
#error "SCALE define did not arrive"
#endif
GM_KERNEL void sgemm_probe(int M, int N, int K, float alpha, const float* __restrict__ A,
                           const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ float4 tile[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x % 64] = GM_LD4(A + 4 * (threadIdx.x % 64));
#if defined(GM_CP_ASYNC)
  gm_cp_async16(&tile[0], A);
  gm_cp_async_commit();
  gm_cp_async_wait<0>();
#endif
  __syncthreads();
  if (i < M * N) C[i] = alpha * SCALE * tile[0].x + beta * C[i];
}
"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_port_header_and_defines_compile_to_cubin(arch):
    from gemmmodel.runtime.cuda import nvrtc_compile

    opts = compile_options(f"-arch={arch}", {"SCALE": 3}, [KERNELS_DIR])
    cubin, _log = nvrtc_compile(SOURCE, "probe.cu", opts, _nvrtc())
    assert cubin[:4] == b"\x7fELF"          # a cubin, not PTX
    assert b"sgemm_probe" in cubin


def test_missing_define_is_a_compile_error_with_the_log():
    from gemmmodel.runtime.cuda import nvrtc_compile

    opts = compile_options("-arch=sm_90", {"SCALE": 2}, [KERNELS_DIR])
    with pytest.raises(CompileError, match="SCALE define did not arrive"):
        nvrtc_compile(SOURCE, "probe.cu", opts, _nvrtc())


def test_catalogue_sources_compile_with_nvrtc():
    from gemmmodel.catalogue import load_catalogue
    from gemmmodel.runtime.cuda import NVRTC_BASE_OPTIONS, nvrtc_compile

    nvrtc = _nvrtc()
    entries = load_catalogue()
    failures = []
    for kid, entry in entries.items():
        opts = compile_options("-arch=sm_90", {}, [entry.source.parent, KERNELS_DIR],
                               NVRTC_BASE_OPTIONS)
        try:
            cubin, _ = nvrtc_compile(entry.source.read_text(), entry.source.name, opts, nvrtc)
        except CompileError as err:
            failures.append(f"{kid}: {err}")
            continue
        if entry.entry.encode() not in cubin:
            failures.append(f"{kid}: entry {entry.entry} missing from the cubin")
    assert not failures, "\n".join(failures)
