"""What edge blocks cost a launch: a held-out check on device run AZ (session 62).

Run AZ (tools/device/run_az.sh; calibration/<gpu>/az_edge_*.csv, az_twin_*.csv) timed every
search-space config at two shapes with edge blocks, 2000x2000x1024 and 1000x3000x2048
(their bounds-checked build, EDGE=1), and at the tile-multiple twin of each,
2048x2048x1024 and 1024x3072x2048, with the same build forced (EDGE=1, no block crosses M
or N). The twin has a few more blocks of the same build; the edge shape's blocks in the
last block row and column take the checked loads. So

    edge cost = ln(t(edge shape) / t(twin))          [log]

measures what the edge blocks cost the launch, less the twin's extra work. The model's edge
cost is the same ratio of its own predictions (the stored fit; the twin's build as in
edge_builds). None of run AZ's timings was fitted to.

`edge_shape_check` reports, per pair and buffering (single buffers; LDS double buffers, which
stage through registers in the bounds-checked build): the measured and the model's mean edge
cost, their correlation over the configs and the rms of the difference; and the model's
MAPE and Kendall tau at each edge shape over all configs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gemmmodel import CALIBRATION_DIR
from gemmmodel.errors import BadArgument

#: Run AZ's pairs in calibration/<gpu>/: (edge-shape sweep, forced EDGE=1 twin sweep).
AZ_PAIRS = (("az_edge_a.csv", "az_twin_a.csv"), ("az_edge_b.csv", "az_twin_b.csv"))
AZ_SCRIPT = "tools/device/run_az.sh"


def has_run_az(folder: Path) -> bool:
    return all((Path(folder) / f).is_file() for pair in AZ_PAIRS for f in pair)


def _sweep(path: Path) -> tuple[tuple, dict]:
    """(shape (M, N, K, batch), {config: median s}) of one sweep file (rows without error)."""
    import pandas as pd

    df = pd.read_csv(path)
    df = df[df["error"].isna()]
    shapes = sorted(set(df["shape"]))
    if len(shapes) != 1:
        raise BadArgument(f"{path}: expected one shape, found {shapes}")
    shape = tuple(int(x) for x in str(shapes[0]).split("x"))
    return shape + (1,) * (4 - len(shape)), dict(zip(df["config"], df["median_s"]))


def _predict(configs, shape, spec, regs, calib, forced: bool) -> np.ndarray:
    """The model's time of each config at `shape`: the build that runs there, or (forced) the
    bounds-checked build at a tile-multiple shape (edge_builds._samples)."""
    from gemmmodel.model.combine import components_arrays, evaluate_arrays
    from gemmmodel.model.edge_builds import _samples
    from gemmmodel.model.validate import _components

    pairs = [{"config": name, "shape": shape, "plain_s": 1.0, "edge_s": 1.0}
             for name in configs]
    comps, kept = _components(_samples(pairs, spec, regs, True if forced else None), spec,
                              calib)
    if len(kept) != len(pairs):
        raise BadArgument(f"the model rejected {len(pairs) - len(kept)} configs at "
                          f"{'x'.join(map(str, shape))}")
    return evaluate_arrays(components_arrays(comps), calib.theta())["total"]


def edge_shape_check(gpu: str = "h200", root: Path | None = None, calib=None) -> dict:
    """The model (stored fit) on run AZ (module docstring): {gpu, run, source, pairs[]: {edge_shape,
    twin_shape, n, mape, kendall_tau (at the edge shape), groups[]: {buffering, n,
    measured_edge_cost, model_edge_cost, correlation, rms_difference}}}. BadArgument where
    the GPU has no run AZ."""
    from gemmmodel.calibrate.load import load
    from gemmmodel.model.calib import calibration_name, load_calib
    from gemmmodel.model.samples import template_registers
    from gemmmodel.model.validate import metrics
    from gemmmodel.spec import load_spec

    name = calibration_name(gpu, root)
    folder = Path(root or CALIBRATION_DIR) / name
    if not has_run_az(folder):
        raise BadArgument(f"no device run AZ under {folder}: run {AZ_SCRIPT} on the GPU first")
    spec = load_spec(gpu)
    calib = calib or load_calib(name, root)
    regs = template_registers(load(name, root) if root else load(name))
    pairs = []
    for edge_file, twin_file in AZ_PAIRS:
        e_shape, e_times = _sweep(folder / edge_file)
        t_shape, t_times = _sweep(folder / twin_file)
        configs = sorted(set(e_times) & set(t_times))
        pe = _predict(configs, e_shape, spec, regs, calib, forced=False)
        pt = _predict(configs, t_shape, spec, regs, calib, forced=True)
        me = np.array([e_times[c] for c in configs])
        mt = np.array([t_times[c] for c in configs])
        measured, model = np.log(me / mt), np.log(pe / pt)
        double = np.array(["/db" in c for c in configs])
        groups = []
        for db in (False, True):
            sel = double == db
            groups.append({"buffering": "double (registers)" if db else "single",
                           "n": int(sel.sum()),
                           "measured_edge_cost": float(measured[sel].mean()),
                           "model_edge_cost": float(model[sel].mean()),
                           "correlation": float(np.corrcoef(measured[sel], model[sel])[0, 1]),
                           "rms_difference": float(np.sqrt(((model[sel] - measured[sel]) ** 2)
                                                           .mean()))})
        m = metrics(pe, me)
        pairs.append({"edge_shape": "x".join(map(str, e_shape[:3])),
                      "twin_shape": "x".join(map(str, t_shape[:3])), "n": len(configs),
                      "mape": m["mape"], "kendall_tau": m["kendall_tau"], "groups": groups})
    return {"gpu": gpu, "run": "AZ",
            "source": f"calibration/{name}/az_*.csv (run AZ, {AZ_SCRIPT})", "pairs": pairs}


__all__ = ["AZ_PAIRS", "edge_shape_check", "has_run_az"]
