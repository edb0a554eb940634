"""The bounds-checked builds at tile-multiple shapes: a held-out check (device runs P, AY).

Device run P (tools/device/run_p.sh, session 33; calibration/<gpu>/edge_cost_plain.csv and
edge_cost_edge.csv) timed every search-space config at 3072x1024x1024 and 2048^3 twice: its
plain build (EDGE=0; on sm_90 an LDS double buffer copies by cp.async) and its
bounds-checked build (EDGE=1, `--force-edge`; an LDS double buffer stages through
registers). No block of those shapes takes the checked loads, so the pair isolates what the
build itself costs: its registers (occupancy), its staging and its code size. Device run AY
(tools/device/run_ay.sh, session 61; ay_plain.csv, ay_edge.csv) did the same at
1024x1024x8192, where most configs run one block per SM.

None of these timings is a calibration sample: the fit (fit.py) sees the template at
4096^3, 8192x256x2048, 256x8192x2048 and 3000x1000x1024 only, and 2048^3's calibration
samples are catalogue kernels. So the model's predictions of them, with the stored fit, are
out of sample: `edge_build_check` scores both builds of one run (MAPE, mean and sd of the log error,
Kendall tau over all timings) and the edge/plain ratio (mean measured and predicted, their
correlation and the rms of the difference), by buffering: single buffers and LDS double
buffers (cp.async in the plain build, register-staged in the bounds-checked one).

The EDGE=1 build is modelled at these shapes as at any other: its registers (the device's
NVRTC, build_registers.csv, else the committed edge table), register staging for a double
buffer, its whole code for the fetch floor, and no edge blocks (KernelDesc.bounds_checked
makes template.plan.needs_edge true at a tile-multiple shape).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gemmmodel import CALIBRATION_DIR
from gemmmodel.errors import BadArgument

#: Run P's two sweeps in calibration/<gpu>/: the plain builds and the forced EDGE=1 builds.
PLAIN_FILE = "edge_cost_plain.csv"
EDGE_FILE = "edge_cost_edge.csv"
#: The device runs that timed both builds: run -> (plain sweep, forced EDGE=1 sweep, script).
RUNS = {"P": (PLAIN_FILE, EDGE_FILE, "tools/device/run_p.sh"),
        "AY": ("ay_plain.csv", "ay_edge.csv", "tools/device/run_ay.sh")}


def forced_edge_pairs(gpu: str = "h200", root: Path | None = None,
                      run: str = "P") -> list[dict]:
    """[{config, shape (M, N, K, batch), plain_s, edge_s}] of a run's timed pairs (both
    builds without an error; RUNS). BadArgument where the GPU has no such run."""
    import pandas as pd

    if run not in RUNS:
        raise BadArgument(f"unknown run {run!r}: expected one of {', '.join(RUNS)}")
    folder = Path(root or CALIBRATION_DIR) / gpu
    paths = _run_paths(folder, run)
    if not paths:
        raise BadArgument(f"no device run {run} under {folder} ({RUNS[run][0]}, "
                          f"{RUNS[run][1]}): run {RUNS[run][2]} on the GPU first")
    plain, edge = (pd.read_csv(p) for p in paths)
    both = plain.merge(edge, on=["shape", "config"], suffixes=("_plain", "_edge"))
    ok = both["error_plain"].isna() & both["error_edge"].isna()
    return [{"config": str(r.config), "shape": tuple(int(x) for x in str(r.shape).split("x")),
             "plain_s": float(r.median_s_plain), "edge_s": float(r.median_s_edge)}
            for r in both[ok].itertuples()]


def _run_paths(folder: Path, run: str) -> tuple[Path, Path] | None:
    """The run's two sweep files in `folder`, or None where either is missing."""
    paths = (folder / RUNS[run][0], folder / RUNS[run][1])
    return paths if all(p.is_file() for p in paths) else None


def _samples(pairs: list[dict], spec, regs: dict, edge: bool | None) -> list:
    """Model samples of one build of every pair (measured time: that build's). edge None:
    the build that runs at the pair's shape (its plain_s)."""
    from gemmmodel.compile.table import template_facts
    from gemmmodel.model.samples import Sample
    from gemmmodel.template import parse_name

    out = []
    for p in pairs:
        cfg = parse_name(p["config"])
        params = cfg.params(int(spec.wave_size))
        if edge is not None:
            params = {**params, "bounds_checked": edge}
        facts = template_facts(cfg, spec, regs.get(cfg.name), p["shape"], edge=edge)
        out.append(Sample(cfg.name, "template", params, facts, p["shape"],
                          p["edge_s" if edge else "plain_s"]))
    return out


def _log_stats(pred, meas) -> dict:
    """validate.metrics' n and MAPE, with the mean and sd of the log error."""
    from gemmmodel.model.validate import metrics

    err = np.log(np.asarray(pred) / np.asarray(meas))
    return {**{k: metrics(pred, meas)[k] for k in ("n", "mape")},
            "mean_log_error": float(err.mean()), "sd_log_error": float(err.std())}


