"""Record the predictor's full ranking for issue 8's selection shapes BEFORE any sweep.

    python3 tools/record_predictions.py --gpu h200 --out calibration/h200/
    python3 tools/record_predictions.py --gpu h200 --out calibration/h200/ --round heldout \
        --shapes 3072x3072x3072,…     # a later round on shapes never swept or fitted
    python3 tools/record_predictions.py --gpu h100 --out calibration/h100/ --calib-from h200
                                      # a GPU never run: also the ranking with a sibling's
                                      # calibration carried over (transfer_calib)

Writes selection_predictions[_<round>].csv (shape, rank, config, predicted_s, bottleneck) and
selection_predictions.json (when, which fit, the commit, seconds per shape). With
--calib-from G also selection_predictions_from_<G>[_<round>].csv: the ranking with GPU G's
calibration transferred (gemmmodel.model.calib.transfer_calib). With --neighbours also
selection_predictions_neighbours[_<round>].csv: the ranking of
`predict --neighbours` (gemmmodel.model.neighbours), scored beside the model's own. Configs the
model cannot tell apart (gemmmodel.predict TIE_REL) keep the order rank() lists them in.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gemmmodel.predict import rank  # noqa: E402
from gemmmodel.model.selection import TRANSFER_RECORD_PREFIX  # noqa: E402
from gemmmodel.predict_selection import fit_sha256  # noqa: E402

SHAPES = ("2048x2048x2048", "4096x4096x4096", "8192x8192x8192", "8192x256x8192",
          "256x8192x4096", "1024x1024x16384", "64x64x32x30", "128x128x64x20", "128x512x256x10")


def _record(gpu: str, shapes, timing: dict, neighbours: bool,
            calib_from: str | None = None, neighbours_from: str | None = None) -> list[dict]:
    """The full ranking per shape as rows; seconds per shape into `timing`."""
    rows = []
    for shape in shapes:
        t0 = time.perf_counter()
        res = rank(gpu, shape, top=100000, neighbours=neighbours, calib_from=calib_from,
                   neighbours_from=neighbours_from)
        timing[shape] = time.perf_counter() - t0
        order = 0
        for item in res["top"]:
            for name in [item["name"], *item["equivalent"]]:
                order += 1
                rows.append({"shape": shape, "rank": order, "config": name,
                             "predicted_s": item["predicted_s"],
                             "bottleneck": item.get("bottleneck", "")})
        tag = " (neighbours)" if neighbours else f" (from {calib_from})" if calib_from else ""
        print(f"{shape}{tag}: {order} configs ranked in "
              f"{timing[shape]:.2f} s; top-1 {res['top'][0]['name']}", file=sys.stderr)
    return rows


def _write(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--gpu", default="h200")
    p.add_argument("--out", default="calibration/h200")
    p.add_argument("--shapes", default=",".join(SHAPES), help="MxNxK[xBATCH],…")
    p.add_argument("--round", default="", help="file suffix of a later pre-registration round")
    p.add_argument("--calib-from", default="",
                   help="also record the ranking with this GPU's calibration transferred "
                        "(same architecture; for a GPU with no calibration of its own)")
    p.add_argument("--neighbours", action="store_true",
                   help="also record the measured-neighbour ranking (predict --neighbours)")
    p.add_argument("--neighbours-from", default="",
                   help="with --neighbours: take the correction from this GPU's sweeps "
                        "(predict --neighbours-from; same architecture)")
    args = p.parse_args()
    shapes = tuple(s.strip() for s in args.shapes.split(",") if s.strip())
    suffix = f"_{args.round}" if args.round else ""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    timing, neighbour_timing = {}, {}
    _write(out / f"selection_predictions{suffix}.csv", _record(args.gpu, shapes, timing, False))
    transfer_timing = {}
    if args.calib_from:
        _write(out / f"{TRANSFER_RECORD_PREFIX}{args.calib_from}{suffix}.csv",
               _record(args.gpu, shapes, transfer_timing, False, args.calib_from))
    if args.neighbours:
        _write(out / f"selection_predictions_neighbours{suffix}.csv",
               _record(args.gpu, shapes, neighbour_timing, True,
                       neighbours_from=args.neighbours_from or None))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    meta = {"recorded_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "gpu_spec": args.gpu, "commit_before_recording": commit, "shapes": list(shapes),
            "round": args.round or "first",
            "fit_json_sha256": fit_sha256(out), "predict_seconds_per_shape": timing,
            **({"neighbours_seconds_per_shape": neighbour_timing} if args.neighbours else {}),
            **({"neighbours_from": args.neighbours_from} if args.neighbours_from else {}),
            **({"calib_from": args.calib_from,
                "calib_from_fit_json_sha256": fit_sha256(out.parent / args.calib_from),
                "calib_from_seconds_per_shape": transfer_timing} if args.calib_from else {}),
            "note": "recorded before the selection sweep of these shapes ran; " + (
                "the fit's training set is named in fit.json" if fit_sha256(out) else
                "no fit.json here: spec rates and the a-priori efficiencies (DEFAULT_FIT)"
                + (f"; the transferred ranking uses {args.calib_from}'s measurements and "
                   "fit (sha256 above) but its DRAM and clocks from this GPU's spec"
                   if args.calib_from else ""))}
    (out / f"selection_predictions{suffix}.json").write_text(json.dumps(meta, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
