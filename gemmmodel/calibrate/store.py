"""The calibration result store: one CSV per suite in the out dir, appended row by row.

Write discipline (chosen for resumability): append-only lines with fsync. Each row is one
line (notes never contain newlines), written with a single `os.write` on a file opened with
O_APPEND and followed by `os.fsync`, so a crash loses at most the row being written. A file
is created atomically (header written to a temp file, then renamed into place). On open, a
torn last line (no trailing newline) is cut off, so the next append starts on a clean line.

A measurement is identified by its key = suite + name + params (`measurement_key`). One
measurement may write several rows (one per derived quantity, same key). A key counts as
done when it has a row with status "ok" or "skipped"; rows with status "error" are retried
by a rerun (readers keep the last attempt per key and quantity).

Units: every quantity has exactly one unit, fixed in QUANTITIES; times are in seconds.
"""

from __future__ import annotations

import csv
import io
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: CSV columns, in order. Times in s; `spread` = p80 / p20 - 1 (measure.bench); `work` is what
#: one timed launch did, in `work_unit`; `clock_hz` the SM clock the kernel measured for
#: itself (or the one a rate was converted with); rel_err / nan_count / check_passed the
#: correctness check of a timed GEMM (gemmmodel.runtime.check metric).
COLUMNS = (
    "provenance_id", "timestamp_utc", "suite", "name", "params", "status",
    "time_s", "time_p20_s", "time_p80_s", "spread", "noisy", "runs",
    "work", "work_unit", "quantity", "value", "unit", "clock_hz",
    "rel_err", "nan_count", "check_passed", "note",
)

#: Every derived quantity a row may carry -> its unit (the only unit it may have).
QUANTITIES = {
    "bandwidth_Bps": "B/s",
    "bytes_per_clk_per_sm": "B/clk/SM",
    "flop_per_s": "FLOP/s",
    "flop_per_clk_per_sm": "FLOP/clk/SM",
    "cycles_per_access": "cycles",
    "cycles_per_warp_instruction": "cycles",
    "latency_s": "s",
    "latency_cycles": "cycles",
    "clock_hz": "Hz",
    "launch_time_s": "s",
    "blocks_per_s": "blocks/s",
    "threads_per_clk": "threads/clk",
    "occupancy_blocks_per_sm": "blocks/SM",
    "regs_per_thread": "regs",
    "none": "",  # skipped / failed measurements carry no value
}

#: Units of the `work` column (what the measurement did per timed run).
WORK_UNITS = ("B", "FLOP", "steps", "accesses", "blocks", "cycles", "warp instructions", "")

STATUSES = ("ok", "skipped", "error")
DONE_STATUSES = ("ok", "skipped")
SUITES = ("micro", "kernels", "template", "batched")


def params_text(params: Mapping[str, Any]) -> str:
    """Canonical text of a params dict: 'k=v' sorted by key, joined by ';' (no spaces)."""
    parts = []
    for key in sorted(params):
        val = params[key]
        if isinstance(val, float) and val.is_integer():
            val = int(val)
        text = str(val)
        if any(ch in text for ch in ";=\n\r,"):
            raise ValueError(f"param {key}={text!r}: ';', '=', ',' and newlines are not allowed")
        parts.append(f"{key}={text}")
    return ";".join(parts)


def parse_params(text: str) -> dict[str, Any]:
    """Inverse of params_text; numbers come back as int or float where they parse."""
    out: dict[str, Any] = {}
    for part in filter(None, str(text).split(";")):
        key, _, val = part.partition("=")
        for conv in (int, float):
            try:
                out[key] = conv(val)
                break
            except ValueError:
                continue
        else:
            out[key] = val
    return out


def measurement_key(suite: str, name: str, params: Mapping[str, Any] | str) -> str:
    text = params if isinstance(params, str) else params_text(params)
    return f"{suite}/{name}/{text}"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value)
    return str(value).replace("\r", " ").replace("\n", " | ")


def check_row(row: Mapping[str, Any]) -> None:
    """Raise ValueError when a row breaks the schema (unknown column, quantity or unit)."""
    unknown = set(row) - set(COLUMNS)
    if unknown:
        raise ValueError(f"unknown columns {sorted(unknown)}")
    for col in ("provenance_id", "suite", "name", "status", "quantity"):
        if not row.get(col):
            raise ValueError(f"row without {col}")
    if row["suite"] not in SUITES:
        raise ValueError(f"unknown suite {row['suite']!r}")
    if row["status"] not in STATUSES:
        raise ValueError(f"unknown status {row['status']!r}")
    quantity = row["quantity"]
    if quantity not in QUANTITIES:
        raise ValueError(f"unknown quantity {quantity!r}")
    if row.get("unit", QUANTITIES[quantity]) != QUANTITIES[quantity]:
        raise ValueError(f"{quantity} must be in {QUANTITIES[quantity]!r}, not {row['unit']!r}")
    if row.get("work_unit", "") not in WORK_UNITS:
        raise ValueError(f"unknown work unit {row['work_unit']!r}")


def format_row(row: Mapping[str, Any]) -> str:
    """One CSV line (with newline) for a row dict; the unit is filled in from QUANTITIES."""
    full = dict(row)
    full.setdefault("unit", QUANTITIES.get(full.get("quantity", ""), ""))
    check_row(full)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([_cell(full.get(c)) for c in COLUMNS])
    return buf.getvalue()


class ResultStore:
    """The CSV files of one calibration folder (`out_dir/<suite>.csv`)."""

    def __init__(self, out_dir: str | Path):
        self.out_dir = Path(out_dir)

    def path(self, suite: str) -> Path:
        return self.out_dir / f"{suite}.csv"

    def _ensure(self, suite: str) -> Path:
        path = self.path(suite)
        if path.exists():
            _cut_torn_line(path)
            return path
        atomic_write_text(path, ",".join(COLUMNS) + "\n", replace=False)
        return path

    def append(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Append rows (validated first, all or nothing per call); returns rows written."""
        by_suite: dict[str, list[str]] = {}
        for row in rows:
            by_suite.setdefault(row["suite"], []).append(format_row(row))
        count = 0
        for suite, lines in by_suite.items():
            path = self._ensure(suite)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, "".join(lines).encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            count += len(lines)
        return count

    def rows(self, suite: str | None = None) -> list[dict[str, str]]:
        """Every complete row (as strings), in file order."""
        suites = [suite] if suite else list(SUITES)
        out: list[dict[str, str]] = []
        for name in suites:
            out += read_rows(self.path(name))
        return out

    def done_keys(self, suite: str | None = None) -> set[str]:
        """Keys of measurements that need no rerun (a row with status ok or skipped)."""
        return {measurement_key(r["suite"], r["name"], r["params"])
                for r in self.rows(suite) if r["status"] in DONE_STATUSES}


def atomic_write_text(path: str | Path, text: str, replace: bool = True) -> Path:
    """Write a whole file atomically: temp file in the same folder, fsync, rename.

    The file gets the usual mode (0666 less the umask). replace=False keeps a file that
    appeared meanwhile (another writer created it first)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    if not replace and path.exists():
        os.unlink(tmp)
    else:
        os.replace(tmp, path)
    return path


def read_rows(path: str | Path) -> list[dict[str, str]]:
    """Rows of one store CSV; a torn or malformed line is ignored."""
    path = Path(path)
    if not path.exists():
        return []
    text = path.read_text()
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # a torn last line: not a row yet
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        return []
    return [dict(zip(header, rec)) for rec in reader if len(rec) == len(header)]


def _cut_torn_line(path: Path) -> None:
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)
