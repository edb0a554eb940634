"""The small runtime interface shared by the CUDA and HIP back ends (docs/design.md "Runtime").

A Runtime owns one device: it compiles kernel sources at run time (NVRTC / hiprtc), holds
device memory, launches kernels with typed arguments and times them with device events.
Back ends: `gemmmodel.runtime.cuda` (cuda-python) and `gemmmodel.runtime.hip` (hip-python).

Kernel arguments (`launch(..., args)`): a `DeviceBuffer` is passed as its device pointer,
a Python `int` as a 32-bit int, a Python `float` as a 32-bit float, a numpy scalar
(`np.int64(…)`, `np.uint32(…)`, …) or a ctypes value as exactly that type. `gemm_args`
builds the uniform catalogue signature (int M, N, K, float alpha, A, B, float beta, C).
"""

from __future__ import annotations

import ctypes
import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gemmmodel import KERNELS_DIR
from gemmmodel.errors import BadArgument, GemmModelError


class GpuError(GemmModelError):
    """A GPU driver / runtime call failed; `code` is the error name (e.g. 'CUDA_ERROR_…')."""

    def __init__(self, call: str, code: str, detail: str = ""):
        self.call = call
        self.code = code
        more = f" ({detail})" if detail else ""
        super().__init__(f"{call} failed: {code}{more}")


@dataclass(eq=False)
class DeviceBuffer:
    """Device memory: `ptr` is the device address, `nbytes` its size in bytes."""

    ptr: int
    nbytes: int
    freed: bool = False


@dataclass(eq=False)
class Module:
    """A loaded code object: `functions` maps entry name -> back-end function handle.

    `binary` is the cubin / HSA code object bytes; `target` the arch it was built for
    ("sm_90", "gfx906"); `log` the compiler's log (warnings)."""

    name: str
    target: str
    handle: Any
    functions: dict[str, Any]
    binary: bytes = b""
    log: str = ""
    options: tuple[str, ...] = ()

    def function(self, entry: str) -> Any:
        try:
            return self.functions[entry]
        except KeyError:
            raise BadArgument(
                f"module {self.name} has no entry '{entry}' (has: {', '.join(self.functions)})"
            ) from None


#: A one-thread kernel that spins for `cycles` clock64() ticks: launched before the start
#: event it keeps the GPU busy while the host enqueues the timed launches, so the events
#: measure device time, not the host's launch gaps (the "blocking kernel" of nvbench).
SPIN_SOURCE = r"""
extern "C" __global__ void gm_spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) { }
}
"""


def _scalar_to_ctypes(value: Any) -> ctypes._SimpleCData:
    if isinstance(value, ctypes._SimpleCData):
        return value
    if isinstance(value, np.generic):
        arr = np.array(value)
        ctype = np.ctypeslib.as_ctypes_type(arr.dtype)
        return ctype(value.item())
    if isinstance(value, bool):
        raise BadArgument("bool kernel argument: pass np.int32(…) or np.uint8(…) explicitly")
    if isinstance(value, int):
        if not -(2**31) <= value < 2**31:
            raise BadArgument(f"int argument {value} does not fit int32: pass np.int64(…)")
        return ctypes.c_int32(value)
    if isinstance(value, float):
        return ctypes.c_float(value)
    raise BadArgument(f"unsupported kernel argument type {type(value).__name__}")


def to_ctypes(args: Iterable[Any]) -> list[ctypes._SimpleCData]:
    """Kernel arguments as ctypes values of their exact C types (see module docstring)."""
    out: list[ctypes._SimpleCData] = []
    for arg in args:
        if isinstance(arg, DeviceBuffer):
            if arg.freed:
                raise BadArgument("kernel argument is a freed device buffer")
            out.append(ctypes.c_void_p(arg.ptr))
        else:
            out.append(_scalar_to_ctypes(arg))
    return out


def pack_param_array(values: Sequence[ctypes._SimpleCData]) -> ctypes.Array:
    """A `void*[]` whose entries point at each value (the cuLaunchKernel kernelParams form).

    The caller keeps `values` alive until the launch call returns (the driver copies the
    argument bytes at launch)."""
    array_type = ctypes.c_void_p * max(1, len(values))
    return array_type(*[ctypes.addressof(v) for v in values])


