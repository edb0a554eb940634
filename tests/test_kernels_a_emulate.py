"""Catalogue kernels 1 … 6 run on the CPU: indexing, barriers and buffering without a GPU.

g++ compiles each kernel source unchanged against a CPU stand-in for gemm_port.h (below):
every GPU thread is a std::thread, __syncthreads a std::barrier, __shared__ a static array
shared by the threads of the block being run (blocks run one after another). Neither GM_AMD
nor GM_NVIDIA is defined, so 3.5 / 3.6 run their plain paths, which share the loop, buffer
and index logic of their assembly and cp.async paths (the AMD assembly itself is checked
in test_kernels_a_compile.py). ThreadSanitizer reports a missing or misplaced barrier as a
data race on LDS; -fsanitize=bounds stops an out-of-range index into an LDS or register
array; a misaligned float4 aborts; NaN guard bands around A, B and C catch out-of-range
global reads (NaN reaches C) and writes (a guard changes). Inputs are small integers, so the
result must equal numpy's exactly whatever the summation order.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import tomllib

from gemmmodel import KERNELS_DIR

CXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(CXX is None and os.environ.get("CI", "").lower() != "true",
                                reason="g++ is needed for the CPU emulation")
with (KERNELS_DIR / "catalogue.toml").open("rb") as _fh:
    ENTRIES = {k: v for k, v in tomllib.load(_fh)["kernel"].items() if k in {"1", "2", "3", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "4", "5", "6"}}
GUARD = 64  # floats of NaN before and after each matrix

EMU_HEADER = r"""
// CPU stand-in for kernels/gemm_port.h (tests only).
#pragma once
#include <barrier>
#include <cstdint>
#include <cstdlib>
struct gm_emu_dim3 { unsigned x = 0, y = 0, z = 0; };
inline thread_local gm_emu_dim3 threadIdx, blockIdx;
inline gm_emu_dim3 blockDim, gridDim;
inline std::barrier<>* gm_emu_barrier = nullptr;
inline void __syncthreads() { gm_emu_barrier->arrive_and_wait(); }
struct alignas(16) float4 { float x, y, z, w; };
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline float4* gm_emu_f4(const float* p) {
  if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) std::abort();  // misaligned float4
  return reinterpret_cast<float4*>(const_cast<float*>(p));
}
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define GM_WAVE 32
#define GM_DEVICE inline
#define GM_KERNEL extern "C"
#define GM_LD4(ptr) (*gm_emu_f4(ptr))
#define GM_ST4(ptr, v) (*gm_emu_f4(ptr) = (v))
"""

EMU_DRIVER = r"""
// Runs GM_EMU_ENTRY over a grid: argv = M N K alpha beta gx gy bx by bz in.bin out.bin,
// in.bin = the float buffer (guards included) with A, B, C at the offsets given below.
#include <cstdio>
#include <thread>
#include <vector>
#include "gemm_port.h"
#include GM_EMU_KERNEL
int main(int argc, char** argv) {
  if (argc != 14) return 2;
  const int M = std::atoi(argv[1]), N = std::atoi(argv[2]), K = std::atoi(argv[3]);
  const float alpha = std::atof(argv[4]), beta = std::atof(argv[5]);
  const unsigned gx = std::atoi(argv[6]), gy = std::atoi(argv[7]);
  const unsigned bx = std::atoi(argv[8]), by = std::atoi(argv[9]), bz = std::atoi(argv[10]);
  const long total = std::atol(argv[11]);
  std::vector<float4> store((total + 3) / 4);  // 16-byte aligned
  float* buf = &store[0].x;
  FILE* in = std::fopen(argv[12], "rb");
  if (!in || std::fread(buf, 4, total, in) != size_t(total)) return 3;
  std::fclose(in);
  const long g = GM_EMU_GUARD;
  float* A = buf + g;
  float* B = A + long(M) * K + 2 * g;
  float* C = B + long(K) * N + 2 * g;
  blockDim = {bx, by, bz};
  gridDim = {gx, gy, 1};
  const unsigned threads = bx * by * bz;
  std::barrier<> bar(threads);
  gm_emu_barrier = &bar;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      threadIdx = {t % bx, (t / bx) % by, t / (bx * by)};
      for (unsigned y = 0; y < gy; ++y)
        for (unsigned x = 0; x < gx; ++x) {
          blockIdx = {x, y, 0};
          GM_EMU_ENTRY(M, N, K, alpha, A, B, beta, C);
          bar.arrive_and_wait();  // the block has finished before the next one starts
        }
    });
  for (auto& th : pool) th.join();
  FILE* out = std::fopen(argv[13], "wb");
  if (!out || std::fwrite(buf, 4, total, out) != size_t(total)) return 4;
  std::fclose(out);
  return 0;
}
"""


def _build(kid: str, root: Path) -> tuple[Path, str]:
    e = ENTRIES[kid]
    exe = root / f"emu_{kid.replace('.', '_')}"
    cmd = [CXX, "-std=c++20", "-O1", "-g", "-pthread", "-fno-strict-aliasing",
           "-fsanitize=thread,bounds", "-fno-sanitize-recover=bounds", f"-I{root}",
           f'-DGM_EMU_KERNEL="{KERNELS_DIR / e["source"]}"', f"-DGM_EMU_ENTRY={e['entry']}",
           f"-DGM_EMU_GUARD={GUARD}", str(root / "driver.cpp"), "-o", str(exe)]
    res = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
    return exe, res.stderr if res.returncode else ""


@pytest.fixture(scope="module")
def emulators(tmp_path_factory):
    if CXX is None:
        pytest.fail("CI=true and g++ is missing: apt-get install -y g++")
    root = tmp_path_factory.mktemp("kernels_a_emu")
    (root / "gemm_port.h").write_text(EMU_HEADER)
    (root / "driver.cpp").write_text(EMU_DRIVER)
    with ThreadPoolExecutor(max_workers=2) as pool:
        built = dict(zip(ENTRIES, pool.map(lambda k: _build(k, root), ENTRIES)))
    return root, built


def _run(kid, emulators, m, n, k, alpha, beta, c_init):
    root, built = emulators
    exe, err = built[kid]
    assert not err, err[-3000:]
    e = ENTRIES[kid]
    rng = np.random.default_rng(zlib.crc32(f"{kid} {m} {n} {k}".encode()))
    a = rng.integers(-3, 4, (m, k)).astype(np.float32)
    b = rng.integers(-3, 4, (k, n)).astype(np.float32)
    c = c_init(rng, (m, n))
    guard = np.full(GUARD, np.nan, np.float32)
    parts = [guard, a.ravel(), guard, guard, b.ravel(), guard, guard, c.ravel(), guard]
    buf = np.concatenate(parts)
    (root / f"in_{kid}.bin").write_bytes(buf.tobytes())
    grid = (math.ceil(n / e["BN"]), math.ceil(m / e["BM"]))
    args = [m, n, k, alpha, beta, *grid, *e["block"], buf.size, root / f"in_{kid}.bin",
            root / f"out_{kid}.bin"]
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1 exitcode=66")
    res = subprocess.run([str(exe), *map(str, args)], check=False, capture_output=True,
                         text=True, timeout=600, env=env)
    assert res.returncode == 0 and "ThreadSanitizer" not in res.stderr, res.stderr[-4000:]
    out = np.fromfile(root / f"out_{kid}.bin", np.float32)
    c_off = 5 * GUARD + a.size + b.size
    guards = np.concatenate([out[:GUARD], out[GUARD + a.size:3 * GUARD + a.size],
                             out[3 * GUARD + a.size + b.size:c_off],
                             out[c_off + c.size:]])
    assert np.isnan(guards).all(), "a write outside A, B or C"
    assert np.array_equal(out[:c_off], buf[:c_off], equal_nan=True), "A or B was written"
    return a, b, c, out[c_off:c_off + c.size].reshape(m, n)


def _shape(kid: str, tiles_k: int) -> tuple[int, int, int]:
    e = ENTRIES[kid]
    mult = e["multiple_of"]
    if mult["M"] == 1:  # bounds-checked kernel: shapes that are not multiples of the tile
        return 2 * e["BM"] + 5, e["BN"] + 3, 19
    return 2 * mult["M"], 3 * mult["N"], tiles_k * mult["K"]


@pytest.mark.parametrize("kid", list(ENTRIES))
def test_matches_numpy(kid, emulators):
    """alpha, beta != 0; an odd number of k tiles (the double buffers end on buffer 0)."""
    m, n, k = _shape(kid, tiles_k=3)
    a, b, c, got = _run(kid, emulators, m, n, k, 1.5, -0.5,
                        lambda rng, shape: rng.integers(-3, 4, shape).astype(np.float32))
    assert np.array_equal(got, np.float32(1.5) * (a @ b) - np.float32(0.5) * c)


@pytest.mark.parametrize("kid", list(ENTRIES))
def test_beta_zero_does_not_read_c_and_one_k_tile(kid, emulators):
    """beta = 0 with C full of NaN (C must not be read); K = one tile (no second buffer)."""
    m, n, k = _shape(kid, tiles_k=1)
    a, b, _, got = _run(kid, emulators, m, n, k, 2.0, 0.0,
                        lambda rng, shape: np.full(shape, np.nan, np.float32))
    assert np.array_equal(got, np.float32(2.0) * (a @ b))
