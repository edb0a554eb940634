"""AMD back end on hip-python (`hip.hip` and `hip.hiprtc`), the same shape as cuda.py.

Kernels are compiled by hiprtc for the device's `gcnArchName` (e.g. "gfx90a:sramecc+:xnack-")
via `--offload-arch=`, loaded with hipModuleLoadData and launched with hipModuleLaunchKernel,
the arguments packed by hip-python from ctypes values (its `extra` tuple form, which pads each
argument to its alignment). Timing uses hipEvents on the null stream.

NOT RUN: no AMD GPU was available while this was written (only an NVIDIA H100 was lent), so
this module is written from the hip-python documentation and examples
(rocm.docs.amd.com/projects/hip-python; ROCm/hip-python examples/0_Basic_Usage) and has not
executed against a device. The first AMD run should start with tools/device/runtime_smoke.py.

Clocks: hipDeviceProp_t gives only the maximum clocks (clockRate, memoryClockRate, kHz); the
current clocks are not read here (amdsmi / rocm-smi would be the sources).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gemmmodel.errors import BadArgument, CompileError, NoGpu
from gemmmodel.runtime.base import DeviceBuffer, GpuError, Module, Runtime, to_ctypes


def import_hip():
    """(hip, hiprtc) modules of hip-python; NoGpu when hip-python is missing."""
    try:
        from hip import hip, hiprtc
    except ImportError as err:
        raise NoGpu("hip-python is not installed (pip install hip-python)") from err
    return hip, hiprtc


def _code_name(err) -> str:
    return getattr(err, "name", str(err))


def check_hip(result, call: str):
    """Unpack a hip-python result tuple (err, *values); raise GpuError unless success (0)."""
    if not isinstance(result, tuple):
        result = (result,)
    err, values = result[0], result[1:]
    if int(err) != 0:
        raise GpuError(call, _code_name(err))
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def _text(value) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).split(b"\0")[0].decode(errors="replace")
    return str(value)


def hiprtc_compile(source_text: str, name: str, options: Sequence[str],
                   hiprtc=None) -> tuple[bytes, str]:
    """Compile HIP C++ to a code object with hiprtc. Returns (code object bytes, log)."""
    hiprtc = hiprtc or import_hip()[1]
    prog = check_hip(hiprtc.hiprtcCreateProgram(source_text.encode(), name.encode(), 0, [], []),
                     "hiprtcCreateProgram")
    try:
        opts = [o.encode() for o in options]
        result = hiprtc.hiprtcCompileProgram(prog, len(opts), opts)
        size = check_hip(hiprtc.hiprtcGetProgramLogSize(prog), "hiprtcGetProgramLogSize")
        log_buf = bytearray(max(int(size), 1))
        check_hip(hiprtc.hiprtcGetProgramLog(prog, log_buf), "hiprtcGetProgramLog")
        log = _text(log_buf)
        if int(result[0]) != 0:
            first = " | ".join([ln for ln in log.splitlines() if ln.strip()][:8])
            raise CompileError(f"hiprtc could not compile {name} ({_code_name(result[0])}): "
                               f"{first}")
        size = check_hip(hiprtc.hiprtcGetCodeSize(prog), "hiprtcGetCodeSize")
        code = bytearray(int(size))
        check_hip(hiprtc.hiprtcGetCode(prog, code), "hiprtcGetCode")
        return bytes(code), log
    finally:
        hiprtc.hiprtcDestroyProgram(prog)


class HipRuntime(Runtime):
    """HIP module API on device `ordinal` (null stream)."""

    vendor = "amd"

    def __init__(self, ordinal: int = 0):
        super().__init__()
        self.hip, self.hiprtc = import_hip()
        h = self.hip
        try:
            result = h.hipGetDeviceCount()
        except Exception as err:  # the HIP runtime library itself is missing
            raise NoGpu(f"HIP runtime not found ({type(err).__name__})") from err
        if int(result[0]) != 0 or int(result[1]) <= ordinal:
            raise NoGpu(f"HIP found no device {ordinal} ({_code_name(result[0])})")
        check_hip(h.hipSetDevice(ordinal), "hipSetDevice")
        self.ordinal = ordinal
        self.props = h.hipDeviceProp_t()
        check_hip(h.hipGetDeviceProperties(self.props, ordinal), "hipGetDeviceProperties")
        self._gcn_arch = _text(self.props.gcnArchName)
        self._events = (check_hip(h.hipEventCreate(), "hipEventCreate"),
                        check_hip(h.hipEventCreate(), "hipEventCreate"))
        self._buffers: list[DeviceBuffer] = []

    @property
    def arch(self) -> str:
        return self._gcn_arch.split(":")[0]

    def arch_flag(self) -> str:
        return f"--offload-arch={self._gcn_arch}"

    def clocks(self) -> dict[str, Any]:
        khz = 1e3
        return {"sm_clock_hz": None, "mem_clock_hz": None,
                "sm_clock_max_hz": self.props.clockRate * khz,
                "mem_clock_max_hz": self.props.memoryClockRate * khz,
                "driver": None, "clock_source": "attribute (max only)"}

    def device_info(self) -> dict[str, Any]:
        h, p = self.hip, self.props
        drv = check_hip(h.hipDriverGetVersion(), "hipDriverGetVersion")
        rt = check_hip(h.hipRuntimeGetVersion(), "hipRuntimeGetVersion")
        info = {
            "vendor": self.vendor, "name": _text(p.name), "arch": self.arch,
            "gcn_arch_name": self._gcn_arch, "sms": int(p.multiProcessorCount),
            "warp_size": int(p.warpSize), "l2_bytes": int(p.l2CacheSize),
            "total_memory_bytes": int(p.totalGlobalMem),
            "regs_per_block": int(p.regsPerBlock),
            "shared_bytes_per_block": int(p.sharedMemPerBlock),
            "shared_bytes_per_sm": int(p.maxSharedMemoryPerMultiProcessor),
            "max_threads_per_sm": int(p.maxThreadsPerMultiProcessor),
            "max_threads_per_block": int(p.maxThreadsPerBlock),
            "pci_bus_id": f"{int(p.pciDomainID):04x}:{int(p.pciBusID):02x}:"
                          f"{int(p.pciDeviceID):02x}.0",
            "hip_driver_version": int(drv), "hip_runtime_version": int(rt),
        }
        info.update(self.clocks())
        return info

    def _compile(self, source_text: str, name: str, entries: Sequence[str],
                 options: list[str]) -> Module:
        code, log = hiprtc_compile(source_text, name, options, self.hiprtc)
        h = self.hip
        handle = check_hip(h.hipModuleLoadData(code), "hipModuleLoadData")
        functions = {e: check_hip(h.hipModuleGetFunction(handle, e.encode()),
                                  f"hipModuleGetFunction({e})") for e in entries}
        return Module(name=name, target=self.arch, handle=handle, functions=functions,
                      binary=code, log=log, options=tuple(options))

    def alloc(self, nbytes: int) -> DeviceBuffer:
        ptr = check_hip(self.hip.hipMalloc(max(int(nbytes), 4)), "hipMalloc")
        buf = DeviceBuffer(ptr=int(ptr), nbytes=int(nbytes))
        self._buffers.append(buf)
        return buf

    def free(self, buf: DeviceBuffer) -> None:
        if not buf.freed:
            check_hip(self.hip.hipFree(buf.ptr), "hipFree")
            buf.freed = True
        if buf in self._buffers:
            self._buffers.remove(buf)

    def copy_to_device(self, buf: DeviceBuffer, array: np.ndarray) -> None:
        arr = np.ascontiguousarray(array)
        if arr.nbytes > buf.nbytes:
            raise BadArgument(f"copy of {arr.nbytes} B into a {buf.nbytes} B buffer")
        kind = self.hip.hipMemcpyKind.hipMemcpyHostToDevice
        check_hip(self.hip.hipMemcpy(buf.ptr, arr.ctypes.data, arr.nbytes, kind), "hipMemcpy")

    def copy_to_host(self, buf: DeviceBuffer, out: np.ndarray) -> None:
        kind = self.hip.hipMemcpyKind.hipMemcpyDeviceToHost
        check_hip(self.hip.hipMemcpy(out.ctypes.data, buf.ptr, out.nbytes, kind), "hipMemcpy")

    def memset_u32(self, buf: DeviceBuffer, value: int, count: int | None = None) -> None:
        count = buf.nbytes // 4 if count is None else count
        check_hip(self.hip.hipMemsetD32(buf.ptr, int(value), int(count)), "hipMemsetD32")

    def launch(self, module: Module, entry: str, grid: Sequence[int], block: Sequence[int],
               args: Sequence[Any], shared_bytes: int = 0) -> None:
        gx, gy, gz = (tuple(grid) + (1, 1))[:3]
        bx, by, bz = (tuple(block) + (1, 1))[:3]
        check_hip(self.hip.hipModuleLaunchKernel(
            module.function(entry), gx, gy, gz, bx, by, bz, sharedMemBytes=int(shared_bytes),
            stream=None, kernelParams=None, extra=tuple(to_ctypes(args))),
            f"hipModuleLaunchKernel({entry})")

    def synchronize(self) -> None:
        check_hip(self.hip.hipDeviceSynchronize(), "hipDeviceSynchronize")

    def time_s(self, fn: Callable[[], None], hold_s: float = 0.0) -> float:
        h = self.hip
        start, stop = self._events
        if hold_s > 0:
            self.hold(hold_s)
        check_hip(h.hipEventRecord(start, None), "hipEventRecord")
        fn()
        check_hip(h.hipEventRecord(stop, None), "hipEventRecord")
        check_hip(h.hipEventSynchronize(stop), "hipEventSynchronize (kernel fault?)")
        return float(check_hip(h.hipEventElapsedTime(start, stop), "hipEventElapsedTime")) * 1e-3

    def occupancy(self, module: Module, entry: str, block_threads: int,
                  shared_bytes: int = 0) -> int:
        return int(check_hip(self.hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(
            module.function(entry), int(block_threads), int(shared_bytes)),
            "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor"))

    def function_attributes(self, module: Module, entry: str) -> dict[str, int]:
        h = self.hip
        names = {"regs": "NUM_REGS", "static_smem_bytes": "SHARED_SIZE_BYTES",
                 "local_bytes": "LOCAL_SIZE_BYTES",
                 "max_threads_per_block": "MAX_THREADS_PER_BLOCK"}
        out = {}
        for key, attr in names.items():
            enum = getattr(h.hipFunction_attribute, f"HIP_FUNC_ATTRIBUTE_{attr}")
            out[key] = int(check_hip(h.hipFuncGetAttribute(enum, module.function(entry)),
                                     f"hipFuncGetAttribute({attr})"))
        return out

    def set_max_dynamic_shared(self, module: Module, entry: str, nbytes: int) -> None:
        """AMD needs no opt-in: check the request against the per-block LDS limit only."""
        limit = int(self.props.sharedMemPerBlock)
        if nbytes > limit:
            raise BadArgument(f"{nbytes} B of dynamic LDS exceeds the {limit} B per block")

    def close(self) -> None:
        for buf in list(self._buffers):
            self.free(buf)
        for mod in self._modules.values():
            self.hip.hipModuleUnload(mod.handle)
        super().close()