def gemm_args(m: int, n: int, k: int, alpha: float, a: DeviceBuffer, b: DeviceBuffer,
              beta: float, c: DeviceBuffer) -> list[Any]:
    """The uniform catalogue entry's arguments: int32 M, N, K, float alpha, A, B, beta, C."""
    return [ctypes.c_int32(m), ctypes.c_int32(n), ctypes.c_int32(k), ctypes.c_float(alpha),
            a, b, ctypes.c_float(beta), c]


def compile_options(arch_flag: str, defines: dict[str, Any] | None,
                    include_dirs: Iterable[str | Path], extra: Iterable[str] = ()) -> list[str]:
    """Run-time compiler options: arch flag, `--std=c++17`, `-I` dirs, `-D` defines (sorted)."""
    opts = [arch_flag, "--std=c++17"]
    opts += [f"-I{Path(d)}" for d in include_dirs]
    for key in sorted(defines or {}):
        val = defines[key]
        if isinstance(val, bool):
            val = int(val)
        opts.append(f"-D{key}" if val is None else f"-D{key}={val}")
    opts += list(extra)
    return opts


def source_key(source_text: str, options: Sequence[str], entries: Sequence[str]) -> str:
    """sha256 over the source, compile options and entry names (module cache key)."""
    h = hashlib.sha256(source_text.encode())
    for part in list(options) + ["|"] + list(entries):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


