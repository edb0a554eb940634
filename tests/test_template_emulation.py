"""The tile template's kernel code run on the CPU (kernels/template/emu/): correctness of
indexing, barriers, edges, transposes and strides without a GPU.

g++ compiles kernels/template/sgemm_tile.cu against emu/gemm_port.h (every GPU thread a
std::thread, __syncthreads a std::barrier) with the address and undefined-behaviour
sanitizers, so an out-of-bounds global or LDS access or a misaligned float4 fails the run.
Wave sizes 32 and 64 both run (the lane layouts differ); the NVIDIA cp.async path runs as
immediate copies. The batched entries are driven through gemmmodel.batched with a
FakeRuntime whose kernels call the emulator, so the host-side argument mapping is tested
together with the kernel. Timing is not modelled.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from gemmmodel import KERNELS_DIR
from gemmmodel.batched import check_case, fuzz_cases, tight_case
from gemmmodel.runtime.fake import FakeRuntime
from gemmmodel.spec import load_spec
from gemmmodel.template import BATCHED_ENTRIES, parse_name, validate

EMU_DIR = KERNELS_DIR / "template" / "emu"
CXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(CXX is None, reason="g++ is needed for the CPU emulation")
SPEC_OF_WAVE = {32: "sm_90", 64: "gfx908"}


class Emulator:
    """Builds (once per define set) and runs emu/harness.cpp."""

    def __init__(self, root: Path):
        self.root = root
        self.cache: dict[str, Path] = {}

    def binary(self, defines: dict[str, int], wave: int, cp_async: bool) -> Path:
        flags = [f"-D{k}={v}" for k, v in sorted(defines.items())]
        flags += [f"-DGM_WAVE={wave}", f"-DEMU_CP_ASYNC={int(cp_async)}"]
        key = hashlib.sha1(" ".join(flags).encode()).hexdigest()[:16]
        if key not in self.cache:
            out = self.root / f"harness_{key}"
            cmd = [CXX, "-std=c++20", "-pthread", "-O0", "-fno-strict-aliasing",
                   "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                   f"-I{EMU_DIR}", f"-I{KERNELS_DIR / 'template'}", *flags,
                   str(EMU_DIR / "harness.cpp"), "-o", str(out)]
            res = subprocess.run(cmd, capture_output=True, text=True, check=False)
            assert res.returncode == 0, res.stderr[-3000:]
            self.cache[key] = out
        return self.cache[key]

    def run(self, exe: Path, head: list, arrays: list[np.ndarray]) -> np.ndarray:
        src, dst = self.root / "in.bin", self.root / "out.bin"
        src.write_bytes(b"".join(np.ascontiguousarray(a, np.float32).tobytes() for a in arrays))
        args = [str(x) for x in head] + [str(a.size) for a in arrays] + [str(src), str(dst)]
        res = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300,
                             check=False)
        assert res.returncode == 0, res.stderr[-3000:]
        return np.fromfile(dst, dtype=np.float32)


@pytest.fixture(scope="module")
def emu(tmp_path_factory) -> Emulator:
    """The emulator, with the uniform cases' binaries built two at a time up front."""
    emulator = Emulator(tmp_path_factory.mktemp("emu"))
    jobs = [(parse_name(name).plan(*shape).defines, wave, cp) for name, wave, cp, shape in UNIFORM]
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda job: emulator.binary(*job), jobs))
    return emulator


# ---- the uniform entry (row-major, lda = K, ldb = N, ldc = N) ------------------------
UNIFORM = [
    # name, wave, cp.async, (M, N, K)
    ("128x128x8/8x8/p4/db", 32, True, (256, 256, 64)),      # cp.async pipeline
    ("128x128x8/8x8/p4/db", 64, False, (128, 256, 32)),     # register-staged pipeline
    ("64x64x16/4x4", 64, False, (128, 64, 48)),             # single buffer, wave64
    ("128x64x16/8x4/w32x32/db/s2", 32, False, (384, 192, 32)),  # swizzle, last group short
    ("32x64x8/4x8/v1/w16x64", 32, False, (64, 128, 16)),    # scalar path, explicit warp
    ("64x64x8/4x4/v1/db", 32, True, (128, 64, 32)),         # cp.async of single floats
    ("64x32x16/8x4/p4/db", 64, True, (100, 50, 33)),        # EDGE: every dimension ragged
    ("32x32x8/4x4/v1/db/s3", 32, False, (97, 45, 7)),       # EDGE, K < BK, swizzle
]


