"""NVIDIA back end on cuda-python: the driver API (`cuda.bindings.driver`) and NVRTC.

Kernels are compiled by NVRTC straight to a cubin for the device's own architecture
(`-arch=sm_XY` from its compute capability), so no PTX JIT is involved and an NVRTC newer
than the driver still loads (same major version). Memory is plain `cuMemAlloc`. Work runs on
the legacy default stream (handle 0) of the device's primary context, the same context and
stream CuPy uses, so cuBLAS calls through CuPy (vendor.py) are timed by the same events.

Every driver call's CUresult is checked; a failure raises GpuError naming the CUresult.
Sources: CUDA Driver API reference (cuLaunchKernel kernelParams = array of pointers to each
argument; cuOccupancyMaxActiveBlocksPerMultiprocessor; cuFuncGetAttribute), NVRTC user guide.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gemmmodel.errors import CompileError, NoGpu, ToolMissing
from gemmmodel.runtime.base import (
    DeviceBuffer,
    GpuError,
    Module,
    Runtime,
    pack_param_array,
    source_key,
    to_ctypes,
)
from gemmmodel.runtime.nv_clocks import nvml_clocks, smi_clocks

#: NVRTC treats a function without __device__ as host code and refuses to call it from a
#: kernel (nvcc accepts a constexpr one); -default-device (--device-as-default-execution-space)
#: makes unannotated functions device functions, as kernels/ladder/k8_4.cu and k9.cu need.
NVRTC_BASE_OPTIONS = ("-default-device",)


def import_cuda():
    """(driver, nvrtc) modules of cuda-python; NoGpu when cuda-python is missing."""
    try:
        from cuda.bindings import driver, nvrtc
    except ImportError:
        try:  # cuda-python 12.x before the cuda.bindings split
            from cuda import cuda as driver  # type: ignore[no-redef]
            from cuda import nvrtc  # type: ignore[no-redef]
        except ImportError as err:
            raise NoGpu("cuda-python is not installed (pip install cuda-python)") from err
    return driver, nvrtc


def _code_name(err) -> str:
    return getattr(err, "name", str(err))


def check_cu(driver, result, call: str):
    """Unpack a cuda-python result tuple (err, *values); raise GpuError unless CUDA_SUCCESS."""
    if not isinstance(result, tuple):
        result = (result,)
    err, values = result[0], result[1:]
    if int(err) != 0:
        detail = ""
        try:
            code, text = driver.cuGetErrorString(err)
            if int(code) == 0 and text:
                detail = text.decode() if isinstance(text, bytes) else str(text)
        except (RuntimeError, OSError, TypeError, ValueError):
            detail = "(no description)"
        raise GpuError(call, _code_name(err), detail)
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def _check_rtc(nvrtc, result, call: str):
    if not isinstance(result, tuple):
        result = (result,)
    err, values = result[0], result[1:]
    if int(err) != 0:
        raise GpuError(call, _code_name(err))
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def nvrtc_version(nvrtc=None) -> str:
    """NVRTC's version as "major.minor" (needs only the NVRTC library, no GPU)."""
    nvrtc = nvrtc or import_cuda()[1]
    major, minor = _check_rtc(nvrtc, nvrtc.nvrtcVersion(), "nvrtcVersion")
    return f"{major}.{minor}"


