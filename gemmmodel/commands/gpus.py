"""`gemmmodel gpus`: list the GPU specs, show one with every source, or check a spec file."""

from __future__ import annotations

from gemmmodel.commands._common import add_json_flag, emit
from gemmmodel.spec import check_spec_file, list_specs, load_spec
from gemmmodel.units import format_flops, format_si


def add_parser(sub) -> None:
    p = sub.add_parser("gpus", help="list GPU specs, show one (--show), or check a file (--check)",
                       description="List the shipped GPU specs, show every quantity of one with "
                                   "its unit and source, or validate a spec TOML file.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--show", metavar="NAME", help="print every quantity of one spec")
    what.add_argument("--check", metavar="FILE", help="validate a spec file: 'ok' or one error")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.check:
        spec = check_spec_file(args.check)
        return emit(args, {"ok": True, "file": args.check, "name": spec.name}, lambda _: "ok")
    if args.show:
        spec = load_spec(args.show)
        return emit(args, spec.to_dict(), lambda _: _render_show(spec))
    rows = [load_spec(name).summary() for name in list_specs()]
    return emit(args, rows, _render_list)


def _render_list(rows: list[dict]) -> str:
    header = ("name", "vendor", "arch", "CUs", "clock", "FP32 peak", "title")
    table = [header] + [(r["name"], r["vendor"], r["arch"], str(r["compute_units"]),
                         format_si(r["clock_hz"], "frequency"), format_flops(r["fp32_peak_flops"]),
                         r["title"]) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1]
             for row in table]
    return "\n".join(lines)


def _render_show(spec) -> str:
    lines = [f"{spec.name}: {spec.title}",
             f"  vendor {spec.vendor}, arch {spec.arch}, compile target {spec.compile_target}"
             + (f", inherits {spec.inherits}" if spec.inherits else ""),
             f"  aliases: {', '.join(spec.aliases) or '-'}",
             f"  FP32 vector peak: {format_flops(spec.fp32_peak_flops)}", ""]
    width = max(len(name) for name in spec.quantities)
    for name, q in spec.quantities.items():
        flag = " [assumption]" if q.assumption else ""
        lines.append(f"{name.ljust(width)}  {q.formatted()}{flag}")
        lines.append(f"{'':{width}}    source: {q.source}")
        if q.note:
            lines.append(f"{'':{width}}    note: {q.note}")
    return "\n".join(lines)
