"""Selection on the issue-8 sweep: the pre-registered ranking and a post hoc re-ranking.

Data (calibration/<gpu>/, read-only here):
  selection_sweep.csv        every search-space config timed at each selection shape
                             (gpu, shape, config, median_s, ..., error); rows with an error
                             or no time are left out.
  selection_predictions.csv  the ranking the model made BEFORE the sweep ran (shape, rank,
                             config, predicted_s, bottleneck) and its .json (date, commit).
                             This is the pre-registered result; nothing here rewrites it.
Scores per shape (only configs both ranked and measured compete):
  top1_pct_of_best = 100 * best measured s / measured s of the config ranked first
  top3_pct_of_best = 100 * best measured s / best measured s among the first three
(100 = the measured best was picked). Ties in a ranking keep the recorded order
(pre-registered) or the config name order (post hoc).

`posthoc`: the same shapes re-ranked NOW with the current model and calibration/<gpu>/
fit.json. The model was changed after this sweep was seen, so these numbers are hindsight:
every output carries POSTHOC_LABEL. The pre-registered numbers are the honest ones.
`time_error`: predicted times against the swept ones (MAPE, median, share within 10 /
25 %): for each held-out round the times recorded with its ranking (before the sweep), and
the current model's post hoc; no fit has used the held-out rounds' timings.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from gemmmodel.compile.table import template_facts
from gemmmodel.errors import BadArgument, GemmModelError
from gemmmodel.model.selection_transfer import (
    TRANSFER_RECORD_PREFIX,
    transfer_parts,
    transfer_records,
)

SWEEP_FILE = "selection_sweep.csv"
RECORD_FILE = "selection_predictions.csv"
#: The ranking of `predict --neighbours` recorded with a round (gemmmodel.model.neighbours).
NEIGHBOUR_RECORD_FILE = "selection_predictions_neighbours.csv"
#: Run L (tools/device/run_l.sh): the search space at low-occupancy square launches; not a
#: selection round (nothing was ranked before it), scored post hoc like the others.
OCCUPANCY_FILE = "occupancy_sweep.csv"
RECORD_META = "selection_predictions.json"
#: A later round: shapes never swept or fitted before, ranked (tools/record_predictions.py
#: --round heldout) before their sweep (tools/device/acceptance.py sweep --sweep-file …) ran.
HELDOUT_ROUND = "heldout"
#: Every later round, in the order they were recorded (each ranked before its own sweep).
#: The number of the last one: add a round by raising it once its ranking is committed.
LAST_HELDOUT_ROUND = 83
HELDOUT_ROUNDS = (HELDOUT_ROUND,
                  *(f"{HELDOUT_ROUND}{i}" for i in range(2, LAST_HELDOUT_ROUND + 1)))
POSTHOC_LABEL = "post hoc: the model was changed after seeing this sweep"
#: The post hoc label of a GPU that had no calibration of its own when its first ranking was
#: recorded (the H100): what changed since is its calibration, measured after the sweep.
POSTHOC_OWN_LABEL = ("post hoc: the GPU's own calibration, measured after this sweep "
                     "(fit.json: its kernels.csv + template.csv, not the sweep)")
TARGETS = {"top1_pct_of_best_min": 95.0, "top3_pct_of_best_min": 98.0}
SHAPE_KEYS = ("shape", "configs", "best_config", "best_s", "top1_config", "top1_s",
              "top1_pct_of_best", "top3_pct_of_best", "best_predicted_rank")


def _shape(text: str) -> tuple[int, int, int, int]:
    vals = tuple(int(x) for x in str(text).lower().split("x"))
    if len(vals) == 3:
        vals += (1,)
    if len(vals) != 4 or min(vals) < 1:
        raise BadArgument(f"bad shape {text!r} in the selection files")
    return vals


def shape_text(shape) -> str:
    m, n, k, b = shape
    return f"{m}x{n}x{k}" + (f"x{b}" if b != 1 else "")


def _round_file(name: str, round_: str) -> str:
    stem, dot, ext = name.rpartition(".")
    return f"{stem}_{round_}.{ext}" if round_ else name


def _round_rows(folder: Path, name: str, round_: str, what: str):
    """The rows of calibration file `name` for `round_` (BadArgument if it is missing)."""
    path = Path(folder) / _round_file(name, round_)
    if not path.is_file():
        raise BadArgument(f"no {what}: {path} is missing")
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _times(rows, column: str) -> dict:
    """{(config, shape): positive float of `column`}; rows with an error or no value are
    left out."""
    out = {}
    for row in rows:
        text = (row.get(column) or "").strip()
        if (row.get("error") or "").strip() or not text or float(text) <= 0:
            continue
        out[(row["config"].strip(), _shape(row["shape"]))] = float(text)
    return out


def sweep_measured(folder: Path, round_: str = "") -> dict:
    """{(config, (M, N, K, batch)): median measured s} of selection_sweep[_<round>].csv."""
    return _times(_round_rows(folder, SWEEP_FILE, round_, "selection sweep"), "median_s")


def occupancy_measured(folder: Path) -> dict:
    """{(config, shape): median s} of the low-occupancy sweep (OCCUPANCY_FILE, run L)."""
    return _times(_round_rows(folder, OCCUPANCY_FILE, "", "occupancy sweep"), "median_s")


def sweep_file(part: str) -> str:
    """The file name of an all_sweeps() part ("first", a held-out round, "occupancy")."""
    if part == "first":
        return SWEEP_FILE
    return OCCUPANCY_FILE if part == "occupancy" else _round_file(SWEEP_FILE, part)


def all_sweeps(folder: Path) -> dict[str, dict]:
    """{part: {(config, shape): median s}} for every sweep file present under `folder`: the
    first selection round ("first"), each held-out round of HELDOUT_ROUNDS, and the
    low-occupancy sweep ("occupancy")."""
    parts = {}
    for part in ("first",) + HELDOUT_ROUNDS + ("occupancy",):
        if (Path(folder) / sweep_file(part)).is_file():
            parts[part] = (occupancy_measured(folder) if part == "occupancy" else
                           sweep_measured(folder, "" if part == "first" else part))
    return parts


def committed_rounds(folder: Path) -> list[str]:
    """The rounds ("" = the first, then HELDOUT_ROUNDS in order) whose ranking and sweep
    are both committed in `folder`."""
    folder = Path(folder)
    return [r for r in ("", *HELDOUT_ROUNDS)
            if (folder / _round_file(RECORD_FILE, r)).is_file()
            and (folder / _round_file(SWEEP_FILE, r)).is_file()]


def preregistered(folder: Path, round_: str = "", name: str = RECORD_FILE) -> tuple[dict, dict]:
    """({(config, shape): recorded rank}, metadata) of the pre-registered ranking (`name`:
    RECORD_FILE, the model's, or NEIGHBOUR_RECORD_FILE)."""
    rows = _round_rows(folder, name, round_, "pre-registered ranking")
    ranks = {(row["config"].strip(), _shape(row["shape"])): int(row["rank"]) for row in rows}
    meta_path = Path(folder) / _round_file(RECORD_META, round_)
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    return ranks, meta


def recorded_times(folder: Path, round_: str = "", name: str = RECORD_FILE) -> dict:
    """{(config, shape): predicted s} as recorded with the pre-registered ranking (rows
    without a time are left out)."""
    return _times(_round_rows(folder, name, round_, "pre-registered ranking"), "predicted_s")


def ranked_shapes(measured: dict, order_key: dict):
    """(shape, configs ranked by `order_key`) per shape of `measured`, shapes sorted; configs
    without a key are left out, shapes without any are skipped."""
    for shape in sorted({s for _, s in measured}):
        names = sorted(n for n, s in measured if s == shape and (n, s) in order_key)
        if names:
            yield shape, sorted(names, key=lambda n: (order_key[(n, shape)], n))


def score(measured: dict, order_key: dict) -> list[dict]:
    """Per shape: the measured best, the ranked choice and the top1/top3 scores (module doc).
    `order_key` maps (config, shape) to a sort key (smaller = predicted faster)."""
    rows = []
    for shape, ranked in ranked_shapes(measured, order_key):
        names = sorted(ranked)
        best = min(names, key=lambda n: measured[(n, shape)])
        t_best = measured[(best, shape)]
        rows.append({"shape": shape_text(shape), "configs": len(names),
                     "best_config": best, "best_s": t_best,
                     "top1_config": ranked[0], "top1_s": measured[(ranked[0], shape)],
                     "top1_pct_of_best": 100.0 * (t_best / measured[(ranked[0], shape)]),
                     "top3_pct_of_best": 100.0 * (t_best / min(measured[(n, shape)]
                                                               for n in ranked[:3])),
                     "best_predicted_rank": ranked.index(best) + 1})
    return rows


def summary(rows: list[dict]) -> dict:
    """Min and mean of the per-shape scores and whether every shape meets TARGETS."""
    if not rows:
        return {"min_top1_pct_of_best": None, "mean_top1_pct_of_best": None,
                "min_top3_pct_of_best": None, "mean_top3_pct_of_best": None,
                "meets_targets": False}
    out = {}
    for key in ("top1_pct_of_best", "top3_pct_of_best"):
        vals = [r[key] for r in rows]
        out[f"min_{key}"] = min(vals)
        out[f"mean_{key}"] = sum(vals) / len(vals)
    out["meets_targets"] = (out["min_top1_pct_of_best"] >= TARGETS["top1_pct_of_best_min"]
                            and out["min_top3_pct_of_best"] >= TARGETS["top3_pct_of_best_min"])
    return out


def time_error(measured: dict, predicted: dict) -> dict:
    """How close the predicted times are to the swept ones, over every (config, shape) with
    both: MAPE = mean |pred - meas| / meas, the median of that ratio, the share of rows
    within 10 % and 25 %, and the rows' count. With the post hoc predictions of held-out
    rounds this is an accuracy figure on data no fit has used (calibration/<gpu>/fit.json
    names its training set)."""
    errs = sorted(abs(predicted[k] - t) / t for k, t in measured.items()
                  if k in predicted and t > 0)
    if not errs:
        return {"n": 0, "mape": None, "median_ape": None, "within_10pct": None,
                "within_25pct": None}
    n = len(errs)
    mid = errs[n // 2] if n % 2 else 0.5 * (errs[n // 2 - 1] + errs[n // 2])
    return {"n": n, "mape": sum(errs) / n, "median_ape": mid,
            "within_10pct": sum(e <= 0.10 for e in errs) / n,
            "within_25pct": sum(e <= 0.25 for e in errs) / n}


def swept_components(folder: Path, spec, keys, calib) -> dict:
    """{(config, shape): Components} of the model for swept template configs, with the
    committed compile tables and the registers per thread the GPU's compiler reported for
    each config; configs the model cannot assemble are left out."""
    from gemmmodel.calibrate.load import load
    from gemmmodel.model import assemble
    from gemmmodel.model.samples import template_registers
    from gemmmodel.template import parse_name

    folder = Path(folder)
    regs = template_registers(load(folder.name, folder.parent))
    wave = int(spec.wave_size)
    out = {}
    for name, shape in keys:
        try:
            cfg = parse_name(name)
            facts = template_facts(cfg, spec, regs.get(cfg.name), shape)
            out[(name, shape)] = assemble(cfg.params(wave), facts, spec, shape, calib)
        except GemmModelError:
            continue
    return out


def posthoc_predictions(folder: Path, spec, keys) -> dict:
    """{(config, shape): predicted s} with the current model, calibration and fit
    (swept_components, combined as predict_kernel does)."""
    from gemmmodel.model import load_calib, predict_components
    from gemmmodel.model.assemble import normalise_shape

    folder = Path(folder)
    calib = load_calib(folder.name, folder.parent)
    return {(name, shape): predict_components(comp, normalise_shape(shape), calib).time_s
            for (name, shape), comp in swept_components(folder, spec, keys, calib).items()}


def selection_comparison(gpu: str, root=None) -> dict:
    """The tables for calibration/<gpu>/, in res["order"]: the first round's pre-registered
    ranking (as recorded) and its post hoc re-ranking with the current model
    (selection_sweep.csv); each held-out round of HELDOUT_ROUNDS that has both files, as
    recorded; every pre-registered shape together; the current model on the held-out
    shapes (post hoc); the neighbour correction prequential (`neighbours`) and, on the
    first round's shapes with every other swept shape as a neighbour, `neighbours_loso`.
    `shortlist`: the best of the recorded top k per k over every pre-registered shape
    (gemmmodel.model.shortlist). `resweep`: how repeatable the sweeps are, where shapes were
    swept twice (gemmmodel.model.resweep; None without the re-sweep file)."""
    from gemmmodel.model.calib import calibration_name, fit_path
    from gemmmodel.model.neighbours import (  # it imports this module
        leave_one_shape_out_record,
        prequential_record,
    )
    from gemmmodel.model.resweep import RESWEEP_FILE, resweep_agreement  # it imports this module
    from gemmmodel.model.shortlist import best_of_top, summarise  # it imports this module
    from gemmmodel.spec import load_spec

    spec = load_spec(gpu)
    folder = fit_path(calibration_name(gpu, root), root).parent
    measured = sweep_measured(folder)
    ranks, meta = preregistered(folder)
    pre_rows = score(measured, ranks)
    short_rows = best_of_top(measured, ranks)
    preds = posthoc_predictions(folder, spec, list(measured))
    post_rows = score(measured, preds)
    fit_file = folder / "fit.json"
    fit = json.loads(fit_file.read_text()) if fit_file.is_file() else {}
    parts = {"preregistered": {"label": "pre-registered: ranking recorded before the sweep",
                               "file": RECORD_FILE, "meta": meta, "shapes": pre_rows,
                               **summary(pre_rows),
                               "time_error": time_error(measured, recorded_times(folder))},
             "posthoc": {"label": POSTHOC_LABEL, "fit_training_set": fit.get("training_set", []),
                         "fit_source": fit.get("source", ""), "shapes": post_rows,
                         **summary(post_rows), "time_error": time_error(measured, preds)}}
    parts.update(transfer_parts(folder, measured))
    if meta and meta.get("fit_json_sha256") is None:
        # a GPU that had no calibration when its ranking was recorded: the post hoc part
        # is its own calibration measured after the sweep, not a changed model
        parts["preregistered"]["label"] += (" (no calibration of this GPU then: spec rates "
                                            "and the a-priori efficiencies)")
        parts["posthoc"]["label"] = POSTHOC_OWN_LABEL
    order = ["preregistered", *[k for k in parts if k.startswith("preregistered_from_")],
             "posthoc"]
    parts = {k: parts[k] for k in order}
    held_measured, in_order = {}, [("first", measured)]
    swept_preds = dict(preds)     # the current model on every swept (config, shape)
    for round_ in [r for r in committed_rounds(folder) if r]:
        h_ranks, h_meta = preregistered(folder, round_)
        h_measured = sweep_measured(folder, round_)
        held_measured.update(h_measured)
        in_order.append((round_, h_measured))
        h_rows = score(h_measured, h_ranks)
        short_rows += best_of_top(h_measured, h_ranks)
        parts[round_] = {"label": f"pre-registered, held-out round {round_} (recorded at "
                                  f"{str(h_meta.get('commit_before_recording', '?'))[:7]}): "
                                  "ranked before its sweep, shapes never swept or fitted before",
                         "file": _round_file(RECORD_FILE, round_), "meta": h_meta,
                         "shapes": h_rows, **summary(h_rows),
                         "time_error": time_error(h_measured,
                                                  recorded_times(folder, round_))}
        parts.update(transfer_parts(folder, h_measured, round_))
        if (folder / _round_file(NEIGHBOUR_RECORD_FILE, round_)).is_file():
            n_ranks, _ = preregistered(folder, round_, NEIGHBOUR_RECORD_FILE)
            n_rows = score(h_measured, n_ranks)
            how = (f"predict --neighbours-from {h_meta['neighbours_from']}: that GPU's "
                   "measured neighbours on this GPU's model" if h_meta.get("neighbours_from")
                   else "predict --neighbours")
            parts[f"{round_}_neighbours"] = {
                "label": f"pre-registered, held-out round {round_}: the measured-neighbour "
                         f"ranking ({how}) recorded with it, before its sweep",
                "file": _round_file(NEIGHBOUR_RECORD_FILE, round_), "shapes": n_rows,
                **summary(n_rows),
                "time_error": time_error(h_measured, recorded_times(
                    folder, round_, NEIGHBOUR_RECORD_FILE))}
    if held_measured:
        honest = [r for key in ("preregistered", *HELDOUT_ROUNDS) if key in parts
                  for r in parts[key]["shapes"]]
        parts["all_preregistered"] = {
            "label": "every pre-registered shape (first and held-out rounds, each scored with "
                     "the ranking recorded before its sweep)", "shapes": honest,
            **summary(honest)}
        h_preds = posthoc_predictions(folder, spec, list(held_measured))
        h_post = score(held_measured, h_preds)
        parts["posthoc_heldout"] = {"label": "post hoc: the current model on every held-out "
                                             "shape (hindsight for rounds recorded before its "
                                             "last change)",
                                    "shapes": h_post, **summary(h_post),
                                    "time_error": time_error(held_measured, h_preds)}
        swept_preds.update(h_preds)
        rec = prequential_record(in_order, swept_preds)
        parts["neighbours"] = {
            "label": f"measured-neighbour correction, prequential (gemmmodel.model.neighbours: "
                     f"each round corrected with the {rec['neighbours']} nearest shapes of the "
                     "rounds swept before it; the current model, so hindsight as above)",
            **rec}
    if (folder / OCCUPANCY_FILE).is_file():
        o_measured = occupancy_measured(folder)
        o_preds = posthoc_predictions(folder, spec, list(o_measured))
        o_rows = score(o_measured, o_preds)
        parts["occupancy"] = {"label": "post hoc, not a selection round: the low-occupancy "
                                       f"sweep ({OCCUPANCY_FILE}, run L)",
                              "shapes": o_rows, **summary(o_rows),
                              "time_error": time_error(o_measured, o_preds)}
        in_order.append(("occupancy", o_measured))
        swept_preds.update(o_preds)
    if held_measured:
        loso = leave_one_shape_out_record(in_order, swept_preds)
        issue = [r for r in loso["shapes"] if r["round"] == "first"]
        alone = [r for r in loso["model_only"]["shapes"] if r["round"] == "first"]
        everywhere = loso["shapes"]
        parts["neighbours_loso"] = {
            "label": f"measured-neighbour correction on the issue's shapes, each left out of "
                     f"its own correction (the {loso['neighbours']} nearest of every other "
                     "swept shape, later rounds included: hindsight, as predict --neighbours "
                     "at a swept shape)",
            "neighbours": loso["neighbours"], "shrink": loso["shrink"],
            "shapes": issue, **summary(issue),
            "model_only": {"shapes": alone, **summary(alone)},
            "all_shapes": {"n": len(everywhere), **summary(everywhere),
                           "share_top1_at_95": sum(r["top1_pct_of_best"] >= 95.0
                                                   for r in everywhere) / len(everywhere),
                           "model_only": {k: v for k, v in loso["model_only"].items()
                                          if k != "shapes"}}}
    return {"gpu": spec.name, "folder": str(folder), "sweep": SWEEP_FILE,
            "targets": TARGETS, "order": list(parts), **parts,
            "shortlist": {"shapes": len(short_rows), "per_k": summarise(short_rows)},
            "resweep": (resweep_agreement(folder) if (folder / RESWEEP_FILE).is_file()
                        else None)}


__all__ = ["HELDOUT_ROUNDS", "NEIGHBOUR_RECORD_FILE", "OCCUPANCY_FILE", "POSTHOC_LABEL",
           "POSTHOC_OWN_LABEL", "TRANSFER_RECORD_PREFIX", "transfer_records",
           "SHAPE_KEYS", "TARGETS", "all_sweeps", "committed_rounds", "occupancy_measured",
           "posthoc_predictions", "preregistered", "ranked_shapes", "recorded_times", "score",
           "selection_comparison", "summary", "sweep_file", "swept_components",
           "sweep_measured", "time_error"]
