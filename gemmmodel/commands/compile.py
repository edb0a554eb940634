"""`gemmmodel compile SOURCE --gpu G`: resources and instruction mix of a kernel source."""

from __future__ import annotations

from gemmmodel.commands._common import add_json_flag, emit
from gemmmodel.compile import compile_facts
from gemmmodel.compile.facts import MIX_KEYS
from gemmmodel.errors import BadArgument


def add_parser(sub) -> None:
    p = sub.add_parser("compile", help="compile a kernel offline and show registers, LDS, "
                                       "occupancy remark and instruction mix")
    p.add_argument("source", help="HIP/CUDA source file")
    p.add_argument("--gpu", required=True,
                   help="GPU spec name or compile target (gfx906, sm_90, mi100, h100, …)")
    p.add_argument("--define", "-D", action="append", default=[], metavar="K=V",
                   help="preprocessor macro (repeatable)")
    p.add_argument("--entry", help="only this kernel (extern \"C\" name)")
    p.add_argument("--no-cache", action="store_true", help="compile even if cached")
    add_json_flag(p)
    p.set_defaults(func=run)


def parse_defines(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not key or not key.replace("_", "a").isalnum():
            raise BadArgument(f"bad --define {item!r}: expected NAME or NAME=VALUE")
        out[key] = value if sep else None
    return out


def _render(facts: list[dict]) -> str:
    lines = []
    for f in facts:
        if f["vendor"] == "amd":
            regs = f"VGPRs {f['vgprs']}, SGPRs {f['sgprs']}"
            if f["agprs"] is not None:
                regs += f", AGPRs {f['agprs']}"
            occ = f", occupancy {f['occupancy_waves_per_simd']} waves/SIMD (compiler remark)"
        else:
            regs, occ = f"registers {f['regs']}", ""
        lines.append(f"{f['kernel']} on {f['target']}: {regs}, LDS {f['lds_bytes']} B, "
                     f"scratch {f['scratch_bytes']} B, spills {f['spills']}{occ}")
        lines.append(f"  mix from {f['mix_source']}; main loop depth {f['main_loop_depth']}")
        lines.append(f"  {'category':<18}{'kernel':>8}{'loop':>8}")
        for key in MIX_KEYS:
            total, loop = f["mix_total"].get(key, 0), f["mix_loop"].get(key, 0)
            if total or loop:
                lines.append(f"  {key:<18}{total:>8}{loop:>8}")
        lines.append(f"  compiler: {f['compiler']}")
    return "\n".join(lines)


def run(args) -> int:
    facts = compile_facts(args.source, args.gpu, defines=parse_defines(args.define),
                          entry=args.entry, use_cache=not args.no_cache)
    return emit(args, [f.to_dict() for f in facts], _render)
