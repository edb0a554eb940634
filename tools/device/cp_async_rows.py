"""What a global copy costs the SM per warp instruction against the rows (128-byte lines) its
32 lanes span, in the tile template's own access pattern (kernels/micro/smem.cu
mb_cp_async_rows, mb_ldg_rows), NVIDIA sm_80+ GPU machine.

    PYTHONPATH=. python3 tools/device/cp_async_rows.py OUT_DIR

The template copies the A tile (row-major, stored transposed) with 4-byte cp.async, VEC of
them per 16-byte chunk, and G = BK / 4 lanes on each row of A: one warp instruction spans
32 / G rows, 16 at BK 8, 8 at BK 16, 4 at BK 32. The B tile goes by 16-byte copies; the
register-staged builds load both with ld.global.v4. For each kind (cp.async 4 B, cp.async
16 B, ld.global.v4), G in LANES and two row pitches, one block of 1024 threads per SM
repeats 8 such instructions per iteration on an L1-resident source; per point the median
over SMs and REPEATS launches of the cycles per warp instruction per SM. Writes
OUT_DIR/cp_async_rows.json and prints a table.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from micro_tool import open_runtime, write_doc

from gemmmodel.model.lines import lines_per_instruction

LANES = (1, 2, 4, 8, 16, 32)       # lanes per row: rows per warp instruction = 32 / G
PITCHES = (32, 4128)               # words between rows: adjacent lines; 16 KiB + 128 B
KINDS = (("cp_async", 4, "mb_cp_async_rows"), ("cp_async", 16, "mb_cp_async_rows"),
         ("ldg", 16, "mb_ldg_rows"))
THREADS = 1024
ITERS = 64
PER_ITER = 8                       # MB_CP_PER_ITER in smem.cu
REPEATS = 7
WINDOW_WORDS = 1 << 21             # MB_ROW_WINDOW in smem.cu


def measure(rt, sms: int, module, entry: str, pitch: int, src, timing, sink) -> dict:
    args = ([src, np.int32(pitch), np.int32(ITERS), timing] if entry == "mb_cp_async_rows"
            else [src, np.int32(pitch), np.int32(ITERS), np.float32(0.123456), sink, timing])
    per_instr, clocks = [], []
    for i in range(REPEATS + 1):          # the first launch is a warm-up
        rt.launch(module, entry, (sms, 1, 1), (THREADS, 1, 1), args)
        rt.synchronize()
        t = rt.download(timing, (sms, 2), np.uint64).astype(np.float64)
        if i == 0:
            continue
        instr = (THREADS // 32) * ITERS * PER_ITER
        per_instr.append(float(np.median(t[:, 0])) / instr)
        clocks.append(float(np.median(t[:, 0] / t[:, 1])))
    return {"cycles_per_warp_instruction": float(np.median(per_instr)),
            "spread": float((max(per_instr) - min(per_instr)) / np.median(per_instr)),
            "sm_clock_ghz": float(np.median(clocks))}


def main() -> int:
    from gemmmodel import KERNELS_DIR

    rt, info, out_dir = open_runtime()
    sms = int(info["sms"])
    rng = np.random.default_rng(20261128)
    src = rt.upload(rng.uniform(-1, 1, 8 * WINDOW_WORDS).astype(np.float32))
    timing, sink = rt.alloc(16 * sms), rt.alloc(4 * sms * THREADS)
    rows = []
    try:
        for kind, nbytes, entry in KINDS:
            for lanes in LANES:
                module = rt.compile_file(Path(KERNELS_DIR) / "micro" / "smem.cu", [entry],
                                         {"CP_ROW_LANES": lanes, "CP_BYTES": nbytes,
                                          "VEC": 1})
                for pitch in PITCHES:
                    row = {"kind": kind, "bytes": nbytes, "lanes_per_row": lanes,
                           "rows_per_instruction": 32 // lanes,
                           # each lane reads within its 16-byte chunk, whatever the copy width
                           "lines_per_instruction": int(lines_per_instruction(lanes, 16)),
                           "pitch_words": pitch,
                           **measure(rt, sms, module, entry, pitch, src, timing, sink)}
                    rows.append(row)
                    print(f"{kind:8s} {nbytes:2d} B  G {lanes:2d}  lines {row['lines_per_instruction']:2d}"
                          f"  pitch {pitch:5d}: {row['cycles_per_warp_instruction']:6.2f} clk/instr"
                          f" (spread {row['spread']:.3f})", flush=True)
    finally:
        for buf in (src, timing, sink):
            rt.free(buf)
    path = write_doc(out_dir, "cp_async_rows.json", rt, info, "tools/device/cp_async_rows.py",
                     indent=1, threads=THREADS, iters=ITERS, per_iter=PER_ITER,
                     repeats=REPEATS, rows=rows)
    print(f"{len(rows)} points -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
