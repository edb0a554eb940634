"""Shared-memory load latency under a GEMM-like load (kernels/micro/latency.cu
mb_smem_chase_loaded), NVIDIA GPU machine.

    PYTHONPATH=. python3 tools/device/smem_latency_loaded.py OUT_DIR

One block per SM: warp 0 chases 128-bit shared-memory entries (one dependent ld.shared.v4
per step) while B background warps run two 128-bit fragment loads and 16 FMAs per step, as a
4x4 register tile does. B = 0 gives the unloaded 128-bit latency. Writes
OUT_DIR/smem_latency_loaded.json and prints cycles per chase step for each B.
"""

from __future__ import annotations

import sys

import numpy as np

from micro_tool import open_micro, write_doc

BACKGROUND_WARPS = (0, 1, 3, 7, 11, 15, 23, 31)
ENTRIES = 2048
STEPS = 8192
REPS = 5


def main() -> int:
    rt, info, module, out_dir = open_micro("latency.cu", ["mb_smem_chase_loaded"])
    sms = int(info["sms"])
    rng = np.random.default_rng(2026)
    perm = rng.permutation(ENTRIES)
    nxt = np.empty(ENTRIES, dtype=np.uint32)
    nxt[perm] = np.roll(perm, -1)           # one cycle through every entry
    chain = rt.upload(nxt)
    out = rt.alloc(24)
    rows = []
    for bg in BACKGROUND_WARPS:
        threads = 32 * (1 + bg)
        sink = rt.alloc(4 * sms * threads)
        cyc = []
        for _ in range(REPS):
            rt.launch(module, "mb_smem_chase_loaded", (sms, 1, 1), (threads, 1, 1),
                      [chain, np.int32(ENTRIES), np.int32(STEPS), out, sink])
            rt.synchronize()
            res = rt.download(out, (3,), np.uint64)
            cyc.append(float(res[1]) / STEPS)
            ns = float(res[2]) / STEPS
        rt.free(sink)
        rows.append({"background_warps": bg, "warps_per_scheduler": (1 + bg) / 4,
                     "cycles_per_step_median": float(np.median(cyc)),
                     "cycles_per_step": cyc, "ns_per_step_last": ns})
        print(f"background warps {bg:2d} ({(1 + bg) / 4:5.2f} per scheduler): "
              f"{np.median(cyc):6.1f} cycles per 128-bit chase step", flush=True)
    rt.free(chain)
    rt.free(out)
    write_doc(out_dir, "smem_latency_loaded.json", rt, info,
              "tools/device/smem_latency_loaded.py, kernels/micro/latency.cu", indent=1,
              entries=ENTRIES, steps=STEPS, reps=REPS, rows=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
