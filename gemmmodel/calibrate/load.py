"""Read a calibration folder (calibration/<gpu>/) into pandas DataFrames.

`load(gpu)` returns one DataFrame per suite present (micro, kernels, template, batched): the
store's columns with numbers as floats, `noisy` / `check_passed` as booleans, and each
measurement parameter as its own column (e.g. `ilp`, `warps`, `M`). Only the last row per
(name, params, quantity) is kept, so retried measurements appear once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gemmmodel import CALIBRATION_DIR
from gemmmodel.calibrate.provenance import read_provenance
from gemmmodel.calibrate.store import COLUMNS, SUITES, parse_params, read_rows
from gemmmodel.errors import BadArgument

NUMERIC = ("time_s", "time_p20_s", "time_p80_s", "spread", "runs", "work", "value", "clock_hz",
           "rel_err", "nan_count")
BOOLEAN = ("noisy", "check_passed")


def calibration_dir(gpu: str | Path, root: str | Path = CALIBRATION_DIR) -> Path:
    """The folder of a GPU: a path to a folder, or a name under calibration/ (a spec name
    finds its alias's folder and the other way round: sm_90 -> calibration/h100)."""
    path = Path(gpu)
    if path.is_dir():
        return path
    path = Path(root) / str(gpu)
    if not path.is_dir():
        from gemmmodel.model.calib import calibration_name

        path = Path(root) / calibration_name(str(gpu), Path(root))
    if not path.is_dir():
        have = sorted(p.name for p in Path(root).glob("*") if p.is_dir()) if Path(
            root).is_dir() else []
        raise BadArgument(f"no calibration folder for '{gpu}' under {root}"
                          + (f" (have: {', '.join(have)})" if have else ""))
    return path


def _frame(rows: list[dict[str, str]]):
    import pandas as pd

    last: dict[tuple[str, str, str], dict[str, str]] = {}
    for row in rows:
        last[(row["name"], row["params"], row["quantity"])] = row
    records = []
    for row in last.values():
        rec: dict[str, Any] = dict(row)
        for key, val in parse_params(row["params"]).items():
            rec[key if key not in COLUMNS else f"param_{key}"] = val
        records.append(rec)
    df = pd.DataFrame.from_records(records)
    if df.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    for col in NUMERIC:
        df[col] = pd.to_numeric(df[col].replace("", None), errors="coerce")
    for col in BOOLEAN:
        df[col] = df[col].map({"1": True, "0": False, "": None})
    return df


def load(gpu: str | Path, root: str | Path = CALIBRATION_DIR) -> dict[str, Any]:
    """{suite: DataFrame} for the calibration folder of `gpu` (see module doc)."""
    folder = calibration_dir(gpu, root)
    out = {}
    for suite in SUITES:
        rows = read_rows(folder / f"{suite}.csv")
        if rows:
            out[suite] = _frame(rows)
    return out


def load_provenance(gpu: str | Path, root: str | Path = CALIBRATION_DIR) -> dict[str, Any]:
    """The provenance.json of a GPU's calibration folder."""
    return read_provenance(calibration_dir(gpu, root))