@pytest.mark.parametrize("name,wave,cp_async,shape", UNIFORM)
def test_uniform_entry_matches_numpy(emu, name, wave, cp_async, shape):
    cfg = parse_name(name)
    assert validate(cfg, load_spec(SPEC_OF_WAVE[wave])) == []
    m, n, k = shape
    plan = cfg.plan(m, n, k)
    exe = emu.binary(plan.defines, wave, cp_async)
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    for alpha, beta in ((1.5, 0.0), (0.75, -0.5)):
        c_in = np.full_like(c, np.nan) if beta == 0.0 else c
        got = emu.run(exe, [0, m, n, k, alpha, beta], [a, b, c_in]).reshape(m, n)
        ref = alpha * (a.astype(np.float64) @ b) + (beta * c if beta else 0.0)
        bound = 2 * (k + 3) * 2.0**-24 * (abs(alpha) * (np.abs(a) @ np.abs(b)) + abs(beta) *
                                          np.abs(c)) + 1e-30
        assert not np.isnan(got).any()
        assert np.all(np.abs(got - ref) <= bound), (name, alpha, beta)


def test_swizzle_covers_every_tile_once(emu):
    """Output 1 everywhere with A = 1/K, B = 1: a tile computed twice or never shows."""
    cfg = parse_name("64x64x16/4x4/s3")
    m, n, k = 64 * 7, 64 * 5, 16
    exe = emu.binary(cfg.plan(m, n, k).defines, 64, False)
    got = emu.run(exe, [0, m, n, k, 1.0, 1.0],
                  [np.full((m, k), 1.0 / 16, np.float32), np.ones((k, n), np.float32),
                   np.zeros((m, n), np.float32)])
    assert np.array_equal(got, np.ones(m * n, np.float32))


# ---- the batched entries through gemmmodel.batched ------------------------------------
def emulated_runtime(emu: Emulator, wave: int) -> FakeRuntime:
    """A FakeRuntime whose sgemm_tile_batched_* kernels run the CPU emulator."""

    def make(entry: str):
        ta, tb = next(key for key, val in BATCHED_ENTRIES.items() if val == entry)

        def kernel(rt, grid, block, values, shared_bytes):
            (m, n, k, alpha, a_ptr, lda, sa, b_ptr, ldb, sb, beta, c_ptr, ldc, sc,
             batch) = values
            defines = rt.current_defines
            assert block == (defines["THREADS"], 1, 1)
            exe = emu.binary(defines, wave, False)
            arrays = [rt.memory[p].view(np.float32) for p in (a_ptr, b_ptr, c_ptr)]
            head = [1, m, n, k, repr(alpha), repr(beta), int(ta), int(tb), lda, ldb, ldc,
                    sa, sb, sc, batch, grid[2]]
            arrays[2][:] = emu.run(exe, head, arrays)

        return kernel

    rt = FakeRuntime(kernels={e: make(e) for e in BATCHED_ENTRIES.values()},
                     info={"sms": 4})
    original = rt.launch

    def launch_with_defines(module, entry, grid, block, args, shared_bytes=0):
        rt.current_defines = {o[2:].split("=")[0]: int(o.split("=")[1])
                              for o in module.options if o.startswith("-D")}
        return original(module, entry, grid, block, args, shared_bytes)

    rt.launch = launch_with_defines
    return rt


def _small(case: dict) -> bool:
    return case["m"] * case["n"] * case["batch_count"] <= 40_000


@pytest.mark.parametrize("wave", [32, 64])
def test_batched_fuzz_sample_on_emulator(emu, wave):
    cases = [c for c in fuzz_cases(400, seed=wave) if _small(c)][:16]
    rt = emulated_runtime(emu, wave)
    for case in cases:
        res = check_case(case, runtime=rt, config="32x32x16/4x4/p4/db")
        assert res["passed"], res
    assert len(rt.launches) == len(cases)


def test_batched_contest_shape_all_ops_on_emulator(emu):
    """(64, 64, 32, 30) of REFERENCE.md §4 (NN and TC; the fuzz sample mixes the rest),
    NaN-poisoned C, the default config."""
    rt = emulated_runtime(emu, 32)
    for ta, tb in (("N", "N"), ("T", "C")):
        case = tight_case(64, 64, 32, 30, ta, tb, nan_c=True, seed=3)
        res = check_case(case, runtime=rt)
        assert res["passed"] and res["nan_count"] == 0, res


def test_batched_grid_z_loop_covers_all_batches(emu, monkeypatch):
    """A grid with fewer z-blocks than batches: the kernel's z loop must do the rest."""
    import gemmmodel.template.plan as plan_mod

    monkeypatch.setattr(plan_mod, "MAX_GRID_Z", 2)
    rt = emulated_runtime(emu, 64)
    case = tight_case(20, 12, 9, 5, "T", "N", alpha=0.5, beta=2.0, seed=4)
    res = check_case(case, runtime=rt, config="32x32x16/4x4/p4/db")
    assert res["passed"], res
    assert rt.launches[-1]["grid"][2] == 2


def test_batched_config_with_vec1_and_odd_ld(emu):
    rt = emulated_runtime(emu, 32)
    case = tight_case(45, 33, 17, 3, "N", "T", alpha=-1.0, beta=0.5, seed=5)
    case.update(lda=47, ldb=34, ldc=50, stride_a=47 * 17 + 3, stride_b=34 * 17 + 1,
                stride_c=50 * 33 + 7)
    res = check_case(case, runtime=rt, config="32x32x8/2x2/db")
    assert res["passed"], res
