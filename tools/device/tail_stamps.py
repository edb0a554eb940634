"""Where the blocks of a real template launch run (NVIDIA GPU machine): the tail behind the
eighteenth round's misses (docs/selection.md; ncu run S shows equal work, unequal SM-active
shares).

    PYTHONPATH=. python3 tools/device/tail_stamps.py OUT_DIR SIZE[+edge]:CONFIG[,CONFIG...] ...

Each config's launch plan at SIZE (with +edge: its bounds-checked build, EDGE=1, even where
SIZE is a tile multiple) is rebuilt with GM_STAMPS=1, which adds the entry
sgemm_tile_stamped (kernels/template/sgemm_tile.cu): the same kernel, whose thread 0 per
block records %smid and %globaltimer at entry and exit. After WARMUP launches, REPS stamped
launches each give, with t = 0 at the first block's start:
  makespan_us       last block end
  active_share      mean over SMs of (time with >= 1 resident block) / makespan
  first_wave_end_us the earliest end among the first SMs x capacity blocks to start
  tail_blocks       blocks that started after first_wave_end; tail_sms: SMs they ran on;
  tail_per_sm_max   the most of them on one SM
  block_us_median   median block duration; block_us_alone: median of tail blocks that had
                    their SM to themselves for their whole run (none: null)
  first_end_spread_us  p90 - p10 of the first wave's end times (lock-step: small)
  edge_blocks       blocks whose tile crosses M or N (they take the checked loads);
  block_us_interior / block_us_edge: median durations of the other blocks and of those;
  edge_in_tail      edge blocks among the tail blocks
  stamped_regs, swept_regs, swept_capacity, capacity_matches
                    the stamped twin's registers per thread against the swept build's (the
                    plan's own entry, same defines, no GM_STAMPS), and whether both fit the
                    same blocks per SM (a line is printed where they do not: such stamps
                    are not the swept launch's; session 70, run BM). Where the twin fits
                    more, it is launched with pad_bytes of dynamic shared memory it does not
                    use, enough to bring it to the swept build's blocks per SM (icache.py's
                    blocks_smem), and capacity is that (run BO)
Writes OUT_DIR/tail_stamps.json (per-block SM, start, end included) and prints a table.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from icache import SMEM_PER_SM, blocks_smem
from inner_loop import prefer_all_shared
from micro_tool import write_doc

WARMUP, REPS = 2, 3


def _intervals_union(starts, ends) -> float:
    order = np.argsort(starts)
    total, cur_s, cur_e = 0.0, None, None
    for s, e in zip(starts[order], ends[order]):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0.0)


def edge_mask(grid, tile, shape) -> np.ndarray:
    """Per linear block index (blockIdx.y * gx + blockIdx.x, unswizzled): True where the
    block's BM x BN tile crosses M or N."""
    gx, gy = grid
    bm, bn = tile
    m, n = shape
    by, bx = np.divmod(np.arange(gx * gy), gx)
    return (by * bm + bm > m) | (bx * bn + bn > n)


def summarise(sm, t0, t1, sms: int, capacity: int, edge=None) -> dict:
    """The quantities of the module docstring from per-block SM ids and start/end (ns);
    `edge`: a per-block mask of edge tiles (edge_mask), or None."""
    t0, t1 = t0 - t0.min(), t1 - t0.min()
    makespan = float(t1.max())
    active = [_intervals_union(t0[sm == s], t1[sm == s]) if (sm == s).any() else 0.0
              for s in range(sms)]
    first = np.argsort(t0, kind="stable")[:sms * capacity]
    first_end = float(t1[first].min())
    tail = t0 >= first_end
    per_sm_tail = np.bincount(sm[tail], minlength=sms)
    alone = []
    for i in np.flatnonzero(tail):
        others = (sm == sm[i]) & (np.arange(len(sm)) != i)
        if not ((t0[others] < t1[i]) & (t1[others] > t0[i])).any():
            alone.append(float(t1[i] - t0[i]))
    ends = t1[first]
    dur = t1 - t0
    edge = np.zeros(len(sm), bool) if edge is None else np.asarray(edge, bool)
    extra = {"edge_blocks": int(edge.sum()),
             "block_us_interior": float(np.median(dur[~edge])) / 1e3 if (~edge).any() else None,
             "block_us_edge": float(np.median(dur[edge])) / 1e3 if edge.any() else None,
             "edge_in_tail": int((edge & tail).sum())}
    return {**extra, "makespan_us": makespan / 1e3,
            "active_share": float(np.mean(active)) / makespan,
            "first_wave_end_us": first_end / 1e3, "tail_blocks": int(tail.sum()),
            "tail_sms": int((per_sm_tail > 0).sum()), "tail_per_sm_max": int(per_sm_tail.max()),
            "block_us_median": float(np.median(dur)) / 1e3,
            "block_us_alone": float(np.median(alone)) / 1e3 if alone else None,
            "first_end_spread_us": float(np.percentile(ends, 90) - np.percentile(ends, 10)) / 1e3}


