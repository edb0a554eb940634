"""`gemmmodel facts`: compile every catalogue kernel for the targets and write the
compile-facts table (calibration/compile_facts.csv)."""

from __future__ import annotations

from pathlib import Path

from gemmmodel.commands._common import add_json_flag, emit, progress
from gemmmodel.compile.table import (
    DEFAULT_TARGETS,
    TABLE_FILE,
    build_facts_table,
    write_facts_table,
)


def add_parser(sub) -> None:
    p = sub.add_parser("facts", help="compile the whole catalogue for several targets and "
                                     "write the compile-facts table")
    p.add_argument("--targets", default=",".join(DEFAULT_TARGETS),
                   help="comma-separated compile targets or GPU names")
    p.add_argument("--out", type=Path, default=TABLE_FILE, help="CSV file to write")
    p.add_argument("--catalogue", type=Path, default=None,
                   help="catalogue TOML (default kernels/catalogue.toml)")
    p.add_argument("--jobs", type=int, default=0, help="parallel compiles (default: CPUs)")
    add_json_flag(p)
    p.set_defaults(func=run)


def _render(payload: dict) -> str:
    lines = [f"wrote {payload['rows']} rows to {payload['out']}"]
    lines += [f"  {bad['target']} {bad['kernel_id']}: {bad['status']}" for bad in payload["failed"]]
    return "\n".join(lines)


def run(args) -> int:
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    rows = build_facts_table(targets, catalogue=args.catalogue, jobs=args.jobs,
                             progress=progress)
    out = write_facts_table(rows, args.out)
    failed = [{k: r.get(k) for k in ("kernel_id", "target", "status")}
              for r in rows if r.get("status") != "ok"]
    return emit(args, {"out": str(out), "rows": len(rows), "failed": failed}, _render)