class Runtime(ABC):
    """One GPU. Concrete methods here are shared; back ends implement the abstract ones."""

    vendor = ""
    #: Options every compile of this back end gets (after the arch, std, -I and -D options).
    base_options: tuple[str, ...] = ()

    def __init__(self) -> None:
        self._modules: dict[str, Module] = {}

    # ---- device -----------------------------------------------------------------
    @abstractmethod
    def device_info(self) -> dict[str, Any]:
        """name, vendor, arch, sms, clocks (Hz), driver/toolkit versions, l2_bytes, …"""

    @abstractmethod
    def clocks(self) -> dict[str, Any]:
        """Current SM / memory clocks in Hz and where they were read (nvml, smi, attribute)."""

    @property
    @abstractmethod
    def arch(self) -> str:
        """Compile target of this device: "sm_90", "gfx906", …"""

    # ---- compile ----------------------------------------------------------------
    @abstractmethod
    def _compile(self, source_text: str, name: str, entries: Sequence[str],
                 options: list[str]) -> Module:
        """Compile and load; back end specific."""

    @abstractmethod
    def arch_flag(self) -> str:
        """The compiler's target option for this device."""

    def compile(self, source_text: str, entry_names: Sequence[str],
                defines: dict[str, Any] | None = None,
                include_dirs: Iterable[str | Path] = (), *, name: str = "kernel.cu",
                extra_options: Iterable[str] = ()) -> Module:
        """Compile `source_text` for this device and load it; cached per (source, options)."""
        dirs = list(include_dirs) or [KERNELS_DIR]
        opts = compile_options(self.arch_flag(), defines, dirs,
                               [*self.base_options, *extra_options])
        entries = list(entry_names)
        key = source_key(source_text, opts, entries)
        if key not in self._modules:
            self._modules[key] = self._compile(source_text, name, entries, opts)
        return self._modules[key]

    def compile_file(self, path: str | Path, entry_names: Sequence[str],
                     defines: dict[str, Any] | None = None,
                     include_dirs: Iterable[str | Path] = ()) -> Module:
        """Compile a kernels/ source file; includes resolve in its folder and kernels/."""
        path = Path(path)
        dirs = list(include_dirs) or [path.parent, KERNELS_DIR]
        return self.compile(path.read_text(), entry_names, defines, dirs, name=path.name)

    def compile_plan(self, plan) -> Module:
        """Compile the source of a gemmmodel.launch.LaunchPlan with its -D defines."""
        return self.compile_file(plan.source, [plan.entry], plan.defines)

    # ---- memory -----------------------------------------------------------------
    @abstractmethod
    def alloc(self, nbytes: int) -> DeviceBuffer:
        """Plain device allocation (cuMemAlloc / hipMalloc)."""

    @abstractmethod
    def free(self, buf: DeviceBuffer) -> None:
        """Release a buffer (idempotent)."""

    @abstractmethod
    def copy_to_device(self, buf: DeviceBuffer, array: np.ndarray) -> None:
        """Copy a host array (C-contiguous) into `buf`."""

    @abstractmethod
    def copy_to_host(self, buf: DeviceBuffer, out: np.ndarray) -> None:
        """Copy `out.nbytes` bytes from `buf` into the C-contiguous array `out`."""

    @abstractmethod
    def memset_u32(self, buf: DeviceBuffer, value: int, count: int | None = None) -> None:
        """Fill `count` (default: all) 32-bit words of `buf` with `value`."""

    def upload(self, array: np.ndarray) -> DeviceBuffer:
        arr = np.ascontiguousarray(array)
        buf = self.alloc(arr.nbytes)
        self.copy_to_device(buf, arr)
        return buf

    def download(self, buf: DeviceBuffer, shape, dtype=np.float32) -> np.ndarray:
        out = np.empty(shape, dtype=dtype)
        if out.nbytes > buf.nbytes:
            raise BadArgument(f"download of {out.nbytes} B from a {buf.nbytes} B buffer")
        self.copy_to_host(buf, out)
        return out

    def memset_f32(self, buf: DeviceBuffer, value: float) -> None:
        """Fill the buffer with float32 `value` (NaN works: used to poison outputs)."""
        bits = int(np.array(value, dtype=np.float32).view(np.uint32))
        self.memset_u32(buf, bits, buf.nbytes // 4)

    # ---- execution --------------------------------------------------------------
    @abstractmethod
    def launch(self, module: Module, entry: str, grid: Sequence[int], block: Sequence[int],
               args: Sequence[Any], shared_bytes: int = 0) -> None:
        """Launch `entry` on the default stream; raises GpuError on a launch error."""

    @abstractmethod
    def synchronize(self) -> None:
        """Wait for the device; raises GpuError on an asynchronous kernel fault."""

    @abstractmethod
    def time_s(self, fn: Callable[[], None], hold_s: float = 0.0) -> float:
        """Seconds of device time between events recorded before and after `fn()`.

        hold_s > 0 first launches a spin kernel of about that many seconds (see `hold`)."""

    def time_ms(self, fn: Callable[[], None], hold_s: float = 0.0) -> float:
        return self.time_s(fn, hold_s) * 1e3

    def hold(self, seconds: float) -> None:
        """Enqueue a one-thread spin of about `seconds` at the maximum SM clock (longer if
        the clock is lower): the device stays busy while the host enqueues what follows."""
        hz = getattr(self, "_hold_hz", None)
        if hz is None:
            hz = self.clocks().get("sm_clock_max_hz") or 2e9  # assumption if unknown
            self._hold_hz = hz
        module = self.compile(SPIN_SOURCE, ["gm_spin"], name="gm_spin.cu")
        self.launch(module, "gm_spin", (1, 1, 1), (1, 1, 1),
                    [np.int64(int(seconds * hz))])

    def launch_plan(self, module: Module, plan, m: int, n: int, k: int, alpha: float,
                    a: DeviceBuffer, b: DeviceBuffer, beta: float, c: DeviceBuffer) -> None:
        """Launch a gemmmodel.launch.LaunchPlan with the uniform catalogue signature."""
        self.launch(module, plan.entry, plan.grid, plan.block,
                    gemm_args(m, n, k, alpha, a, b, beta, c), plan.shared_bytes)

    # ---- kernel resources -------------------------------------------------------
    @abstractmethod
    def occupancy(self, module: Module, entry: str, block_threads: int,
                  shared_bytes: int = 0) -> int:
        """Resident blocks per SM / CU by the driver's occupancy calculator."""

    @abstractmethod
    def function_attributes(self, module: Module, entry: str) -> dict[str, int]:
        """regs, static_smem_bytes, local_bytes, max_threads_per_block, …"""

    @abstractmethod
    def set_max_dynamic_shared(self, module: Module, entry: str, nbytes: int) -> None:
        """Opt the entry in to `nbytes` of dynamic shared memory (above 48 KB on NVIDIA)."""

    def close(self) -> None:
        """Drop cached modules (back ends also free what they hold)."""
        self._modules.clear()