def nvrtc_compile(source_text: str, name: str, options: Sequence[str],
                  nvrtc=None) -> tuple[bytes, str]:
    """Compile CUDA C++ to a cubin with NVRTC. Returns (cubin bytes, compiler log).

    `options` must name a real architecture (`-arch=sm_90`) so that a cubin, not PTX, comes
    out. Needs no GPU. Raises CompileError with the log when compilation fails."""
    nvrtc = nvrtc or import_cuda()[1]
    prog = _check_rtc(nvrtc, nvrtc.nvrtcCreateProgram(source_text.encode(), name.encode(), 0,
                                                       [], []), "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in options]
        result = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        size = _check_rtc(nvrtc, nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        log_buf = b" " * size
        _check_rtc(nvrtc, nvrtc.nvrtcGetProgramLog(prog, log_buf), "nvrtcGetProgramLog")
        log = log_buf.rstrip(b"\0 ").decode(errors="replace")
        if int(result[0]) != 0:
            first = " | ".join([ln for ln in log.splitlines() if ln.strip()][:8])
            raise CompileError(f"NVRTC could not compile {name} ({_code_name(result[0])}): "
                               f"{first}")
        size = _check_rtc(nvrtc, nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
        cubin = b" " * size
        _check_rtc(nvrtc, nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        return bytes(cubin), log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def cubin_cache_path(source_text: str, options: Sequence[str],
                     entries: Sequence[str]) -> Path | None:
    """Where a compiled cubin is kept when env GEMMMODEL_CUBIN_CACHE names a folder, else None.

    The key is source_key(source, options, entries), so a cached cubin is reused only for the
    very same source text and options. gemmmodel.runtime.precompile fills this folder from a
    pool of processes before a sweep (NVRTC needs no GPU)."""
    folder = os.environ.get("GEMMMODEL_CUBIN_CACHE")
    if not folder:
        return None
    return Path(folder) / f"{source_key(source_text, options, entries)}.cubin"


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class CudaRuntime(Runtime):
    """The CUDA driver API on device `ordinal` (primary context, default stream)."""

    vendor = "nvidia"
    base_options = NVRTC_BASE_OPTIONS

    def __init__(self, ordinal: int = 0):
        super().__init__()
        self.driver, self.nvrtc = import_cuda()
        d = self.driver
        try:
            result = d.cuInit(0)
        except Exception as err:  # the driver library itself is missing
            raise NoGpu(f"CUDA driver not found ({type(err).__name__})") from err
        if int(result[0]) != 0:
            raise NoGpu(f"cuInit failed: {_code_name(result[0])}")
        count = check_cu(d, d.cuDeviceGetCount(), "cuDeviceGetCount")
        if count <= ordinal:
            raise NoGpu(f"CUDA found {count} device(s), wanted ordinal {ordinal}")
        self.device = check_cu(d, d.cuDeviceGet(ordinal), "cuDeviceGet")
        self.context = check_cu(d, d.cuDevicePrimaryCtxRetain(self.device),
                                "cuDevicePrimaryCtxRetain")
        check_cu(d, d.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        self._events = (check_cu(d, d.cuEventCreate(0), "cuEventCreate"),
                        check_cu(d, d.cuEventCreate(0), "cuEventCreate"))
        self._buffers: list[DeviceBuffer] = []
        major = self._attr("COMPUTE_CAPABILITY_MAJOR")
        minor = self._attr("COMPUTE_CAPABILITY_MINOR")
        self._cc = (major, minor)

    # ---- device -----------------------------------------------------------------
    def _attr(self, name: str, default: int | None = None) -> int | None:
        enum = getattr(self.driver.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}", None)
        if enum is None:
            return default
        result = self.driver.cuDeviceGetAttribute(enum, self.device)
        if int(result[0]) != 0:
            return default
        return int(result[1])

    @property
    def arch(self) -> str:
        return f"sm_{self._cc[0]}{self._cc[1]}"

    def arch_flag(self) -> str:
        return f"-arch={self.arch}"

    def _bus_id(self) -> str:
        raw = check_cu(self.driver, self.driver.cuDeviceGetPCIBusId(32, self.device),
                       "cuDeviceGetPCIBusId")
        return (raw.decode() if isinstance(raw, bytes) else str(raw)).strip("\0 ")

    def clocks(self) -> dict[str, Any]:
        bus = self._bus_id()
        got = nvml_clocks(bus) or smi_clocks(bus)
        if got is None:
            khz = 1e3
            rate = self._attr("CLOCK_RATE")
            mem = self._attr("MEMORY_CLOCK_RATE")
            got = {"sm_clock_hz": None, "mem_clock_hz": None,
                   "sm_clock_max_hz": rate * khz if rate else None,
                   "mem_clock_max_hz": mem * khz if mem else None,
                   "driver": None, "clock_source": "attribute (max only)"}
        return got

    def device_info(self) -> dict[str, Any]:
        d = self.driver
        name = check_cu(d, d.cuDeviceGetName(256, self.device), "cuDeviceGetName")
        name = (name.decode() if isinstance(name, bytes) else str(name)).strip("\0 ")
        drv = check_cu(d, d.cuDriverGetVersion(), "cuDriverGetVersion")
        total = check_cu(d, d.cuDeviceTotalMem(self.device), "cuDeviceTotalMem")
        info: dict[str, Any] = {
            "vendor": self.vendor, "name": name, "arch": self.arch,
            "compute_capability": f"{self._cc[0]}.{self._cc[1]}",
            "sms": self._attr("MULTIPROCESSOR_COUNT"),
            "warp_size": self._attr("WARP_SIZE"),
            "l2_bytes": self._attr("L2_CACHE_SIZE"),
            "total_memory_bytes": int(total),
            "regs_per_sm": self._attr("MAX_REGISTERS_PER_MULTIPROCESSOR"),
            "shared_bytes_per_sm": self._attr("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
            "shared_bytes_per_block": self._attr("MAX_SHARED_MEMORY_PER_BLOCK"),
            "shared_bytes_per_block_optin": self._attr("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
            "reserved_shared_bytes_per_block": self._attr("RESERVED_SHARED_MEMORY_PER_BLOCK"),
            "max_threads_per_sm": self._attr("MAX_THREADS_PER_MULTIPROCESSOR"),
            "max_blocks_per_sm": self._attr("MAX_BLOCKS_PER_MULTIPROCESSOR"),
            "max_threads_per_block": self._attr("MAX_THREADS_PER_BLOCK"),
            "memory_bus_bits": self._attr("GLOBAL_MEMORY_BUS_WIDTH"),
            "pci_bus_id": self._bus_id(),
            "cuda_driver_version": f"{drv // 1000}.{(drv % 1000) // 10}",
        }
        try:
            info["nvrtc_version"] = nvrtc_version(self.nvrtc)
        except (RuntimeError, OSError, GpuError):  # NVRTC absent: compile() will say so
            info["nvrtc_version"] = None
        info.update(self.clocks())
        return info

    # ---- compile ----------------------------------------------------------------
    def _compile(self, source_text: str, name: str, entries: Sequence[str],
                 options: list[str]) -> Module:
        cached = cubin_cache_path(source_text, options, entries)
        if cached is not None and cached.exists():
            cubin, log = cached.read_bytes(), ""
        else:
            try:
                cubin, log = nvrtc_compile(source_text, name, options, self.nvrtc)
            except (OSError, RuntimeError) as err:  # libnvrtc not found by cuda-pathfinder
                raise ToolMissing("NVRTC library not found (pip install nvidia-cuda-nvrtc, or "
                                  f"the CUDA toolkit): {str(err).splitlines()[0]}") from err
            if cached is not None:
                write_atomic(cached, cubin)
        d = self.driver
        image = np.frombuffer(cubin, dtype=np.uint8)
        handle = check_cu(d, d.cuModuleLoadData(image.ctypes.data), "cuModuleLoadData")
        functions = {e: check_cu(d, d.cuModuleGetFunction(handle, e.encode()),
                                 f"cuModuleGetFunction({e})") for e in entries}
        return Module(name=name, target=self.arch, handle=handle, functions=functions,
                      binary=cubin, log=log, options=tuple(options))

    # ---- memory -----------------------------------------------------------------
    def alloc(self, nbytes: int) -> DeviceBuffer:
        ptr = check_cu(self.driver, self.driver.cuMemAlloc(max(int(nbytes), 4)), "cuMemAlloc")
        buf = DeviceBuffer(ptr=int(ptr), nbytes=int(nbytes))
        self._buffers.append(buf)
        return buf

    def free(self, buf: DeviceBuffer) -> None:
        if not buf.freed:
            check_cu(self.driver, self.driver.cuMemFree(buf.ptr), "cuMemFree")
            buf.freed = True
        if buf in self._buffers:
            self._buffers.remove(buf)

    def copy_to_device(self, buf: DeviceBuffer, array: np.ndarray) -> None:
        arr = np.ascontiguousarray(array)
        if arr.nbytes > buf.nbytes:
            raise GpuError("cuMemcpyHtoD", "OVERFLOW", f"{arr.nbytes} B into {buf.nbytes} B")
        check_cu(self.driver, self.driver.cuMemcpyHtoD(buf.ptr, arr.ctypes.data, arr.nbytes),
                 "cuMemcpyHtoD")

    def copy_to_host(self, buf: DeviceBuffer, out: np.ndarray) -> None:
        check_cu(self.driver, self.driver.cuMemcpyDtoH(out.ctypes.data, buf.ptr, out.nbytes),
                 "cuMemcpyDtoH")

    def memset_u32(self, buf: DeviceBuffer, value: int, count: int | None = None) -> None:
        count = buf.nbytes // 4 if count is None else count
        check_cu(self.driver, self.driver.cuMemsetD32(buf.ptr, int(value), int(count)),
                 "cuMemsetD32")

    # ---- execution --------------------------------------------------------------
    def launch(self, module: Module, entry: str, grid: Sequence[int], block: Sequence[int],
               args: Sequence[Any], shared_bytes: int = 0) -> None:
        func = module.function(entry)
        values = to_ctypes(args)
        params = pack_param_array(values)
        gx, gy, gz = (tuple(grid) + (1, 1))[:3]
        bx, by, bz = (tuple(block) + (1, 1))[:3]
        check_cu(self.driver, self.driver.cuLaunchKernel(
            func, gx, gy, gz, bx, by, bz, int(shared_bytes), 0, ctypes.addressof(params), 0),
            f"cuLaunchKernel({entry})")

    def synchronize(self) -> None:
        check_cu(self.driver, self.driver.cuCtxSynchronize(), "cuCtxSynchronize")

    def time_s(self, fn: Callable[[], None], hold_s: float = 0.0) -> float:
        d = self.driver
        start, stop = self._events
        if hold_s > 0:
            self.hold(hold_s)
        check_cu(d, d.cuEventRecord(start, 0), "cuEventRecord")
        fn()
        check_cu(d, d.cuEventRecord(stop, 0), "cuEventRecord")
        check_cu(d, d.cuEventSynchronize(stop), "cuEventSynchronize (kernel fault?)")
        ms = check_cu(d, d.cuEventElapsedTime(start, stop), "cuEventElapsedTime")
        return float(ms) * 1e-3

    # ---- kernel resources -------------------------------------------------------
    def occupancy(self, module: Module, entry: str, block_threads: int,
                  shared_bytes: int = 0) -> int:
        d = self.driver
        return int(check_cu(d, d.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            module.function(entry), int(block_threads), int(shared_bytes)),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor"))

    def function_attributes(self, module: Module, entry: str) -> dict[str, int]:
        d = self.driver
        func = module.function(entry)
        names = {"regs": "NUM_REGS", "static_smem_bytes": "SHARED_SIZE_BYTES",
                 "local_bytes": "LOCAL_SIZE_BYTES", "const_bytes": "CONST_SIZE_BYTES",
                 "max_threads_per_block": "MAX_THREADS_PER_BLOCK",
                 "max_dynamic_smem_bytes": "MAX_DYNAMIC_SHARED_SIZE_BYTES",
                 "binary_version": "BINARY_VERSION", "ptx_version": "PTX_VERSION"}
        out = {}
        for key, attr in names.items():
            enum = getattr(d.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{attr}")
            out[key] = int(check_cu(d, d.cuFuncGetAttribute(enum, func),
                                    f"cuFuncGetAttribute({attr})"))
        return out

    def set_max_dynamic_shared(self, module: Module, entry: str, nbytes: int) -> None:
        d = self.driver
        enum = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check_cu(d, d.cuFuncSetAttribute(module.function(entry), enum, int(nbytes)),
                 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")

    def close(self) -> None:
        for buf in list(self._buffers):
            self.free(buf)
        for mod in self._modules.values():
            self.driver.cuModuleUnload(mod.handle)
        super().close()
