"""Measurements as data: what a suite would measure, how long that should take, and the rows
a measurement returns.

A Measurement is (suite, name, params) plus an estimated GPU time and a `run(ctx)` function
returning rows (dicts with the store's columns; the runner adds suite, name, params,
provenance and time stamp). `run` raises Skip(reason) for something that cannot or should
not be measured; the reason is recorded and the key counts as done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gemmmodel.calibrate.store import QUANTITIES, measurement_key, params_text


class Skip(Exception):
    """Raised by a measurement that is not measured; the message is the recorded reason."""


@dataclass(frozen=True)
class Measurement:
    """One measurement. est_s: estimated GPU wall time in s (compile, transfers, timing)."""

    suite: str
    name: str
    params: dict[str, Any]
    est_s: float
    run: Callable[[Any], list[dict[str, Any]]] = field(compare=False, repr=False)

    @property
    def params_text(self) -> str:
        return params_text(self.params)

    @property
    def key(self) -> str:
        return measurement_key(self.suite, self.name, self.params)

    @property
    def label(self) -> str:
        """Progress text, e.g. 'micro/fma_curve ilp=4 warps=16'."""
        words = " ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.suite}/{self.name}" + (f" {words}" if words else "")


def timing_fields(result: Any) -> dict[str, Any]:
    """Store columns from a measure.BenchResult (times in s)."""
    if result is None:
        return {}
    return {"time_s": result.median_s, "time_p20_s": result.p20_s, "time_p80_s": result.p80_s,
            "spread": result.spread, "noisy": bool(result.noisy), "runs": int(result.reps)}


def rows_for(quantities: dict[str, float | None], *, timing: Any = None, work: float | None = None,
             work_unit: str = "", clock_hz: float | None = None, note: str = "",
             **extra: Any) -> list[dict[str, Any]]:
    """One row per derived quantity (same timing, work and note); None values are left out."""
    common = timing_fields(timing)
    common.update({"work": work, "work_unit": work_unit if work is not None else "",
                   "clock_hz": clock_hz, "note": note, **extra})
    rows = []
    for quantity, value in quantities.items():
        if value is None:
            continue
        rows.append({**common, "status": "ok", "quantity": quantity, "value": float(value),
                     "unit": QUANTITIES[quantity]})
    if not rows:
        rows.append({**common, "status": "ok", "quantity": "none", "value": None, "unit": ""})
    return rows


def estimate_bench_s(kernel_s: float, budget_s: float, *, warmup: int = 3, min_reps: int = 10,
                     overhead_s: float = 0.02) -> float:
    """Expected wall time of one measure.bench call: warm-up plus min_reps timed launches,
    or the budget if that is shorter (bench lowers min_reps for slow kernels), plus host
    overhead. An estimate for dry runs and budget checks, not a bound."""
    kernel_s = max(kernel_s, 10e-6)  # a launch from Python costs about this at least
    timed = min(min_reps * kernel_s, max(budget_s, 3 * kernel_s))
    return overhead_s + warmup * kernel_s + timed


def suite_totals(measurements: list[Measurement]) -> dict[str, dict[str, float]]:
    """Per suite: number of measurements and summed estimated seconds."""
    out: dict[str, dict[str, float]] = {}
    for m in measurements:
        entry = out.setdefault(m.suite, {"measurements": 0, "est_s": 0.0})
        entry["measurements"] += 1
        entry["est_s"] += m.est_s
    return out
