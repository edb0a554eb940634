"""`gemmmodel selection [--gpu G] [--json]` (also `gemmmodel validate --selection`): how close
the predictor's choice comes to the measured best config of a committed template sweep
(gemmmodel.predict.selection_summary; issue 8)."""

from __future__ import annotations

from gemmmodel.commands._common import add_json_flag, emit


def add_parser(sub) -> None:
    p = sub.add_parser("selection", help="score the predicted tile choice against a sweep",
                       description="Per shape of calibration/<gpu>/template.csv: the measured "
                                   "best config, the predicted choice, top1/top3 percent of "
                                   "best.")
    p.add_argument("--gpu", help="calibrated GPU (default: the calibrated NVIDIA GPU)")
    p.add_argument("--posthoc", action="store_true",
                   help="score selection_sweep.csv: the pre-registered ranking next to a post "
                        "hoc re-ranking with the current model (gemmmodel.model.selection)")
    p.add_argument("--ceiling", action="store_true",
                   help="hindsight diagnostic: refit the fitted parameters to every committed "
                        "sweep and score selection with that in-sample fit next to the "
                        "committed one (gemmmodel.model.ceiling); an upper bound for the "
                        "model's terms, not an accuracy figure")
    add_json_flag(p)
    p.set_defaults(func=run)


def render(res: dict) -> str:
    lines = [f"selection on {res['gpu']} ({res['folder']}): predictions {res['predictions']}"
             + ("; in-sample: the fit's training set includes template configs"
                if res["in_sample"] else "")]
    lines.append(f"  {'shape':<18} {'configs':>7} {'top1 % of best':>14} {'top3 % of best':>14}"
                 f" {'rank of best':>12}  best / predicted choice")
    for r in res["shapes"]:
        lines.append(f"  {r['shape']:<18} {r['configs']:>7} {r['top1_pct_of_best']:>14.1f} "
                     f"{r['top3_pct_of_best']:>14.1f} {r['best_predicted_rank']:>12}  "
                     f"{r['best_config']} / {r['top1_config']}")
    if res["shapes"]:
        lines.append(f"  mean: top1 {res['mean_top1_pct_of_best']:.1f}%, top3 "
                     f"{res['mean_top3_pct_of_best']:.1f}% of the measured best")
    return "\n".join(lines)


