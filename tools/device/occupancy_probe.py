"""Record the NVIDIA occupancy oracle: blocks per SM from the driver's occupancy calculator
(cuOccupancyMaxActiveBlocksPerMultiprocessor) for probe kernels of varied register use,
static / dynamic shared memory and block size. Registers and static shared memory come from
cuFuncGetAttribute of the compiled kernel, so the fixture pairs each answer with the
resources that produced it. Run on the GPU machine:

    PYTHONPATH=. python3 tools/device/occupancy_probe.py OUT_DIR

writes OUT_DIR/nvidia_occupancy_<gpu>.json (copied to tests/fixtures/ for the occupancy
model's tests).
"""

from __future__ import annotations

import datetime
import json
import re
import sys
from pathlib import Path

PROBE_SOURCE = r"""
#ifndef NACC
#define NACC 8
#endif
#ifndef THREADS
#define THREADS 256
#endif
#ifndef STATIC_BYTES
#define STATIC_BYTES 0
#endif
// NACC accumulators stay live across the loop (each update reads its neighbour), so the
// register count grows with NACC; __launch_bounds__ caps it so THREADS threads fit.
// NO_BOUNDS drops the bounds: -maxrregcount is ignored for a kernel that has them.
#if defined(NO_BOUNDS)
#define GM_BOUNDS
#else
#define GM_BOUNDS __launch_bounds__(THREADS)
#endif
extern "C" __global__ void GM_BOUNDS
occ_probe(float* __restrict__ out, const float* __restrict__ in, int iters, int dyn_floats) {
  extern __shared__ float dyn[];
#if STATIC_BYTES > 0
  __shared__ float stat[STATIC_BYTES / 4];
#endif
  float acc[NACC];
#pragma unroll
  for (int j = 0; j < NACC; ++j) acc[j] = in[(threadIdx.x + j * 7) & 1023];
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < NACC; ++j) acc[j] = fmaf(acc[j], acc[(j + 1) % NACC], 0.5f);
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < NACC; ++j) sum += acc[j] * (float)(j + 1);
#if STATIC_BYTES > 0
  stat[threadIdx.x % (STATIC_BYTES / 4)] = sum;
  __syncthreads();
  sum += stat[(threadIdx.x + 1) % (STATIC_BYTES / 4)];
#endif
  if (dyn_floats > 0) {
    dyn[threadIdx.x % dyn_floats] = sum;
    __syncthreads();
    sum += dyn[(threadIdx.x + 1) % dyn_floats];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
"""

KIB = 1024
# (threads, accumulators, static shared bytes, -maxrregcount or 0, dynamic sizes to query)
# "optin" stands for the largest dynamic size the device allows next to the static part.
VARIANTS = [
    (32, 4, 0, 0, [0]),
    (64, 4, 0, 0, [0, 1 * KIB, 20 * KIB]),
    (96, 8, 0, 0, [0]),
    (128, 8, 0, 0, [0, 1 * KIB, 20 * KIB, 48 * KIB, 100 * KIB, "optin"]),
    (128, 32, 0, 0, [0, 20 * KIB]),
    (192, 24, 0, 0, [0]),
    (256, 16, 0, 0, [0, 1 * KIB, 20 * KIB, 48 * KIB, 100 * KIB]),
    (256, 40, 0, 0, [0]),
    (256, 64, 0, 0, [0, 48 * KIB]),
    (256, 64, 0, 32, [0]),
    (256, 64, 0, 48, [0]),
    (512, 100, 0, 64, [0]),
    (256, 100, 0, 0, [0]),
    (256, 140, 0, 0, [0]),
    (256, 200, 0, 0, [0]),
    (384, 48, 0, 0, [0]),
    (512, 16, 0, 0, [0, 20 * KIB]),
    (512, 56, 0, 0, [0]),
    (640, 32, 0, 0, [0]),
    (768, 24, 0, 0, [0]),
    (1024, 8, 0, 0, [0, 48 * KIB]),
    (1024, 48, 0, 0, [0]),
    (128, 8, 1 * KIB, 0, [0]),
    (128, 8, 20 * KIB, 0, [0, 20 * KIB, 100 * KIB]),
    (256, 8, 40 * KIB, 0, [0, 8 * KIB, "optin"]),
    (64, 8, 4 * KIB, 0, [0]),
]


