"""Catalogue kernels 1 … 6 (their entries in kernels/catalogue.toml).

CPU tests: every entry is complete and consistent with its source (tile constants, entry
signature, NVRTC rules). Compiler tests (marker `compiler`; skipped without the tool,
FAIL under CI=true, see conftest.require_tool): each source compiles for AMD gfx906
(hipcc) and NVIDIA sm_90 (nvcc) and under NVRTC (compute_61, compute_90) with its entry
symbol present, and in the AMD ISA of the inline-assembly kernels 3.5 / 3.6 no register of a
hand-issued load is touched before the s_waitcnt that covers it (REFERENCE question 5).
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import tomllib

from gemmmodel import KERNELS_DIR, catalogue

CATALOGUE_A = KERNELS_DIR / "catalogue.toml"
IDS = ["1", "2", "3", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "4", "5", "6"]
ASM_IDS = ["3.5", "3.6"]
KEYS = ("parent", "title", "technique", "source", "entry", "block", "BM", "BN", "BK", "TM",
        "TN", "TK", "warp_tile", "threads", "padding", "vector_width", "buffering",
        "a_lds_layout", "thread_map", "launch_bounds", "multiple_of", "aliases", "notes")
BUFFERING = {"single", "lds-double", "reg-double", "lds-double+reg-double"}


def _entries() -> dict:
    with CATALOGUE_A.open("rb") as fh:
        return {k: v for k, v in tomllib.load(fh)["kernel"].items() if k in IDS}


def _source(kid: str) -> Path:
    return KERNELS_DIR / _entries()[kid]["source"]


# --------------------------------------------------------------------------- CPU tests

def test_ids_and_keys_complete():
    entries = _entries()
    assert list(entries) == IDS
    for kid, e in entries.items():
        missing = [k for k in KEYS if k not in e]
        assert not missing, (kid, missing)
        assert e["entry"] == "sgemm_" + kid.replace(".", "_")
        assert (KERNELS_DIR / e["source"]).is_file(), e["source"]
        assert e["parent"] in entries or (kid == "1" and e["parent"] == "")
        assert e["buffering"] in BUFFERING, (kid, e["buffering"])
        assert e["a_lds_layout"] in {"row", "transposed", "none"}
        bx, by, bz = e["block"]
        assert bx * by * bz == e["threads"]
        assert (e["BM"] // e["TM"]) * (e["BN"] // e["TN"]) == e["threads"], kid
        for dim, tile in (("M", e["BM"]), ("N", e["BN"]), ("K", e["BK"])):
            mult = e["multiple_of"][dim]
            assert mult == 1 or mult % tile == 0, (kid, dim)
        assert len(e["technique"]) > 150 and e["title"]


def test_the_package_loader_reads_the_file():
    entries = {k: v for k, v in catalogue.load_catalogue(CATALOGUE_A).items() if k in IDS}
    assert list(entries) == IDS
    graph = catalogue.lineage(entries)
    assert [n for n in graph.nodes if graph.in_degree(n) == 0] == ["1"]
    assert graph.has_edge("3.3", "3.5") and graph.has_edge("5", "6")
    aliases = catalogue.alias_table(entries)
    assert len(aliases) == sum(len(e.aliases) for e in entries.values())  # none repeated
    assert aliases["naive"] == "1" and aliases["kernel7"] == "6"


_CONST = re.compile(r"constexpr int ([^;]+);")


def _constants(text: str) -> dict[str, int]:
    out = {}
    for decl in _CONST.findall(text):
        for part in decl.split(","):
            name, _, value = part.partition("=")
            if value.strip().isdigit():
                out[name.strip()] = int(value)
    return out


@pytest.mark.parametrize("kid", IDS)
def test_source_matches_its_entry(kid):
    e = _entries()[kid]
    text = _source(kid).read_text()
    consts = _constants(text)
    assert consts["BM"] == e["BM"] and consts["BN"] == e["BN"]
    assert consts.get("BK", 1) == e["BK"]  # kernel 1 has no k tile
    assert consts.get("TM", 1) == e["TM"] and consts.get("TN", 1) == e["TN"]
    assert consts.get("PAD", 0) == e["padding"]
    signature = (f"GM_KERNEL void {e['entry']}(int M, int N, int K, float alpha, const float* "
                 "__restrict__ A, const float* __restrict__ B, float beta, float* "
                 "__restrict__ C) {")
    assert signature in " ".join(text.split())
    # NVRTC has no standard headers; static shared memory only.
    includes = re.findall(r"#include\s*(\S+)", text)
    assert includes == ['"gemm_port.h"']
    assert "extern __shared__" not in text


def test_no_two_kernels_share_a_body():
    bodies = {}
    for kid in IDS:
        text = _source(kid).read_text()
        code = re.sub(r"//[^\n]*", "", text).replace(_entries()[kid]["entry"], "ENTRY")
        bodies[kid] = " ".join(code.split())
    assert len(set(bodies.values())) == len(IDS)


# ------------------------------------------------------------------- ELF symbol reader

def elf_symbols(path: Path) -> set[str]:
    """Names in the symbol tables of a 64-bit little-endian ELF file (hsaco or cubin)."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, path
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    names = set()
    for _, sh_type, _, _, off, size, link, _, _, entsize in sections:
        if sh_type not in (2, 11) or not entsize:  # SHT_SYMTAB, SHT_DYNSYM
            continue
        str_off = sections[link][4]
        for pos in range(off, off + size, entsize):
            st_name, = struct.unpack_from("<I", data, pos)
            end = data.index(b"\0", str_off + st_name)
            names.add(data[str_off + st_name:end].decode())
    return names


