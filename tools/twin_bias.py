"""How the model prices a thread tile against its twins, over every committed sweep.

    python3 tools/twin_bias.py --gpu h200 [--json]      # ~6 min on two cores

A config's twins share its block tile, depth and flags and differ only in the thread tile
(TM x TN: 4x4, 4x8, 8x4, 8x8). For each pair swept at the same shape,

    d = ln(t_meas(a) / t_meas(b)) - ln(t_pred(a) / t_pred(b))          [log]

is how much slower a runs against b than the model says (d > 0: a is priced too fast
against its twin). Printed: the median d per thread-tile pair, near the best (either
config within 1.15x of the shape's fastest), per kind of shape (batched, tile multiple,
other) and per warps per scheduler of config a (the model's w). The times are the
committed sweeps' (gemmmodel.model.selection.all_sweeps) and the committed fit's
predictions: a diagnostic of the terms, nothing fitted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gemmmodel.model import load_calib  # noqa: E402
from gemmmodel.model import selection as sel  # noqa: E402
from gemmmodel.model.combine import components_arrays, evaluate_arrays  # noqa: E402
from gemmmodel.spec import load_spec  # noqa: E402
from gemmmodel.template import parse_name  # noqa: E402

CALIBRATION = Path(__file__).resolve().parents[1] / "calibration"
PAIRS = (("4x4", "4x8"), ("4x4", "8x4"), ("8x4", "4x8"), ("8x8", "8x4"), ("8x8", "4x8"))
NEAR_BEST = 1.15


def twin_of(config: str, thread_tile: str) -> str:
    """The name `config` and its twins share: its thread tile replaced by TMxTN."""
    return config.replace(f"/{thread_tile}", "/TMxTN", 1)


def sweep_frame(gpu: str) -> pd.DataFrame:
    """One row per swept (config, shape): measured and predicted s, thread tile, w, kind."""
    folder = CALIBRATION / gpu
    measured = {k: t for part in sel.all_sweeps(folder).values() for k, t in part.items()}
    calib = load_calib(gpu, CALIBRATION)
    comps = sel.swept_components(folder, load_spec(gpu), list(measured), calib)
    keys = list(comps)
    arrays = components_arrays([comps[k] for k in keys])
    pred = evaluate_arrays(arrays, calib.theta())["total"]
    params = {c: parse_name(c).params(32) for c in {k[0] for k in keys}}
    frame = pd.DataFrame({
        "config": [k[0] for k in keys], "shape": [sel.shape_text(k[1]) for k in keys],
        "meas": [measured[k] for k in keys], "pred": pred,
        "w": np.atleast_1d(arrays["w"]) * np.ones(len(keys))})
    frame["thread_tile"] = [f"{params[c]['TM']}x{params[c]['TN']}" for c in frame.config]
    frame["twin"] = [twin_of(c, t) for c, t in zip(frame.config, frame.thread_tile)]
    frame["kind"] = [("batched" if s[3] > 1 else
                      "multiple" if s[0] % 128 == 0 and s[1] % 128 == 0 else "other")
                     for s in (k[1] for k in keys)]
    frame["best"] = frame.groupby("shape").meas.transform("min")
    return frame


def twin_bias(frame: pd.DataFrame, a: str, b: str) -> dict:
    """Median d (module doc) of thread tile `a` against `b`, overall and by group."""
    cols = ["shape", "twin", "meas", "pred", "w", "kind", "best"]
    j = frame[frame.thread_tile == a][cols].merge(
        frame[frame.thread_tile == b][cols[:4]], on=["shape", "twin"], suffixes=("", "_b"))
    j["d"] = np.log(j.meas / j.meas_b) - np.log(j.pred / j.pred_b)
    near = j[np.minimum(j.meas, j.meas_b) < NEAR_BEST * j.best]
    return {"a": a, "b": b, "pairs": len(j), "median_d": float(j.d.median()),
            "near_best_pairs": len(near), "near_best_median_d": float(near.d.median()),
            "by_kind": {k: round(float(v), 4) for k, v in j.groupby("kind").d.median().items()},
            "by_w": {f"{k:g}": round(float(v), 4) for k, v in j.groupby("w").d.median().items()}}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpu", default="h200")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if not (CALIBRATION / args.gpu).is_dir():
        print(f"twin_bias: no calibration/{args.gpu}/ (a swept GPU is needed)", file=sys.stderr)
        return 2
    print(f"[twin_bias] assembling every swept config of {args.gpu} ...", file=sys.stderr)
    rows = [twin_bias(sweep_frame(args.gpu), a, b) for a, b in PAIRS]
    if args.json:
        print(json.dumps({"gpu": args.gpu, "pairs": rows}, indent=2))
        return 0
    for r in rows:
        print(f"{r['a']} vs {r['b']}: {r['pairs']} pairs, median d {r['median_d']:+.3f}; near "
              f"the best {r['near_best_pairs']}: {r['near_best_median_d']:+.3f}")
        print("  by kind: " + ", ".join(f"{k} {v:+.3f}" for k, v in r["by_kind"].items()))
        print("  by w of " + r["a"] + ": " + ", ".join(f"{k} {v:+.3f}"
                                                       for k, v in r["by_w"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
