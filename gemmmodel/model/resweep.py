"""How repeatable a template sweep is: the same shapes swept a second time (issue 8).

Device run AF (tools/device/run_af.sh) timed every search-space config again at shapes of
earlier held-out rounds, in reverse search-space order and with fresh random inputs
(RESWEEP_FILE). Against the first sweep of the same shape this gives, per shape:

    shift         = median over configs of ln(t_second / t_first)          [log]
    dev(config)   = ln(t_second / t_first) - shift                         [log]
    moved_share   = share of configs with |dev| > MOVED_LOG                [1]
    oracle top1   = 100 · best_second / t_second(best config of the first)  [%]
    oracle top3   = 100 · best_second / min t_second(first's three fastest) [%]

and the same with the two sweeps swapped. The oracle scores are what a predictor that knew
one sweep exactly would score against the other: the measurement's own ceiling for the
issue's "top1 >= 95 % on every shape". Nothing here is fitted.

Runs AG-AI found the cause of the batched launches' moves: the sweeps held the device only
60 us ahead of each timed launch, and enqueuing a batched launch from Python takes 55-114 us
at the 90th percentile, so in stretches the events timed the host. With the 1 ms minimum
hold (gemmmodel.runtime.runner.hold_for) two sweeps of six such shapes in a row
(selection_resweep_ai1.csv, _ai2.csv; `agreement`) moved 0-1.6 % of their configs.

That hold was still too short for the three batched shapes whose launches run under 15 us:
groups of ~50 launches took the host ~3 ms to enqueue behind 1-1.6 ms, and run AJ's
re-timing of them came back noisy (64x64x32x30: half its configs). Run AK timed them with
the checked hold (runner.HeldTimer) twice in a row (selection_resweep_ak1.csv, _ak2.csv:
0-2.4 % moved, oracle top1 100 %), and ten more batched shapes of 16-31 us once
(selection_resweep_ak3.csv), where it agrees with run AJ (<= 1.3 % moved)."""

from __future__ import annotations

import math
from pathlib import Path

from gemmmodel.model.selection import (
    _round_rows,
    _times,
    all_sweeps,
    committed_rounds,
    preregistered,
    score,
    shape_text,
    summary,
    sweep_measured,
)

RESWEEP_FILE = "selection_resweep_af.csv"
#: Every batched shape of the committed sweeps timed again: run AJ (the 1 ms hold), then run
#: AK's first sweep and its ten 16-31 us shapes (the checked hold), which replace AJ's times
#: of the same shapes (later files win).
RETIMED_FILES = ("selection_resweep_aj1.csv", "selection_resweep_aj2.csv",
                 "selection_resweep_ak1.csv", "selection_resweep_ak3.csv")
#: |ln(t_second / t_first) - shift| above this counts a config as moved (5 %)
MOVED_LOG = math.log(1.05)


def _median(vals: list[float]) -> float:
    vals = sorted(vals)
    n = len(vals)
    return vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2])


def _group(rows: list[dict]) -> dict:
    """Mean and min oracle scores (both directions) and the mean and max moved share of
    `rows`."""
    if not rows:
        return {"shapes": 0}
    out = {"shapes": len(rows)}
    for key in ("oracle_top1_pct", "oracle_top3_pct"):
        vals = [r[key] for r in rows] + [r[f"{key}_swapped"] for r in rows]
        out[f"mean_{key}"] = sum(vals) / len(vals)
        out[f"min_{key}"] = min(vals)
    moved = [r["moved_share"] for r in rows]
    out["mean_moved_share"] = sum(moved) / len(moved)
    out["max_moved_share"] = max(moved)
    return out


def agreement(first: dict, second: dict, source: dict | None = None) -> dict:
    """The repeatability (module doc) of two sweeps {(config, shape): s} over the (config,
    shape) pairs they share; `source` names each shape's first sweep where known."""
    keys = set(first) & set(second)
    first = {k: first[k] for k in keys}
    second = {k: second[k] for k in keys}
    fwd = {r["shape"]: r for r in score(second, first)}    # first's ranking, judged by second
    back = {r["shape"]: r for r in score(first, second)}   # and the other way round
    rows = []
    for shape in sorted({s for _, s in keys}):
        logs = {c: math.log(second[(c, s)] / first[(c, s)]) for c, s in keys if s == shape}
        shift = _median(list(logs.values()))
        moved = sum(abs(v - shift) > MOVED_LOG for v in logs.values()) / len(logs)
        text = shape_text(shape)
        rows.append({"shape": text, "first_sweep": (source or {}).get(shape, ""),
                     "batched": shape[3] > 1, "configs": len(logs), "shift_log": shift,
                     "moved_share": moved,
                     "best_first": back[text]["best_config"],
                     "best_second": fwd[text]["best_config"],
                     "oracle_top1_pct": fwd[text]["top1_pct_of_best"],
                     "oracle_top3_pct": fwd[text]["top3_pct_of_best"],
                     "oracle_top1_pct_swapped": back[text]["top1_pct_of_best"],
                     "oracle_top3_pct_swapped": back[text]["top3_pct_of_best"]})
    return {"n": len(keys), "moved_log": MOVED_LOG, "shapes": rows,
            "first_judged_by_second": summary(list(fwd.values())),
            "second_judged_by_first": summary(list(back.values())),
            "batched": _group([r for r in rows if r["batched"]]),
            "single": _group([r for r in rows if not r["batched"]])}


