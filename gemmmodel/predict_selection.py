"""Selection quality of the predictor on a committed template sweep (issue 8).

For each swept shape of calibration/<gpu>/selection_sweep.csv (every config timed on the
GPU; template.csv's template rows where that file is absent), the
predictor's choice is scored against the measured best:
  top1_pct_of_best = 100 * best measured time / measured time of the config predicted fastest
  top3_pct_of_best = 100 * best measured time / best measured time among the 3 predicted fastest
(100 = the predictor picked the measured best). Only configs that were both predicted and
measured compete, so the score says how well the model orders what was timed.

Predictions: the RECORDED ranking calibration/<gpu>/selection_predictions.csv (shape, rank,
config, predicted_s, bottleneck; its .json names the date, commit and fit), written before
the sweep ran by `record_predictions` (or tools/record_predictions.py, same format); without
it, predictions are computed now with the current model. When the fit's training set (fit
.json) holds template configs, template predictions are in-sample: `in_sample` says so.
"""

from __future__ import annotations

import csv
import hashlib
import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from gemmmodel import PROJECT_DIR
from gemmmodel.errors import BadArgument, GemmModelError

RECORD_FILE = "selection_predictions.csv"
RECORD_META = "selection_predictions.json"
RECORD_COLUMNS = ("shape", "rank", "config", "predicted_s", "bottleneck")


def shape_text(shape) -> str:
    m, n, k, b = (tuple(shape) + (1,))[:4]
    return f"{m}x{n}x{k}" + (f"x{b}" if b != 1 else "")


def _folder_and_spec(calibration_dir):
    from gemmmodel.calibrate.load import calibration_dir as find
    from gemmmodel.spec import load_spec

    folder = find(calibration_dir)
    return folder, load_spec(folder.name)


SWEEP_FILE = "selection_sweep.csv"


def _selection_sweep(path: Path) -> dict:
    """{(config, shape): median s} of a committed selection sweep (columns gpu, shape
    "MxNxKxB", config, median_s, …, error; rows with an error or no time are left out)."""
    from gemmmodel.catalogue import parse_size
    from gemmmodel.ingest import parse_number

    out = {}
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            t = parse_number(row.get("median_s", ""))
            if row.get("error") or t is None or t <= 0:
                continue
            out[(row["config"], tuple(parse_size(row["shape"], dims=4)))] = t
    return out


def sweep_times(folder: Path) -> dict:
    """{(config, (M, N, K, batch)): measured s}: the committed selection sweep
    (selection_sweep.csv) where present, else the checked template rows of template.csv;
    plus the vendor BLAS times per shape of template.csv under ("vendor:<name>", shape)."""
    from gemmmodel.calibrate.load import load
    from gemmmodel.measured import missing, param_text

    out: dict = {}
    sweep = folder / SWEEP_FILE
    if sweep.is_file():
        out.update(_selection_sweep(sweep))
    try:
        df = load(folder).get("template")
    except BadArgument:
        df = None
    if df is None or df.empty:
        return out
    for row in df.to_dict("records"):
        if row.get("status") != "ok" or row.get("check_passed") is False:
            continue
        t, dims = row.get("time_s"), [row.get(d) for d in ("M", "N", "K")]
        if missing(t) or any(missing(d) for d in dims):
            continue
        batch = row.get("batch")
        shape = tuple(int(d) for d in dims) + (1 if missing(batch) else int(batch or 1),)
        if row.get("name") == "template" and param_text(row, "config"):
            if not sweep.is_file():
                out[(param_text(row, "config"), shape)] = float(t)
        elif not str(row.get("name", "")).startswith("occupancy"):
            out[(f"vendor:{row['name']}", shape)] = float(t)
    return out


def _commit() -> str:
    try:
        proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_DIR,
                              capture_output=True, text=True, timeout=10, check=False)
        return proc.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def record_predictions(calibration_dir, shapes=None) -> Path:
    """Write the full predicted ranking for `shapes` (default: the shapes of the folder's
    template sweep) to <folder>/selection_predictions.csv and its .json (date, commit,
    fit). Run it BEFORE the sweep so the score is not hindsight."""
    from gemmmodel.predict import rank

    folder, spec = _folder_and_spec(calibration_dir)
    if shapes is None:
        shapes = sorted({s for k, s in sweep_times(folder) if not k.startswith("vendor:")})
    if not shapes:
        raise BadArgument(f"no shapes: give shapes, or sweep templates into {folder} first")
    rows, seconds = [], {}
    for shape in shapes:
        res = rank(spec.name, shape, top=10**6, root=folder.parent)
        seconds[shape_text(res["shape"].values())] = res["timing_s"]["total"]
        order = 0
        for item in res["top"]:
            for name in [item["name"], *item["equivalent"]]:
                order += 1
                rows.append({"shape": shape_text(res["shape"].values()), "rank": order,
                             "config": name, "predicted_s": repr(item["predicted_s"]),
                             "bottleneck": item["bottleneck"]})
    with (folder / RECORD_FILE).open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=RECORD_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    meta = {"recorded_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "gpu_spec": spec.name, "commit_before_recording": _commit(),
            "shapes": list(seconds), "predict_seconds_per_shape": seconds,
            "fit_json_sha256": fit_sha256(folder),
            "written_by": "gemmmodel.predict_selection.record_predictions"}
    (folder / RECORD_META).write_text(json.dumps(meta, indent=1) + "\n")
    return folder / RECORD_FILE


