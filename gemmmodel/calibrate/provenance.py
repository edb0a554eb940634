"""Provenance of calibration runs: `provenance.json` in the calibration folder.

One folder collects the rows of several runs (a suite that ran out of budget is resumed by a
later run), so the file holds a list of runs; every CSV row names its run by
`provenance_id`. Each run records the GPU (name, SMs, bus id, L2), the SM and memory clocks
before and after the run (NVML or nvidia-smi, via the runtime's `clocks()`), the driver and
CUDA versions, the gemmmodel commit, the UTC date, the host name and the command line.
The top level repeats the GPU identity of the latest run for quick reading.

The file is rewritten whole and atomically (temp file + rename) at the start and the end of
each run.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import secrets
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gemmmodel import PROJECT_DIR, __version__
from gemmmodel.calibrate.store import atomic_write_text

FILE_NAME = "provenance.json"
FORMAT = "gemmmodel-calibration-provenance/1"

#: Keys every run record carries (values may be null where the system does not say).
RUN_KEYS = (
    "provenance_id", "gpu_name", "sms", "arch", "pci_bus_id", "l2_bytes",
    "clocks_before", "clocks_after", "driver", "cuda_version", "nvrtc_version",
    "gemmmodel_commit", "gemmmodel_version", "date_utc", "finished_utc", "hostname",
    "command", "suites", "status",
)
#: Run statuses: still running (or killed), all measured, stopped by a time budget, a suite
#: stopped after repeated errors, a GPU error ended it, Ctrl-C.
RUN_STATUSES = ("running", "finished", "budget", "errors", "failed", "interrupted")
#: Keys of a clocks record (Hz; `clock_source` says where they were read).
CLOCK_KEYS = ("sm_clock_hz", "mem_clock_hz", "sm_clock_max_hz", "mem_clock_max_hz",
              "clock_source")
#: Keys of the file's top level.
TOP_KEYS = ("format", "gpu_name", "sms", "runs")


def utc_now() -> str:
    """Current UTC time, ISO 8601 with a Z suffix, whole seconds."""
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    return now.isoformat().replace("+00:00", "Z")


def new_provenance_id() -> str:
    """A unique run id: UTC timestamp plus 6 random hex digits, e.g. 20261121T101500Z-3fa2c1."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"


def git_commit(project_dir: Path = PROJECT_DIR) -> str:
    """Env GEMMMODEL_COMMIT where set (the device scripts set it: the device machine's copy
    of the tree may carry a stale .git, which named c30732b-dirty for commit 4083994 in run
    H2), else `git rev-parse HEAD` (+ '-dirty' when the tree has changes), else "unknown"."""
    env = os.environ.get("GEMMMODEL_COMMIT", "")
    if env and env != "unknown":
        return env
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project_dir, text=True,
                              capture_output=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=project_dir, text=True, capture_output=True, timeout=10,
                                check=True).stdout.strip()
        if head:
            return head + ("-dirty" if status else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return os.environ.get("GEMMMODEL_COMMIT") or "unknown"


def clocks_record(clocks: dict[str, Any] | None) -> dict[str, Any]:
    """The CLOCK_KEYS subset of a runtime `clocks()` dict (missing keys become None)."""
    clocks = clocks or {}
    return {key: clocks.get(key) for key in CLOCK_KEYS}


def start_record(info: dict[str, Any], clocks: dict[str, Any] | None, argv: Sequence[str],
                 suites: Sequence[str], provenance_id: str | None = None) -> dict[str, Any]:
    """A run record at its start, from runtime `device_info()` and `clocks()`."""
    clocks = clocks or {}
    return {
        "provenance_id": provenance_id or new_provenance_id(),
        "gpu_name": info.get("name"),
        "sms": info.get("sms"),
        "arch": info.get("arch"),
        "pci_bus_id": info.get("pci_bus_id"),
        "l2_bytes": info.get("l2_bytes"),
        "total_memory_bytes": info.get("total_memory_bytes"),
        "clocks_before": clocks_record(clocks),
        "clocks_after": None,
        "driver": clocks.get("driver") or info.get("driver"),
        "cuda_version": info.get("cuda_driver_version") or info.get("cuda_version"),
        "nvrtc_version": info.get("nvrtc_version"),
        "gemmmodel_commit": git_commit(),
        "gemmmodel_version": __version__,
        "python": platform.python_version(),
        "date_utc": utc_now(),
        "finished_utc": None,
        "hostname": socket.gethostname(),
        "command": list(argv),
        "suites": list(suites),
        "status": "running",
    }


def finish_record(record: dict[str, Any], clocks: dict[str, Any] | None,
                  status: str) -> dict[str, Any]:
    """The record at the end of its run: clocks after, finish time, status (RUN_STATUSES)."""
    out = dict(record)
    out["clocks_after"] = clocks_record(clocks)
    out["finished_utc"] = utc_now()
    out["status"] = status
    return out


def read_provenance(out_dir: str | Path) -> dict[str, Any]:
    """The provenance file of a calibration folder ({} when there is none)."""
    path = Path(out_dir) / FILE_NAME
    if not path.exists():
        return {}
    return json.loads(path.read_text())


def write_run(out_dir: str | Path, record: dict[str, Any]) -> Path:
    """Insert or replace `record` (by provenance_id) in out_dir/provenance.json, atomically."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    data = read_provenance(out_dir) or {"format": FORMAT, "runs": []}
    runs = [r for r in data.get("runs", []) if r.get("provenance_id") != record["provenance_id"]]
    runs.append(record)
    data.update({"format": FORMAT, "gpu_name": record.get("gpu_name"),
                 "sms": record.get("sms"), "runs": runs})
    return atomic_write_text(out_dir / FILE_NAME, json.dumps(data, indent=2, default=str) + "\n")


def command_line() -> list[str]:
    """The command line of this process, as given."""
    return [os.path.basename(sys.executable)] + list(sys.argv)