# ------------------------------------------------------------- in-flight register check

_VREG = re.compile(r"\bv\[(\d+):(\d+)\]|\bv(\d+)\b")
_LABEL = re.compile(r"^\.LBB\d+_\d+:")


def _vregs(operands: str) -> set[int]:
    regs = set()
    for lo, hi, one in _VREG.findall(operands):
        regs.update(range(int(lo), int(hi) + 1) if lo else {int(one)})
    return regs


def _counters(op: str) -> tuple[str, ...]:
    if op.startswith("flat_"):
        return ("vm", "lgkm")
    if op.startswith(("global_", "buffer_", "scratch_")):
        return ("vm",)
    if op.startswith(("ds_", "s_load", "s_buffer_load")):
        return ("lgkm",)
    return ()


def inflight_hazards(asm_text: str, kernel: str) -> list[str]:
    """Uses of registers loaded by inline asm before an s_waitcnt covers the load.

    Walks the kernel's ISA in order. Every vector-memory / LDS / scalar-memory instruction
    is queued on its counter (vmcnt / lgkmcnt) in issue order; `s_waitcnt xcnt(N)` retires
    all but the N newest (gfx9 returns loads of one counter in order). A load between
    ;;#ASMSTART and ;;#ASMEND is one the compiler does not track: any instruction naming
    one of its destination VGPRs while it is queued is a hazard, and so is a label or
    branch reached while one is queued (the check is per straight-line block)."""
    start = asm_text.index(f"\n{kernel}:")
    body = asm_text[start:asm_text.index("s_endpgm", start)]
    queues: dict[str, list] = {"vm": [], "lgkm": []}
    problems: list[str] = []
    in_asm = False

    def inflight():
        return [e for q in queues.values() for e in q if e is not None]

    for raw in body.splitlines()[1:]:
        line = raw.strip()
        if line.startswith(";;#ASMSTART"):
            in_asm = True
            continue
        if line.startswith(";;#ASMEND"):
            in_asm = False
            continue
        line = line.split(";")[0].strip()  # drop comments
        if _LABEL.match(line) and inflight():
            problems.append(f"label {line} with asm loads in flight")
        if not line or line.startswith("."):
            continue
        op, _, operands = line.partition(" ")
        if op == "s_waitcnt":
            for name, cnt in (("vm", "vmcnt"), ("lgkm", "lgkmcnt")):
                m = re.search(cnt + r"\((\d+)\)", operands)
                if m:
                    keep = int(m.group(1))
                    queues[name] = queues[name][len(queues[name]) - keep:] if keep else []
            continue
        regs = _vregs(operands)
        for entry in inflight():
            if regs & entry["regs"]:
                problems.append(f"`{line}` touches v{sorted(regs & entry['regs'])} loaded by "
                                f"`{entry['line']}` before its s_waitcnt")
        if (op.startswith("s_cbranch") or op == "s_branch") and inflight():
            problems.append(f"`{line}` with asm loads in flight")
        counters = _counters(op)
        if counters:
            entry = None
            if in_asm and ("load" in op or "read" in op):
                entry = {"regs": _vregs(operands.split(",")[0]), "line": line}
            for name in counters:
                queues[name].append(entry)
    return problems


# --------------------------------------------------------------------- compiler tests

class Builds:
    """Compiles each kernel once per target, in a temporary folder."""

    def __init__(self, root: Path):
        self.root = root
        self.done: dict[tuple[str, str], tuple[subprocess.CompletedProcess, Path]] = {}

    def _one(self, kid: str, target: str):
        src = _source(kid)
        out = self.root / f"{src.stem}_{target}"
        out.mkdir(exist_ok=True)
        if target.startswith("gfx"):
            cmd = ["hipcc", "-I", str(KERNELS_DIR), "-x", "hip", "--cuda-device-only",
                   f"--offload-arch={target}", "-O3", "-c", "--no-gpu-bundle-output",
                   "-save-temps", "-Rpass-analysis=kernel-resource-usage", str(src),
                   "-o", str(out / "kernel.o")]
            env = {"HIP_PLATFORM": "amd"}
        else:
            cmd = ["nvcc", "-I", str(KERNELS_DIR), f"-arch={target}", "-cubin", str(src),
                   "-o", str(out / "kernel.o")]
            env = {}
        res = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=out,
                             timeout=300, env=dict(os.environ, **env))
        return res, out

    def get(self, kids: list[str], target: str, batch: list[str] = IDS):
        """Results for `kids`, building the missing ones of `batch` together first."""
        todo = [k for k in dict.fromkeys([*batch, *kids]) if (k, target) not in self.done]
        with ThreadPoolExecutor(max_workers=4) as pool:  # hipcc/nvcc mostly wait on I/O
            results = pool.map(lambda k: self._one(k, target), todo)
            self.done.update({(k, target): r for k, r in zip(todo, results)})
        return [self.done[(k, target)] for k in kids]


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    return Builds(tmp_path_factory.mktemp("kernels_a"))


