"""GPU acceptance runs of issues 4 and 8, run on the device machine.

    python3 tools/device/acceptance.py precompile          # fill the cubin cache (all CPUs)
    python3 tools/device/acceptance.py fuzz --n 1000       # strided-batched fuzz (issue 4)
    python3 tools/device/acceptance.py edges               # every config at a non-multiple shape
    python3 tools/device/acceptance.py sweep --shapes …    # every config at the selection shapes

Each mode writes CSV/JSON under --out and prints a short summary. Correctness rule: relative
error ||C - ref|| / ||ref|| < 1e-5 against float64, NaN-poisoned outputs (gemmmodel.runtime
.check); the batched fuzz also applies the element-wise bound of gemmmodel.batched_cases.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gemmmodel import catalogue  # noqa: E402
from gemmmodel.runtime.precompile import CompileJob, precompile  # noqa: E402

#: Issue 8's shapes (M, N, K, batch): square, skinny, K-heavy, the three contest cases.
SELECTION_SHAPES = ((2048, 2048, 2048, 1), (4096, 4096, 4096, 1), (8192, 8192, 8192, 1),
                    (8192, 256, 8192, 1), (256, 8192, 4096, 1), (1024, 1024, 16384, 1),
                    (64, 64, 32, 30), (128, 128, 64, 20), (128, 512, 256, 10))
EDGE_SHAPE = (257, 263, 67)


def _space(rt):
    from gemmmodel.calibrate.suites import gpu_dir_name
    from gemmmodel.template import search_space

    _, spec = gpu_dir_name(rt.device_info()["name"])
    return search_space(spec)


def _runtime():
    from gemmmodel.runtime import get_runtime

    return get_runtime("nvidia")


def sweep_jobs(rt, only: str = "") -> list[tuple[str, str, CompileJob]]:
    """(config, build, job) for every search-space config: its plain build (4096^3), its
    bounds-checked build (EDGE_SHAPE) and its strided-batched entries, the builds a sweep
    launches; only="batched": the batched entries alone (a batched-only resweep)."""
    from gemmmodel.template.plan import BATCHED_ENTRIES, tile_defines

    out = []
    for cfg in _space(rt):
        if only == "batched":
            out.append((cfg.name, "batched",
                        CompileJob(cfg.plan(64, 64, 64).source, tuple(BATCHED_ENTRIES.values()),
                                   tile_defines(cfg, batched=True))))
            continue
        for build, plan in (("plain", cfg.plan(4096, 4096, 4096)),
                            ("edge", cfg.plan(*EDGE_SHAPE))):
            out.append((cfg.name, build, CompileJob(plan.source, (plan.entry,),
                                                    dict(plan.defines))))
        out.append((cfg.name, "batched", CompileJob(plan.source, tuple(BATCHED_ENTRIES.values()),
                                                    tile_defines(cfg, batched=True))))
    return out


def cmd_precompile(args) -> dict:
    rt = _runtime()
    jobs = [CompileJob(e.source, (e.entry,)) for e in catalogue.load_catalogue().values()]
    # PRECOMPILE_ONLY=batched for a batched-only resweep
    jobs += [job for _, _, job in sweep_jobs(rt, os.environ.get("PRECOMPILE_ONLY", ""))]
    t0 = time.time()
    out = precompile(jobs, rt.arch_flag(), workers=args.workers)
    out["seconds"] = round(time.time() - t0, 1)
    out["jobs"] = len(jobs)
    return out


def cmd_fuzz(args) -> dict:
    from gemmmodel.batched_cases import check_case, fuzz_cases

    rt = _runtime()
    rows, failures = [], []
    for i, case in enumerate(fuzz_cases(args.n, seed=args.seed)):
        res = check_case(case, runtime=rt)
        ok = bool(res["passed"] and res["rel_err"] < 1e-5)
        rows.append({"i": i, "passed": ok, "rel_err": res["rel_err"],
                     "max_err_over_bound": res["max_err_over_bound"]})
        if not ok:
            failures.append(res)
        if i % 100 == 0:
            print(f"[fuzz {i}/{args.n}] failures so far {len(failures)}", file=sys.stderr)
    summary = {"cases": len(rows), "failures": len(failures),
               "max_rel_err": max(r["rel_err"] for r in rows),
               "max_err_over_bound": max(r["max_err_over_bound"] for r in rows),
               "first_failures": failures[:10]}
    (Path(args.out) / "batched_fuzz.json").write_text(json.dumps(summary, indent=1, default=str))
    return {k: v for k, v in summary.items() if k != "first_failures"}


def cmd_edges(args) -> dict:
    from gemmmodel.runtime.check import check_gemm

    rt = _runtime()
    m, n, k = EDGE_SHAPE
    rows = []
    for cfg in _space(rt):
        plan = cfg.plan(m, n, k)
        module = rt.compile_plan(plan)

        def launch(a, b, c, alpha=1.0, beta=0.0, plan=plan, module=module):
            rt.launch_plan(module, plan, m, n, k, alpha, a, b, beta, c)

        res = check_gemm(rt, launch, m, n, k, alpha=0.75, beta=0.0)
        rows.append({"config": cfg.name, "shape": f"{m}x{n}x{k}", "rel_err": res.rel_err,
                     "nan_count": res.nan_count, "passed": res.passed})
    _write_csv(Path(args.out) / "template_edges.csv", rows)
    bad = [r["config"] for r in rows if not r["passed"]]
    return {"configs": len(rows), "failed": len(bad), "failed_configs": bad[:20],
            "max_rel_err": max(r["rel_err"] for r in rows)}


def _write_csv(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def input_sets(rt, shape, l2_bytes, seed):
    """Device copies of one random (A, B, C) for `shape` (M, N, K, batch), as many as
    rotate past the L2 (measure.rotations_needed); free them with free_sets."""
    from gemmmodel.runtime.measure import rotations_needed

    m, n, k, batch = shape
    n_sets = rotations_needed(4 * batch * (m * k + k * n + m * n), l2_bytes)
    rng = np.random.default_rng(seed)
    host = [rng.uniform(-1, 1, size=batch * r * c).astype(np.float32)
            for r, c in ((m, k), (k, n), (m, n))]
    return [tuple(rt.upload(h) for h in host) for _ in range(n_sets)]


def free_sets(rt, sets) -> None:
    for bufs in sets:
        for b in bufs:
            rt.free(b)


def _time_config(rt, cfg, shape, sets, budget_s, edge=None):
    from gemmmodel.batched import compile_batched, kernel_args, launch_spec, row_major_problem
    from gemmmodel.runtime.measure import bench
    from gemmmodel.runtime.runner import group_timer

    m, n, k, batch = shape
    if batch == 1:
        plan = cfg.plan(m, n, k, edge)   # edge=True: the bounds-checked build at any shape
        module = rt.compile_plan(plan)

        def launch(i):
            a, b, c = sets[i]
            rt.launch_plan(module, plan, m, n, k, 1.0, a, b, 0.0, c)
    else:
        prob = row_major_problem(m, n, k, batch)
        module = compile_batched(rt, cfg)
        entry, grid, block = launch_spec(prob, cfg)

        def launch(i):
            a, b, c = sets[i]
            rt.launch(module, entry, grid, block, kernel_args(prob, b, a, c))
    # as gemmmodel.runtime.runner.time_gemm: a checked spin hold ahead of each timed group
    # (runner.group_timer) lets the host enqueue the launches, so the events time the GPU
    launch(0)
    inner, timer = group_timer(rt, lambda: launch(0))
    return bench(launch, timer=timer, n_rotations=len(sets), inner=inner, budget_s=budget_s,
                 min_reps=5, warmup=2)


#: runner.HeldTimer's counts kept per swept config (from BenchResult.hold).
HOLD_COLUMNS = ("hold_s", "hold_retimed", "host_bound")


def cmd_sweep(args) -> dict:
    rt = _runtime()
    info = rt.device_info()
    space = _space(rt)
    out = Path(args.out) / args.sweep_file
    done = set()
    fields = (["gpu", "shape", "config", "median_s", "p20_s", "p80_s", "reps", "noisy",
               "tflops", "error"] + (["t_start_unix", "t_end_unix"] if args.stamps else [])
              + list(HOLD_COLUMNS))
    if out.exists():   # resuming: the file's own columns
        with out.open() as fh:
            reader = csv.DictReader(fh)
            done = {(r["shape"], r["config"]) for r in reader}
            fields = reader.fieldnames or fields
    new_file = not out.exists()
    fh = out.open("a", newline="")
    writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
    if new_file:
        writer.writeheader()
    t_start = time.time()
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    for shape in shapes:
        shape = shape + (1,) * (4 - len(shape))
        m, n, k, batch = shape
        name = "x".join(map(str, shape))
        sets = input_sets(rt, shape, info.get("l2_bytes"), len(done) + m + n + k)
        t_shape = time.time()
        for j, cfg in enumerate(space[::-1] if args.reverse else space):
            if (name, cfg.name) in done:
                continue
            if time.time() - t_start > args.budget_s:
                print("[sweep] budget spent; rerun to resume", file=sys.stderr)
                fh.close()
                return {"stopped": "budget", "rows": len(done)}
            row = {"gpu": info.get("name"), "shape": name, "config": cfg.name}
            if args.stamps:
                row["t_start_unix"] = time.time()
            try:
                res = _time_config(rt, cfg, shape, sets, args.per_config_s,
                                   True if args.force_edge else None)
                row.update(median_s=res.median_s, p20_s=res.p20_s, p80_s=res.p80_s,
                           reps=res.reps, noisy=res.noisy,
                           tflops=2.0 * m * n * k * batch / res.median_s / 1e12, error="",
                           **{key: res.hold.get(key) for key in HOLD_COLUMNS})
            except Exception as err:  # recorded: an invalid launch must not stop the sweep
                row.update(error=f"{type(err).__name__}: {str(err)[:160]}")
            if args.stamps:
                row["t_end_unix"] = time.time()
            writer.writerow(row)
            fh.flush()
            done.add((name, cfg.name))
        free_sets(rt, sets)
        print(f"[sweep] {name}: {len(space)} configs in {time.time() - t_shape:.1f} s",
              file=sys.stderr)
    fh.close()
    return {"rows": len(done), "seconds": round(time.time() - t_start, 1)}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["precompile", "fuzz", "edges", "sweep"])
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--shapes", default=",".join("x".join(map(str, s)) for s in SELECTION_SHAPES))
    p.add_argument("--budget-s", type=float, default=400.0)
    p.add_argument("--sweep-file", default="selection_sweep.csv",
                   help="sweep CSV name under --out (selection_sweep_heldout.csv for the "
                        "held-out round)")
    p.add_argument("--force-edge", action="store_true",
                   help="sweep: time the bounds-checked builds (EDGE=1) even where the shape "
                        "is a tile multiple (their cost on interior tiles)")
    p.add_argument("--stamps", action="store_true",
                   help="sweep: add each config's wall-clock start and end (unix s) to a new "
                        "sweep file")
    p.add_argument("--reverse", action="store_true",
                   help="sweep: time the configs in reverse search-space order (a re-sweep "
                        "that also shows drift with the order)")
    p.add_argument("--per-config-s", type=float, default=0.12)
    args = p.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    result = {"precompile": cmd_precompile, "fuzz": cmd_fuzz, "edges": cmd_edges,
              "sweep": cmd_sweep}[args.mode](args)
    print(json.dumps({args.mode: result}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
