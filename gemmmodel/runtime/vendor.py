"""Vendor SGEMM baselines on the runtime's device buffers (row-major, like the catalogue).

- NVIDIA: cuBLAS through CuPy. `cupy.matmul` on float32 calls cuBLAS with FP32 compute; CuPy
  allows TF32 only when the environment variable CUPY_TF32=1 (CuPy docs, "Environment
  variables"), so we refuse to run with it set. The check (rel_err ~1e-7, not ~3e-4)
  confirms true FP32 on the device. Strided batched: matmul on 3-D arrays, which CuPy maps to
  cuBLAS's strided-batched GEMM. CuPy uses the device's primary context and the legacy
  default stream, the same as CudaRuntime, so Runtime.time_s events bracket its kernels.
- AMD: hipBLAS through hip-python (`hip.hipblas`), row-major by the column-major identity
  C^T = B^T A^T (swap A and B, swap m and n). NOT RUN: no AMD GPU was available while this
  was written; it follows the hip-python hipBLAS example (ROCm/hip-python
  examples/0_Basic_Usage/hipblas_with_numpy.py) and has never executed here.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from gemmmodel.errors import BadArgument, ToolMissing
from gemmmodel.runtime.base import DeviceBuffer


class CupyBlas:
    """cuBLAS SGEMM (FP32, TF32 off) via CuPy on buffers of a CudaRuntime."""

    name = "cublas"

    def __init__(self, runtime):
        if os.environ.get("CUPY_TF32", "0").strip() not in ("", "0"):
            raise BadArgument("CUPY_TF32 is set: cuBLAS would use TF32; unset it for FP32")
        try:
            import cupy
        except ImportError as err:
            raise ToolMissing("CuPy is not installed (pip install cupy-cuda12x or "
                              "cupy-cuda13x to match the driver)") from err
        self.cupy = cupy
        self.runtime = runtime
        self._views: dict[tuple, Any] = {}

    def _view(self, buf: DeviceBuffer, shape: tuple[int, ...]):
        key = (buf.ptr, shape)
        if key not in self._views:
            cp = self.cupy
            nbytes = 4
            for dim in shape:
                nbytes *= dim
            if nbytes > buf.nbytes:
                raise BadArgument(f"buffer of {buf.nbytes} B too small for {shape} float32")
            mem = cp.cuda.UnownedMemory(buf.ptr, nbytes, buf)
            self._views[key] = cp.ndarray(shape, dtype=cp.float32,
                                          memptr=cp.cuda.MemoryPointer(mem, 0))
        return self._views[key]

    def sgemm(self, m: int, n: int, k: int, alpha: float, a: DeviceBuffer, b: DeviceBuffer,
              beta: float, c: DeviceBuffer) -> None:
        """C (m×n) = alpha * A (m×k) @ B (k×n) + beta * C, row-major float32."""
        av, bv, cv = self._view(a, (m, k)), self._view(b, (k, n)), self._view(c, (m, n))
        if alpha == 1.0 and beta == 0.0:
            self.cupy.matmul(av, bv, out=cv)
        else:
            from cupy import cublas

            cublas.gemm("N", "N", av, bv, out=cv, alpha=alpha, beta=beta)

    def sgemm_strided_batched(self, m: int, n: int, k: int, batch: int, a: DeviceBuffer,
                              b: DeviceBuffer, c: DeviceBuffer) -> None:
        """C_i = A_i @ B_i for i < batch; packed row-major (strides m*k, k*n, m*n)."""
        self.cupy.matmul(self._view(a, (batch, m, k)), self._view(b, (batch, k, n)),
                         out=self._view(c, (batch, m, n)))

    def forget(self, buf: DeviceBuffer) -> None:
        """Drop cached views of a buffer before it is freed."""
        for key in [key for key in self._views if key[0] == buf.ptr]:
            del self._views[key]


class HipBlas:
    """hipBLAS SGEMM via hip-python on buffers of a HipRuntime (written, never run here)."""

    name = "rocblas"

    def __init__(self, runtime):
        try:
            from hip import hipblas
        except ImportError as err:
            raise ToolMissing("hip-python's hipblas is not installed (pip install "
                              "hip-python)") from err
        self.hipblas = hipblas
        self.runtime = runtime
        self.handle = self._check(hipblas.hipblasCreate(), "hipblasCreate")
        self._op_n = hipblas.hipblasOperation_t.HIPBLAS_OP_N

    @staticmethod
    def _check(result, call: str):
        from gemmmodel.runtime.hip import check_hip

        return check_hip(result, call)

    def sgemm(self, m: int, n: int, k: int, alpha: float, a: DeviceBuffer, b: DeviceBuffer,
              beta: float, c: DeviceBuffer) -> None:
        """Row-major C = alpha A B + beta C as column-major C^T = alpha B^T A^T + beta C^T."""
        al, be = ctypes.c_float(alpha), ctypes.c_float(beta)
        self._check(self.hipblas.hipblasSgemm(
            self.handle, self._op_n, self._op_n, n, m, k, ctypes.addressof(al), b.ptr, n,
            a.ptr, k, ctypes.addressof(be), c.ptr, n), "hipblasSgemm")

    def sgemm_strided_batched(self, m: int, n: int, k: int, batch: int, a: DeviceBuffer,
                              b: DeviceBuffer, c: DeviceBuffer) -> None:
        al, be = ctypes.c_float(1.0), ctypes.c_float(0.0)
        self._check(self.hipblas.hipblasSgemmStridedBatched(
            self.handle, self._op_n, self._op_n, n, m, k, ctypes.addressof(al),
            b.ptr, n, k * n, a.ptr, k, m * k, ctypes.addressof(be), c.ptr, n, m * n, batch),
            "hipblasSgemmStridedBatched")

    def forget(self, buf: DeviceBuffer) -> None:
        """Nothing cached per buffer."""


def vendor_blas(runtime):
    """The vendor BLAS of the runtime's device: CupyBlas (NVIDIA) or HipBlas (AMD)."""
    if runtime.vendor == "nvidia":
        return CupyBlas(runtime)
    if runtime.vendor == "amd":
        return HipBlas(runtime)
    raise BadArgument(f"no vendor BLAS for a '{runtime.vendor}' runtime")
