"""`gemmmodel report [--gpu G ...] -o DIR`: a self-contained HTML report with plots
(gemmmodel.report)."""

from __future__ import annotations

from gemmmodel.commands._common import add_json_flag, emit


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report with plots",
                       description="Roofline, predicted vs measured, term stacks, lineage, "
                                   "occupancy curves and bank-conflict heat maps per GPU.")
    p.add_argument("--gpu", action="append", help="GPU spec (repeatable; default mi100-1472)")
    p.add_argument("-o", "--out", default="reports", metavar="DIR", help="output folder")
    p.add_argument("--size", help="shape of the catalogue table (default 4096x4096x4096)")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from gemmmodel.explain import default_gpu
    from gemmmodel.report import build_report

    path = build_report(args.gpu or [default_gpu()], args.out, args.size)
    return emit(args, {"written": str(path)}, lambda r: f"wrote {r['written']}")
