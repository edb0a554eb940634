"""GPU runtimes behind one interface (docs/design.md "Runtime").

`get_runtime(vendor=None)` returns a `Runtime` for the first GPU found: CUDA through
cuda-python, else HIP through hip-python. `vendor` ("nvidia"/"cuda" or "amd"/"hip") picks one.
Raises NoGpu with one line naming why each back end was not usable.
"""

from __future__ import annotations

from gemmmodel.errors import BadArgument, NoGpu
from gemmmodel.runtime.base import DeviceBuffer, GpuError, Module, Runtime, gemm_args

__all__ = ["DeviceBuffer", "GpuError", "Module", "Runtime", "gemm_args", "get_runtime"]

_ALIASES = {"nvidia": "nvidia", "cuda": "nvidia", "amd": "amd", "hip": "amd"}


def _open(vendor: str) -> Runtime:
    if vendor == "nvidia":
        from gemmmodel.runtime.cuda import CudaRuntime

        return CudaRuntime()
    from gemmmodel.runtime.hip import HipRuntime

    return HipRuntime()


def get_runtime(vendor: str | None = None) -> Runtime:
    """The runtime of the first usable GPU (CUDA first, then HIP), or NoGpu."""
    if vendor is not None and vendor.lower() not in _ALIASES:
        raise BadArgument(f"unknown GPU vendor '{vendor}': use nvidia or amd")
    order = [_ALIASES[vendor.lower()]] if vendor else ["nvidia", "amd"]
    reasons = []
    for name in order:
        try:
            return _open(name)
        except NoGpu as err:
            reasons.append(f"{name}: {err}")
    raise NoGpu("no GPU runtime found: " + "; ".join(reasons))
