"""Catalogue kernels 7 ... 10 run on the CPU: results, barriers and LDS bounds.

Each kernel source is compiled by g++ against tests/fixtures/kernels_b_emu/emu.h, which runs
the threads of a block as fibers that switch at __syncthreads(). Two builds: the NVIDIA view
(GM_WAVE = 32) and the AMD view (GM_WAVE = 64, through a stand-in <hip/hip_runtime.h>), so
the warp-tiled index arithmetic is checked for both wave sizes. Fibers run forward, reversed
or shuffled between barriers: a missing barrier gives a wrong C in at least one order.
AddressSanitizer (when the toolchain has it) catches out-of-bounds LDS and global accesses.
The inline-assembly paths (AMD device, PTX) are not run here; tests/test_kernels_b_compile.py
checks their listings instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

pytestmark = pytest.mark.compiler

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
EMU = Path(__file__).resolve().parent / "fixtures" / "kernels_b_emu"
CATALOGUE_B = KERNELS / "catalogue.toml"
VARIANTS = {"warp32": [], "wave64": ["-D__HIP_PLATFORM_AMD__", f"-I{EMU}"]}


def _catalogue() -> dict:
    with CATALOGUE_B.open("rb") as fh:
        return {k: v for k, v in tomllib.load(fh)["kernel"].items() if k in {"7", "7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.8", "8.1", "8.2", "8.3", "8.4", "9", "9.1", "10"}}


ENTRIES = _catalogue()


def _need_gxx() -> str:
    gxx = shutil.which("g++")
    if gxx is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true and g++ is missing: apt-get install -y g++")
        pytest.skip("g++ not found: apt-get install -y g++")
    return gxx


def _run(argv: list, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def _flags(gxx: str, work: Path) -> list[str]:
    base = ["-std=c++17", "-O1", "-g", "-Wno-unknown-pragmas", "-Wno-attributes",
            f"-I{KERNELS}"]
    probe = work / "asan_probe.cpp"
    probe.write_text("int main() { return 0; }\n")
    asan = ["-fsanitize=address", "-fno-omit-frame-pointer"]
    if _run([gxx, *asan, probe, "-o", work / "asan_probe"], work).returncode == 0:
        return base + asan
    return base


def _entries_cpp(entries: list[str]) -> str:
    sig = "int, int, int, float, const float*, const float*, float, float*"
    lines = [f"typedef void (*kernel_fn)({sig});",
             "struct KernelEntry { const char* name; kernel_fn fn; };",
             'extern "C" {']
    lines += [f"void {e}({sig});" for e in entries]
    lines += ["}", "extern const KernelEntry emu_kernels[] = {"]
    lines += [f'  {{"{e}", {e}}},' for e in entries]
    lines += ["};", f"extern const int emu_kernel_count = {len(entries)};", ""]
    return "\n".join(lines)


def _build(gxx: str, flags: list[str], work: Path, sources: dict[str, Path], tag: str,
           extra: list[str]) -> Path:
    """Compile `sources` (entry -> .cu) with the harness into one emulator executable."""
    def compile_one(item):
        entry, src = item
        obj = work / f"{tag}_{entry}.o"
        proc = _run([gxx, *flags, *extra, "-include", EMU / "emu.h", "-x", "c++", "-c", src,
                     "-o", obj], work)
        assert proc.returncode == 0, f"{src.name} ({tag}):\n{proc.stderr[-3000:]}"
        return obj

    (work / f"{tag}_entries.cpp").write_text(_entries_cpp(list(sources)))
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        objs = list(pool.map(compile_one, sources.items()))
    for name in ("harness", "entries"):
        src = EMU / "harness.cpp" if name == "harness" else work / f"{tag}_entries.cpp"
        proc = _run([gxx, *flags, f"-I{EMU}", "-c", src, "-o", work / f"{tag}_{name}.o"], work)
        assert proc.returncode == 0, proc.stderr[-3000:]
        objs.append(work / f"{tag}_{name}.o")
    exe = work / f"emu_{tag}"
    proc = _run([gxx, *flags, *objs, "-o", exe], work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return exe


@pytest.fixture(scope="module")
def emulators(tmp_path_factory):
    gxx = _need_gxx()
    work = tmp_path_factory.mktemp("kernels_b_emu")
    flags = _flags(gxx, work)
    sources = {e["entry"]: KERNELS / e["source"] for e in ENTRIES.values()}
    exes = {tag: _build(gxx, flags, work, sources, tag, extra)
            for tag, extra in VARIANTS.items()}
    return {"gxx": gxx, "flags": flags, "work": work, "exes": exes}


def _emulate(exe: Path, entry: dict, order: str, beta: float, work: Path):
    mult = entry["multiple_of"]
    shape = (2 * mult["M"], 3 * mult["N"], 3 * mult["K"])  # K: an odd number of tiles
    argv = [exe, entry["entry"], *shape, entry["BM"], entry["BN"], entry["threads"], order,
            beta]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    return subprocess.run([str(a) for a in argv], cwd=work, capture_output=True, text=True,
                          timeout=300, check=False, env=env)


CASES = [(kid, variant, order, beta)
         for kid in ENTRIES for variant in VARIANTS
         for order, beta in (("fwd", 0.5), ("rev", 0.5), ("shuffle", 0.0))]


@pytest.mark.parametrize("kid,variant,order,beta", CASES,
                         ids=[f"{k}-{v}-{o}-b{b:g}" for k, v, o, b in CASES])
def test_kernel_matches_reference(emulators, kid, variant, order, beta):
    proc = _emulate(emulators["exes"][variant], ENTRIES[kid], order, beta, emulators["work"])
    assert "AddressSanitizer" not in proc.stderr, proc.stderr[-4000:]
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr[-2000:]}"
    assert proc.stdout.startswith("max_err_ratio")


def test_emulation_catches_a_missing_barrier(emulators, tmp_path):
    """Negative control: kernel 7.3 without the barrier that frees its LDS tile must fail."""
    src = (KERNELS / "ladder" / "k7_3.cu").read_text()
    barrier = "    __syncthreads();  // all reads of this tile are done"
    assert barrier in src
    broken = tmp_path / "k7_3_no_barrier.cu"
    broken.write_text(src.replace(barrier, "    // (barrier removed)"))
    exe = _build(emulators["gxx"], emulators["flags"], tmp_path, {"sgemm_7_3": broken},
                 "broken", [])
    results = [_emulate(exe, ENTRIES["7.3"], order, 0.5, tmp_path).returncode
               for order in ("fwd", "rev")]
    assert any(rc == 1 for rc in results), results
