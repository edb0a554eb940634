"""`gemmmodel validate --gpu G [--write-fit] [--json]`: leave-one-kernel-out validation on the
GPU's calibration data and the shipped measured tables (gemmmodel.model.validate).
`--edge-builds`: the held-out checks on device runs P and AY (bounds-checked builds at
tile-multiple shapes) and AZ (edge shapes against their tile-multiple twins), instead
(gemmmodel.model.edge_builds, gemmmodel.model.edge_shapes)."""

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
    p.add_argument("--edge-builds", action="store_true",
                   help="score the stored fit on device runs P and AY (plain and "
                        "bounds-checked builds at tile-multiple shapes) and AZ (edge shapes "
                        "against their tile-multiple twins), timings it was never fitted to "
                        "(gemmmodel.model.edge_builds, edge_shapes)")
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


def render_edge_builds(res: dict) -> str:
    parts = [_render_edge_run(r) for r in res["runs"]]
    if res.get("edge_shapes"):
        parts.append(_render_edge_shapes(res["edge_shapes"]))
    return "\n".join(parts)


def _render_edge_shapes(res: dict) -> str:
    lines = [f"validate {res['gpu']} --edge-builds, run {res['run']}: edge shapes against "
             f"their tile-multiple twins, both as the bounds-checked build ({res['source']}; "
             "never fitted to)"]
    for p in res["pairs"]:
        lines.append(f"  {p['edge_shape']} against {p['twin_shape']}: {p['n']} configs; at "
                     f"the edge shape MAPE={_pct(p['mape'])}  Kendall "
                     f"tau={_num(p['kendall_tau'])}")
        lines.append("    edge cost = ln(t(edge shape) / t(twin)):")
        lines.append(f"    {'buffering':<20} {'n':>4} {'measured':>9} {'model':>7} {'corr':>5} "
                     f"{'rms diff':>9}")
        for g in p["groups"]:
            lines.append(f"    {g['buffering']:<20} {g['n']:>4} "
                         f"{g['measured_edge_cost']:>+9.3f} {g['model_edge_cost']:>+7.3f} "
                         f"{g['correlation']:>5.2f} {g['rms_difference']:>9.3f}")
    return "\n".join(lines)


def _render_edge_run(res: dict) -> str:
    a = res["all"]
    lines = [f"validate {res['gpu']} --edge-builds, run {res['run']}: {res['n_pairs']} "
             f"configs timed as both builds at tile-multiple shapes ({res['source']}; never "
             "fitted to)",
             f"  all {a['n']} timings: MAPE={_pct(a['mape'])}  Kendall "
             f"tau={_num(a['kendall_tau'])}  mean log error={a['mean_log_error']:+.3f}",
             f"    {'buffering':<20} {'build':<7} {'n':>4} {'MAPE':>7} {'mean log':>9} "
             f"{'sd':>6}"]
    for g in res["groups"]:
        lines.append(f"    {g['buffering']:<20} {g['build']:<7} {g['n']:>4} "
                     f"{_pct(g['mape']):>7} {g['mean_log_error']:>+9.3f} "
                     f"{g['sd_log_error']:>6.3f}")
    lines.append("  EDGE=1 over EDGE=0 (log ratio):")
    lines.append(f"    {'buffering':<8} {'shape':<16} {'n':>4} {'measured':>9} {'model':>7} "
                 f"{'corr':>5} {'rms diff':>9}")
    for r in res["ratios"]:
        lines.append(f"    {r['buffering']:<8} {r['shape']:<16} {r['n']:>4} "
                     f"{r['measured_log_ratio']:>+9.3f} {r['model_log_ratio']:>+7.3f} "
                     f"{r['correlation']:>5.2f} {r['rms_difference']:>9.3f}")
    lines.append("  EDGE=1 double buffers (register-staged) by warps per scheduler w:")
    lines.append(f"    {'w':>3} {'n':>4} {'mean log':>9} {'overlap loss share':>19}")
    for r in res["register_double_by_w"]:
        lines.append(f"    {r['w']:>3g} {r['n']:>4} {r['mean_log_error']:>+9.3f} "
                     f"{_pct(r['overlap_loss_share']):>19}")
    return "\n".join(lines)


def run(args) -> int:
    from gemmmodel.model.validate import validate_gpu

    if args.selection:
        from gemmmodel.commands import selection

        return selection.run(args)
    if not args.gpu:
        from gemmmodel.errors import BadArgument

        raise BadArgument("--gpu is required (or --selection)")
    if args.edge_builds:
        from gemmmodel.model.edge_builds import edge_build_checks

        return emit(args, edge_build_checks(args.gpu), render_edge_builds)
    res = validate_gpu(args.gpu, write=args.write_fit, fit_shapes=args.fit_shapes)
    return emit(args, res, render)
