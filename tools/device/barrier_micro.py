"""Barrier microbenchmark (device run J): what one __syncthreads costs a warp.

Each thread runs `iters` iterations of NF FMAs (8 independent chains, so one warp can issue
an FMA every clock) with or without a block barrier at the end of each iteration. Blocks of
`wpb` warps are launched `bps` per SM on every SM (one wave, grid = SMs * bps; the kernel's
dynamic shared memory is sized so that no more than `bps` blocks fit on an SM), so each SM
sub-partition (scheduler) holds wps = bps * wpb / 4 warps. The cost of a barrier in
scheduler clocks per warp:
    barrier_clk = (t_bar - t_plain) * clock / (iters * wps)
i.e. the issue-slot time a scheduler loses per warp and barrier (0 if other warps fill it).
Inputs are random (never zeros); the output is poisoned and checked against a float64
reference of the same recurrence; times are CUDA-event medians of 15 runs after warm-up.
Writes $OUT/barrier_micro.csv and .json (GPU name, clocks, driver, commit) and prints a table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import cupy as cp
import numpy as np

SRC = r"""
extern "C" __global__ void bar_fma(float* out, const float* seed, int iters, float a, float b) {
  extern __shared__ float pad[];
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  float x0 = seed[t], x1 = x0 + 1.f, x2 = x0 + 2.f, x3 = x0 + 3.f;
  float x4 = x0 + 4.f, x5 = x0 + 5.f, x6 = x0 + 6.f, x7 = x0 + 7.f;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int r = 0; r < NF / 8; ++r) {
      x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
      x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
    }
#if BAR
    __syncthreads();
#endif
  }
  if (threadIdx.x == 0 && iters < 0) pad[0] = x0;  // keeps the dynamic smem in use
  out[t] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
"""

NFS = (64, 256)
WPBS = (1, 2, 4, 8, 16)
BPSS = (1, 2, 4)
ITERS = 2000
A, B = 0.999, 0.001


def reference(seed: np.ndarray, nf: int, iters: int) -> np.ndarray:
    """float64 value of the recurrence x <- a x + b after nf/8 * iters steps, 8 chains."""
    n = (nf // 8) * iters
    an = A ** n
    tail = B * (1 - an) / (1 - A)
    x0 = seed.astype(np.float64)
    return sum(x0 + c for c in range(8)) * an + 8 * tail


def main() -> int:
    out_dir = os.environ.get("OUT", ".")
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    sms = props["multiProcessorCount"]
    smem_sm = props["sharedMemPerMultiprocessor"]
    optin = props["sharedMemPerBlockOptin"]
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.max.sm,driver_version",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    # clocks.max.sm: the idle query reads a parked clock; under load the H200 runs at its
    # maximum (1980 MHz before and after every timed run of calibration/h200/gpu_run_*.txt)
    clock_hz = float(smi.split(",")[2].strip().split()[0]) * 1e6
    rows = []
    for nf in NFS:
        mods = {bar: cp.RawModule(code=SRC, options=(f"-DNF={nf}", f"-DBAR={bar}"))
                for bar in (0, 1)}
        for wpb in WPBS:
            for bps in BPSS:
                if wpb * bps > 64:
                    continue
                threads, grid = 32 * wpb, sms * bps
                # shared memory per block so that at most bps blocks fit on an SM
                smem = min(optin, smem_sm // bps - 2048)
                n = threads * grid
                times = {}
                for bar, mod in mods.items():
                    fn = mod.get_function("bar_fma")
                    fn.max_dynamic_shared_size_bytes = smem
                    seed = cp.asarray(np.random.default_rng().uniform(0.1, 1.0, n), dtype=cp.float32)
                    out = cp.full(n, cp.nan, dtype=cp.float32)
                    args = (out, seed, np.int32(ITERS), np.float32(A), np.float32(B))
                    for _ in range(3):
                        fn((grid,), (threads,), args, shared_mem=smem)
                    cp.cuda.Device().synchronize()
                    ref = reference(cp.asnumpy(seed), nf, ITERS)
                    got = cp.asnumpy(out).astype(np.float64)
                    err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
                    if not np.all(np.isfinite(got)) or err > 1e-3:
                        print(f"CHECK FAILED nf={nf} wpb={wpb} bps={bps} bar={bar} err={err}")
                        return 1
                    ts = []
                    for _ in range(15):
                        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                        e0.record()
                        fn((grid,), (threads,), args, shared_mem=smem)
                        e1.record()
                        e1.synchronize()
                        ts.append(cp.cuda.get_elapsed_time(e0, e1) * 1e-3)
                    times[bar] = float(np.median(ts))
                wps = bps * wpb / 4.0
                plain_clk = times[0] * clock_hz / ITERS
                rows.append({"nf": nf, "warps_per_block": wpb, "blocks_per_sm": bps,
                             "warps_per_scheduler": wps, "t_plain_s": times[0],
                             "t_barrier_s": times[1],
                             "plain_clk_per_iter": plain_clk,
                             "fma_issue_clk_per_iter": max(wps, 1.0) * nf,
                             "barrier_clk_per_warp": (times[1] - times[0]) * clock_hz
                             / (ITERS * max(wps, 0.25)),
                             "check_rel_err": err})
    import csv
    with open(os.path.join(out_dir, "barrier_micro.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    meta = {"gpu": smi, "clock_hz_used": clock_hz, "sms": sms, "iters": ITERS,
            "commit": os.environ.get("GEMMMODEL_COMMIT", "unknown"),
            "method": "tools/device/barrier_micro.py: CUDA-event median of 15 after 3 warm-up "
                      "runs, random seeds, poisoned output checked against float64"}
    with open(os.path.join(out_dir, "barrier_micro.json"), "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    print(smi)
    print(f"{'nf':>4} {'wpb':>4} {'bps':>4} {'wps':>5} {'plain_clk':>10} {'fma_clk':>8} {'bar_clk/warp':>12}")
    for r in rows:
        print(f"{r['nf']:4d} {r['warps_per_block']:4d} {r['blocks_per_sm']:4d} "
              f"{r['warps_per_scheduler']:5.2f} {r['plain_clk_per_iter']:10.1f} "
              f"{r['fma_issue_clk_per_iter']:8.0f} {r['barrier_clk_per_warp']:12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
