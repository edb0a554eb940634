"""`gemmmodel explain --kernel ID [--gpu G] [--size MxNxK[xB]] [--json]` and
`gemmmodel explain --compare A B [...]`: the model's explanation of kernels
(gemmmodel.explain; text from gemmmodel.explain_text)."""

from __future__ import annotations

from gemmmodel.commands._common import add_json_flag, emit
from gemmmodel.errors import BadArgument


def add_parser(sub) -> None:
    p = sub.add_parser("explain", help="explain a kernel: resources, term tree, measured vs "
                                       "predicted, the step from its parent",
                       description="Explain one kernel (--kernel) or compare several "
                                   "(--compare). Defaults: --gpu mi100-1472 (the seed "
                                   "table's MI100 at 1472 MHz), --size 4096x4096x4096.")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--kernel", metavar="ID", help="catalogue id, alias or tile config name")
    what.add_argument("--compare", nargs="+", metavar="ID",
                      help="two or more kernels or tile configs side by side")
    p.add_argument("--gpu", help="GPU spec name, alias or TOML file (default mi100-1472)")
    p.add_argument("--size", help="MxNxK or MxNxKxBATCH (default 4096x4096x4096)")
    p.add_argument("--depth", type=int, default=3, help="term tree levels to print (text)")
    p.add_argument("--no-compile", action="store_true",
                   help="never run a compiler: use compile-fact tables or the estimate")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from gemmmodel.explain import compare, explain_kernel
    from gemmmodel.explain_text import render_compare, render_explain

    if args.depth < 1:
        raise BadArgument("--depth must be >= 1")
    allow = not args.no_compile
    if args.compare:
        res = compare(args.compare, args.gpu, args.size, allow_compile=allow)
        return emit(args, res, render_compare)
    res = explain_kernel(args.kernel, args.gpu, args.size, allow_compile=allow)
    return emit(args, res, lambda r: render_explain(r, args.depth))
