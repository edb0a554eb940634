"""Check a calibration folder: CSV schema and units, provenance, summary.

`check_folder(path)` returns a list of problems (empty = valid): every suite CSV has exactly
the store's columns; every row passes store.check_row (known suite, status, quantity, the
quantity's unit, work unit); numbers parse and ok rows carry a finite value; every row's
provenance_id names a run in provenance.json; provenance.json has the top-level and per-run
keys; summary.json, where present, is valid JSON with a headline section.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from gemmmodel.calibrate import provenance as prov
from gemmmodel.calibrate.store import COLUMNS, SUITES, check_row, read_rows

NUMERIC = ("time_s", "time_p20_s", "time_p80_s", "spread", "runs", "work", "value", "clock_hz",
           "rel_err", "nan_count")


def _check_provenance(folder: Path, problems: list[str]) -> set[str]:
    path = folder / prov.FILE_NAME
    if not path.exists():
        problems.append(f"{folder.name}: no {prov.FILE_NAME}")
        return set()
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        problems.append(f"{path}: not JSON ({err})")
        return set()
    problems += [f"{path}: missing top-level key {k}" for k in prov.TOP_KEYS if k not in data]
    ids = set()
    for i, run in enumerate(data.get("runs", [])):
        problems += [f"{path}: run {i} lacks {k}" for k in prov.RUN_KEYS if k not in run]
        for which in ("clocks_before", "clocks_after"):
            clocks = run.get(which)
            if clocks is not None:
                problems += [f"{path}: run {i} {which} lacks {k}" for k in prov.CLOCK_KEYS
                             if k not in clocks]
        if run.get("status") not in prov.RUN_STATUSES:
            problems.append(f"{path}: run {i} status {run.get('status')!r}")
        ids.add(run.get("provenance_id"))
    return ids


def _check_csv(path: Path, run_ids: set[str], problems: list[str]) -> int:
    with path.open(newline="") as fh:
        records = list(csv.reader(fh))
    header = records[0] if records else []
    if tuple(header) != COLUMNS:
        problems.append(f"{path.name}: columns {header} != {list(COLUMNS)}")
        return 0
    bad = [n for n, rec in enumerate(records[1:], 2) if len(rec) != len(header)]
    problems += [f"{path.name}:{n}: wrong number of fields" for n in bad]
    rows = read_rows(path)
    for n, row in enumerate(rows, 2):
        where = f"{path.name}:{n}"
        try:
            check_row({k: v for k, v in row.items()})
        except ValueError as err:
            problems.append(f"{where}: {err}")
        if row["suite"] != path.stem:
            problems.append(f"{where}: suite {row['suite']} in {path.name}")
        if row["provenance_id"] not in run_ids:
            problems.append(f"{where}: provenance_id {row['provenance_id']} not in provenance")
        for col in NUMERIC:
            if row[col] not in ("", "nan", "inf"):
                try:
                    float(row[col])
                except ValueError:
                    problems.append(f"{where}: {col}={row[col]!r} is not a number")
        if row["status"] == "ok" and row["quantity"] != "none":
            try:
                if not math.isfinite(float(row["value"])):
                    problems.append(f"{where}: ok row with value {row['value']}")
            except ValueError:
                problems.append(f"{where}: ok row without a value")
        if row["status"] != "ok" and not row["note"]:
            problems.append(f"{where}: {row['status']} row without a reason in note")
    return len(rows)


def check_folder(folder: str | Path) -> list[str]:
    """Problems found in a calibration folder (empty list when it is valid)."""
    folder = Path(folder)
    problems: list[str] = []
    csvs = [folder / f"{s}.csv" for s in SUITES if (folder / f"{s}.csv").exists()]
    if not csvs:
        return [f"{folder}: no suite CSV ({', '.join(s + '.csv' for s in SUITES)})"]
    run_ids = _check_provenance(folder, problems)
    for path in csvs:
        _check_csv(path, run_ids, problems)
    summary = folder / "summary.json"
    if summary.exists():
        try:
            data = json.loads(summary.read_text())
            if "headline" not in data:
                problems.append(f"{summary}: no headline section")
        except json.JSONDecodeError as err:
            problems.append(f"{summary}: not JSON ({err})")
    return problems
