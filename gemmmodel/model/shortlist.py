"""How many of the predicted best configs to time: the pre-registered shortlist record.

The model picks one config per shape; on the H200 its first pick lands at 58.7-100 % of the
swept best (docs/selection.md). A user with the GPU at hand can instead time the first k
configs of the ranking (`gemmmodel predict --verify --top k`) and keep the fastest. For
every shape of a pre-registered round (the ranking recorded before the sweep: the first
round and each of selection.HELDOUT_ROUNDS),
    best_of_top_k_pct = 100 * t_best / min(t of the predicted top k)   (measured times)
i.e. what timing the top k would have reached. `shortlist_record(folder)` summarises it per
k over every such shape: the min, the mean and the share of shapes at >= 95 % and >= 98 %
(the issue's top-1 / top-3 targets). It reads only the committed rankings and sweeps, so it
is as honest as the rounds are: no prediction is made after a sweep.
"""

from __future__ import annotations

from pathlib import Path

from gemmmodel.model.selection import (committed_rounds, preregistered, ranked_shapes,
                                       shape_text, sweep_measured)

#: The shortlist lengths reported (1 and 3: the issue's top-1 / top-3).
SHORTLIST_K = (1, 3, 5, 10, 20, 40)
#: Shares of shapes reported per k: at or above these % of the best.
SHORTLIST_LEVELS = (95.0, 98.0)


def best_of_top(measured: dict, order_key: dict, ks=SHORTLIST_K) -> list[dict]:
    """Per shape of `measured` {(config, shape): s}: {k: best of the top k as % of best},
    the ranking by `order_key` {(config, shape): key} (smaller = predicted faster; configs
    without a key are left out: selection.ranked_shapes, as selection.score ranks)."""
    rows = []
    for shape, ranked in ranked_shapes(measured, order_key):
        t_best = min(measured[(n, shape)] for n in ranked)
        best_so_far, pct = float("inf"), {}
        for i, name in enumerate(ranked, 1):
            best_so_far = min(best_so_far, measured[(name, shape)])
            if i in ks:
                pct[i] = 100.0 * t_best / best_so_far
        for k in ks:                      # k beyond the configs: the whole space, 100 %
            pct.setdefault(k, 100.0 * t_best / best_so_far)
        rows.append({"shape": shape_text(shape), "configs": len(ranked),
                     "best_of_top_pct": pct})
    return rows


def summarise(rows: list[dict], ks=SHORTLIST_K) -> list[dict]:
    """Per k: min and mean best-of-top-k % of best over `rows`, and the share of shapes at
    or above each of SHORTLIST_LEVELS."""
    out = []
    for k in ks:
        vals = [r["best_of_top_pct"][k] for r in rows]
        if not vals:
            continue
        out.append({"k": k, "min_pct_of_best": min(vals),
                     "mean_pct_of_best": sum(vals) / len(vals),
                     **{f"share_at_{level:g}": sum(v >= level for v in vals) / len(vals)
                        for level in SHORTLIST_LEVELS}})
    return out


def shortlist_record(folder: Path, ks=SHORTLIST_K) -> dict | None:
    """The record over every pre-registered round committed in `folder` (module
    docstring); None where the folder has no round with both its ranking and its sweep."""
    folder = Path(folder)
    rows, rounds = [], []
    for round_ in committed_rounds(folder):
        ranks, _ = preregistered(folder, round_)
        rows += best_of_top(sweep_measured(folder, round_), ranks, ks)
        rounds.append(round_ or "first")
    if not rows:
        return None
    return {"folder": str(folder), "rounds": rounds, "shapes": len(rows),
            "per_k": summarise(rows, ks), "rows": rows}


__all__ = ["SHORTLIST_K", "SHORTLIST_LEVELS", "best_of_top", "shortlist_record", "summarise"]
