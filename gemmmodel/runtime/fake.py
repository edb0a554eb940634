"""A CPU stand-in for a Runtime, for tests: memory is numpy, kernels are Python callables.

Nothing here touches a GPU. `FakeRuntime(kernels={"sgemm_x": fn})` runs `fn(rt, grid, block,
values, shared_bytes)` on launch, where `values` are the arguments after the same ctypes
conversion the real back ends apply (pointers arrive as ints: use `rt.view(ptr, shape)`).
Every launch is recorded in `rt.launches`; `time_s` returns `cost_s(entry, grid, block)`
summed over the launches made inside the timed function (default 1 ms each), so timing
logic can be tested deterministically. `sgemm_reference_kernel` is a ready-made kernel with
the catalogue signature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gemmmodel.errors import BadArgument
from gemmmodel.runtime.base import DeviceBuffer, GpuError, Module, Runtime, to_ctypes

_ALIGN = 256


class FakeRuntime(Runtime):
    """See the module docstring. `info` overrides device_info() keys."""

    vendor = "fake"

    def __init__(self, kernels: dict[str, Callable] | None = None,
                 info: dict[str, Any] | None = None,
                 cost_s: Callable[[str, tuple, tuple], float] | None = None,
                 occupancy_blocks: int = 1):
        super().__init__()
        self.kernels = dict(kernels or {})
        self.info = {"vendor": "fake", "name": "Fake GPU", "arch": "fake_0", "sms": 4,
                     "l2_bytes": 1 << 20, "total_memory_bytes": 1 << 30,
                     "sm_clock_hz": None, "sm_clock_max_hz": 1e9}
        self.info.update(info or {})
        self.cost_s = cost_s or (lambda entry, grid, block: 1e-3)
        self.occupancy_blocks = occupancy_blocks
        self.memory: dict[int, np.ndarray] = {}
        self.launches: list[dict[str, Any]] = []
        self.compiled: list[dict[str, Any]] = []
        self._next_ptr = 0x10000
        self._timing: list[float] | None = None

    @property
    def arch(self) -> str:
        return str(self.info["arch"])

    def arch_flag(self) -> str:
        return f"--fake-arch={self.arch}"

    def device_info(self) -> dict[str, Any]:
        return dict(self.info)

    def clocks(self) -> dict[str, Any]:
        return {"sm_clock_hz": self.info.get("sm_clock_hz"),
                "sm_clock_max_hz": self.info.get("sm_clock_max_hz"), "clock_source": "fake"}

    def _compile(self, source_text: str, name: str, entries: Sequence[str],
                 options: list[str]) -> Module:
        self.compiled.append({"name": name, "entries": list(entries), "options": list(options)})
        return Module(name=name, target=self.arch, handle=len(self.compiled),
                      functions={e: e for e in entries}, options=tuple(options))

    def alloc(self, nbytes: int) -> DeviceBuffer:
        ptr = self._next_ptr
        self._next_ptr += -(-max(int(nbytes), 4) // _ALIGN) * _ALIGN
        self.memory[ptr] = np.zeros(int(nbytes), dtype=np.uint8)
        return DeviceBuffer(ptr=ptr, nbytes=int(nbytes))

    def free(self, buf: DeviceBuffer) -> None:
        if not buf.freed:
            self.memory.pop(buf.ptr, None)
            buf.freed = True

    def _bytes(self, ptr: int) -> np.ndarray:
        if ptr not in self.memory:
            raise GpuError("fake memory access", "ILLEGAL_ADDRESS", hex(ptr))
        return self.memory[ptr]

    def view(self, ptr: int, shape, dtype=np.float32) -> np.ndarray:
        """A writable numpy view of device memory at `ptr` (buffer start only)."""
        raw = self._bytes(int(ptr))
        count = int(np.prod(shape))
        return raw[: count * np.dtype(dtype).itemsize].view(dtype).reshape(shape)

    def copy_to_device(self, buf: DeviceBuffer, array: np.ndarray) -> None:
        arr = np.ascontiguousarray(array)
        if arr.nbytes > buf.nbytes:
            raise BadArgument(f"copy of {arr.nbytes} B into a {buf.nbytes} B buffer")
        self._bytes(buf.ptr)[: arr.nbytes] = arr.reshape(-1).view(np.uint8)

    def copy_to_host(self, buf: DeviceBuffer, out: np.ndarray) -> None:
        out.reshape(-1).view(np.uint8)[:] = self._bytes(buf.ptr)[: out.nbytes]

    def memset_u32(self, buf: DeviceBuffer, value: int, count: int | None = None) -> None:
        count = buf.nbytes // 4 if count is None else count
        self._bytes(buf.ptr)[: 4 * count].view(np.uint32)[:] = np.uint32(value)

    def launch(self, module: Module, entry: str, grid: Sequence[int], block: Sequence[int],
               args: Sequence[Any], shared_bytes: int = 0) -> None:
        module.function(entry)
        values = [v.value for v in to_ctypes(args)]
        grid = (tuple(grid) + (1, 1))[:3]
        block = (tuple(block) + (1, 1))[:3]
        self.launches.append({"entry": entry, "grid": grid, "block": block, "args": values,
                              "shared_bytes": shared_bytes})
        if self._timing is not None:
            self._timing.append(self.cost_s(entry, grid, block))
        if entry in self.kernels:
            self.kernels[entry](self, grid, block, values, shared_bytes)

    def synchronize(self) -> None:
        pass

    def hold(self, seconds: float) -> None:
        """No spin on a fake device."""

    def time_s(self, fn: Callable[[], None], hold_s: float = 0.0) -> float:
        self._timing = []
        try:
            fn()
            return float(sum(self._timing))
        finally:
            self._timing = None

    def occupancy(self, module: Module, entry: str, block_threads: int,
                  shared_bytes: int = 0) -> int:
        module.function(entry)
        return self.occupancy_blocks

    def function_attributes(self, module: Module, entry: str) -> dict[str, int]:
        module.function(entry)
        return {"regs": 32, "static_smem_bytes": 0, "local_bytes": 0, "const_bytes": 0,
                "max_threads_per_block": 1024, "max_dynamic_smem_bytes": 48 * 1024,
                "binary_version": 0, "ptx_version": 0}

    def set_max_dynamic_shared(self, module: Module, entry: str, nbytes: int) -> None:
        module.function(entry)


def sgemm_reference_kernel(rt: FakeRuntime, grid, block, values, shared_bytes) -> None:
    """C = alpha A B + beta C (row-major float32), catalogue signature; C unread if beta=0."""
    m, n, k, alpha, a_ptr, b_ptr, beta, c_ptr = values
    a = rt.view(a_ptr, (m, k)).astype(np.float64)
    b = rt.view(b_ptr, (k, n)).astype(np.float64)
    c = rt.view(c_ptr, (m, n))
    out = alpha * (a @ b)
    if beta != 0.0:
        out += beta * c.astype(np.float64)
    c[:] = out.astype(np.float32)
