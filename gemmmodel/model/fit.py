"""Fit the efficiency parameters (calib.DEFAULT_FIT, at most 5; by default the four of
calib.FITTED_BY_DEFAULT) by least squares in log-time.

Training data: the microbenchmarks set the measured rates directly (Calib.values from
calibration/<gpu>/summary.json); the efficiency parameters are then fitted ONLY to a named
training subset of kernel timings of calibration/<gpu>/ (kernels.csv, template.csv,
batched.csv). Residual per sample: sqrt(weight) * (log(t_pred) - log(t_meas)).
Weights (`groups` = each sample's shape): a sample within NEAR_BAND of the fastest
sample of its shape in the same training set counts NEAR_WEIGHT times, every other once
(selection_weights): the model is used to pick the fastest configs, so the fit listens
most to the configs that compete for first place (docs/model.md section 10, fifteenth
change). Without groups every sample counts once. A weak ridge term
(RIDGE * log(theta / theta_default)) keeps parameters that no sample constrains at their
a-priori value. The result is stored in calibration/<gpu>/fit.json with the training set
named. Two starting points are tried (module code) and the lower cost kept.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from gemmmodel.errors import BadArgument
from gemmmodel.model.calib import DEFAULT_FIT, FIT_BOUNDS, FITTED_BY_DEFAULT
from gemmmodel.model.combine import Components, components_arrays, evaluate_arrays

FIT_PARAMS = FITTED_BY_DEFAULT
RIDGE = 0.003
#: Samples within NEAR_BAND x the fastest time of their shape weigh NEAR_WEIGHT (module doc).
NEAR_BAND = 1.15
NEAR_WEIGHT = 5.0


def selection_weights(groups, measured_s) -> np.ndarray:
    """NEAR_WEIGHT for a sample whose time is within NEAR_BAND of the fastest time of its
    group (its shape) among these samples, 1 otherwise."""
    measured = np.asarray(measured_s, dtype=float)
    keys = [str(g) for g in groups]
    if len(keys) != len(measured):
        raise BadArgument(f"weights need one group per sample: {len(keys)} groups, "
                          f"{len(measured)} times")
    best: dict[str, float] = {}
    for key, t in zip(keys, measured):
        best[key] = min(best.get(key, math.inf), float(t))
    return np.array([NEAR_WEIGHT if t <= NEAR_BAND * best[key] else 1.0
                     for key, t in zip(keys, measured)])


@dataclass(frozen=True)
class FitResult:
    params: dict                  # all of DEFAULT_FIT's keys, fitted ones replaced
    fitted: tuple                 # names of the parameters that were free
    n: int                        # samples
    rms_log_error: float          # sqrt(mean(residual^2)) of the log-times, fitted params
    mape: float                   # mean |pred - meas| / meas on the training set
    success: bool
    training: tuple = field(default=())
    weighting: str = "uniform"    # how the samples were weighted (module docstring)

    def to_dict(self) -> dict:
        return {"params": dict(self.params), "fitted": list(self.fitted), "n": self.n,
                "rms_log_error": self.rms_log_error, "mape": self.mape,
                "success": self.success, "training_set": list(self.training),
                "weighting": self.weighting}


def predict_times(arrays: dict, theta: dict) -> np.ndarray:
    """Predicted seconds for stacked components under theta."""
    return evaluate_arrays(arrays, theta)["total"]


def fit_theta(comps: list[Components], measured_s, params=FIT_PARAMS, start: dict | None = None,
              training=(), groups=None) -> FitResult:
    """Least-squares fit of `params` (subset of DEFAULT_FIT) to measured times (s);
    `groups` (one shape per sample) turns on selection_weights (module docstring)."""
    measured = np.asarray(measured_s, dtype=float)
    if len(comps) != len(measured) or len(comps) == 0:
        raise BadArgument(f"fit needs matching samples: {len(comps)} components, "
                          f"{len(measured)} times")
    if np.any(measured <= 0) or not np.all(np.isfinite(measured)):
        raise BadArgument("measured times must be positive and finite")
    params = tuple(params)
    unknown = [p for p in params if p not in DEFAULT_FIT]
    if unknown or len(params) > 5:
        raise BadArgument(f"fit parameters must be <= 5 of {', '.join(DEFAULT_FIT)}: {params}")
    arrays = components_arrays(comps)
    base = {**DEFAULT_FIT, **(start or {})}
    lo = np.array([FIT_BOUNDS[p][0] for p in params])
    hi = np.array([FIT_BOUNDS[p][1] for p in params])
    x0 = np.clip(np.array([base[p] for p in params], dtype=float), lo * 1.0001, hi * 0.9999)
    log_meas = np.log(measured)
    prior = np.array([DEFAULT_FIT[p] for p in params])
    root_w = np.sqrt(selection_weights(groups, measured)) if groups is not None else 1.0

    def theta_of(x):
        return {**base, **dict(zip(params, x))}

    def residual(x):
        pred = predict_times(arrays, theta_of(x))
        res = root_w * (np.log(np.maximum(pred, 1e-30)) - log_meas)
        return np.concatenate([res, RIDGE * np.log(x / prior)])

    # two starts (the a-priori values and the middle of the bounds): a parameter whose
    # pipe binds only away from its start has no gradient there
    mid = np.sqrt(lo * hi)
    sols = [least_squares(residual, x, bounds=(lo, hi), method="trf", x_scale="jac")
            for x in (x0, np.clip(mid, lo * 1.0001, hi * 0.9999))]
    sol = min(sols, key=lambda r: r.cost)
    theta = theta_of(sol.x)
    pred = predict_times(arrays, theta)
    res = np.log(pred) - log_meas
    return FitResult(params={k: float(v) for k, v in theta.items()}, fitted=params,
                     n=len(measured), rms_log_error=float(math.sqrt(np.mean(res ** 2))),
                     mape=float(np.mean(np.abs(pred - measured) / measured)),
                     success=bool(sol.success), training=tuple(training),
                     weighting=(f"x{NEAR_WEIGHT:g} within {NEAR_BAND:g}x of the fastest of its "
                                "shape" if groups is not None else "uniform"))


def write_fit(path: Path, result: FitResult, gpu: str, source: str) -> Path:
    """Write fit.json atomically (params, training set, error, date, source data)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"gpu": gpu, **result.to_dict(), "source": source,
            "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "method": "scipy least_squares on log-time (gemmmodel/model/fit.py)"}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".fit-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)
    return path