def gpu_slug(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'h100'; falls back to the whole name, simplified."""
    match = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Z]?)\b", name)
    if match:
        return match.group(1).lower()
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def measure(rt) -> dict:
    """Compile every variant, query the occupancy calculator; return the fixture dict."""
    info = rt.device_info()
    optin = info.get("shared_bytes_per_block_optin") or info.get("shared_bytes_per_block")
    cases = []
    for threads, nacc, static_bytes, maxrreg, dyn_sizes in VARIANTS:
        extra = [f"--maxrregcount={maxrreg}"] if maxrreg else []
        defines = {"NACC": nacc, "THREADS": threads, "STATIC_BYTES": static_bytes}
        if maxrreg:
            defines["NO_BOUNDS"] = 1
        module = rt.compile(PROBE_SOURCE, ["occ_probe"], defines,
                            name=f"occ_probe_t{threads}_a{nacc}_s{static_bytes}_r{maxrreg}.cu",
                            extra_options=extra)
        attrs = rt.function_attributes(module, "occ_probe")
        max_dyn = optin - attrs["static_smem_bytes"]
        if any(d == "optin" or d > 48 * KIB for d in dyn_sizes):
            rt.set_max_dynamic_shared(module, "occ_probe", max_dyn)
        attrs = rt.function_attributes(module, "occ_probe")
        for dyn in dyn_sizes:
            dyn_bytes = max_dyn if dyn == "optin" else dyn
            if dyn_bytes > max_dyn:
                continue
            cases.append({
                "name": f"t{threads}_acc{nacc}_static{static_bytes}_maxrreg{maxrreg}"
                        f"_dyn{dyn_bytes}",
                "threads": threads, "accumulators": nacc, "maxrregcount": maxrreg,
                "regs": attrs["regs"], "local_bytes": attrs["local_bytes"],
                "static_smem_bytes": attrs["static_smem_bytes"],
                "dynamic_smem_bytes": dyn_bytes,
                "max_dynamic_smem_attr_bytes": attrs.get("max_dynamic_smem_bytes"),
                "blocks_per_sm": rt.occupancy(module, "occ_probe", threads, dyn_bytes),
            })
    from importlib.metadata import PackageNotFoundError, version
    try:
        bindings = version("cuda-bindings")
    except PackageNotFoundError:  # the version is provenance only
        bindings = None
    device_keys = ("sms", "warp_size", "regs_per_sm", "shared_bytes_per_sm",
                   "shared_bytes_per_block", "shared_bytes_per_block_optin",
                   "reserved_shared_bytes_per_block", "max_threads_per_sm",
                   "max_blocks_per_sm", "max_threads_per_block")
    return {
        "provenance": {
            "gpu": info.get("name"), "arch": info.get("arch"),
            "compute_capability": info.get("compute_capability"),
            "driver": info.get("driver"), "cuda_driver_version": info.get("cuda_driver_version"),
            "nvrtc_version": info.get("nvrtc_version"), "cuda_bindings": bindings,
            "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"),
            "tool": "tools/device/occupancy_probe.py",
            "notes": "maxrregcount > 0 cases are compiled without __launch_bounds__ "
                     "(NO_BOUNDS), since -maxrregcount is ignored for a kernel that has "
                     "them; local_bytes > 0 means spills",
            "method": "NVRTC-compiled probe kernels; regs / static smem from "
                      "cuFuncGetAttribute; blocks_per_sm from "
                      "cuOccupancyMaxActiveBlocksPerMultiprocessor(func, threads, dynamic)",
        },
        "device": {key: info.get(key) for key in device_keys},
        "cases": cases,
    }


def main(argv: list[str]) -> int:
    from gemmmodel.runtime import get_runtime

    out_dir = Path(argv[1] if len(argv) > 1 else ".")
    rt = get_runtime("nvidia")
    data = measure(rt)
    path = out_dir / f"nvidia_occupancy_{gpu_slug(data['provenance']['gpu'] or 'gpu')}.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {path} ({len(data['cases'])} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
