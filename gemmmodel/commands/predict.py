"""`gemmmodel predict --gpu G|SPEC_FILE --size MxNxK[xB] [--top N] [--json] [--verify]`:
rank the tile template's search space before running anything (gemmmodel.predict).

    gemmmodel predict --gpu h200 --size 4096x4096x4096 --top 5
    gemmmodel predict --gpu gfx906 --size 4096x4096x4096 --compile 20   # compile a shortlist
    gemmmodel predict --gpu h200 --size 4096x4096x4096 --verify         # on the GPU machine
    gemmmodel predict --gpu h200 --size 4608x4608x4608 --neighbours     # + swept shapes' errors
    gemmmodel predict --gpu gfx906 --check-estimator 12                 # store estimate error
    gemmmodel predict --gpu h200 --record-selection                     # issue 8 predictions
"""

from __future__ import annotations

from gemmmodel.commands._common import add_json_flag, emit, progress
from gemmmodel.errors import BadArgument
from gemmmodel.explain_text import moved_text, ms

#: Three-letter tags of predict.SOURCES for the table's regs column (the resources line
#: above the table spells them out).
SOURCE_TAGS = {"device": "dev", "edge build (device)": "edv", "edge table": "edg",
               "batched entry (device)": "bdv",
               "batched table": "btb", "compiler": "cmp", "plain table": "tab",
               "estimate": "est"}


def add_parser(sub) -> None:
    p = sub.add_parser("predict", help="rank tile configs for a GPU and shape without running",
                       description="Rank the tile template's search space for a GPU and a "
                                   "problem shape with the model.")
    p.add_argument("--gpu", required=True, help="GPU spec name, alias or TOML file")
    p.add_argument("--size", help="MxNxK or MxNxKxBATCH (needed to rank)")
    p.add_argument("--top", type=int, default=10, help="configs to show (default 10)")
    p.add_argument("--compile", type=int, default=0, metavar="N",
                   help="compile the N best-ranked configs here (cached) and rank them again "
                        "with the compiler's registers and instruction mix")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default 1)")
    p.add_argument("--verify", action="store_true",
                   help="compile, check and time the top configs on this machine's GPU")
    p.add_argument("--neighbours", action="store_true",
                   help="correct each config's predicted time by the model's error for it at "
                        "the nearest swept shapes of this GPU where it runs the same build, "
                        "plain or bounds-checked (gemmmodel.model.neighbours; "
                        "only on a GPU with committed sweeps; its prequential record: "
                        "gemmmodel selection --posthoc)")
    p.add_argument("--neighbours-from", metavar="GPU",
                   help="the measured-neighbour correction of another GPU of the same "
                        "architecture (its model against its own sweeps) applied to this "
                        "GPU's model: for a GPU with no sweeps of its own")
    p.add_argument("--calib-from", metavar="GPU",
                   help="rank with another calibrated GPU's measurements and fitted "
                        "efficiencies (same architecture; e.g. --gpu h100 --calib-from h200): "
                        "for a GPU with no calibration of its own; its DRAM and clocks stay "
                        "the spec's (gemmmodel.model.calib.transfer_calib)")
    p.add_argument("--check-estimator", type=int, default=0, metavar="N",
                   help="compile N sampled configs, store the register-estimate error in "
                        "calibration/register_estimate.csv and print it")
    p.add_argument("--seed", type=int, default=2026, help="sample seed for --check-estimator")
    p.add_argument("--record-selection", action="store_true",
                   help="record the full ranking at --size S1,S2,… (default: the shapes "
                        "of calibration/<gpu>/template.csv) as selection_predictions.csv")
    add_json_flag(p)
    p.set_defaults(func=run)