def edge_build_check(gpu: str = "h200", root: Path | None = None, calib=None,
                     run: str = "P") -> dict:
    """The model (stored fit) on a run's pairs (RUNS; module docstring): {gpu, run, source,
    n_pairs, all (MAPE and Kendall tau over every timing), groups[] (per buffering and build), ratios[]
    (per buffering and shape: edge/plain measured against the model), register_double_by_w[]
    (the EDGE=1 double buffers by resident warps per scheduler w: mean log error and the
    mean share of the predicted time that is the pipes' overlap loss)}."""
    from gemmmodel.calibrate.load import load
    from gemmmodel.model.calib import calibration_name, load_calib
    from gemmmodel.model.combine import components_arrays, evaluate_arrays
    from gemmmodel.model.samples import template_registers
    from gemmmodel.model.validate import _components, metrics
    from gemmmodel.spec import load_spec

    spec = load_spec(gpu)
    folder = calibration_name(gpu, root)
    pairs = forced_edge_pairs(folder, root, run)
    calib = calib or load_calib(folder, root)
    regs = template_registers(load(folder, root) if root else load(folder))
    pred, parts = {}, {}
    for edge in (False, True):
        comps, kept = _components(_samples(pairs, spec, regs, edge), spec, calib)
        if len(kept) != len(pairs):
            raise BadArgument(f"the model rejected {len(pairs) - len(kept)} of run {run}'s "
                              f"{'bounds-checked' if edge else 'plain'} builds")
        parts[edge] = evaluate_arrays(components_arrays(comps), calib.theta())
        parts[edge]["w"] = np.array([c.w for c in comps])
        pred[edge] = parts[edge]["total"]
    meas = {False: np.array([p["plain_s"] for p in pairs]),
            True: np.array([p["edge_s"] for p in pairs])}
    double = np.array(["/db" in p["config"] for p in pairs])
    shapes = np.array(["x".join(str(x) for x in p["shape"][:3]) for p in pairs])
    groups, ratios = [], []
    for db in (False, True):
        for edge in (False, True):
            sel = double == db
            groups.append({"buffering": _buffering(db, edge), "build": _build(edge),
                           **_log_stats(pred[edge][sel], meas[edge][sel])})
        for shape in sorted(set(shapes)):
            sel = (double == db) & (shapes == shape)
            m = np.log(meas[True][sel] / meas[False][sel])
            p = np.log(pred[True][sel] / pred[False][sel])
            ratios.append({"buffering": "double" if db else "single", "shape": shape,
                           "n": int(sel.sum()), "measured_log_ratio": float(m.mean()),
                           "model_log_ratio": float(p.mean()),
                           "correlation": float(np.corrcoef(m, p)[0, 1]),
                           "rms_difference": float(np.sqrt(((p - m) ** 2).mean()))})
    # the register-staged double buffers by resident warps per scheduler: the error against
    # the share of the time the model gives the pipes' overlap loss (combine.py's q)
    by_w = []
    w = parts[True]["w"]
    share = parts[True]["loss"] / parts[True]["total"]
    err = np.log(pred[True] / meas[True])
    for wv in sorted(set(w[double])):
        sel = double & (w == wv)
        by_w.append({"w": float(wv), "n": int(sel.sum()),
                     "mean_log_error": float(err[sel].mean()),
                     "overlap_loss_share": float(share[sel].mean())})
    all_pred = np.concatenate([pred[False], pred[True]])
    all_meas = np.concatenate([meas[False], meas[True]])
    return {"gpu": gpu, "run": run,
            "source": f"calibration/{folder}/{RUNS[run][0]}, {RUNS[run][1]} (run {run})",
            "n_pairs": len(pairs),
            "all": {**_log_stats(all_pred, all_meas),
                    "kendall_tau": metrics(all_pred, all_meas)["kendall_tau"]},
            "groups": groups, "ratios": ratios, "register_double_by_w": by_w}


def _buffering(db: bool, edge: bool) -> str:
    if not db:
        return "single"
    return "double (registers)" if edge else "double (cp.async)"


def _build(edge: bool) -> str:
    return "EDGE=1" if edge else "EDGE=0"


def edge_build_checks(gpu: str = "h200", root: Path | None = None) -> dict:
    """{gpu, runs[], edge_shapes}: edge_build_check of every run in RUNS that the GPU's
    calibration folder holds, and edge_shapes.edge_shape_check where it holds run AZ (else
    None); BadArgument where it holds none of them."""
    from gemmmodel.model.calib import calibration_name
    from gemmmodel.model.edge_shapes import edge_shape_check, has_run_az

    folder = Path(root or CALIBRATION_DIR) / calibration_name(gpu, root)
    have = [r for r in RUNS if _run_paths(folder, r)]
    az = has_run_az(folder)
    if not have and not az:
        raise BadArgument(f"no device run P, AY or AZ under {folder}: run tools/device/"
                          "run_p.sh, run_ay.sh or run_az.sh on the GPU first")
    return {"gpu": gpu, "runs": [edge_build_check(gpu, root, run=r) for r in have],
            "edge_shapes": edge_shape_check(gpu, root) if az else None}


__all__ = ["EDGE_FILE", "PLAIN_FILE", "RUNS", "edge_build_check", "edge_build_checks",
           "forced_edge_pairs"]
