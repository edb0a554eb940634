"""`gemmmodel validate --gpu G [--write-fit] [--json]`: leave-one-kernel-out validation on the
GPU's calibration data and the shipped measured tables (gemmmodel.model.validate)."""

from __future__ import annotations

from gemmmodel.commands._common import add_json_flag, emit


def add_parser(sub) -> None:
    p = sub.add_parser("validate", help="validate the model against measured kernel times")
    p.add_argument("--gpu", help="GPU spec name or alias (e.g. h200, gfx908)")
    p.add_argument("--fit-shapes", type=lambda t: t.split(","), default=None,
                   metavar="MxNxK,…", help="with --write-fit: fit only samples of these shapes")
    p.add_argument("--write-fit", action="store_true",
                   help="store the fit on all calibrated kernels as calibration/<gpu>/fit.json")
    p.add_argument("--selection", action="store_true",
                   help="score the predicted tile choice against the template sweep "
                        "(gemmmodel.commands.selection; default GPU: the calibrated NVIDIA one)")
    add_json_flag(p)
    p.set_defaults(func=run)


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _num(x, fmt="{:.3f}") -> str:
    return "-" if x is None else fmt.format(x)


def render(res: dict) -> str:
    lines = [f"validate {res['gpu']}: {res['method']}",
             (f"  n={res['n']}  MAPE={_pct(res['mape'])}  max error={_pct(res['max_error'])}  "
              f"Kendall tau={_num(res['kendall_tau'])}  "
              f"Spearman rho={_num(res['spearman_rho'])}")]
    disc = res.get("discordance")
    if disc and disc.get("pairs"):
        lines.append(f"  Kendall tau's discordant pairs: {disc['discordant']} of {disc['pairs']} "
                     f"({disc['within']} within a shape, {disc['cross']} across shapes)")
        lines.append(f"    {'shape':<18} {'n':>4} {'tau':>6} {'within':>7} {'cross':>7} "
                     f"{'tau if exact':>13}")
        for row in disc["by_shape"]:
            lines.append(f"    {row['shape']:<18} {row['n']:>4} {_num(row['tau']):>6} "
                         f"{row['within']:>7} {row['cross']:>7} "
                         f"{_num(row['tau_if_exact'], '{:.4f}'):>13}")
    if res.get("per_kernel"):
        lines.append("  per kernel (worst first):")
        lines.append(f"    {'kernel':<28} {'n':>3} {'MAPE':>8} {'max':>8}")
        for row in res["per_kernel"]:
            lines.append(f"    {row['kernel']:<28} {row['n']:>3} {_pct(row['mape']):>8} "
                         f"{_pct(row['max_error']):>8}")
    for tab in res.get("tables", []):
        lines.append(f"  table {tab['table']} on {tab.get('spec', '?')} (no fitting): "
                     f"n={tab['n']} Spearman rho={_num(tab['spearman_rho'])} "
                     f"MAPE={_pct(tab['mape'])} "
                     f"(compile facts for {tab.get('with_compile_facts', 0)} kernels)")
        lines.append(f"    {'kernel':<8} {'measured ms':>12} {'predicted ms':>13} {'error':>8}")
        for row in tab["rows"]:
            lines.append(f"    {row['kernel']:<8} {1e3 * row['measured_s']:>12.3f} "
                         f"{1e3 * row['predicted_s']:>13.3f} {_pct(row['error']):>8}")
    for tr in res.get("fit_transfer", []):
        lines.append(f"  with {tr['from']}'s stored fit (no refit, this GPU's measured rates): "
                     f"n={tr['n']}  MAPE={_pct(tr['mape'])}  max error="
                     f"{_pct(tr['max_error'])}  Kendall tau={_num(tr['kendall_tau'])}")
    if res.get("fit"):
        fit = res["fit"]
        params = ", ".join(f"{k}={v:.3g}" for k, v in fit["params"].items())
        lines.append(f"  fit on all {fit['n']} samples: {params}")
    if res.get("fit_path"):
        lines.append(f"  wrote {res['fit_path']}")
    return "\n".join(lines)


def run(args) -> int:
    from gemmmodel.model.validate import validate_gpu

    if args.selection:
        from gemmmodel.commands import selection

        return selection.run(args)
    if not args.gpu:
        from gemmmodel.errors import BadArgument

        raise BadArgument("--gpu is required (or --selection)")
    res = validate_gpu(args.gpu, write=args.write_fit, fit_shapes=args.fit_shapes)
    return emit(args, res, render)