def _estimator_line(est: dict | None) -> str:
    if not est:
        return ("register estimate: not checked against a compiler for this target "
                "(gemmmodel predict --check-estimator N)")
    m = est["model"]
    return (f"register estimate ({est['target']}, vs {est['compiler']}, {est['n']} sampled "
            f"configs, seed {est['seed']}, {est['file']}): mean |error| "
            f"{100 * m['mean_abs_error']:.0f}%, bias {100 * m['bias']:+.0f}%, range "
            f"{100 * m['min_error']:+.0f}% .. {100 * m['max_error']:+.0f}%")


def calibration_line(cal: dict | None) -> str:
    """One line: what the ranking's rates and efficiencies rest on."""
    if not cal:
        return "calibration: none"
    if not cal.get("measured_values") and not cal.get("fitted"):
        return ("calibration: none for this GPU: spec rates and the a-priori efficiencies "
                "(gemmmodel.model.calib.DEFAULT_FIT); --calib-from GPU borrows a calibrated "
                "GPU's of the same architecture")
    return (f"calibration: {cal['folder']} ({len(cal.get('measured_values', []))} measured "
            f"values, {'fitted' if cal.get('fitted') else 'a-priori'} efficiencies)")


def track_record_line(rec: dict | None, gpu: str) -> str:
    """One line: the best of the predicted top k as % of the swept best, per k."""
    if not rec:
        return "track record: no pre-registered selection round is committed for any GPU"
    ks = " / ".join(str(r["k"]) for r in rec["per_k"])
    mean = " / ".join(f"{r['mean_pct_of_best']:.1f}" for r in rec["per_k"])
    low = " / ".join(f"{r['min_pct_of_best']:.1f}" for r in rec["per_k"])
    where = rec["gpu"] if rec["same_gpu"] else \
        f"{rec['gpu']}, another GPU: none for {gpu}"
    return (f"track record ({where}; {rec['shapes']} shapes of {len(rec['rounds'])} "
            f"pre-registered rounds, ranked before their sweeps): the fastest of the top "
            f"{ks} ran at mean {mean} % of the swept best (min {low} %); "
            "--verify --top K times the top K here")


