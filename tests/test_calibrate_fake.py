"""A fake GPU runtime for the calibration tests (CPU only), and tests of the fake itself.

FakeRuntime keeps device memory as host bytes, parses the `extern "C" __global__` signatures
of the sources it "compiles" and checks every launch against them (argument count and kind:
pointer <- DeviceBuffer, int <- int, float <- float), so a mismatch between a suite's Python
and its CUDA kernel fails here. GEMM launches (launch_plan, vendor sgemm) really compute
C = alpha A B + beta C; microbenchmark kernels fill their timing outputs with fixed
cycles / ns. time_s returns a fixed device time per launch.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from gemmmodel import KERNELS_DIR
from gemmmodel.runtime.base import DeviceBuffer

FAKE_CYCLES = 2_000_000
FAKE_NS = 1_000_000          # -> 2 GHz
FAKE_LAUNCH_S = 1e-4

_SIG = re.compile(r'(?:extern\s+"C"\s+__global__|GM_KERNEL)\s+void\s+'
                  r'(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(([^)]*)\)', re.DOTALL)


def parse_signatures(text: str) -> dict[str, list[str]]:
    """entry -> list of parameter kinds: 'ptr', 'int', 'float', 'u64'."""
    out = {}
    for name, params in _SIG.findall(text):
        kinds = []
        for p in [p.strip() for p in params.split(",") if p.strip()]:
            if "*" in p:
                kinds.append("ptr")
            elif re.search(r"\bfloat\b", p):
                kinds.append("float")
            elif re.search(r"\b(long long|int64|size_t)\b", p):
                kinds.append("u64")
            else:
                kinds.append("int")
        out[name] = kinds
    return out


class FakeModule:
    def __init__(self, name, entries, signatures, defines):
        self.name, self.entries, self.signatures, self.defines = name, entries, signatures, defines


class FakeRuntime:
    vendor = "nvidia"

    def __init__(self, interrupt_after: int | None = None, sms: int = 4,
                 l2_bytes: int = 1 << 20, name: str = "NVIDIA H100 80GB HBM3"):
        self.mem: dict[int, np.ndarray] = {}
        self.next_ptr = 1 << 20
        self.launches: list[tuple] = []
        self.interrupt_after = interrupt_after
        self.sms, self.l2_bytes, self.name = sms, l2_bytes, name

    # device
    def device_info(self):
        return {"vendor": "nvidia", "name": self.name, "arch": "sm_90", "sms": self.sms,
                "l2_bytes": self.l2_bytes, "max_threads_per_sm": 2048,
                "total_memory_bytes": 1 << 28, "pci_bus_id": "0000:00:01.0",
                "cuda_driver_version": "12.8", "nvrtc_version": "12.9",
                **self.clocks()}

    def clocks(self):
        return {"sm_clock_hz": 1.98e9, "mem_clock_hz": 2.6e9, "sm_clock_max_hz": 1.98e9,
                "mem_clock_max_hz": 2.6e9, "driver": "570.0", "clock_source": "fake"}

    # compile
    _sig_cache: ClassVar[dict] = {}

    def compile_file(self, path, entries, defines=None, include_dirs=()):
        path = Path(path)
        if path not in self._sig_cache:
            self._sig_cache[path] = parse_signatures(path.read_text())
        sigs = self._sig_cache[path]
        missing = [e for e in entries if e not in sigs]
        assert not missing, f"{path.name} has no entry {missing}"
        return FakeModule(path.name, list(entries), sigs, dict(defines or {}))

    def compile_plan(self, plan):
        return self.compile_file(plan.source, [plan.entry], plan.defines)

    # memory
    def alloc(self, nbytes):
        ptr = self.next_ptr
        self.next_ptr += (max(int(nbytes), 4) + 255) // 256 * 256
        self.mem[ptr] = np.zeros(max(int(nbytes), 4), dtype=np.uint8)
        return DeviceBuffer(ptr=ptr, nbytes=int(nbytes))

    def free(self, buf):
        assert not buf.freed, "double free"
        self.mem.pop(buf.ptr)
        buf.freed = True

    def upload(self, array):
        arr = np.ascontiguousarray(array)
        buf = self.alloc(arr.nbytes)
        self.mem[buf.ptr][: arr.nbytes] = arr.view(np.uint8).reshape(-1)
        return buf

    def download(self, buf, shape, dtype=np.float32):
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        assert n <= buf.nbytes
        return self.mem[buf.ptr][:n].view(dtype).reshape(shape).copy()

    def memset_f32(self, buf, value):
        self.mem[buf.ptr][: buf.nbytes // 4 * 4].view(np.float32)[:] = value

    def _f32(self, buf, shape):
        return self.mem[buf.ptr][: 4 * int(np.prod(shape))].view(np.float32).reshape(shape)

    # execution
    def _count(self):
        if self.interrupt_after is not None and len(self.launches) >= self.interrupt_after:
            raise KeyboardInterrupt

    def launch(self, module, entry, grid, block, args, shared_bytes=0):
        self._count()
        kinds = module.signatures[entry]
        assert len(args) == len(kinds), f"{entry}: {len(args)} args for {len(kinds)} params"
        for kind, arg in zip(kinds, args):
            if kind == "ptr":
                assert isinstance(arg, DeviceBuffer) and not arg.freed, (entry, arg)
            elif kind == "float":
                assert isinstance(arg, (float, ctypes.c_float)), (entry, arg)
            elif kind == "int":
                assert isinstance(arg, (int, ctypes.c_int32, np.int32)), (entry, arg)
                assert not isinstance(arg, bool)
        assert all(g >= 1 for g in grid) and 1 <= int(np.prod(block)) <= 1024
        self.launches.append((entry, tuple(grid), tuple(block)))
        # timing outputs: any uint64 buffer named timing/out gets [cycles, ns] pairs
        for kind, arg in zip(kinds, args):
            if kind == "ptr" and arg.nbytes % 8 == 0 and entry != "mb_chase_prepare":
                words = self.mem[arg.ptr][: arg.nbytes // 8 * 8].view(np.uint64)
                if entry in ("mb_chase", "mb_smem_chase"):
                    words[:3] = [0, FAKE_CYCLES, FAKE_NS]
                elif entry in ("mb_fma", "mb_smem_stride", "mb_clock_spin") and arg is args[-1]:
                    words[0::2] = FAKE_CYCLES
                    words[1::2] = FAKE_NS

    def launch_plan(self, module, plan, m, n, k, alpha, a, b, beta, c):
        self._count()
        self.launches.append((plan.entry, plan.grid, plan.block))
        aa, bb = self._f32(a, (m, k)), self._f32(b, (k, n))
        cc = self._f32(c, (m, n))
        out = alpha * (aa.astype(np.float64) @ bb.astype(np.float64)) + (beta * cc if beta else 0.0)
        cc[:] = out.astype(np.float32)

    def synchronize(self):
        pass

    def time_s(self, fn, hold_s=0.0):
        before = len(self.launches)
        fn()
        return FAKE_LAUNCH_S * max(1, len(self.launches) - before)

    def occupancy(self, module, entry, block_threads, shared_bytes=0):
        return max(1, 2048 // block_threads)

    def function_attributes(self, module, entry):
        return {"regs": 40, "static_smem_bytes": 0, "local_bytes": 0}


class FakeBlas:
    """Stands in for gemmmodel.runtime.vendor.CupyBlas on a FakeRuntime."""

    name = "cublas"

    def __init__(self, rt):
        self.rt = rt

    def sgemm(self, m, n, k, alpha, a, b, beta, c):
        from gemmmodel.launch import LaunchPlan

        plan = LaunchPlan("cublas", Path("x"), "cublas", (1, 1, 1), (1, 1, 1))
        self.rt.launch_plan(None, plan, m, n, k, alpha, a, b, beta, c)

    def sgemm_strided_batched(self, m, n, k, batch, a, b, c):
        self.rt._count()
        self.rt.launches.append(("cublas_batched", (1, 1, batch), (1, 1, 1)))
        aa = self.rt._f32(a, (batch, m, k)).astype(np.float64)
        bb = self.rt._f32(b, (batch, k, n)).astype(np.float64)
        self.rt._f32(c, (batch, m, n))[:] = np.matmul(aa, bb).astype(np.float32)

    def forget(self, buf):
        pass


# ---- tests of the fake itself ----------------------------------------------------------
def test_signatures_of_every_micro_kernel_parse():
    sigs = {}
    for path in sorted((KERNELS_DIR / "micro").glob("*.cu")):
        sigs.update(parse_signatures(path.read_text()))
    assert sigs["mb_dram_read"] == ["ptr", "int", "float", "ptr"]
    assert sigs["mb_fma"] == ["int", "float", "float", "float", "ptr", "ptr"]
    assert sigs["mb_empty"] == []
    assert len(sigs) >= 10


def test_fake_launch_rejects_a_wrong_argument_kind():
    rt = FakeRuntime()
    mod = rt.compile_file(KERNELS_DIR / "micro" / "launch.cu", ["mb_tiny"])
    with pytest.raises(AssertionError):
        rt.launch(mod, "mb_tiny", (1, 1, 1), (32, 1, 1), [3])
