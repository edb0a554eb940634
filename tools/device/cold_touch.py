"""Tile loads in series at a launch's start, cold and warm (NVIDIA GPU machine; device run
BF, session 65; kernels/micro/cold_touch.cu mb_cold_rounds).

    PYTHONPATH=. python3 tools/device/cold_touch.py OUT_DIR

Run BC (session 64) found short launches 0.7-1.3 us slower with their inputs rotated past the
L2 (as every sweep times them) than with one input set kept in the L2. This asks what one
tile round costs a block that waits for its loads, by the round's position in the launch:
each block loads `rounds` tiles in series (32 rows of 128 B, one float4 per thread, 256
threads), and thread 0 stamps clock64() after each round. Fresh: every launch reads a region
of a 2 GiB pool that no launch touched since the pool last wrapped; rotate: the launches
take ceil(3 L2 / region) regions in turn (at least 2), as the sweep rotates its input sets
past the L2; warm: the launch before read the same region (L2 hits). Varied: rows 128 B apart
(contiguous) or 4 KiB apart (a K = 1024 A tile); 1, 2 or 4 blocks per SM; each tile read by
1, 2 or 4 blocks at once (`share`). Writes OUT_DIR/cold_touch.json and prints the medians.
"""

from __future__ import annotations

import sys

import numpy as np
from micro_tool import open_micro, write_doc

ROWS, ROW_F4 = 32, 8            # a 32 x 32-float tile, one float4 per thread
PITCHES = (8, 256)              # float4: rows contiguous, or 4 KiB apart
ROUNDS = (1, 2, 4, 8)
PER_SM = (1, 2, 4)
SHARES = (1, 2, 4)
REPS = 15
POOL_BYTES = 2 << 30


def _stats(stamps: np.ndarray, rounds: int) -> dict:
    """Medians over blocks and repetitions of the first round's cycles and of the later
    rounds' mean cycles; the median makespan (last block end - first block start, ns)."""
    cyc = stamps[:, :, 2:].astype(np.int64)            # reps x blocks x rounds (cumulative)
    per_round = np.diff(np.concatenate([np.zeros_like(cyc[:, :, :1]), cyc], axis=2), axis=2)
    later = per_round[:, :, 1:].mean(axis=2) if rounds > 1 else np.full(cyc.shape[:2], np.nan)
    span = stamps[:, :, 1].max(axis=1).astype(np.int64) - stamps[:, :, 0].min(axis=1).astype(
        np.int64)
    return {"first_round_clk": float(np.median(per_round[:, :, 0])),
            "first_round_p90_clk": float(np.percentile(per_round[:, :, 0], 90)),
            "later_round_clk": float(np.nanmedian(later)) if rounds > 1 else None,
            "total_clk": float(np.median(cyc[:, :, -1])),
            "makespan_ns": float(np.median(span))}


def _bases(mode: str, cursor: int, region: int, n_rot: int, pool: int,
           launches: int) -> tuple[list[int], int]:
    """(each launch's region offset, the pool's next free offset), in float4, for `mode`:
    fresh, a new region per launch (wrapping to 0 at the pool's end); rotate, `n_rot`
    adjacent regions in turn; warm, one region for every launch. The regions start at
    `cursor`, or at 0 where `n_rot` regions from it would pass the pool's end."""
    if cursor + n_rot * region > pool:
        cursor = 0
    if mode == "rotate":
        return [cursor + (i % n_rot) * region for i in range(launches)], cursor + n_rot * region
    if mode == "warm":
        return [cursor] * launches, cursor + region
    bases = []
    for _ in range(launches):
        if cursor + region > pool:    # a region no launch touched since the pool wrapped
            cursor = 0
        bases.append(cursor)
        cursor += region
    return bases, cursor


def main() -> int:
    from gemmmodel.runtime.base import DeviceBuffer

    rt, info, module, out_dir = open_micro("cold_touch.cu", ["mb_cold_rounds"])
    sms = int(info["sms"])
    l2 = int(info.get("l2_bytes") or 50 << 20)
    n_f4 = POOL_BYTES // 16
    pool = rt.upload(np.random.default_rng(65).random(4 * n_f4, dtype=np.float32) + 0.5)
    sink = rt.alloc(4 * sms * max(PER_SM))
    rows = []
    cursor = 0
    for pitch in PITCHES:
        for per_sm in PER_SM:
            grid = sms * per_sm
            stamps_buf = rt.alloc(8 * grid * (max(ROUNDS) + 2))
            for share in SHARES:
                groups = -(-grid // share)
                region = groups * ROWS * pitch + max(ROUNDS) * ROW_F4   # float4
                for rounds in ROUNDS:
                    # rotate: ceil(3 L2 / region) regions in turn, as the sweep rotates
                    # its input sets past the L2
                    n_rot = max(2, -(-3 * l2 // (16 * region)))
                    for mode in ("fresh", "rotate", "warm"):
                        got = []
                        bases, cursor = _bases(mode, cursor, region, n_rot, n_f4, REPS + 1)
                        for rep, base in enumerate(bases):
                            view = DeviceBuffer(pool.ptr + 16 * base, 16 * region)
                            rt.launch(module, "mb_cold_rounds", (grid, 1, 1),
                                      (ROWS * ROW_F4, 1, 1),
                                      [view,
                                       np.int32(ROWS), np.int32(ROW_F4), np.int64(pitch),
                                       np.int32(rounds), np.int32(share), stamps_buf, sink],
                                      shared_bytes=16 * ROWS * ROW_F4)
                            rt.synchronize()
                            if rep == 0:
                                continue        # warms the L2 (warm) or the code (all)
                            got.append(rt.download(stamps_buf, (grid, rounds + 2), np.uint64))
                        row = {"pitch_bytes": 16 * pitch, "blocks_per_sm": per_sm,
                               "share": share, "rounds": rounds, "mode": mode,
                               "regions_rotated": n_rot if mode == "rotate" else None,
                               **_stats(np.stack(got), rounds)}
                        rows.append(row)
                        print(f"pitch {16 * pitch:5d} B  {per_sm}/SM  share {share}  "
                              f"R {rounds}  {mode:6s}  first {row['first_round_clk']:7.0f}  "
                              f"later {row['later_round_clk'] or 0:7.0f}  makespan "
                              f"{row['makespan_ns'] / 1e3:6.2f} us", flush=True)
            rt.free(stamps_buf)
    rt.free(pool)
    rt.free(sink)
    write_doc(out_dir, "cold_touch.json", rt, info,
              "tools/device/cold_touch.py, kernels/micro/cold_touch.cu", indent=1,
              rows_per_tile=ROWS, row_bytes=16 * ROW_F4, reps=REPS, pool_bytes=POOL_BYTES,
              l2_bytes=l2, results=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