def render_posthoc(res: dict) -> str:
    lines = [f"selection sweep on {res['gpu']} ({res['sweep']}); targets: every shape top1 >= "
             f"{res['targets']['top1_pct_of_best_min']:.0f}%, top3 >= "
             f"{res['targets']['top3_pct_of_best_min']:.0f}% of the measured best"]
    for key in res.get("order", ()):
        part = res.get(key)
        if part is None:
            continue
        lines.append(f"  {part['label']}")
        lines.append(f"    {'shape':<18} {'configs':>7} {'top1 %':>7} {'top3 %':>7} "
                     f"{'rank of best':>12}  best / chosen")
        for r in part["shapes"]:
            lines.append(f"    {r['shape']:<18} {r['configs']:>7} {r['top1_pct_of_best']:>7.1f} "
                         f"{r['top3_pct_of_best']:>7.1f} {r['best_predicted_rank']:>12}  "
                         f"{r['best_config']} / {r['top1_config']}")
        if part["shapes"]:
            lines.append(f"    min top1 {part['min_top1_pct_of_best']:.1f}%, mean "
                         f"{part['mean_top1_pct_of_best']:.1f}%; min top3 "
                         f"{part['min_top3_pct_of_best']:.1f}%, mean "
                         f"{part['mean_top3_pct_of_best']:.1f}%")
        alone = part.get("model_only")
        if alone and alone["shapes"]:
            lines.append(f"    the model alone on these shapes: min top1 "
                         f"{alone['min_top1_pct_of_best']:.1f}%, mean "
                         f"{alone['mean_top1_pct_of_best']:.1f}%; min top3 "
                         f"{alone['min_top3_pct_of_best']:.1f}%, mean "
                         f"{alone['mean_top3_pct_of_best']:.1f}%")
        every = part.get("all_shapes")
        if every:
            lines.append(f"    every swept shape ({every['n']}), each left out of its own "
                         f"correction: min top1 {every['min_top1_pct_of_best']:.1f}%, mean "
                         f"{every['mean_top1_pct_of_best']:.1f}% "
                         f"({100 * every['share_top1_at_95']:.0f}% of shapes >= 95%); min top3 "
                         f"{every['min_top3_pct_of_best']:.1f}%, mean "
                         f"{every['mean_top3_pct_of_best']:.1f}% (the model alone: mean top1 "
                         f"{every['model_only']['mean_top1_pct_of_best']:.1f}%)")
        err = part.get("time_error")
        if err and err["n"]:
            lines.append(f"    predicted vs measured time over {err['n']} swept configs: MAPE "
                         f"{100 * err['mape']:.1f}%, median {100 * err['median_ape']:.1f}%, "
                         f"{100 * err['within_10pct']:.0f}% within 10%, "
                         f"{100 * err['within_25pct']:.0f}% within 25%")
    if res.get("resweep"):
        from gemmmodel.model.resweep import render_resweep

        lines.extend(render_resweep(res["resweep"]))
    rec = res.get("shortlist")
    if rec:
        lines.append(f"  the fastest of the recorded top k, every pre-registered shape "
                     f"({rec['shapes']} shapes; gemmmodel.model.shortlist)")
        lines.append(f"    {'k':>4} {'min %':>7} {'mean %':>7} {'>= 95 %':>8} {'>= 98 %':>8}")
        for r in rec["per_k"]:
            lines.append(f"    {r['k']:>4} {r['min_pct_of_best']:>7.1f} "
                         f"{r['mean_pct_of_best']:>7.1f} {100 * r['share_at_95']:>7.0f}% "
                         f"{100 * r['share_at_98']:>7.0f}%")
    return "\n".join(lines)


def render_ceiling(res: dict) -> str:
    lines = [f"selection ceiling on {res['gpu']}: {res['n']} swept timings; in-sample = the "
             f"parameters {', '.join(res['fitted'])} refitted to all of them (hindsight, an "
             "upper bound for the model's terms, not an accuracy figure)"]
    for label in ("committed", "insample"):
        part = res[label]
        params = ", ".join(f"{k} {v:.3g}" for k, v in part["params"].items())
        lines.append(f"  {label:<9} time MAPE {100 * part['time_mape']:.1f}%  ({params})")
    lines.append(f"    {'sweep':<12} {'shapes':>6}  {'top1 min / mean (committed)':>28}  "
                 f"{'top1 min / mean (in-sample)':>28}")
    def pair(part: dict) -> str:
        return f"{part['min_top1_pct_of_best']:>13.1f} / {part['mean_top1_pct_of_best']:<12.1f}"

    for key, fixed in res["committed"]["parts"].items():
        refit = res["insample"]["parts"][key]
        lines.append(f"    {key:<12} {len(fixed['shapes']):>6}  {pair(fixed)}  {pair(refit)}")
    return "\n".join(lines)


def run(args) -> int:
    from gemmmodel.answers_more import default_nvidia
    from gemmmodel.predict import selection_summary
    from gemmmodel.spec import load_spec

    gpu = load_spec(args.gpu).name if getattr(args, "gpu", None) else default_nvidia()
    if getattr(args, "ceiling", False):
        from gemmmodel.model.ceiling import selection_ceiling

        return emit(args, selection_ceiling(gpu), render_ceiling)
    if getattr(args, "posthoc", False):
        from gemmmodel.model.selection import selection_comparison

        return emit(args, selection_comparison(gpu), render_posthoc)
    return emit(args, selection_summary(gpu), render)
