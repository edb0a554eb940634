"""Selection quality of the predictor on a committed template sweep (issue 8).

For each swept shape of calibration/<gpu>/template.csv (configs timed on the GPU), the
predictor's choice is scored against the measured best:
  top1_pct_of_best = 100 * best measured time / measured time of the config predicted fastest
  top3_pct_of_best = 100 * best measured time / best measured time among the 3 predicted fastest
(100 = the predictor picked the measured best). Only measured configs compete, so the
score says how well the model orders what was timed.

Predictions: calibration/<gpu>/predictions_template.csv when it exists ("recorded":
written by `record_predictions`, with the date, the commit and whether the efficiencies were
fitted and on which training set), else computed now with the current model. When the fit's
training set includes template configs, the template predictions are in-sample: the result
says so (`in_sample`).
"""

from __future__ import annotations

import csv
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from gemmmodel import PROJECT_DIR
from gemmmodel.errors import BadArgument, GemmModelError

RECORD_FILE = "predictions_template.csv"
RECORD_COLUMNS = ("config", "M", "N", "K", "batch", "predicted_s", "resources", "fitted",
                  "training_set", "commit", "recorded_utc")


def _folder_and_spec(calibration_dir):
    from gemmmodel.calibrate.load import calibration_dir as find
    from gemmmodel.spec import load_spec

    folder = find(calibration_dir)
    return folder, load_spec(folder.name)


def sweep_times(folder: Path) -> dict:
    """{(config, (M, N, K, batch)): measured s} of the checked template runs, and the vendor
    BLAS times per shape under the key ("vendor:<name>", shape)."""
    from gemmmodel.calibrate.load import load
    from gemmmodel.explain import missing

    frames = load(folder)
    df = frames.get("template")
    out: dict = {}
    if df is None or df.empty:
        return out
    for row in df.to_dict("records"):
        if row.get("status") != "ok" or row.get("check_passed") is False:
            continue
        t, dims = row.get("time_s"), [row.get(d) for d in ("M", "N", "K")]
        if missing(t) or any(missing(d) for d in dims):
            continue
        shape = tuple(int(d) for d in dims) + (1,)
        if row.get("name") == "template" and row.get("config"):
            out[(str(row["config"]), shape)] = float(t)
        elif not str(row.get("name", "")).startswith("occupancy"):
            out[(f"vendor:{row['name']}", shape)] = float(t)
    return out


def _commit() -> str:
    try:
        proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT_DIR,
                              capture_output=True, text=True, timeout=10, check=False)
        return proc.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def predict_sweep(folder: Path, spec, keys) -> dict:
    """{(config, shape): predicted s} with the current model, calibration and the device's
    register counts where recorded."""
    from gemmmodel.explain import device_registers
    from gemmmodel.model import load_calib, predict_kernel
    from gemmmodel.template import parse_name

    calib = load_calib(spec.name, folder.parent)
    regs = device_registers(spec.name, folder.parent)
    out = {}
    for name, shape in keys:
        cfg = parse_name(name)
        facts = {"regs": regs[name], "lds_bytes": cfg.lds_bytes} if name in regs else None
        try:
            out[(name, shape)] = predict_kernel(cfg.params(int(spec.wave_size)), facts, spec,
                                                shape, calib).time_s
        except GemmModelError:
            continue
    return out


def record_predictions(calibration_dir) -> Path:
    """Write the current model's predictions of every swept (config, shape) to
    <folder>/predictions_template.csv (see the module docstring)."""
    from gemmmodel.explain import device_registers
    from gemmmodel.model import load_calib

    folder, spec = _folder_and_spec(calibration_dir)
    keys = [k for k in sweep_times(folder) if not k[0].startswith("vendor:")]
    if not keys:
        raise BadArgument(f"no template sweep in {folder}")
    preds = predict_sweep(folder, spec, keys)
    calib = load_calib(spec.name, folder.parent)
    regs = device_registers(spec.name, folder.parent)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    path = folder / RECORD_FILE
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=RECORD_COLUMNS)
        writer.writeheader()
        for (name, shape), t in sorted(preds.items()):
            writer.writerow({"config": name, "M": shape[0], "N": shape[1], "K": shape[2],
                             "batch": shape[3], "predicted_s": repr(t),
                             "resources": "device" if name in regs else "estimate",
                             "fitted": int(bool(calib.fit)),
                             "training_set": ";".join(calib.training), "commit": _commit(),
                             "recorded_utc": stamp})
    return path


def _recorded(folder: Path) -> tuple[dict, dict]:
    path = folder / RECORD_FILE
    preds, meta = {}, {}
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            shape = (int(row["M"]), int(row["N"]), int(row["K"]), int(row["batch"] or 1))
            preds[(row["config"], shape)] = float(row["predicted_s"])
            meta = {"recorded_utc": row["recorded_utc"], "commit": row["commit"],
                    "fitted": row["fitted"] == "1", "training_set": row["training_set"]}
    return preds, meta


def selection_summary(calibration_dir) -> dict:
    """Per shape: best measured config, the predicted choice, top1/top3 percent of best."""
    folder, spec = _folder_and_spec(calibration_dir)
    measured = sweep_times(folder)
    keys = [k for k in measured if not k[0].startswith("vendor:")]
    if not keys:
        raise BadArgument(f"no template sweep in {folder} (template.csv)")
    if (folder / RECORD_FILE).is_file():
        preds, meta = _recorded(folder)
        how = f"recorded {meta['recorded_utc']} (commit {meta['commit'] or '?'})"
        training = meta["training_set"].split(";") if meta["training_set"] else []
        fitted = meta["fitted"]
    else:
        from gemmmodel.model import load_calib

        preds = predict_sweep(folder, spec, keys)
        calib = load_calib(spec.name, folder.parent)
        how, training, fitted = "computed now with the current model", list(calib.training), \
            bool(calib.fit)
    shapes = sorted({s for _, s in keys})
    rows = []
    for shape in shapes:
        names = [n for n, s in keys if s == shape and (n, s) in preds]
        if not names:
            continue
        best = min(names, key=lambda n: measured[(n, shape)])
        ranked = sorted(names, key=lambda n: preds[(n, shape)])
        t_best = measured[(best, shape)]
        top3 = min(measured[(n, shape)] for n in ranked[:3])
        vendor = {k[0][7:]: t for k, t in measured.items()
                  if k[0].startswith("vendor:") and k[1] == shape}
        rows.append({"shape": "x".join(map(str, shape[:3])), "configs": len(names),
                     "best_config": best, "best_s": t_best, "top1_config": ranked[0],
                     "top1_s": measured[(ranked[0], shape)],
                     "top1_pct_of_best": 100.0 * t_best / measured[(ranked[0], shape)],
                     "top3_pct_of_best": 100.0 * t_best / top3,
                     "best_predicted_rank": ranked.index(best) + 1,
                     "vendor_s": vendor})
    mean = (lambda key: sum(r[key] for r in rows) / len(rows) if rows else None)
    return {"gpu": spec.name, "folder": str(folder), "predictions": how, "fitted": fitted,
            "training_set": training,
            "in_sample": any("x" in t and "/" in t for t in training),
            "shapes": rows, "mean_top1_pct_of_best": mean("top1_pct_of_best"),
            "mean_top3_pct_of_best": mean("top3_pct_of_best")}
