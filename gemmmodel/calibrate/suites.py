"""The calibration suites as one plan, the dry run, and a full calibration run.

Suites: micro (microbenchmarks), kernels (catalogue sweep), template (tile-config sweep),
batched (strided-batched kernel). `plan_suites` lists their measurements for a device;
`dry_run` does so from a spec, without a GPU; `run_calibration` measures on the GPU into
calibration/<gpu>/ (store.py CSVs, provenance.json, summary.json) and can be rerun to resume.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gemmmodel import CALIBRATION_DIR
from gemmmodel.calibrate import gemm
from gemmmodel.calibrate import provenance as prov
from gemmmodel.calibrate.context import Context, DeviceFacts, facts_from_device, facts_from_spec
from gemmmodel.calibrate.micro_compute import compute_measurements
from gemmmodel.calibrate.micro_launch import launch_measurements
from gemmmodel.calibrate.micro_memory import memory_measurements
from gemmmodel.calibrate.plan import Measurement, suite_totals
from gemmmodel.calibrate.runner import DEFAULT_BUDGET_S, run_measurements
from gemmmodel.calibrate.store import SUITES, ResultStore, parse_params
from gemmmodel.calibrate.sweeps import (
    batched_measurements,
    kernel_measurements,
    template_measurements,
)
from gemmmodel.errors import BadArgument, GemmModelError, SpecError

#: measure.bench budget per measurement, by suite (s).
BENCH_BUDGET_S = {"micro": 0.25, "kernels": 0.5, "template": 0.3, "batched": 0.3}
#: Default wall cap of one invocation (s): a device run may last 600 s, and start-up, the
#: last measurement's overrun and the summary need the rest.
DEFAULT_TOTAL_BUDGET_S = 540.0
VENDOR_WORDS = ("nvidia", "amd", "geforce", "tesla", "radeon", "instinct", "quadro")


def parse_suites(text: str) -> list[str]:
    """'micro,kernels' or 'all' -> suite names in canonical order; BadArgument if unknown."""
    names = [t.strip().lower() for t in str(text).split(",") if t.strip()]
    if not names or "all" in names:
        return list(SUITES)
    bad = [n for n in names if n not in SUITES]
    if bad:
        raise BadArgument(f"unknown suite {', '.join(bad)}: choose from "
                          f"{', '.join(SUITES)} or all")
    return [s for s in SUITES if s in names]


def gpu_dir_name(device_name: str) -> tuple[str, Any]:
    """(folder name, spec or None) for a device name, e.g. 'NVIDIA H100 80GB HBM3' -> 'h100'
    (the longest leading part of the name that a spec knows), else the whole slug."""
    from gemmmodel.spec import load_spec

    words = [w for w in re.split(r"[^a-z0-9]+", device_name.lower()) if w]
    words = [w for w in words if w not in VENDOR_WORDS] or ["gpu"]
    for i in range(len(words), 0, -1):
        slug = "-".join(words[:i])
        try:
            return slug, load_spec(slug)
        except (SpecError, BadArgument, KeyError, FileNotFoundError):
            continue
    return "-".join(words), None


def load_spec_or_none(name: str | None) -> Any:
    if not name:
        return None
    from gemmmodel.spec import load_spec

    return load_spec(name)


def vendor_blas_name(vendor: str | None) -> str:
    return "rocblas" if (vendor or "").lower() == "amd" else "cublas"


def plan_suites(suites: list[str], dev: DeviceFacts, spec: Any, vendor: str | None = None,
                only: list[str] | None = None) -> list[Measurement]:
    """Every measurement of the chosen suites, in run order (micro first)."""
    blas = vendor_blas_name(vendor or getattr(spec, "vendor", None))
    out: list[Measurement] = []
    if "micro" in suites:
        budget = BENCH_BUDGET_S["micro"]
        out += compute_measurements(dev, budget)
        out += memory_measurements(dev, budget)
        out += launch_measurements(dev, budget)
    if "kernels" in suites:
        out += kernel_measurements(dev, BENCH_BUDGET_S["kernels"], blas)
    if "template" in suites:
        out += template_measurements(dev, BENCH_BUDGET_S["template"], blas, spec)
    if "batched" in suites:
        out += batched_measurements(dev, BENCH_BUDGET_S["batched"], blas)
    if only:
        wanted = {w.strip() for w in only if w.strip()}
        known = {m.name for m in out} | {f"{m.suite}/{m.name}" for m in out}
        unknown = sorted(wanted - known)
        if unknown:
            raise BadArgument(f"--only {', '.join(unknown)}: not a measurement of these "
                              f"suites; known: {', '.join(sorted({m.name for m in out}))}")
        out = [m for m in out if m.name in wanted or f"{m.suite}/{m.name}" in wanted]
    return out


def suite_budgets(suites: list[str], budget_s: float | None) -> dict[str, float]:
    """Per-suite wall budgets: the defaults, each capped by the invocation's budget
    (None: DEFAULT_TOTAL_BUDGET_S; math.inf: no cap)."""
    cap = DEFAULT_TOTAL_BUDGET_S if budget_s is None else float(budget_s)
    return {s: min(DEFAULT_BUDGET_S[s], cap) for s in suites}


def dry_run(suites: list[str], gpu: str, only: list[str] | None = None,
            budget_s: float | None = None) -> dict[str, Any]:
    """What a run would measure on the spec's GPU, with estimated GPU time per suite."""
    spec = load_spec_or_none(gpu)
    dev = facts_from_spec(spec)
    plan = plan_suites(suites, dev, spec, getattr(spec, "vendor", None), only)
    totals = suite_totals(plan)
    budgets = suite_budgets(suites, budget_s)
    per_suite = {}
    for suite in suites:
        tot = totals.get(suite, {"measurements": 0, "est_s": 0.0})
        per_suite[suite] = {
            "measurements": int(tot["measurements"]), "est_s": round(tot["est_s"], 1),
            "budget_s": budgets[suite],
            "device_runs": max(1, math.ceil(tot["est_s"] / budgets[suite])) if tot["est_s"]
            else 0,
        }
    return {
        "gpu": gpu, "device": dev.__dict__, "suites": per_suite,
        "total_est_s": round(sum(v["est_s"] for v in per_suite.values()), 1),
        "measurements": [{"suite": m.suite, "name": m.name, "params": m.params_text,
                          "est_s": round(m.est_s, 3)} for m in plan],
        "note": "estimates assume the spec's clocks and peaks, 10% of FP32 peak for GEMM "
                "kernels and 0.5 s per compile; the budget stops a suite cleanly (rerun to "
                "resume)",
    }


