"""Device run Y: every search-space config timed at batched shapes twice, with the inputs
rotated past the L2 (cold, as every sweep) and with one input set that stays in the L2
(warm: after the warm-up launches every tile load is an L2 hit).

    GEMMMODEL_COMMIT=<sha> PYTHONPATH=. python3 tools/device/warm_l2.py OUT [--shapes …]

Why (docs/model.md section 10, session 30): at small batched shapes the model has the
register-staged double buffers with BK 8 too fast against their twins, and ncu puts their
waits on the prefetched global data. In a launch that fits in one wave every block starts
at once and walks K in step with the blocks that share its A and B panels, so the first
request for a line misses to DRAM and its sharers wait on that miss too: the loads would
see the DRAM latency, not the L2 hit latency the traffic model's reuse implies. With the
inputs already in the L2 that cannot happen. The shapes are chosen so that A, B and C of
one set fit in the L2 (<= 32 MB of the H200's 50 MB).
Writes OUT/warm_l2.csv (shape, config, mode, median_s, p20_s, p80_s, reps, noisy,
n_sets, error) and OUT/warm_l2.json (GPU, clocks, driver, commit, shapes) and prints the
warm/cold ratio per (BK, buffering) group last.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from acceptance import _runtime, _space, _time_config

#: Batched shapes swept before whose one input set fits in the L2 with room (MB: 30, 28, 27, 19).
SHAPES = ("176x112x448x50", "120x240x360x44", "160x96x384x60", "128x128x128x96")
#: Largest input set (A + B + C bytes) allowed for the warm mode.
MAX_SET_BYTES = 32 * 2 ** 20
FIELDS = ("gpu", "shape", "config", "mode", "median_s", "p20_s", "p80_s", "reps", "noisy",
          "n_sets", "error")


def _gpu_line() -> str:
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version",
             "--format=csv,noheader"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def run(out: Path, shapes: list[str], per_config_s: float) -> list[dict]:
    from gemmmodel.runtime.measure import rotations_needed

    rt = _runtime()
    info = rt.device_info()
    space = _space(rt)
    rows: list[dict] = []
    for text in shapes:
        m, n, k, batch = (int(x) for x in text.split("x"))
        per_set = 4 * batch * (m * k + k * n + m * n)
        if per_set > MAX_SET_BYTES:
            raise SystemExit(f"{text}: one input set is {per_set / 2**20:.1f} MiB, more than "
                             f"{MAX_SET_BYTES / 2**20:.0f} MiB: it would not stay in the L2")
        rng = np.random.default_rng(m + n + k + batch)
        host = [rng.uniform(-1, 1, size=batch * r * c).astype(np.float32)
                for r, c in ((m, k), (k, n), (m, n))]
        cold = rotations_needed(per_set, info.get("l2_bytes"))
        sets = [tuple(rt.upload(h) for h in host) for _ in range(cold)]
        t0 = time.time()
        for cfg in space:
            for mode, use in (("cold", sets), ("warm", sets[:1])):
                row = {"gpu": info.get("name"), "shape": text, "config": cfg.name, "mode": mode,
                       "n_sets": len(use), "error": ""}
                try:
                    res = _time_config(rt, cfg, (m, n, k, batch), use, per_config_s)
                    row.update(median_s=res.median_s, p20_s=res.p20_s, p80_s=res.p80_s,
                               reps=res.reps, noisy=res.noisy)
                except Exception as err:  # noqa: BLE001 (recorded; one bad launch must not stop the run)
                    row["error"] = f"{type(err).__name__}: {str(err)[:160]}"
                rows.append(row)
        for bufs in sets:
            for b in bufs:
                rt.free(b)
        print(f"[warm_l2] {text}: {len(space)} configs x 2 modes in {time.time() - t0:.1f} s "
              f"({cold} cold sets)", file=sys.stderr)
    with (out / "warm_l2.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(FIELDS), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    meta = {"gpu": _gpu_line(), "commit": os.environ.get("GEMMMODEL_COMMIT", "unknown"),
            "shapes": shapes, "per_config_s": per_config_s,
            "method": "acceptance._time_config (median of >= 5 events-timed groups after "
                      "2 warm-up launches); cold = input sets rotated past the L2 "
                      "(runtime.measure.rotations_needed), warm = one set"}
    (out / "warm_l2.json").write_text(json.dumps(meta, indent=2) + "\n")
    return rows


def summary(rows: list[dict]) -> str:
    """Median warm/cold time ratio per (BK, buffering) over the configs that ran in both."""
    times = {(r["shape"], r["config"], r["mode"]): float(r["median_s"])
             for r in rows if not r["error"]}
    groups: dict[tuple[str, str], list[float]] = {}
    for (shape, cfg, mode), t in times.items():
        if mode != "warm" or (shape, cfg, "cold") not in times:
            continue
        bk = cfg.split("/")[0].split("x")[2]
        buf = "db" if "/db" in cfg else "single"
        groups.setdefault((bk, buf), []).append(t / times[(shape, cfg, "cold")])
    lines = ["BK  buffering  configs  median warm/cold"]
    for (bk, buf), ratios in sorted(groups.items(), key=lambda g: (int(g[0][0]), g[0][1])):
        lines.append(f"{bk:>2}  {buf:<9}  {len(ratios):7d}  {np.median(ratios):.3f}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--per-config-s", type=float, default=0.12)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = run(out, args.shapes.split(","), args.per_config_s)
    print(summary(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
