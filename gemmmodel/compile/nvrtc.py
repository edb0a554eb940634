"""NVRTC through ctypes: CUDA source -> PTX for targets the installed nvcc no longer
supports (sm_61 with CUDA 13). NVRTC has no standard headers; gemm_port.h is written for it.
API: NVRTC user guide (nvrtcCreateProgram, nvrtcCompileProgram, nvrtcGetPTX).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from gemmmodel.compile.tools import find_tool
from gemmmodel.errors import CompileError


def _check(lib, status: int, what: str) -> None:
    if status != 0:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise CompileError(f"NVRTC {what} failed: {lib.nvrtcGetErrorString(status).decode()}")


def nvrtc_version() -> str:
    lib = ctypes.CDLL(str(find_tool("nvrtc")))
    major, minor = ctypes.c_int(), ctypes.c_int()
    _check(lib, lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "version")
    return f"nvrtc {major.value}.{minor.value}"


def nvrtc_compile_ptx(source_text: str, name: str, options: list[str]) -> tuple[str, str]:
    """Compile source text to PTX; returns (ptx, log). A failed compile raises CompileError
    with the first lines of the log."""
    lib = ctypes.CDLL(str(find_tool("nvrtc")))
    prog = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), source_text.encode(),
                                       Path(name).name.encode(), 0, None, None), "create")
    try:
        opts = [o.encode() for o in options]
        arr = (ctypes.c_char_p * len(opts))(*opts)
        status = lib.nvrtcCompileProgram(prog, len(opts), arr)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log_buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log_buf)
        log = log_buf.value.decode(errors="replace")
        if status != 0:
            head = "\n".join(log.strip().splitlines()[:8])
            raise CompileError(f"NVRTC failed on {name}:\n{head}")
        _check(lib, lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "PTX size")
        ptx_buf = ctypes.create_string_buffer(size.value)
        _check(lib, lib.nvrtcGetPTX(prog, ptx_buf), "PTX")
        return ptx_buf.value.decode(), log
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