def prior_kernel_times(store: ResultStore) -> dict[tuple, float]:
    """(kernel name, M, N, K) -> time_s of GEMMs already in the store (for time predictions)."""
    out: dict[tuple, float] = {}
    for row in store.rows():
        if row["quantity"] != "flop_per_s" or not row["time_s"] or row["suite"] == "batched":
            continue
        p = parse_params(row["params"])
        name = p.get("kernel") or p.get("config") or row["name"]
        if {"M", "N", "K"} <= set(p):
            out[(str(name), int(p["M"]), int(p["N"]), int(p["K"]))] = float(row["time_s"])
    return out


def run_calibration(suites: list[str], *, out_dir: str | Path | None = None,
                    gpu: str | None = None, only: list[str] | None = None,
                    budget_s: float | None = None, argv: list[str] | None = None,
                    progress: Callable[[str], None] | None = None,
                    runtime: Any = None) -> dict[str, Any]:
    """Measure the suites on this machine's GPU; returns a report (folder, per-suite counts)."""
    from gemmmodel.calibrate.summary import write_summary

    if runtime is None:
        from gemmmodel.runtime import get_runtime

        runtime = get_runtime()
    info = runtime.device_info()
    dir_name, spec = gpu_dir_name(str(info.get("name", "gpu")))
    if gpu:
        spec = load_spec_or_none(gpu)
    out = Path(out_dir) if out_dir else CALIBRATION_DIR / dir_name
    dev = facts_from_device(info, spec)
    plan = plan_suites(suites, dev, spec, info.get("vendor"), only)
    store = ResultStore(out)
    record = prov.start_record(info, runtime.clocks(), argv or prov.command_line(), suites)
    prov.write_run(out, record)
    ctx = Context(rt=runtime, device=dev, spec=spec, bench_budgets_s=dict(BENCH_BUDGET_S))
    ctx.cache["kernel_time_s"] = prior_kernel_times(store)
    status = "failed"
    reports = []
    try:
        total = DEFAULT_TOTAL_BUDGET_S if budget_s is None else budget_s
        reports = run_measurements(plan, ctx, store, record["provenance_id"], budget_s=total,
                                   suite_budgets=suite_budgets(suites, total),
                                   progress=progress)
        reasons = {r.stop_reason for r in reports} - {""}
        status = ("failed" if "GPU error" in reasons else "budget" if any(
            "budget" in r for r in reasons) else "errors" if reasons else "finished")
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        clocks = None
        try:  # a faulted device can neither free nor report clocks: the exit frees
            gemm.release(ctx)
            clocks = runtime.clocks()
        except GemmModelError as err:
            record["after_error"] = f"{type(err).__name__}: {err}"
        prov.write_run(out, prov.finish_record(record, clocks, status))
    summary_path = write_summary(out, spec)
    return {"out_dir": str(out), "provenance_id": record["provenance_id"], "status": status,
            "spec": getattr(spec, "name", None), "summary": str(summary_path),
            "suites": [r.to_dict() for r in reports]}
