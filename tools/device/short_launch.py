"""Short launches: do they wait on cold data? (NVIDIA GPU machine; device run BC)

    PYTHONPATH=. python3 tools/device/short_launch.py OUT_DIR

The held-out sweeps put batched launches under 10 us 0.25 log slower than the model
(session 64). For a few configs at short shapes this times each launch as the sweep does
(tools/device/acceptance.py _time_config: input sets rotated past the L2, a held group of
`inner` launches per sample) and again with one input set only (the data stays in the L2
from launch to launch). If the two agree, the short launches' missing time is not the first
touch of their data. Writes OUT_DIR/short_launch.csv and prints a table. SHORT_SHAPES and
SHORT_CONFIGS (comma-separated) replace the shapes and configs (device run BP). 2-D shapes
are timed with bounds-checked builds; SHORT_EDGE=0 times them as the sweeps do instead (the
tile-multiple build where the shape is one, so /db is the cp.async double buffer; run BU).
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from acceptance import _runtime, _time_config, free_sets, input_sets

SHAPES = ("64x64x32x30", "128x128x128x64", "256x192x448x48", "8192x128x128")
CONFIGS = ("32x32x32/4x4/p4", "32x32x16/4x4/db", "64x64x16/4x8/db", "32x64x32/8x4/p4/db",
           "64x64x16/8x8", "128x128x8/8x8/p4", "64x32x8/8x8/p4/db", "128x64x16/8x4")


def _listed(env: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated override from the environment (run BP: round 74's shapes), else
    the default (run BC's)."""
    text = os.environ.get(env, "").strip()
    return tuple(x for x in text.split(",") if x) if text else default


def main() -> int:
    from gemmmodel.template import parse_name

    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    rt = _runtime()
    info = rt.device_info()
    rows = []
    for text in _listed("SHORT_SHAPES", SHAPES):
        shape = tuple(int(x) for x in text.split("x"))
        shape = shape + (1,) * (4 - len(shape))
        m, n, k, batch = shape
        sets = input_sets(rt, shape, info.get("l2_bytes"), m + n + k + batch)
        n_sets = len(sets)
        edge = True if batch == 1 and os.environ.get("SHORT_EDGE", "1") != "0" else None
        for name in _listed("SHORT_CONFIGS", CONFIGS):
            cfg = parse_name(name)
            row = {"gpu": info.get("name"), "shape": text, "config": name, "n_sets": n_sets}
            for label, use in (("rotated", sets), ("one_set", sets[:1]), ("rotated2", sets)):
                res = _time_config(rt, cfg, shape, use, 0.5, edge)
                row[f"{label}_s"] = res.median_s
                row[f"{label}_inner"] = res.inner
            rows.append(row)
            print(f"{text:16s} {name:20s} rotated {row['rotated_s'] * 1e6:8.2f} us  one set "
                  f"{row['one_set_s'] * 1e6:8.2f} us  again {row['rotated2_s'] * 1e6:8.2f} us"
                  f"  (inner {row['rotated_inner']}, {n_sets} sets)", flush=True)
        free_sets(rt, sets)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "short_launch.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
