"""Catalogue kernels 7 ... 10 compile for gfx906 (hipcc) and sm_90 (nvcc), with their entry
symbols; the inline-assembly kernels' listings never touch an in-flight register.

The in-flight check reads a gfx9 listing (hipcc -S) in program order: a load issued by inline
assembly (between ;;#ASMSTART / ;;#ASMEND) stays in flight until an s_waitcnt retires it
(vmcnt for global loads, lgkmcnt for ds_*; both counters retire in issue order on gfx9, so
counter(N) retires all but the N newest operations of that counter). Any instruction that
names one of its destination VGPRs before that point - a read, a copy, an overwrite - is the
"ds_read reads wrong lanes" bug of the unfinished kernel 7.6; so is a branch or label while
it is in flight (the check does not follow control flow).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gemmmodel.compile.lookahead import _amd_regs

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
with (KERNELS / "catalogue.toml").open("rb") as _fh:
    ENTRIES = {k: v for k, v in tomllib.load(_fh)["kernel"].items() if k in {"7", "7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.8", "8.1", "8.2", "8.3", "8.4", "9", "9.1", "10"}}
ASM_KERNELS = ["7.4", "7.6", "7.8"]
ASM_TARGETS = ["gfx906", "gfx908", "gfx90a"]

_WAIT = re.compile(r"\b(vmcnt|lgkmcnt)\((\d+)\)")
_LABEL = re.compile(r"^[.\w$]+:$")
_BRANCH = ("s_branch", "s_cbranch", "s_setpc", "s_endpgm")


def _counters(op: str) -> tuple[list[str], bool]:
    """Counters an instruction increments, and whether it returns data into VGPRs."""
    if op.startswith("ds_"):
        return ["lgkm"], op.startswith(("ds_read", "ds_load")) or "_rtn" in op
    if op.startswith(("s_load", "s_buffer_load", "s_memtime", "s_memrealtime")):
        return ["lgkm_smem"], False
    if op.startswith("flat_"):
        return ["vm", "lgkm"], "load" in op
    if op.startswith(("global_", "buffer_", "scratch_")):
        return ["vm"], "load" in op
    return [], False


def inflight_violations(listing: str, entry: str) -> list[str]:
    """Uses of inline-asm load results before their s_waitcnt, in function `entry`."""
    start = listing.index(f"\n{entry}:")
    body = listing[start:listing.index("s_endpgm", start) + len("s_endpgm")]
    queues: dict[str, list[dict]] = {"vm": [], "lgkm": []}
    in_asm, problems = False, []
    for raw in body.splitlines()[1:]:
        line = raw.strip()
        if line.startswith(";;#ASMSTART"):
            in_asm = True
            continue
        if line.startswith(";;#ASMEND"):
            in_asm = False
            continue
        code = line.split(";")[0].strip()
        if not code or (code.startswith(".") and not _LABEL.match(code)):
            continue
        pending = [item for q in queues.values() for item in q if item["asm"]]
        op = code.split()[0]
        if _LABEL.match(code) or op.startswith(_BRANCH):
            problems += [f"{item['code']} in flight at '{code}'" for item in pending]
            continue
        if op == "s_waitcnt":
            for counter, n in _WAIT.findall(code):
                queue = queues["vm" if counter == "vmcnt" else "lgkm"]
                smem = any(item["smem"] for item in queue)
                if int(n) == 0:
                    queue.clear()
                elif not smem:  # SMEM returns out of order: retire nothing (conservative)
                    del queue[:max(0, len(queue) - int(n))]
            continue
        operands = code[len(op):]
        for item in pending:
            if item["dst"] & _amd_regs(operands):
                problems.append(f"{item['code']} in flight, touched by '{code}'")
        counters, returns = _counters(op)
        first = operands.split(",")[0]
        for counter in counters:
            queues["lgkm" if counter.startswith("lgkm") else "vm"].append({
                "code": code, "asm": in_asm, "smem": counter == "lgkm_smem",
                "dst": _amd_regs(first) if returns and in_asm else set()})
    return problems


def test_inflight_check_flags_an_early_use_and_passes_a_tied_wait():
    """The checker itself (no compiler): a copy before the wait is caught, none after it."""
    bad = ("\nk:\n\t;;#ASMSTART\n\tds_read_b128 v[4:7], v1 offset:16\n\t;;#ASMEND\n"
           "\tv_mov_b32_e32 v8, v5\n\t;;#ASMSTART\n\ts_waitcnt lgkmcnt(0)\n\t;;#ASMEND\n"
           "\ts_endpgm\n")
    good = bad.replace("\tv_mov_b32_e32 v8, v5\n", "\tv_mov_b32_e32 v8, v9\n") \
              .replace("\ts_endpgm\n", "\tv_mov_b32_e32 v8, v5\n\ts_endpgm\n")
    branch = bad.replace("\tv_mov_b32_e32 v8, v5\n", "\ts_cbranch_scc1 .LBB0_2\n")
    partial = ("\nk:\n\t;;#ASMSTART\n\tglobal_load_dwordx4 v[0:3], v[8:9], off\n\t;;#ASMEND\n"
               "\t;;#ASMSTART\n\tglobal_load_dwordx4 v[4:7], v[10:11], off\n\t;;#ASMEND\n"
               "\ts_waitcnt vmcnt(1)\n\tv_add_f32_e32 v12, v0, v1\n\tv_add_f32_e32 v13, v4, v5\n"
               "\ts_waitcnt vmcnt(0)\n\ts_endpgm\n")
    assert len(inflight_violations(bad, "k")) == 1
    assert inflight_violations(good, "k") == []
    assert len(inflight_violations(branch, "k")) == 1
    # vmcnt(1) retires the older load (v[0:3]) only
    expected = ("global_load_dwordx4 v[4:7], v[10:11], off in flight, touched by "
                "'v_add_f32_e32 v13, v4, v5'")
    assert inflight_violations(partial, "k") == [expected]


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and {tool} is missing")
        pytest.skip(f"{tool} not found on PATH")
    return path


def _compile(argv: list, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600,
                          check=False, env=dict(os.environ, **(env or {})))


def _hip_listing(hipcc: str, kid: str, target: str, out_dir: Path) -> str:
    out = out_dir / f"{ENTRIES[kid]['entry']}_{target}.s"
    proc = _compile([hipcc, f"-I{KERNELS}", "-x", "hip", "--cuda-device-only",
                     f"--offload-arch={target}", "-O3", "-S", KERNELS / ENTRIES[kid]["source"],
                     "-o", out], env={"HIP_PLATFORM": "amd"})
    assert proc.returncode == 0, f"{kid} {target}:\n{proc.stderr[-3000:]}"
    return out.read_text()


def _cubin(nvcc: str, kid: str, arch: str, out_dir: Path) -> bytes:
    out = out_dir / f"{ENTRIES[kid]['entry']}_{arch}.cubin"
    proc = _compile([nvcc, f"-I{KERNELS}", f"-arch={arch}", "-cubin",
                     KERNELS / ENTRIES[kid]["source"], "-o", out])
    assert proc.returncode == 0, f"{kid} {arch}:\n{proc.stderr[-3000:]}"
    return out.read_bytes()


@pytest.fixture(scope="module")
def hip_listings(tmp_path_factory):
    hipcc = _need("hipcc")
    out_dir = tmp_path_factory.mktemp("hip_b")
    jobs = [(kid, "gfx906") for kid in ENTRIES]
    jobs += [(kid, t) for kid in ASM_KERNELS for t in ASM_TARGETS if t != "gfx906"]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        texts = list(pool.map(lambda job: _hip_listing(hipcc, *job, out_dir), jobs))
    return dict(zip(jobs, texts))


@pytest.fixture(scope="module")
def cubins(tmp_path_factory):
    nvcc = _need("nvcc")
    out_dir = tmp_path_factory.mktemp("nv_b")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        blobs = list(pool.map(lambda kid: _cubin(nvcc, kid, "sm_90", out_dir), ENTRIES))
    return dict(zip(ENTRIES, blobs))


@pytest.mark.compiler
@pytest.mark.parametrize("kid", list(ENTRIES))
def test_gfx906_listing_defines_the_entry(hip_listings, kid):
    listing = hip_listings[(kid, "gfx906")]
    entry = ENTRIES[kid]["entry"]
    assert re.search(rf"^\s*\.globl\s+{entry}\s*$", listing, re.MULTILINE), entry
    assert f"\n{entry}:" in listing
    assert re.search(r"\bs_endpgm\b", listing)


@pytest.mark.compiler
@pytest.mark.parametrize("kid", list(ENTRIES))
def test_sm90_cubin_holds_the_entry(cubins, kid):
    blob = cubins[kid]
    assert blob[:4] == b"\x7fELF"
    assert f".text.{ENTRIES[kid]['entry']}\x00".encode() in blob


@pytest.mark.compiler
@pytest.mark.parametrize("kid,target", [(k, t) for k in ASM_KERNELS for t in ASM_TARGETS])
def test_asm_results_not_used_before_their_wait(hip_listings, kid, target):
    listing = hip_listings[(kid, target)]
    entry = ENTRIES[kid]["entry"]
    body = listing[listing.index(f"\n{entry}:"):]
    assert ";;#ASMSTART" in body, "the inline-assembly path was not compiled"
    wanted = "ds_read_b128" if kid == "7.6" else "ds_write_b128"
    assert re.search(rf";;#ASMSTART\s+{wanted}\b", body), wanted
    assert re.search(r";;#ASMSTART\s+global_load_dwordx4\b", body)
    assert inflight_violations(listing, entry) == []


@pytest.mark.compiler
@pytest.mark.parametrize("kid", list(ENTRIES))
def test_nvrtc_compiles_without_standard_headers(require_tool, kid):
    """NVRTC has no standard headers: each source must compile with gemm_port.h alone.
    compute_61 (GTX 1050) also exercises the NVIDIA paths without cp.async."""
    require_tool("nvrtc")
    from gemmmodel.compile.nvrtc import nvrtc_compile_ptx

    src = KERNELS / ENTRIES[kid]["source"]
    ptx, _log = nvrtc_compile_ptx(src.read_text(), src.name,
                                  ["--gpu-architecture=compute_61", f"-I{KERNELS}"])
    assert f".entry {ENTRIES[kid]['entry']}(" in ptx


@pytest.mark.compiler
def test_untied_waits_reproduce_the_wrong_lanes_bug(tmp_path):
    """Kernel 7.6 as the unfinished original had it - s_waitcnt asm that names no registers,
    no fences - compiles (hipcc 5.2, gfx906) into FMAs that read ds_read results before the
    wait: the likely cause recorded in the catalogue notes."""
    hipcc = _need("hipcc")
    src = (KERNELS / "ladder" / "k7_6.cu").read_text()
    tied = "  gm_asm_wait_lgkmcnt<2>(f.a[0], f.a[1]);\n  gm_asm_wait_lgkmcnt<0>(f.b[0], f.b[1]);\n"
    fences = ["    fence(acc);  // the FMAs below stay after the reads above ...\n",
              "    fence(acc);  // ... and before the wait below\n"]
    assert tied in src and all(f in src for f in fences)
    src = src.replace(tied, "  gm_asm_wait_lgkmcnt<0>();\n")
    for fence in fences:
        src = src.replace(fence, "")
    variant = tmp_path / "k7_6_untied.cu"
    variant.write_text(src)
    out = tmp_path / "k7_6_untied.s"
    proc = _compile([hipcc, f"-I{KERNELS}", "-x", "hip", "--cuda-device-only",
                     "--offload-arch=gfx906", "-O3", "-S", variant, "-o", out],
                    env={"HIP_PLATFORM": "amd"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    problems = inflight_violations(out.read_text(), "sgemm_7_6")
    assert any("ds_read_b128" in p and "v_fmac_f32" in p for p in problems), problems[:5]
