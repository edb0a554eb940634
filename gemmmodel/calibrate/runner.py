"""Run a list of measurements: skip what the store already holds, respect the time budgets,
append each measurement's rows as soon as it finishes, report progress.

Budgets (wall seconds on the GPU machine): each suite has its own (DEFAULT_BUDGET_S, so that
`--suite all` fits a few device runs of at most 10 minutes), and the whole invocation may
have one more cap (`--budget-s`). A measurement starts only if its estimated time fits what
is left of both; the first measurement of an invocation always starts, so progress is made
even when an estimate is pessimistic. A stop leaves the store clean: a rerun resumes.
Three errors in a row end the suite (ToolMissing errors do not count: a missing vendor
library says nothing about the next kernel); a GPU error (GpuError: a faulted context fails
every later launch) ends the whole run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gemmmodel.calibrate.plan import Measurement, Skip
from gemmmodel.calibrate.provenance import utc_now
from gemmmodel.calibrate.store import ResultStore

#: Default wall budget per suite in s (each fits a device run of <= 10 minutes with start-up).
DEFAULT_BUDGET_S = {"micro": 360.0, "kernels": 420.0, "template": 420.0, "batched": 180.0}
MAX_CONSECUTIVE_ERRORS = 3


@dataclass
class SuiteReport:
    """What happened to one suite in this invocation."""

    suite: str
    planned: int = 0
    already_done: int = 0
    measured: int = 0
    skipped: int = 0
    errors: int = 0
    not_run: int = 0
    elapsed_s: float = 0.0
    budget_s: float = math.inf
    stop_reason: str = ""     # "", "suite budget", "total budget", "errors", "GPU error"
    error_notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["budget_s"] = None if math.isinf(self.budget_s) else self.budget_s
        return out


def _complete(rows: list[dict[str, Any]], m: Measurement, provenance_id: str) -> list[dict]:
    stamp = utc_now()
    out = []
    for row in rows:
        full = dict(row)
        full.update({"provenance_id": provenance_id, "timestamp_utc": stamp, "suite": m.suite,
                     "name": m.name, "params": m.params_text})
        full.setdefault("status", "ok")
        out.append(full)
    return out


def run_one(m: Measurement, ctx: Any) -> list[dict[str, Any]]:
    """Rows of one measurement; Skip and errors become one row with a note (no value)."""
    if hasattr(ctx, "suite"):
        ctx.suite = m.suite
    try:
        rows = m.run(ctx)
    except Skip as why:
        return [{"status": "skipped", "quantity": "none", "note": str(why)}]
    except KeyboardInterrupt:
        raise
    except Exception as err:  # noqa: BLE001 - any failure is recorded, retried by a rerun
        first = (str(err).strip().splitlines() or [""])[0]
        return [{"status": "error", "quantity": "none", "note": f"{type(err).__name__}: {first}"}]
    return rows or [{"status": "ok", "quantity": "none"}]


def run_measurements(measurements: list[Measurement], ctx: Any, store: ResultStore,
                     provenance_id: str, *, budget_s: float | None = None,
                     suite_budgets: dict[str, float] | None = None,
                     progress: Callable[[str], None] | None = None,
                     clock: Callable[[], float] = time.monotonic) -> list[SuiteReport]:
    """Measure what the store lacks, suite by suite, in list order. Returns one report per
    suite. `budget_s` caps the whole call; `suite_budgets` (default DEFAULT_BUDGET_S) each
    suite."""
    budgets = DEFAULT_BUDGET_S if suite_budgets is None else suite_budgets
    total_cap = math.inf if budget_s is None else float(budget_s)
    done = store.done_keys()
    suites = list(dict.fromkeys(m.suite for m in measurements))
    reports = {s: SuiteReport(s, budget_s=float(budgets.get(s, math.inf))) for s in suites}
    start = clock()
    ran_any = False
    consecutive_errors = 0
    stop_all = ""
    for index, m in enumerate(measurements, 1):
        if index > 1 and m.suite != measurements[index - 2].suite:
            consecutive_errors = 0
        rep = reports[m.suite]
        rep.planned += 1
        if m.key in done:
            rep.already_done += 1
            continue
        if stop_all or rep.stop_reason:
            rep.not_run += 1
            rep.stop_reason = rep.stop_reason or stop_all
            continue
        now = clock()
        left_total = total_cap - (now - start)
        left_suite = rep.budget_s - rep.elapsed_s
        if ran_any and m.est_s > left_total:
            stop_all = "total budget"
        elif rep.measured + rep.skipped + rep.errors > 0 and m.est_s > left_suite:
            rep.stop_reason = "suite budget"
        if stop_all or rep.stop_reason:
            rep.stop_reason = rep.stop_reason or stop_all
            rep.not_run += 1
            continue
        if progress:
            progress(f"[{index}/{len(measurements)}] {m.label} …")
        t0 = clock()
        rows = _complete(run_one(m, ctx), m, provenance_id)
        store.append(rows)
        rep.elapsed_s += clock() - t0
        ran_any = True
        status = rows[0]["status"]
        if status == "error":
            rep.errors += 1
            # a missing tool (e.g. CuPy for cuBLAS rows) says nothing about the next kernel
            if not rows[0].get("note", "").startswith("ToolMissing"):
                consecutive_errors += 1
            rep.error_notes.append(f"{m.label}: {rows[0].get('note', '')}")
            if progress:
                progress(f"    error: {rows[0].get('note', '')}")
            if rows[0].get("note", "").startswith("GpuError"):
                stop_all = "GPU error"
            elif consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
                rep.stop_reason = "errors"
        else:
            consecutive_errors = 0
            if status == "skipped":
                rep.skipped += 1
            else:
                rep.measured += 1
    return [reports[s] for s in suites]
