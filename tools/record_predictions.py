"""Record the predictor's full ranking for issue 8's selection shapes BEFORE any sweep.

    python3 tools/record_predictions.py --gpu h200 --out calibration/h200/
    python3 tools/record_predictions.py --gpu h200 --out calibration/h200/ --round heldout \
        --shapes 3072x3072x3072,…     # a later round on shapes never swept or fitted

Writes selection_predictions[_<round>].csv (shape, rank, config, predicted_s, bottleneck) and
selection_predictions.json (when, which fit, the commit, seconds per shape). Configs the
model cannot tell apart (gemmmodel.predict TIE_REL) keep the order rank() lists them in.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gemmmodel.predict import rank  # noqa: E402

SHAPES = ("2048x2048x2048", "4096x4096x4096", "8192x8192x8192", "8192x256x8192",
          "256x8192x4096", "1024x1024x16384", "64x64x32x30", "128x128x64x20", "128x512x256x10")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--gpu", default="h200")
    p.add_argument("--out", default="calibration/h200")
    p.add_argument("--shapes", default=",".join(SHAPES), help="MxNxK[xBATCH],…")
    p.add_argument("--round", default="", help="file suffix of a later pre-registration round")
    args = p.parse_args()
    shapes = tuple(s.strip() for s in args.shapes.split(",") if s.strip())
    suffix = f"_{args.round}" if args.round else ""
    out = Path(args.out)
    rows, timing = [], {}
    for shape in shapes:
        t0 = time.perf_counter()
        res = rank(args.gpu, shape, top=100000)
        timing[shape] = time.perf_counter() - t0
        order = 0
        for item in res["top"]:
            for name in [item["name"], *item["equivalent"]]:
                order += 1
                rows.append({"shape": shape, "rank": order, "config": name,
                             "predicted_s": item["predicted_s"],
                             "bottleneck": item.get("bottleneck", "")})
        print(f"{shape}: {order} configs ranked in {timing[shape]:.2f} s; top-1 "
              f"{res['top'][0]['name']}", file=sys.stderr)
    with (out / f"selection_predictions{suffix}.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    fit = out / "fit.json"
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    meta = {"recorded_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "gpu_spec": args.gpu, "commit_before_recording": commit, "shapes": list(shapes),
            "round": args.round or "first",
            "fit_json_sha256": hashlib.sha256(fit.read_bytes()).hexdigest() if fit.exists()
            else None, "predict_seconds_per_shape": timing,
            "note": "recorded before the selection sweep of these shapes ran; the fit's "
                    "training set is named in fit.json"}
    (out / f"selection_predictions{suffix}.json").write_text(json.dumps(meta, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
