"""Validation: leave-one-kernel-out (LOKO) on a GPU's calibration data, and the shipped
measured tables (MI100) predicted with no fitting at all.

LOKO: for every calibrated kernel k, the efficiency parameters are refitted on every other
kernel's timings (fit.py), then k is predicted at each of its shapes. Metrics over all
(kernel, shape) rows: MAPE = mean |pred - meas| / meas, the largest such error, Kendall's tau
between predicted and measured times, and a per-kernel table. A shipped table (REFERENCE.md
section 3, MI100) is predicted from the spec, the catalogue parameters and the compile facts
with the a-priori DEFAULT_FIT: Spearman rho and MAPE.
`discordance` (discord.py) splits tau's discordant LOKO pairs by shape: within a shape,
across shapes, and tau with one shape's predictions exact.
Targets (reported, never tuned to): NVIDIA LOKO MAPE <= 10 %, tau >= 0.9; MI100 rho >= 0.8.
"""

from __future__ import annotations

from pathlib import Path

import json

import numpy as np
from scipy import stats

from gemmmodel.errors import BadArgument, GemmModelError
from gemmmodel.model.assemble import assemble
from gemmmodel.model.calib import DEFAULT_FIT, Calib, calibration_name, fit_path, load_calib
from gemmmodel.model.combine import components_arrays
from gemmmodel.model.discord import discordance
from gemmmodel.model.fit import FIT_PARAMS, fit_theta, predict_times, write_fit
from gemmmodel.model.samples import (
    VALIDATION_TABLES,
    Sample,
    calibration_samples,
    table_samples,
    tables_for,
)

MAX_FOLDS = 100
TARGETS = {"loko_mape_max": 0.10, "loko_kendall_tau_min": 0.9, "table_spearman_rho_min": 0.8}


def metrics(pred, meas) -> dict:
    """MAPE, max relative error, Kendall tau and Spearman rho of predicted vs measured."""
    pred, meas = np.asarray(pred, float), np.asarray(meas, float)
    if len(pred) == 0:
        return {"n": 0, "mape": None, "max_error": None, "kendall_tau": None,
                "spearman_rho": None}
    err = np.abs(pred - meas) / meas
    tau = stats.kendalltau(pred, meas).statistic if len(pred) > 1 else None
    rho = stats.spearmanr(pred, meas).statistic if len(pred) > 1 else None
    return {"n": len(pred), "mape": float(err.mean()), "max_error": float(err.max()),
            "kendall_tau": None if tau is None or np.isnan(tau) else float(tau),
            "spearman_rho": None if rho is None or np.isnan(rho) else float(rho)}


def _rows(samples: list[Sample], pred) -> list[dict]:
    return [{"kernel": s.kernel, "kind": s.kind, "shape": s.shape_text,
             "predicted_s": float(p), "measured_s": s.measured_s,
             "error": float(abs(p - s.measured_s) / s.measured_s)}
            for s, p in zip(samples, pred)]


def per_kernel(rows: list[dict]) -> list[dict]:
    """One line per kernel: rows, MAPE, max error (sorted by MAPE, worst first)."""
    by: dict[str, list[float]] = {}
    for r in rows:
        by.setdefault(r["kernel"], []).append(r["error"])
    out = [{"kernel": k, "n": len(v), "mape": float(np.mean(v)), "max_error": float(max(v))}
           for k, v in by.items()]
    return sorted(out, key=lambda r: -r["mape"])


def _components(samples: list[Sample], spec, calib: Calib | None):
    comps, kept = [], []
    for s in samples:
        try:
            comps.append(assemble(s.params, s.facts, spec, s.shape, calib))
            kept.append(s)
        except GemmModelError:
            continue
    return comps, kept


def loko(samples: list[Sample], spec, calib: Calib | None = None, params=FIT_PARAMS,
         max_folds: int = MAX_FOLDS) -> dict:
    """Leave-one-kernel-out predictions and metrics (module docstring). With more than
    `max_folds` kernels, kernel i is left out together with every kernel j where
    j = i (mod max_folds): each fold still holds out whole kernels (a stricter test than one
    at a time) and the cost stays at max_folds refits."""
    comps, samples = _components(samples, spec, calib)
    if not samples:
        return {**metrics([], []), "rows": [], "per_kernel": [], "folds": 0}
    meas = np.array([s.measured_s for s in samples])
    kernels = sorted({s.kernel for s in samples})
    fold_of = {k: i % max_folds for i, k in enumerate(kernels)}
    folds = sorted(set(fold_of.values()))
    pred = np.zeros(len(samples))
    for f in folds:
        test = np.array([fold_of[s.kernel] == f for s in samples])
        train = ~test
        theta = dict(DEFAULT_FIT)
        if train.sum() >= len(params):
            res = fit_theta([c for c, t in zip(comps, train) if t], meas[train], params,
                            groups=[s.shape_text for s, t in zip(samples, train) if t])
            theta = res.params
        arrays = components_arrays([c for c, t in zip(comps, test) if t])
        pred[test] = predict_times(arrays, theta)
    rows = _rows(samples, pred)
    return {**metrics(pred, meas), "rows": rows, "per_kernel": per_kernel(rows),
            "folds": len(folds)}