def read_sweep(folder: Path, name: str) -> dict:
    """{(config, shape): median s} of sweep file `name` under `folder` (BadArgument if it
    is missing)."""
    return _times(_round_rows(folder, name, "", "re-sweep"), "median_s")


def first_sweeps(folder: Path, keys) -> tuple[dict, dict]:
    """({(config, shape): s} of the first committed sweep (all_sweeps order) of each shape
    among `keys`, {shape: that sweep's part name})."""
    keys = set(keys)
    first: dict = {}
    source: dict = {}
    for part, measured in all_sweeps(folder).items():
        for (config, shape), t in measured.items():
            if (config, shape) in keys and (config, shape) not in first:
                if source.setdefault(shape, part) == part:
                    first[(config, shape)] = t
    return first, source


def resweep_agreement(folder: Path, name: str = RESWEEP_FILE) -> dict:
    """The repeatability (module doc) of re-sweep file `name` against the first committed
    sweep of each of its shapes. BadArgument if the file is missing."""
    second = read_sweep(folder, name)
    first, source = first_sweeps(folder, second)
    return {"file": name, **agreement(first, second, source)}


def retimed_selection(folder: Path, names=RETIMED_FILES) -> dict:
    """Every pre-registered ranking of `folder` (committed_rounds) scored at the shapes the
    re-timed sweep files `names` hold, against the round's own sweep ("recorded") and
    against the re-timed one ("retimed"); and over every pre-registered shape with those
    shapes' times replaced ("all_recorded", "all_retimed")."""
    retimed: dict = {}
    for name in names:
        retimed.update(read_sweep(folder, name))
    shapes = {s for _, s in retimed}
    rec, new, all_rec, all_new = [], [], [], []
    for round_ in committed_rounds(folder):
        ranks, _ = preregistered(folder, round_)
        measured = sweep_measured(folder, round_)
        mine = {s for _, s in measured} & shapes
        texts = {shape_text(s) for s in mine}
        rows = score(measured, ranks)
        all_rec += rows
        rec += [r for r in rows if r["shape"] in texts]
        swapped = {k: v for k, v in measured.items() if k[1] not in mine}
        swapped.update({k: v for k, v in retimed.items() if k[1] in mine})
        rows = score(swapped, ranks)
        all_new += rows
        new += [r for r in rows if r["shape"] in texts]
    return {"files": list(names), "n": len(retimed), "shapes": len(rec),
            "recorded": summary(rec), "retimed": summary(new),
            "all_recorded": {"shapes": len(all_rec), **summary(all_rec)},
            "all_retimed": {"shapes": len(all_new), **summary(all_new)}}


def render_resweep(res: dict) -> list[str]:
    """Text lines for `gemmmodel selection --posthoc`."""
    a, b = res["first_judged_by_second"], res["second_judged_by_first"]
    lines = [f"  repeatability: {len(res['shapes'])} shapes swept twice ({res['file']}, "
             f"{res['n']} configs; gemmmodel.model.resweep): one sweep's best judged by the other"
             f" scores top1 min {min(a['min_top1_pct_of_best'], b['min_top1_pct_of_best']):.1f}%,"
             f" mean {0.5 * (a['mean_top1_pct_of_best'] + b['mean_top1_pct_of_best']):.1f}%"]
    for kind in ("batched", "single"):
        g = res[kind]
        if g["shapes"]:
            lines.append(f"    {kind}: {g['shapes']} shapes, oracle top1 min "
                         f"{g['min_oracle_top1_pct']:.1f}%, mean "
                         f"{g['mean_oracle_top1_pct']:.1f}%; configs moved > 5 %: mean "
                         f"{100 * g['mean_moved_share']:.1f}%, at most "
                         f"{100 * g['max_moved_share']:.1f}% of a shape")
    return lines