def _recorded(folder: Path) -> tuple[dict, dict]:
    """{(config, shape): predicted s} and the metadata of the recorded ranking."""
    from gemmmodel.catalogue import parse_size

    preds = {}
    with (folder / RECORD_FILE).open(newline="") as fh:
        for row in csv.DictReader(fh):
            shape = tuple(parse_size(row["shape"], dims=4))
            preds[(row["config"], shape)] = float(row["predicted_s"])
    meta_path = folder / RECORD_META
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    return preds, meta


def predict_sweep(folder: Path, spec, keys) -> dict:
    """{(config, shape): predicted s} computed now (model, calibration, device registers)."""
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


def fit_sha256(folder: Path) -> str | None:
    """sha256 of <folder>/fit.json (what a recorded ranking names as its fit), None without."""
    path = Path(folder) / "fit.json"
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _training(folder: Path, meta: dict | None = None) -> list[str]:
    """The training set of the fit behind the scored predictions: fit.json's, unless the
    record's .json (`meta`) says they were recorded with another fit (its sha256 differs),
    whose training set the record does not hold, or with none (sha256 null: a GPU with no
    calibration then): then none is claimed. A record without the key claims fit.json's."""
    sha = fit_sha256(folder)
    meta = meta or {}
    recorded_sha = meta.get("fit_json_sha256")
    if sha is None or ("fit_json_sha256" in meta and recorded_sha != sha):
        return []
    return list(json.loads((folder / "fit.json").read_text()).get("training_set", []))


def selection_summary(calibration_dir) -> dict:
    """Per shape: best measured config, the predicted choice, top1/top3 percent of best."""
    folder, spec = _folder_and_spec(calibration_dir)
    measured = sweep_times(folder)
    keys = [k for k in measured if not k[0].startswith("vendor:")]
    if not keys:
        raise BadArgument(f"no template sweep in {folder} (template.csv)")
    if (folder / RECORD_FILE).is_file():
        preds, meta = _recorded(folder)
        how = (f"recorded {meta.get('recorded_utc', '?')} (commit "
               f"{str(meta.get('commit_before_recording', '?'))[:10]})")
    else:
        preds, meta = predict_sweep(folder, spec, keys), {}
        how = "computed now with the current model"
    # in-sample only when the fit that ranked the shapes trained on template configs: for a
    # recorded ranking that is the fit named by its record, not today's fit.json
    training = _training(folder, meta)
    rows = []
    for shape in sorted({s for _, s in keys}):
        names = [n for n, s in keys if s == shape and (n, s) in preds]
        if not names:
            continue
        best = min(names, key=lambda n: measured[(n, shape)])
        ranked = sorted(names, key=lambda n: preds[(n, shape)])
        t_best = measured[(best, shape)]
        vendor = {k[0][7:]: t for k, t in measured.items()
                  if k[0].startswith("vendor:") and k[1] == shape}
        rows.append({"shape": shape_text(shape), "configs": len(names),
                     "best_config": best, "best_s": t_best, "top1_config": ranked[0],
                     "top1_s": measured[(ranked[0], shape)],
                     "top1_pct_of_best": 100.0 * (t_best / measured[(ranked[0], shape)]),
                     "top3_pct_of_best": 100.0 * (t_best / min(measured[(n, shape)]
                                                               for n in ranked[:3])),
                     "best_predicted_rank": ranked.index(best) + 1, "vendor_s": vendor})
    mean = (lambda key: sum(r[key] for r in rows) / len(rows) if rows else None)
    return {"gpu": spec.name, "folder": str(folder), "predictions": how, "meta": meta,
            "training_set": training,
            "in_sample": any("x" in t and "/" in t for t in training),
            "shapes": rows, "mean_top1_pct_of_best": mean("top1_pct_of_best"),
            "mean_top3_pct_of_best": mean("top3_pct_of_best")}
