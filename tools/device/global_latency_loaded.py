"""Global-memory (L2) load latency under a load like a tile loop's prefetch
(kernels/micro/latency.cu mb_global_chase_loaded), NVIDIA GPU machine.

    PYTHONPATH=. python3 tools/device/global_latency_loaded.py OUT_DIR

One block per SM: lane 0 of warp 0 chases a 4 MiB chain (one dependent 64-bit ld.global.cg
per 128-byte line: L2 hits, L1 bypassed) while B background warps stream 128-bit
ld.global.cg loads, ILP independent ones per step, from a 16 MiB buffer (L2-resident) until
the chase ends. B = 0 gives the unloaded L2 latency (calibrated as l2_latency_s by the
single-thread chase). Writes OUT_DIR/global_latency_loaded.json and prints cycles per chase
step for each (B, ILP).

    GL_CHAIN_MIB=512 GL_STREAM_MIB=512 GL_NAME=dram_latency_loaded.json \
        PYTHONPATH=. python3 tools/device/global_latency_loaded.py OUT_DIR

does the same with a chain and a stream far larger than the L2 (device run BD, session 64):
the chase then misses to DRAM, beside background warps that stream from DRAM.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from micro_tool import open_micro, write_doc

BACKGROUND_WARPS = (0, 3, 7, 15, 31)
ILPS = (1, 4, 8)
CHAIN_BYTES = int(os.environ.get("GL_CHAIN_MIB", "4")) << 20
STREAM_BYTES = int(os.environ.get("GL_STREAM_MIB", "16")) << 20
NAME = os.environ.get("GL_NAME", "global_latency_loaded.json")
STEPS = 4096
REPS = 5


def main() -> int:
    from gemmmodel.calibrate.micro_memory import chase_chain

    rt, info, module, out_dir = open_micro("latency.cu", ["mb_chase_prepare",
                                                          "mb_global_chase_loaded"])
    sms = int(info["sms"])
    chain_host = chase_chain(CHAIN_BYTES, np.random.default_rng(2026))
    chain = rt.upload(chain_host)
    rt.launch(module, "mb_chase_prepare", (sms * 4, 1, 1), (256, 1, 1),
              [chain, np.int32(len(chain_host))])
    n4 = STREAM_BYTES // 16
    stream = rt.upload(np.random.default_rng(7).uniform(0.5, 1.5, 4 * n4).astype(np.float32))
    out = rt.alloc(24)
    slots = CHAIN_BYTES // 128
    rows = []
    for bg in BACKGROUND_WARPS:
        for ilp in (ILPS if bg else (1,)):
            threads = 32 * (1 + bg)
            sink = rt.alloc(4 * sms * threads)
            cyc, ns = [], []
            for _ in range(REPS):
                rt.launch(module, "mb_global_chase_loaded", (sms, 1, 1), (threads, 1, 1),
                          [chain, np.int32(slots), np.int32(STEPS), stream, np.int32(n4),
                           np.int32(ilp), out, sink])
                rt.synchronize()
                res = rt.download(out, (3,), np.uint64)
                cyc.append(float(res[1]) / STEPS)
                ns.append(float(res[2]) / STEPS)
            rt.free(sink)
            rows.append({"background_warps": bg, "ilp": ilp,
                         "warps_per_scheduler": (1 + bg) / 4,
                         "cycles_per_step_median": float(np.median(cyc)),
                         "ns_per_step_median": float(np.median(ns)), "cycles_per_step": cyc})
            print(f"background warps {bg:2d} x {ilp} loads in flight: "
                  f"{np.median(cyc):7.1f} cycles per chase step", flush=True)
    for buf in (chain, stream, out):
        rt.free(buf)
    write_doc(out_dir, NAME, rt, info,
              "tools/device/global_latency_loaded.py, kernels/micro/latency.cu", indent=1,
              chain_bytes=CHAIN_BYTES, stream_bytes=STREAM_BYTES, steps=STEPS, reps=REPS,
              rows=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
