"""How far the fitted parameters alone could move tile selection: a hindsight diagnostic.

`selection_ceiling(gpu)` takes every committed sweep of calibration/<gpu>/ (the first
selection round, the held-out rounds, the low-occupancy sweep), refits the default fitted
parameters (calib.FITTED_BY_DEFAULT) to ALL of their timings at once (weighted as the
committed fit: fit.selection_weights per swept shape), and scores the
selection of every swept shape twice: with the committed fit (calibration/<gpu>/fit.json,
fitted to kernels.csv + template.csv only) and with that in-sample refit.

The refit has seen every timing it is scored on, so its numbers are an upper bound for
this model's structure, not an accuracy figure. Where the in-sample refit does not select
better than the committed fit, the misses come from the model's terms, not from the
values of its parameters (docs/model.md section 10).
"""

from __future__ import annotations

import numpy as np

from gemmmodel.errors import GemmModelError
from gemmmodel.model import selection as sel


def _score(parts: dict, keys: list, pred: np.ndarray) -> dict:
    by_key = dict(zip(keys, pred))
    out = {}
    for part, measured in parts.items():
        rows = sel.score(measured, {k: by_key[k] for k in measured if k in by_key})
        out[part] = {"shapes": rows, **sel.summary(rows)}
    everything = [r for p in out.values() for r in p["shapes"]]
    out["all"] = {"shapes": everything, **sel.summary(everything)}
    return out


def selection_ceiling(gpu: str, root=None) -> dict:
    """The committed fit and an in-sample refit on every sweep, scored on every swept
    shape (module docstring). Keys: gpu, n (timings), fitted (parameter names), committed
    and insample ({params, time_mape, parts: {part: summary + shapes}})."""
    from gemmmodel.model import load_calib
    from gemmmodel.model.calib import FITTED_BY_DEFAULT, calibration_name, fit_path
    from gemmmodel.model.combine import components_arrays, evaluate_arrays
    from gemmmodel.model.fit import fit_theta
    from gemmmodel.spec import load_spec

    spec = load_spec(gpu)
    folder = fit_path(calibration_name(gpu, root), root).parent
    parts = sel.all_sweeps(folder)
    if not parts:
        raise GemmModelError(f"no sweeps under {folder}: nothing to score")
    measured = {k: t for p in parts.values() for k, t in p.items()}
    calib = load_calib(folder.name, folder.parent)
    comps = sel.swept_components(folder, spec, list(measured), calib)
    keys = list(comps)
    meas = np.array([measured[k] for k in keys])
    arrays = components_arrays([comps[k] for k in keys])
    committed = calib.theta()
    refit = fit_theta([comps[k] for k in keys], meas, params=FITTED_BY_DEFAULT,
                      start=committed, training=tuple(f"{folder.name}/{p}" for p in parts),
                      groups=[sel.shape_text(k[1]) for k in keys])
    out = {"gpu": spec.name, "n": len(keys), "fitted": list(FITTED_BY_DEFAULT)}
    for label, theta in (("committed", committed), ("insample", refit.params)):
        pred = evaluate_arrays(arrays, theta)["total"]
        out[label] = {"params": {p: float(theta.get(p, np.nan)) for p in FITTED_BY_DEFAULT},
                      "time_mape": float(np.mean(np.abs(pred - meas) / meas)),
                      "parts": _score(parts, keys, pred)}
    return out


__all__ = ["selection_ceiling"]
