"""Measured times of a kernel at a shape on one GPU, from every source the project holds.

`measured_times(spec)` gathers, in this order of preference: profiler exports stored with
`gemmmodel ingest`; the calibration suites of calibration/<gpu>/ (kernels.csv, template.csv,
batched.csv: catalogue kernels, template configs, vendor BLAS); with `sweeps=True` the
template sweeps of tile selection (selection_sweep*.csv, occupancy_sweep.csv: ~31 000
timings on the H200, so only explain and compare, which look up one kernel, ask for them);
the shipped tables of the GPU's architecture (the MI100 seed table). `measured_for` picks a
kernel and shape out of them. Each time is a `Measured` with its source file and a note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from gemmmodel.errors import BadArgument


@dataclass(frozen=True)
class Measured:
    """One measured time (s) of `kernel` at `shape` (M, N, K, batch) from `source`."""

    kernel: str
    shape: tuple
    time_s: float
    source: str
    note: str = ""
    profile: tuple = ()        # (profiler quantity, value SI, model term) of ingested data

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "shape": list(self.shape), "time_s": self.time_s,
                "source": self.source, "note": self.note,
                "profile": [list(p) for p in self.profile]}


def missing(value) -> bool:
    """None or NaN (pandas fills empty CSV cells with NaN)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def param_text(row: dict, key: str) -> str:
    """A measurement parameter as written in the store's `params` text ("kernel=7.4;M=…"):
    the parsed column would turn the id "7" into the float 7.0."""
    for part in str(row.get("params", "")).split(";"):
        name, _, value = part.partition("=")
        if name == key:
            return value
    value = row.get(key)
    return "" if missing(value) else str(value)


def _table_rows(spec) -> list[Measured]:
    import csv

    from gemmmodel.model.samples import DATA_DIR, VALIDATION_TABLES

    out = []
    for table, info in VALIDATION_TABLES.items():
        if info["arch"] != str(spec.arch):
            continue
        size = int(info["size"])
        with (DATA_DIR / table).open(newline="") as fh:
            for row in csv.DictReader(fh):
                try:
                    t = float(row["time_ms"]) * 1e-3
                except (TypeError, ValueError):
                    continue
                note = "" if info["spec"] == spec.name else f"measured on {info['spec']}"
                out.append(Measured(row["kernel_id"].strip(), (size, size, size, 1), t,
                                    info["source"], note))
    return out


def _calibration_rows(spec, root=None) -> list[Measured]:
    from gemmmodel.calibrate.load import load
    from gemmmodel.model.calib import calibration_name

    try:
        frames = load(spec.name, root) if root else load(spec.name)
    except (BadArgument, OSError):
        return []
    folder = calibration_name(spec.name, root)
    out = []
    for suite, key in (("kernels", "kernel"), ("template", "config"), ("batched", None)):
        df = frames.get(suite)
        if df is None or df.empty:
            continue
        for row in df.to_dict("records"):
            if row.get("status") != "ok" or row.get("check_passed") is False:
                continue
            name = str(row.get("name"))
            if name in ("kernel", "template"):
                kernel = param_text(row, key)
            elif name.startswith(("occupancy", "launch")) or suite == "batched":
                continue
            else:
                kernel = name                                  # vendor BLAS rows
            t = row.get("time_s")
            dims = [row.get(d) for d in ("M", "N", "K")]
            if not kernel or missing(t) or any(missing(d) for d in dims):
                continue
            batch = row.get("batch")
            shape = tuple(int(d) for d in dims) + (1 if missing(batch) else int(batch or 1),)
            note = "noisy" if row.get("noisy") else ""
            out.append(Measured(kernel, shape, float(t), f"calibration/{folder}/{suite}.csv",
                                note))
    return out


@lru_cache(maxsize=4)
def _sweep_rows(gpu: str, root=None) -> tuple:
    """Every template timing of the GPU's selection and occupancy sweeps
    (selection.all_sweeps: median of the sweep's launches)."""
    from gemmmodel.calibrate.load import calibration_dir
    from gemmmodel.model.selection import all_sweeps, sweep_file

    try:
        folder = calibration_dir(gpu, root) if root else calibration_dir(gpu)
    except (BadArgument, OSError):
        return ()
    # the folder's own name (spec sm_90 reads calibration/h100), not the name asked for
    return tuple(Measured(config, tuple(shape), t,
                          f"calibration/{folder.name}/{sweep_file(part)}",
                          "template sweep (median)")
                 for part, times in all_sweeps(folder).items()
                 for (config, shape), t in times.items())


def _ingested_rows(spec, root=None) -> list[Measured]:
    from gemmmodel.ingest import ingested_times, model_counterparts

    return [Measured(r["kernel"], tuple(r["shape"]), float(r["time_s"]),
                     f"ingested {r['tool']} ({r['file'].rsplit('/', 1)[-1]})",
                     f"median of {r['launches']} launch(es)", model_counterparts(r))
            for r in ingested_times(spec.name, root)]


def measured_times(spec, root=None, sweeps: bool = False) -> list[Measured]:
    """Every measured time for this GPU: ingested profiler data, calibration suites, with
    `sweeps` the template sweeps of tile selection (~28 000 timings on the H200: explain
    and compare look kernels up in them; the report and answers do not), shipped tables of
    the same architecture (in that order of preference)."""
    return (_ingested_rows(spec, root) + _calibration_rows(spec, root)
            + (list(_sweep_rows(spec.name, root)) if sweeps else []) + _table_rows(spec))


def measured_for(measured: list[Measured], kernel: str, shape) -> list[Measured]:
    return [m for m in measured if m.kernel == kernel and tuple(m.shape) == tuple(shape)]
