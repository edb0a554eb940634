"""Device run AG: why small batched launches time differently from one sweep to the next
(docs/selection.md, "Repeatability").

For a few configs at two small batched shapes of run AF, per sample:
- the host time to enqueue one batched launch (Python argument packing + cuLaunchKernel);
- the event-timed launch as the sweeps time it (acceptance._time_config: a spin "hold" of
  2 x HOST_ENQUEUE_S ahead of the start event, so that the host has enqueued the launch
  before the GPU reaches it), next to the same launch behind a 1 ms hold, alternating;
- a monotonic host stamp, so that slow stretches can be matched with the GPU clocks that
  tools/device/run_ag.sh logs with nvidia-smi beside it.

    python3 tools/device/batched_timing.py --out $OUT [--seconds 60]

Writes batched_timing.csv (one row per sample) and batched_timing.json (per config and
hold: median, p20, p80, the share of samples more than 5 % above the config's fastest
decile), and prints a short table."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from acceptance import _runtime  # noqa: E402

from gemmmodel.batched import (  # noqa: E402
    compile_batched,
    kernel_args,
    launch_spec,
    row_major_problem,
)
from gemmmodel.runtime.measure import rotations_needed  # noqa: E402
from gemmmodel.runtime.runner import HOST_ENQUEUE_S  # noqa: E402
from gemmmodel.template import parse_name  # noqa: E402

CASES = {
    (120, 328, 576, 36): ("128x128x32/8x8/p4", "64x128x16/8x4/p4/db", "128x64x16/4x8/p4",
                          "32x32x16/4x4/p4"),
    (232, 168, 512, 36): ("256x64x32/8x4/p4", "128x64x16/8x4/p4/db", "64x64x8/8x4/p4",
                          "32x32x16/4x4/p4"),
}
HOLDS = {"sweep": 2 * HOST_ENQUEUE_S, "long": 1e-3}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".")
    ap.add_argument("--seconds", type=float, default=60.0,
                    help="wall time to spend, split evenly over the configs")
    args = ap.parse_args()
    rt = _runtime()
    info = rt.device_info()
    rows = []
    n_cfg = sum(len(v) for v in CASES.values())
    t_origin = time.monotonic()
    for shape, names in CASES.items():
        m, n, k, batch = shape
        per_set = 4 * batch * (m * k + k * n + m * n)
        n_sets = rotations_needed(per_set, info.get("l2_bytes"))
        rng = np.random.default_rng(m + n + k)
        host = [rng.uniform(-1, 1, size=batch * r * c).astype(np.float32)
                for r, c in ((m, k), (k, n), (m, n))]
        sets = [tuple(rt.upload(h) for h in host) for _ in range(n_sets)]
        prob = row_major_problem(m, n, k, batch)
        for name in names:
            cfg = parse_name(name)
            module = compile_batched(rt, cfg)
            entry, grid, block = launch_spec(prob, cfg)
            counter = [0]

            def launch():
                a, b, c = sets[counter[0] % n_sets]
                counter[0] += 1
                rt.launch(module, entry, grid, block, kernel_args(prob, b, a, c))

            for _ in range(5):
                rt.time_s(launch, HOLDS["long"])          # warm-up
            t_end = time.monotonic() + args.seconds / n_cfg
            i = 0
            while time.monotonic() < t_end:
                hold = "sweep" if i % 2 == 0 else "long"
                rt.synchronize()
                t0 = time.perf_counter()
                launch()
                enqueue_s = time.perf_counter() - t0
                stamp = time.monotonic() - t_origin
                dev_s = rt.time_s(launch, HOLDS[hold])
                rows.append({"shape": "x".join(map(str, shape)), "config": name, "i": i,
                             "hold": hold, "hold_s": HOLDS[hold], "device_s": dev_s,
                             "enqueue_s": enqueue_s, "t_s": stamp})
                i += 1
        for bufs in sets:
            for b in bufs:
                rt.free(b)
    out = Path(args.out)
    with (out / "batched_timing.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    summary = []
    for shape in CASES:
        s = "x".join(map(str, shape))
        for name in CASES[shape]:
            sub = [r for r in rows if r["shape"] == s and r["config"] == name]
            floor = float(np.percentile([r["device_s"] for r in sub], 10))
            for hold in HOLDS:
                t = np.array([r["device_s"] for r in sub if r["hold"] == hold])
                enq = np.array([r["enqueue_s"] for r in sub if r["hold"] == hold])
                p20, med, p80 = np.percentile(t, [20, 50, 80])
                summary.append({"shape": s, "config": name, "hold": hold, "n": len(t),
                                "median_us": med * 1e6, "p20_us": p20 * 1e6,
                                "p80_us": p80 * 1e6,
                                "slow_share": float(np.mean(t > 1.05 * floor)),
                                "enqueue_median_us": float(np.median(enq)) * 1e6,
                                "enqueue_p90_us": float(np.percentile(enq, 90)) * 1e6})
    (out / "batched_timing.json").write_text(json.dumps(
        {"gpu": info.get("name"), "holds_s": HOLDS, "rows": summary}, indent=1))
    print(f"{'shape':<16} {'config':<22} {'hold':<6} {'n':>5} {'median us':>10} "
          f"{'p20':>7} {'p80':>7} {'slow':>6} {'enq us':>7} {'enq p90':>8}")
    for r in summary:
        print(f"{r['shape']:<16} {r['config']:<22} {r['hold']:<6} {r['n']:>5} "
              f"{r['median_us']:>10.1f} {r['p20_us']:>7.1f} {r['p80_us']:>7.1f} "
              f"{r['slow_share']:>6.2f} {r['enqueue_median_us']:>7.1f} "
              f"{r['enqueue_p90_us']:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
