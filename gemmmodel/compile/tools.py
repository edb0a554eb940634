"""Finding the compilers and disassemblers, and their version strings.

Tools come from PATH, or from the NVIDIA wheels installed in this Python environment
(`pip install gemmmodel[sm61]` for NVRTC 12 + ptxas 12, `gemmmodel[sass]` for nvdisasm).
A missing tool raises ToolMissing whose message is the install command.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gemmmodel.errors import CompileError, ToolMissing

INSTALL_HINTS = {
    "hipcc": "hipcc not found: install it with `apt-get install -y hipcc` (or ROCm's hip-dev)",
    "nvcc": "nvcc not found: install the CUDA toolkit (`apt-get install -y nvidia-cuda-toolkit` "
            "or NVIDIA's cuda-nvcc package)",
    "nvdisasm": "nvdisasm not found: install it with `pip install gemmmodel[sass]` "
                "(wheel nvidia-cuda-nvdisasm)",
    "nvrtc": "NVRTC 12 not found: install it with `pip install gemmmodel[sm61]` "
             "(wheels nvidia-cuda-nvrtc-cu12, nvidia-cuda-nvcc-cu12)",
    "ptxas12": "ptxas 12 not found: install it with `pip install gemmmodel[sm61]` "
               "(wheel nvidia-cuda-nvcc-cu12)",
}

#: Package-relative locations of the tools inside NVIDIA's wheels (module, relative path).
_WHEEL_FILES = {
    "nvdisasm": [("nvidia.cu13", "bin/nvdisasm"), ("nvidia.cuda_nvdisasm", "bin/nvdisasm")],
    "nvrtc": [("nvidia.cuda_nvrtc", "lib/libnvrtc.so.12")],
    "ptxas12": [("nvidia.cuda_nvcc", "bin/ptxas")],
}


def _wheel_file(name: str) -> Path | None:
    for module, rel in _WHEEL_FILES.get(name, []):
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        for root in (spec.submodule_search_locations or []) if spec else []:
            path = Path(root) / rel
            if path.exists():
                return path
    return None


def find_tool(name: str) -> Path:
    """Path of a tool: PATH first (executables), then the NVIDIA wheels; else ToolMissing."""
    if name in ("hipcc", "nvcc", "nvdisasm"):
        found = shutil.which(name)
        if found:
            return Path(found)
    path = _wheel_file(name)
    if path is not None:
        return path
    raise ToolMissing(INSTALL_HINTS[name])


def has_tool(name: str) -> bool:
    try:
        find_tool(name)
    except ToolMissing:
        return False
    return True


def run_tool(argv: list, env: dict | None = None, timeout_s: float = 600) -> subprocess.CompletedProcess:
    """Run a tool and capture text output (no check: callers read stderr for errors)."""
    full_env = dict(os.environ, **(env or {}))
    try:
        return subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                              env=full_env, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as err:
        raise CompileError(f"{Path(str(argv[0])).name} ran over {timeout_s:g} s") from err
    except OSError as err:
        raise CompileError(f"cannot run {argv[0]}: {err}") from err


def _version_lines(text: str, keep: tuple[str, ...]) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith(keep)]
    return "; ".join(lines)


@dataclass(frozen=True)
class ToolVersions:
    """Version strings of a toolchain route, used in cache keys and the facts table."""

    route: str
    text: str


def hipcc_version() -> str:
    proc = run_tool([find_tool("hipcc"), "--version"], env={"HIP_PLATFORM": "amd"})
    return "hipcc " + _version_lines(proc.stdout + proc.stderr, ("HIP version", "Debian clang",
                                                                 "clang version", "AMD clang"))


def nvcc_version() -> str:
    proc = run_tool([find_tool("nvcc"), "--version"])
    return "nvcc " + _version_lines(proc.stdout, ("Cuda compilation tools",))


def ptxas12_version() -> str:
    proc = run_tool([find_tool("ptxas12"), "--version"])
    return "ptxas " + _version_lines(proc.stdout, ("Cuda compilation tools",))


def nvdisasm_version() -> str:
    proc = run_tool([find_tool("nvdisasm"), "--version"])
    return "nvdisasm " + _version_lines(proc.stdout, ("Cuda compilation tools",))


def nvcc_targets() -> set[str]:
    """The sm_XX targets the installed nvcc generates code for (from --list-gpu-arch)."""
    proc = run_tool([find_tool("nvcc"), "--list-gpu-arch"])
    return {t.replace("compute_", "sm_") for t in proc.stdout.split() if t.startswith("compute_")}
