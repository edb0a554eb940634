"""Compiler routes: run one toolchain on one source for one target, return the raw texts.

- "hipcc":  HIP_PLATFORM=amd hipcc -x hip --cuda-device-only --offload-arch=T -O3
            -Rpass-analysis=kernel-resource-usage -S  -> AMDGCN text + resource remarks
- "nvcc":   nvcc -arch=sm_XX -cubin -O3 -Xptxas -v, then nvdisasm -c  -> SASS + ptxas info
- "nvrtc":  NVRTC 12 -> PTX (compute_XX), ptxas 12 -arch=sm_XX -O3 -v -> cubin + ptxas info,
            then nvdisasm -c if it accepts the target; otherwise the mix comes from the PTX.
The "nvrtc" route serves the targets the installed nvcc dropped (nvcc --list-gpu-arch).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from gemmmodel.compile import tools
from gemmmodel.compile.nvrtc import nvrtc_compile_ptx, nvrtc_version
from gemmmodel.errors import CompileError, ToolMissing


@dataclass(frozen=True)
class RawOutput:
    """What a route produced: `listing_text` is AMDGCN, SASS or PTX per `mix_source`;
    `info_text` holds the resource report (remarks or ptxas -v)."""

    listing_text: str
    info_text: str
    mix_source: str
    ptx_text: str = ""


@dataclass(frozen=True)
class Route:
    """A chosen toolchain for a target: name, version string, flags as recorded."""

    name: str
    target: str
    versions: str
    flags: tuple[str, ...]


def _fail(tool: str, source: Path, proc) -> CompileError:
    lines = [ln for ln in (proc.stderr + proc.stdout).splitlines()
             if "error" in ln.lower() or "fatal" in ln.lower()][:8]
    detail = "\n".join(lines) or (proc.stderr + proc.stdout).strip()[-800:]
    return CompileError(f"{tool} failed on {source.name} (exit {proc.returncode}):\n{detail}")


def choose_route(target: str, vendor: str) -> Route:
    """Pick the toolchain for a target; ToolMissing with the install command if none."""
    if vendor == "amd":
        flags = ("-x", "hip", "--cuda-device-only", f"--offload-arch={target}", "-O3",
                 "-Rpass-analysis=kernel-resource-usage", "-S")
        return Route("hipcc", target, tools.hipcc_version(), flags)
    if tools.has_tool("nvcc") and target in tools.nvcc_targets():
        flags = ("-x", "cu", f"-arch={target}", "-cubin", "-O3", "-Xptxas", "-v")
        versions = tools.nvcc_version() + " | " + tools.nvdisasm_version()
        return Route("nvcc", target, versions, flags)
    if not tools.has_tool("nvrtc"):
        raise ToolMissing(tools.INSTALL_HINTS["nvrtc" if tools.has_tool("nvcc") else "nvcc"]
                          + f" (needed for {target})")
    disasm = tools.nvdisasm_version() if tools.has_tool("nvdisasm") else "no nvdisasm"
    versions = f"{nvrtc_version()} | {tools.ptxas12_version()} | {disasm}"
    arch = target.replace("sm_", "compute_")
    flags = (f"--gpu-architecture={arch}", "ptxas", f"-arch={target}", "-O3", "-v")
    return Route("nvrtc", target, versions, flags)


def run_route(route: Route, source: Path, defines: list[str], include_dirs: list[Path],
              extra_flags: tuple[str, ...] = ()) -> RawOutput:
    """Compile `source` along `route`; defines are "-DK=V" strings."""
    incs = [f"-I{d}" for d in include_dirs]
    with tempfile.TemporaryDirectory(prefix="gemmmodel-") as tmp:
        out = Path(tmp)
        if route.name == "hipcc":
            asm = out / "kernel.s"
            argv = [tools.find_tool("hipcc"), *route.flags, *incs, *defines, *extra_flags,
                    source, "-o", asm]
            proc = tools.run_tool(argv, env={"HIP_PLATFORM": "amd"})
            if proc.returncode != 0 or not asm.exists():
                raise _fail("hipcc", source, proc)
            return RawOutput(asm.read_text(), proc.stderr, "amdgcn")
        if route.name == "nvcc":
            cubin = out / "kernel.cubin"
            argv = [tools.find_tool("nvcc"), *route.flags, *incs, *defines, *extra_flags,
                    source, "-o", cubin]
            proc = tools.run_tool(argv)
            if proc.returncode != 0 or not cubin.exists():
                raise _fail("nvcc", source, proc)
            dis = tools.run_tool([tools.find_tool("nvdisasm"), "-c", cubin])
            if dis.returncode != 0:
                raise _fail("nvdisasm", source, dis)
            return RawOutput(dis.stdout, proc.stdout + proc.stderr, "sass")
        return _run_nvrtc(route, source, defines, incs, extra_flags, out)


def _run_nvrtc(route: Route, source: Path, defines: list[str], incs: list[str],
               extra_flags: tuple[str, ...], out: Path) -> RawOutput:
    options = [route.flags[0], *incs, *defines, *extra_flags]
    ptx, _log = nvrtc_compile_ptx(source.read_text(), str(source), options)
    ptx_file, cubin = out / "kernel.ptx", out / "kernel.cubin"
    ptx_file.write_text(ptx)
    ptxas_flags = list(route.flags[2:])
    proc = tools.run_tool([tools.find_tool("ptxas12"), *ptxas_flags, ptx_file, "-o", cubin])
    if proc.returncode != 0 or not cubin.exists():
        raise _fail("ptxas", source, proc)
    info = proc.stdout + proc.stderr
    if tools.has_tool("nvdisasm"):
        dis = tools.run_tool([tools.find_tool("nvdisasm"), "-c", cubin])
        if dis.returncode == 0 and ".text." in dis.stdout:
            return RawOutput(dis.stdout, info, "sass", ptx)
    return RawOutput(ptx, info, f"ptx (no SASS disassembler for {route.target})", ptx)