def render(res: dict) -> str:
    g, s = res["gpu"], res["shape"]
    t = res["timing_s"]
    shape = f"{s['M']}x{s['N']}x{s['K']}" + (f"x{s['batch']}" if s["batch"] != 1 else "")
    lines = [(f"predict {g['name']} ({g['title']}), shape {shape}: {res['ranked']} of "
              f"{res['configs']} valid configs ranked in {t['rank']:.2f} s "
              f"(+{t['search_space']:.2f} s search space, {t['jobs']} process(es))"),
             "resources: " + ", ".join(f"{n} from {k}" for k, n in res["resources"].items()
                                       if n),
             _estimator_line(res.get("estimator")), calibration_line(res.get("calibration"))]
    if res["compile_errors"]:
        lines.append(f"compile: {len(res['compile_errors'])} failed, first: "
                     f"{res['compile_errors'][0]}")
    nb = res.get("neighbours")
    if nb:
        lines.append(f"measured-neighbour correction: predicted = model x the model's error "
                     + (f"on {nb['from']} " if nb.get("from") else "")
                     + f"for the config at its {nb['neighbours']} nearest swept shapes of the same "
                     f"build (shrink {nb['shrink']:g}), among "
                     f"{', '.join(nb['shapes_used'][:4])}"
                     + (f" and {len(nb['shapes_used']) - 4} more" if len(nb['shapes_used']) > 4
                        else "")
                     + ("; this shape itself was swept and is left out" if nb["swept_here"]
                        else "")
                     + "; not a model term: it explains nothing (its record: gemmmodel "
                       "selection --posthoc)")
    lines.append(f"  {'#':>2} {'config':<30} {'predicted':>10} {'TFLOP/s':>8} "
                 f"{'bottleneck':<10} {'regs':>9} {'blocks/CU':>9}")
    for n, item in enumerate(res["top"], 1):
        regs = f"{item['regs']} {SOURCE_TAGS.get(item['regs_source'], item['regs_source'][:3])}"
        lines.append(f"  {n:>2} {item['name']:<30} {ms(item['predicted_s']):>10} "
                     f"{item['flops'] / 1e12:>8.2f} {item['bottleneck']:<10} {regs:>9} "
                     f"{item['blocks_per_cu']:>9}")
        if "neighbour_factor" in item:
            lines.append(f"     model {ms(item['model_s'])} x {item['neighbour_factor']:.3f} "
                         "(its error at the swept neighbours)")
        if item["equivalent"]:
            more = ", ".join(item["equivalent"][:3])
            extra = f" and {len(item['equivalent']) - 3} more" if len(item["equivalent"]) > 3 \
                else ""
            lines.append(f"     same prediction: {more}{extra}")
        if item.get("versus_next"):
            v = item["versus_next"]
            digits = 4 if v["ratio"] < 1.001 else 3
            if v.get("model_ratio", 1.0) < 1.0:
                lines.append(f"     wins over {v['slower']} ({v['ratio']:.{digits}f}x its time) "
                             f"only by the measured correction; the model alone has it "
                             f"{1 / v['model_ratio']:.3f}x slower: {moved_text(v)}")
            else:
                lines.append(f"     wins over {v['slower']} ({v['ratio']:.{digits}f}x its "
                             f"time): {moved_text(v)}")
        if item.get("verify_status"):
            meas = ms(item.get("measured_s"))
            err = f", error {100 * item['error']:+.1f}%" if item.get("error") is not None else ""
            lines.append(f"     measured {meas} ({item['verify_status']}{err})"
                         + (f": {item['verify_reason']}" if item.get("verify_reason") else ""))
    if "track_record" in res:
        lines.append(track_record_line(res["track_record"], g["name"]))
    if res.get("verify"):
        v = res["verify"]
        lines.append(f"verify on {v['device'].get('name')}: measured order "
                     f"{' < '.join(v['measured_order'])}")
    return "\n".join(lines)


def _render_estimator(rows: list[dict]) -> str:
    from gemmmodel.predict_estimator import summary

    lines = [f"  {'config':<30} {'compiler':>8} {'model':>6} {'rules':>6}"]
    for r in rows:
        lines.append(f"  {r['config']:<30} {r['compiler_regs']:>8} {r['model_estimate']:>6} "
                     f"{r['rules_estimate']:>6}")
    est = summary(rows[0]["target"]) if rows else None
    lines.append(_estimator_line(est))
    if est:
        ru = est["rules"]
        lines.append(f"rules estimate (template validity): mean |error| "
                     f"{100 * ru['mean_abs_error']:.0f}%, bias {100 * ru['bias']:+.0f}%")
    return "\n".join(lines)


def run(args) -> int:
    from gemmmodel.predict import rank, record_predictions, verify
    from gemmmodel.spec import load_spec

    if args.check_estimator:
        from gemmmodel.predict_estimator import check

        rows = check(load_spec(args.gpu), args.check_estimator, args.seed, progress=progress)
        return emit(args, {"rows": rows}, lambda r: _render_estimator(r["rows"]))
    if args.record_selection:
        from gemmmodel.catalogue import parse_size

        shapes = [tuple(parse_size(s, dims=4)) for s in args.size.split(",")] \
            if args.size else None
        path = record_predictions(load_spec(args.gpu).name, shapes)
        return emit(args, {"written": str(path)}, lambda r: f"wrote {r['written']}")
    if not args.size:
        raise BadArgument("--size MxNxK is required to rank configs")
    res = rank(args.gpu, args.size, top=args.top, compile_top=args.compile, jobs=args.jobs,
               neighbours=args.neighbours, progress=progress,
               calib_from=getattr(args, "calib_from", None),
               neighbours_from=getattr(args, "neighbours_from", None))
    if args.verify:
        res = verify(res)
    return emit(args, res, render)
