"""How much of a cp.async double buffer's copies the issue waits for (thirty-second change,
session 60; docs/model.md section 7).

The thirty-first change put a cp.async build's copies in series with its issue:
t_cu = P_top / (1 - q) + c * lds. Here c is the copies' share of the LDS pipe: their write
passes and L1 line cycles (assemble.py copy_share). Runs AV and AW measured this with ncu.
Where the L1/shared pipe has room, the cycles an SM does not issue equal the copies'
wavefronts. Where the copies are most of the pipe's work (BK 8 8x8 builds: 2.5-3.4 copy
wavefronts per fragment-read wavefront), the SM idles only 0.76-0.90 of its copy wavefronts:
there the copies run under the issue. The model now charges

    t_copies = c * (1 - c) ** copy_exposure * lds

This is c when the copies are a small share of the pipe, and it falls towards 0 as they fill
the pipe. The whole LDS pipe stays a floor on t_cu.

copy_exposure is fitted here, not by fit.py and not to the kernel timings. It minimises the
rms log error of the model's t_pipes, in clocks, against ncu's mean active cycles per SM
(sm__cycles_active.avg) over the 25 launches of runs AV and AW (COPY_RUNS):

- AV: 7 builds at 8192x256x8192;
- AW: 10 at 4096^3 and 8 at 8192x256x2048.

The other parameters are the committed fit's. ncu counts cycles, so its locked clock does not
enter. Fitted with session 59's fit: 0.243. Refitting the five parameters at that value and
fitting again converges at 0.467 (rms 0.069; 0.117 at 0, the thirty-first change).

Held out (`check_copy_exposure`): device run AX (session 60) profiled 16 other cp.async
builds the same way, at 256x8192x2048 and 2048^3 (HELDOUT_RUNS). There the rms log error of
the model's cycles is 0.071 at the fitted value, against 0.156 at 0.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gemmmodel import CALIBRATION_DIR

#: ncu runs of cp.async builds (device runs AV and AW) under calibration/<gpu>/.
COPY_RUNS = ("ncu_av_8192x256x8192.txt", "ncu_aw_8192x256x2048.txt",
             "ncu_aw_4096x4096x4096.txt")
#: Run AX: the held-out check (not fitted to).
HELDOUT_RUNS = ("ncu_ax_256x8192x2048.txt", "ncu_ax_2048x2048x2048.txt")
ACTIVE_CYCLES = "sm__cycles_active.avg"
ISSUED = "smsp__inst_executed.sum"


def measured_cycles(gpu: str = "h200", root: Path | None = None,
                    runs: tuple = COPY_RUNS) -> list[dict]:
    """[{config, shape, cycles, issued}] of every launch in `runs` that the folder holds.
    cycles: ncu's mean active cycles per SM. issued: warp instructions per scheduler."""
    from gemmmodel.ingest import read_ncu_launch_run
    from gemmmodel.spec import load_spec

    folder = Path(root or CALIBRATION_DIR) / gpu
    schedulers = None
    out = []
    for name in runs:
        path = folder / name
        if not path.is_file():
            continue
        if schedulers is None:
            spec = load_spec(gpu)
            schedulers = int(spec.compute_units) * int(spec.simds_per_cu)
        dims = tuple(int(x) for x in name[:-4].split("_")[2].split("x"))
        shape = dims + (1,) * (4 - len(dims))
        for config, launch in read_ncu_launch_run(path.read_text()).items():
            out.append({"config": config, "shape": shape,
                        "cycles": float(launch.counters[ACTIVE_CYCLES][0]),
                        "issued": float(launch.counters[ISSUED][0]) / schedulers})
    return out


def _launches(gpu: str, root: Path | None, runs: tuple):
    """(component arrays, the rows the model can assemble, theta, ncu cycles) of the launches
    in `runs`: theta is the committed calibration's (Calib.theta). Raises GemmModelError
    where the folder has none of them."""
    from gemmmodel.errors import GemmModelError
    from gemmmodel.model import load_calib
    from gemmmodel.model.combine import components_arrays
    from gemmmodel.model.selection import swept_components
    from gemmmodel.spec import load_spec

    rows = measured_cycles(gpu, root, runs)
    if not rows:
        raise GemmModelError(f"no ncu run of {', '.join(runs)} for {gpu}")
    folder = Path(root or CALIBRATION_DIR) / gpu
    calib = load_calib(gpu, folder.parent)
    comps = swept_components(folder, load_spec(gpu),
                             [(r["config"], r["shape"]) for r in rows], calib)
    kept = [r for r in rows if (r["config"], r["shape"]) in comps]
    arrays = components_arrays([comps[(r["config"], r["shape"])] for r in kept])
    return arrays, kept, calib.theta(), np.array([r["cycles"] for r in kept])


def model_cycles(arrays: dict, theta: dict) -> np.ndarray:
    """The model's t_pipes in clocks of its clock_hz, per row of `arrays`."""
    from gemmmodel.model.combine import evaluate_arrays

    return evaluate_arrays(arrays, theta)["t_pipes"] * arrays["clock_hz"]


def fit_copy_exposure(gpu: str = "h200", root: Path | None = None) -> dict:
    """copy_exposure that minimises the rms log error of model_cycles against ncu's cycles over
    measured_cycles (module docstring). Returns {exposure, n, rms, rms_at_zero, rows}.
    Each row is {config, shape, cycles, issued, model_cycles}, the model at the fitted value.
    Raises GemmModelError where the folder has none of COPY_RUNS."""
    from scipy.optimize import minimize_scalar

    from gemmmodel.model.calib import FIT_BOUNDS

    arrays, kept, theta, meas = _launches(gpu, root, COPY_RUNS)

    def rms(x: float) -> float:
        pred = model_cycles(arrays, {**theta, "copy_exposure": float(x)})
        return float(np.sqrt(np.mean(np.log(pred / meas) ** 2)))

    lo, hi = FIT_BOUNDS["copy_exposure"]
    best = minimize_scalar(rms, bounds=(lo, hi), method="bounded",
                           options={"xatol": 1e-4})
    pred = model_cycles(arrays, {**theta, "copy_exposure": float(best.x)})
    return {"exposure": float(best.x), "n": len(kept), "rms": float(best.fun),
            "rms_at_zero": rms(0.0),
            "rows": [{**r, "model_cycles": float(p)} for r, p in zip(kept, pred)]}


def check_copy_exposure(gpu: str = "h200", root: Path | None = None,
                        runs: tuple = HELDOUT_RUNS) -> dict:
    """The model's cycles against ncu's on launches the fit did not see (run AX), at the
    committed copy_exposure and at 0: {exposure, n, rms, mean, rms_at_zero, mean_at_zero,
    rows}; the rms and mean are of log(model / ncu). Raises GemmModelError without the
    runs."""
    arrays, kept, theta, meas = _launches(gpu, root, runs)
    out = {"exposure": float(theta["copy_exposure"]), "n": len(kept)}
    for suffix, value in (("", theta["copy_exposure"]), ("_at_zero", 0.0)):
        pred = model_cycles(arrays, {**theta, "copy_exposure": float(value)})
        err = np.log(pred / meas)
        out[f"rms{suffix}"] = float(np.sqrt(np.mean(err ** 2)))
        out[f"mean{suffix}"] = float(np.mean(err))
        if not suffix:
            out["rows"] = [{**r, "model_cycles": float(p)} for r, p in zip(kept, pred)]
    return out


__all__ = ["COPY_RUNS", "HELDOUT_RUNS", "check_copy_exposure", "fit_copy_exposure",
           "measured_cycles", "model_cycles"]