def build_check(rt, plan, stamped_module, defines: dict, capacity: int) -> dict:
    """The stamped twin against the build the sweeps time (the plan's own entry with the
    same defines but GM_STAMPS): registers per thread of both and the swept build's blocks
    per SM. nvcc allocates the twin's registers afresh, and a few more or fewer can move it
    across an occupancy step (run BM: 64x128x16/8x8/p4/db, gemmmodel.model.stamp_occupancy)."""
    swept_defines = {k: v for k, v in defines.items() if k != "GM_STAMPS"}
    swept = rt.compile_file(plan.source, [plan.entry], swept_defines)
    swept_capacity = rt.occupancy(swept, plan.entry, plan.block[0], plan.shared_bytes)
    return {"stamped_regs": rt.function_attributes(stamped_module, "sgemm_tile_stamped")["regs"],
            "swept_regs": rt.function_attributes(swept, plan.entry)["regs"],
            "swept_capacity": swept_capacity, "capacity_matches": swept_capacity == capacity,
            "pad_bytes": 0}


def main() -> int:
    from gemmmodel.catalogue import resolve
    from gemmmodel.runtime import get_runtime
    from gemmmodel.runtime.base import gemm_args

    out_dir, jobs = sys.argv[1], sys.argv[2:]
    rt = get_runtime("nvidia")
    info = rt.device_info()
    sms = int(info["sms"])
    rng = np.random.default_rng(5)
    runs = []
    for job in jobs:
        size, names = job.split(":")
        force_edge = size.endswith("+edge")
        size = size.removesuffix("+edge")
        m, n, k = (int(x) for x in size.split("x"))
        bufs = [rt.upload(rng.uniform(-1, 1, r * c).astype(np.float32))
                for r, c in ((m, k), (k, n), (m, n))]
        for name in names.split(","):
            plan = resolve(name).plan(m, n, k)
            defines = {**plan.defines, "GM_STAMPS": 1, **({"EDGE": 1} if force_edge else {})}
            if defines.get("SWIZZLE"):
                raise SystemExit(f"{name}: swizzled configs are not supported (edge_mask)")
            module = rt.compile_file(plan.source, ["sgemm_tile_stamped"], defines)
            edge = edge_mask(plan.grid[:2], (defines["BM"], defines["BN"]), (m, n))
            capacity = rt.occupancy(module, "sgemm_tile_stamped", plan.block[0],
                                    plan.shared_bytes)
            build = build_check(rt, plan, module, defines, capacity)
            shared = plan.shared_bytes
            if build["swept_capacity"] < capacity:
                # the twin fits more blocks: reserve unused dynamic shared memory until it
                # fits as many as the swept build (run BO)
                # opt in to all the dynamic memory the entry may take beside its static
                # memory, so the occupancy queries of the search count it
                static = rt.function_attributes(module, "sgemm_tile_stamped")["static_smem_bytes"]
                rt.set_max_dynamic_shared(module, "sgemm_tile_stamped",
                                          SMEM_PER_SM - 1024 - static)
                prefer_all_shared(rt, module, "sgemm_tile_stamped")
                total = blocks_smem(rt, module, build["swept_capacity"], plan.block[0],
                                    "sgemm_tile_stamped")
                if total is not None and total > shared:
                    build = {**build, "pad_bytes": total - shared, "capacity_matches": True}
                    shared, capacity = total, build["swept_capacity"]
            if not build["capacity_matches"]:
                print(f"{size} {name}: the stamped twin fits {capacity} blocks per SM "
                      f"({build['stamped_regs']} registers), the swept build "
                      f"{build['swept_capacity']} ({build['swept_regs']}): its stamps are "
                      f"not the swept launch's", flush=True)
            blocks = plan.grid[0] * plan.grid[1]
            rec = rt.alloc(24 * blocks)
            args = gemm_args(m, n, k, 1.0, bufs[0], bufs[1], 0.0, bufs[2]) + [rec]
            for rep in range(WARMUP + REPS):
                rt.launch(module, "sgemm_tile_stamped", plan.grid, plan.block, args, shared)
                rt.synchronize()
                if rep < WARMUP:
                    continue
                data = rt.download(rec, (blocks, 3), np.uint64).astype(np.int64)
                sm, t0, t1 = data[:, 0], data[:, 1], data[:, 2]
                row = {"size": size, "config": name, "rep": rep - WARMUP, "blocks": blocks,
                       "edge_build": int(defines.get("EDGE", 0)), "grid": list(plan.grid[:2]),
                       "capacity": capacity, "waves": blocks / (sms * capacity), **build,
                       **summarise(sm, t0, t1, sms, capacity, edge),
                       "sm": sm.tolist(), "start_ns": (t0 - t0.min()).tolist(),
                       "end_ns": (t1 - t0.min()).tolist()}
                runs.append(row)
                print(f"{size} {name:<22} rep {row['rep']}: {row['makespan_us']:8.1f} us, "
                      f"active {100 * row['active_share']:5.1f} %, waves {row['waves']:.2f}, "
                      f"tail {row['tail_blocks']} on {row['tail_sms']} SMs (<= "
                      f"{row['tail_per_sm_max']}/SM), block {row['block_us_median']:.1f} us "
                      f"(alone {row['block_us_alone']}), first-wave end spread "
                      f"{row['first_end_spread_us']:.1f} us; {row['edge_blocks']} edge blocks "
                      f"{row['block_us_edge']} us vs {row['block_us_interior']:.1f} us, "
                      f"{row['edge_in_tail']} in the tail", flush=True)
            rt.free(rec)
        for buf in bufs:
            rt.free(buf)
    write_doc(Path(out_dir), "tail_stamps.json", rt, info,
              "tools/device/tail_stamps.py, kernels/template/sgemm_tile.cu (GM_STAMPS=1)",
              warmup=WARMUP, reps=REPS, runs=runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