def table_validation(table: str, calib: Calib | None = None) -> dict:
    """Predict a shipped measured table with the a-priori parameters (no fitting)."""
    from gemmmodel.spec import load_spec

    info = VALIDATION_TABLES[table]
    spec = load_spec(info["spec"])
    samples = table_samples(table, spec)
    comps, samples = _components(samples, spec, calib)
    if not samples:
        return {"table": table, **metrics([], []), "rows": []}
    pred = predict_times(components_arrays(comps), dict(DEFAULT_FIT))
    meas = [s.measured_s for s in samples]
    rows = _rows(samples, pred)
    with_facts = sum(1 for s in samples if s.facts is not None)
    return {"table": table, "spec": spec.name, "source": info["source"],
            "fitted": False, "with_compile_facts": with_facts, **metrics(pred, meas),
            "rows": rows}


def sibling_fits(spec, folder: str, root=None) -> list[str]:
    """The other calibration folders under calibration/ whose GPU has the architecture of
    `spec` and a stored fit.json (e.g. h200 for h100), sorted."""
    from gemmmodel import CALIBRATION_DIR
    from gemmmodel.spec import load_spec

    out = []
    for path in sorted(Path(root or CALIBRATION_DIR).glob("*/fit.json")):
        name = path.parent.name
        if name == folder:
            continue
        try:
            other = load_spec(name)
        except GemmModelError:
            continue
        if str(other.arch) == str(spec.arch):
            out.append(name)
    return out


def fit_transfer(samples: list[Sample], spec, calib: Calib | None, folder: str,
                 root=None) -> list[dict]:
    """Every sample predicted with a sibling GPU's stored efficiencies (sibling_fits), no
    refit, on this GPU's own measured rates: how well a fit carries over to a GPU of the
    same architecture that it never saw (the sibling's training set is its own timings)."""
    comps, kept = _components(samples, spec, calib)
    if not kept:
        return []
    meas = [s.measured_s for s in kept]
    arrays = components_arrays(comps)
    out = []
    for name in sibling_fits(spec, folder, root):
        stored = json.loads(fit_path(name, root).read_text())
        theta = dict(DEFAULT_FIT)
        theta.update({k: float(v) for k, v in stored.get("params", {}).items()
                      if k in DEFAULT_FIT})
        pred = predict_times(arrays, theta)
        out.append({"from": name, "params": theta, "fit_source": stored.get("source", ""),
                    **metrics(pred, meas)})
    return out


def validate_gpu(gpu: str, write: bool = False, root=None,
                 fit_shapes: list[str] | None = None) -> dict:
    """Everything `gemmmodel validate --gpu G` reports (see module docstring).

    The top-level n / mape / kendall_tau / rows are the LOKO results where the GPU has
    calibration data, else those of its shipped table. `write` stores the fit on all
    samples as calibration/<gpu>/fit.json; `fit_shapes` (e.g. ["1024x1024x1024"]) restricts
    that stored fit to samples of those shapes, so that other shapes stay unseen by any fit
    (issue 8's selection shapes). The LOKO figures always use every sample."""
    from gemmmodel.spec import load_spec

    spec = load_spec(gpu)
    folder = calibration_name(gpu, root)
    calib = load_calib(folder, root)
    samples = calibration_samples(folder, spec, root)
    tables = [table_validation(t) for t in tables_for(spec)]
    if not samples and not tables:
        raise BadArgument(f"nothing to validate for {gpu}: no calibration data under "
                          f"calibration/{folder}/ and no shipped table for {spec.arch}")
    out = {"gpu": spec.name, "calibration": folder, "targets": TARGETS, "tables": tables}
    if samples:
        res = loko(samples, spec, calib)
        out.update({"method": "leave-one-kernel-out", **res})
        out["discordance"] = discordance(res["rows"])
        out["fit_transfer"] = fit_transfer(samples, spec, calib, folder, root)
        train = [s for s in samples if not fit_shapes or s.shape_text in fit_shapes]
        if not train:
            raise BadArgument(f"no calibration sample has a shape in {fit_shapes}")
        comps, kept = _components(train, spec, calib)
        names = sorted({s.kernel for s in kept})
        full = fit_theta(comps, [s.measured_s for s in kept], training=names,
                         groups=[s.shape_text for s in kept])
        out["fit"] = full.to_dict()
        if write:
            shapes = ", ".join(sorted({s.shape_text for s in kept}))
            out["fit_path"] = str(write_fit(fit_path(folder, root), full, folder,
                                            f"calibration/{folder}/ kernels+template at "
                                            f"shapes {shapes}"))
    else:
        first = tables[0]
        out.update({"method": f"shipped table {first['table']} (no fitting)",
                    **{k: first[k] for k in ("n", "mape", "max_error", "kendall_tau",
                                             "spearman_rho", "rows")},
                    "per_kernel": per_kernel(first["rows"])})
    return out
