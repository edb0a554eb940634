"""`gemmmodel calibrate`: microbenchmarks and kernel sweeps on the GPU machine.

    gemmmodel calibrate --suite micro                      # -> calibration/<gpu>/
    gemmmodel calibrate --suite all --budget-s 540         # stops cleanly; rerun resumes
    gemmmodel calibrate --dry-run --suite all --gpu h200   # no GPU needed: plan + time

Exit codes: 0 done (or stopped by the budget: rerun to resume), 1 some measurement failed,
2 a bad argument or no GPU.
"""

from __future__ import annotations

import sys
from collections import Counter

from gemmmodel.commands._common import add_json_flag, emit, progress
from gemmmodel.errors import BadArgument

DRY_RUN_DEFAULT_GPU = "h100"


def add_parser(sub) -> None:
    p = sub.add_parser("calibrate", help="microbenchmarks and kernel sweeps on the GPU",
                       description="Measure microbenchmarks and kernel sweeps into "
                                   "calibration/<gpu>/ (CSV rows with provenance); resumable.")
    p.add_argument("--suite", default="micro",
                   help="micro, kernels, template, batched, or all (comma list; default micro)")
    p.add_argument("--out", metavar="DIR", help="calibration folder (default calibration/<gpu>/)")
    p.add_argument("--dry-run", action="store_true",
                   help="list what would be measured and the estimated GPU time; no GPU used")
    p.add_argument("--budget-s", type=float, metavar="S",
                   help="wall-time cap of this invocation in seconds (default 540: one "
                        "device run of 10 minutes with start-up); each suite also has its own "
                        "default budget; a stopped suite resumes on the next run")
    p.add_argument("--only", metavar="NAME,…",
                   help="only these measurements (e.g. dram_read,fma_curve or micro/launch)")
    p.add_argument("--gpu", metavar="SPEC",
                   help=f"GPU spec: for --dry-run (default {DRY_RUN_DEFAULT_GPU}) or to override "
                        "the spec found from the device name")
    add_json_flag(p)
    p.set_defaults(func=run)


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def render_dry_run(payload: dict) -> str:
    dev = payload["device"]
    lines = [(f"dry run for {dev['name']} ({payload['gpu']} spec: {dev['sms']} SMs, "
              f"L2 {dev['l2_bytes'] / 2**20:.0f} MiB)"),
             (f"{'suite':<10}{'measurements':>13}{'est. GPU time':>15}{'budget':>10}"
              f"{'device runs':>13}")]
    for suite, info in payload["suites"].items():
        lines.append(f"{suite:<10}{info['measurements']:>13}{_minutes(info['est_s']):>15}"
                     f"{_minutes(info['budget_s']):>10}{info['device_runs']:>13}")
    lines.append(f"total estimated GPU time: {_minutes(payload['total_est_s'])}")
    counts = Counter((m["suite"], m["name"]) for m in payload["measurements"])
    lines.append("measurements: " + ", ".join(f"{s}/{n} x{c}" for (s, n), c in counts.items()))
    lines.append(payload["note"])
    return "\n".join(lines)


def render_run(payload: dict) -> str:
    lines = [(f"calibration folder: {payload['out_dir']} (run {payload['provenance_id']}, "
              f"spec {payload['spec'] or 'none'}): {payload['status']}")]
    for rep in payload["suites"]:
        line = (f"  {rep['suite']:<9} planned {rep['planned']}, already done "
                f"{rep['already_done']}, measured {rep['measured']}, skipped {rep['skipped']}, "
                f"errors {rep['errors']}, not run {rep['not_run']} ({rep['elapsed_s']:.0f} s)")
        if rep["stop_reason"]:
            line += f"; stopped: {rep['stop_reason']} (rerun to resume)"
        lines.append(line)
        lines += [f"    error: {note}" for note in rep["error_notes"][:10]]
    lines.append(f"summary: {payload['summary']}")
    return "\n".join(lines)


def run(args) -> int:
    from gemmmodel.calibrate import dry_run, parse_suites, run_calibration

    suites = parse_suites(args.suite)
    if args.budget_s is not None and not args.budget_s > 0:
        raise BadArgument(f"--budget-s must be > 0 seconds, got {args.budget_s}")
    only = [w for w in (args.only or "").split(",") if w.strip()] or None
    if args.dry_run:
        payload = dry_run(suites, args.gpu or DRY_RUN_DEFAULT_GPU, only, args.budget_s)
        return emit(args, payload, render_dry_run)
    payload = run_calibration(suites, out_dir=args.out, gpu=args.gpu, only=only,
                              budget_s=args.budget_s, argv=["gemmmodel"] + sys.argv[1:],
                              progress=progress)
    emit(args, payload, render_run)
    return 1 if any(rep["errors"] for rep in payload["suites"]) else 0
