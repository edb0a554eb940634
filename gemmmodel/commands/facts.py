"""`gemmmodel facts`: compile every catalogue kernel for the targets and write the
compile-facts table (calibration/compile_facts.csv); with --template, the shipped
tile-template configs instead (calibration/template_facts.csv); with --search-space GPU,
every config of that GPU's template search space for its compile target
(calibration/template_facts_<target>.csv, read by the model for the load round trips and
spills); --edge compiles the bounds-checked builds (EDGE=1) instead
(template_facts_<target>_edge.csv: what shapes that are not a tile multiple run); --batched
the strided-batched entry that batched launches run (template_facts_<target>_batched.csv);
--checked with either, the same build without its unchecked path (EDGE=2: what an edge block
executes; template_facts_<target>_checked.csv, template_facts_<target>_batched_checked.csv)."""

from __future__ import annotations

from pathlib import Path

from gemmmodel.commands._common import add_json_flag, emit, progress
from gemmmodel.compile.table import (
    DEFAULT_TARGETS,
    TABLE_FILE,
    TEMPLATE_CONFIGS,
    TEMPLATE_TABLE_FILE,
    build_facts_table,
    table_suffix,
    template_sources,
    template_table_path,
    write_facts_table,
)
from gemmmodel.errors import BadArgument


def add_parser(sub) -> None:
    p = sub.add_parser("facts", help="compile the whole catalogue for several targets and "
                                     "write the compile-facts table")
    p.add_argument("--targets", default=",".join(DEFAULT_TARGETS),
                   help="comma-separated compile targets or GPU names")
    p.add_argument("--template", nargs="*", metavar="CONFIG", default=None,
                   help="compile tile-template configs instead of the catalogue (default "
                        f"configs: {' '.join(TEMPLATE_CONFIGS)}; out: {TEMPLATE_TABLE_FILE.name})")
    p.add_argument("--search-space", metavar="GPU", default=None,
                   help="compile the whole template search space of GPU for its compile "
                        "target (out: template_facts_<target>.csv)")
    p.add_argument("--edge", action="store_true",
                   help="with --search-space or --template: the bounds-checked builds "
                        "(EDGE=1; out: template_facts_<target>_edge.csv)")
    p.add_argument("--batched", action="store_true",
                   help="with --search-space or --template: the strided-batched entry "
                        "(sgemm_tile_batched_nn; out: template_facts_<target>_batched.csv)")
    p.add_argument("--checked", action="store_true",
                   help="with --edge or --batched: the build without its unchecked path "
                        "(EDGE=2, what an edge block executes; out: "
                        "template_facts_<target>[_batched]_checked.csv)")
    p.add_argument("--out", type=Path, default=None,
                   help=f"CSV file to write (default {TABLE_FILE.name} or "
                        f"{TEMPLATE_TABLE_FILE.name} under calibration/)")
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
    items = None
    default_out = TABLE_FILE
    if args.checked and not (args.edge or args.batched):
        raise BadArgument("--checked needs --edge or --batched")
    if args.search_space:
        from gemmmodel.spec import load_spec
        from gemmmodel.template import search_space

        spec = load_spec(args.search_space)
        targets = [str(spec.compile_target)]
        items = template_sources(sorted(c.name for c in search_space(spec)), edge=args.edge,
                                 batched=args.batched, checked=args.checked)
        default_out = template_table_path(targets[0], edge=args.edge, batched=args.batched,
                                          checked=args.checked)
    elif args.template is not None:
        items = template_sources(args.template or TEMPLATE_CONFIGS, edge=args.edge,
                                 batched=args.batched, checked=args.checked)
        suffix = table_suffix(args.edge, args.batched, args.checked)
        default_out = TEMPLATE_TABLE_FILE.with_name(f"template_facts{suffix}.csv")
    elif args.edge or args.batched:
        flag = "--edge" if args.edge else "--batched"
        raise BadArgument(f"{flag} needs --search-space GPU or --template")
    rows = build_facts_table(targets, catalogue=args.catalogue, jobs=args.jobs,
                             progress=progress, items=items)
    out = write_facts_table(rows, args.out or default_out)
    failed = [{k: r.get(k) for k in ("kernel_id", "target", "status")}
              for r in rows if r.get("status") != "ok"]
    return emit(args, {"out": str(out), "rows": len(rows), "failed": failed}, _render)