@pytest.mark.compiler
@pytest.mark.parametrize("kid", IDS)
def test_gfx906_compiles_with_entry_symbol(kid, builds, require_tool):
    require_tool("hipcc")
    (res, out), = builds.get([kid], "gfx906")
    assert res.returncode == 0, res.stderr[-3000:]
    assert _entries()[kid]["entry"] in elf_symbols(out / "kernel.o")
    remarks = dict(re.findall(r"(VGPRs|ScratchSize \[bytes/lane\]|LDS Size \[bytes/block\]): "
                              r"(\d+) \[-Rpass", res.stderr))
    lds = int(remarks["LDS Size [bytes/block]"])
    e = _entries()[kid]
    if e["a_lds_layout"] != "none":  # the tiles of the entry fill the LDS the compiler reports
        buffers = 2 if "lds-double" in e["buffering"] else 1
        tile = (e["BM"] + e["padding"]) * e["BK"] + e["BK"] * (e["BN"] + e["padding"])
        assert lds == 4 * tile * buffers, (kid, lds)
    if kid in ASM_IDS:  # a spilled in-flight register would be read before its wait
        assert int(remarks["ScratchSize [bytes/lane]"]) == 0


@pytest.mark.compiler
@pytest.mark.parametrize("kid", IDS)
def test_sm90_compiles_with_entry_symbol(kid, builds, require_tool):
    require_tool("nvcc")
    (res, out), = builds.get([kid], "sm_90")
    assert res.returncode == 0, res.stderr[-3000:]
    assert _entries()[kid]["entry"] in elf_symbols(out / "kernel.o")


@pytest.mark.compiler
def test_nvrtc_compiles_every_kernel(require_tool):
    require_tool("nvrtc")
    from gemmmodel.compile.nvrtc import nvrtc_compile_ptx

    for kid in IDS:
        src = _source(kid)
        for arch in ("compute_61", "compute_90"):
            ptx, _ = nvrtc_compile_ptx(src.read_text(), src.name,
                                       [f"-arch={arch}", f"-I{KERNELS_DIR}"])
            assert f".entry {_entries()[kid]['entry']}(" in ptx, (kid, arch)
            if kid in ASM_IDS:  # the cp.async twin on sm_80+, the plain fallback below
                assert ("cp.async" in ptx) == (arch == "compute_90"), (kid, arch)


@pytest.mark.compiler
@pytest.mark.parametrize("target", ["gfx906", "gfx908", "gfx90a"])
def test_asm_loads_are_waited_for_before_use(target, builds, require_tool):
    require_tool("hipcc")
    for kid, (res, out) in zip(ASM_IDS, builds.get(ASM_IDS, target, ASM_IDS)):
        assert res.returncode == 0, res.stderr[-3000:]
        asm = next(out.glob(f"*{target}*.s")).read_text()
        assert asm.count(";;#ASMSTART") > 10, kid  # the hand-issued instructions are there
        assert inflight_hazards(asm, _entries()[kid]["entry"]) == [], kid


_Q5_SOURCE = r"""
#include "gemm_port.h"
GM_KERNEL void q5_early(float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  float v;
  const unsigned addr = gm_lds_offset(&s[(threadIdx.x + 1) % 256]);
  asm volatile("ds_read_b32 %0, %1" : "=v"(v) : "v"(addr) : "memory");
  out[threadIdx.x] = 2.0f * v;
}
GM_KERNEL void q5_tied(float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  float v;
  const unsigned addr = gm_lds_offset(&s[(threadIdx.x + 1) % 256]);
  asm volatile("ds_read_b32 %0, %1" : "=v"(v) : "v"(addr) : "memory");
  asm volatile("s_waitcnt lgkmcnt(0)" : "+v"(v) : : "memory");
  out[threadIdx.x] = 2.0f * v;
}
"""


@pytest.mark.compiler
def test_question5_cause_is_visible_to_the_checker(tmp_path, require_tool):
    """hipcc puts no wait between an asm ds_read and its first use; the tied wait fixes it."""
    require_tool("hipcc")
    src = tmp_path / "q5.cu"
    src.write_text(_Q5_SOURCE)
    cmd = ["hipcc", "-I", str(KERNELS_DIR), "-x", "hip", "--cuda-device-only",
           "--offload-arch=gfx906", "-O3", "-S", str(src), "-o", str(tmp_path / "q5.s")]
    res = subprocess.run(cmd, check=False, capture_output=True, text=True,
                         env=dict(os.environ, HIP_PLATFORM="amd"))
    assert res.returncode == 0, res.stderr[-3000:]
    asm = (tmp_path / "q5.s").read_text()
    early = inflight_hazards(asm, "q5_early")
    assert early and "ds_read_b32" in early[0]
    assert inflight_hazards(asm, "q5_tied") == []
