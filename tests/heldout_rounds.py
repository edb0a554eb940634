"""Test helper (not a test module): the checks every pre-registered held-out round of
issue 8 passes on the H200 (tests/test_model_selection*.py): its shapes new, its ranking
committed before its sweep, its scores and recorded times as docs/selection.md gives them."""

import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model.selection import (
    NEIGHBOUR_RECORD_FILE,
    preregistered,
    recorded_times,
    score,
    summary,
    sweep_measured,
    time_error,
)


def assert_round(rows, n_shapes, documented):
    """Every shape scored over all 372 configs; (min top1, mean top1, min top3, mean top3)
    as documented (0.05 points); the targets met exactly where the documented minima reach
    them (top1 >= 95 % and top3 >= 98 % on every shape: round 27's neighbour ranking)."""
    assert [r["configs"] for r in rows] == [372] * n_shapes
    got = summary(rows)
    keys = ("min_top1_pct_of_best", "mean_top1_pct_of_best", "min_top3_pct_of_best",
            "mean_top3_pct_of_best")
    assert [got[k] for k in keys] == pytest.approx(list(documented), abs=0.05)
    assert got["meets_targets"] is (documented[0] >= 95.0 and documented[2] >= 98.0)


def assert_ranking_committed_before_sweep(round_):
    """In a git checkout: the commit that first added the round's ranking is an ancestor of
    (and not the same as) the one that first added its sweep."""
    assert_file_committed_before_sweep("selection_predictions.csv", round_)


def assert_file_committed_before_sweep(name, round_):
    """As assert_ranking_committed_before_sweep for the ranking file `name` of `round_`."""
    import subprocess

    repo = CALIBRATION_DIR.parent
    if not (repo / ".git").exists():
        return

    def first_commit(name):
        out = subprocess.run(["git", "log", "--format=%H", "--reverse", "--",
                              f"calibration/h200/{name}"], check=False, cwd=repo, capture_output=True,
                             text=True).stdout.split()
        return out[0] if out else None

    stem = name.rpartition(".")[0]
    pred, sweep = first_commit(f"{stem}_{round_}.csv"), \
        first_commit(f"selection_sweep_{round_}.csv")
    if pred and sweep:  # both committed: the ranking came first
        assert subprocess.run(["git", "merge-base", "--is-ancestor", pred, sweep],
                              check=False, cwd=repo).returncode == 0 and pred != sweep


def heldout_round(index):
    """(round name, ranks, meta, measured, shapes of every earlier sweep) of
    HELDOUT_ROUNDS[index] on the H200."""
    from gemmmodel.model.selection import HELDOUT_ROUNDS

    folder = CALIBRATION_DIR / "h200"
    round_ = HELDOUT_ROUNDS[index]
    ranks, meta = preregistered(folder, round_)
    measured = sweep_measured(folder, round_)
    earlier = set()
    for r in ("", *HELDOUT_ROUNDS[:index]):
        earlier |= {s for _, s in sweep_measured(folder, r)}
    return round_, ranks, meta, measured, earlier


def check_heldout_round(index, commit, documented):
    """HELDOUT_ROUNDS[index]: 6 shapes no earlier sweep had, recorded at `commit` and
    committed before its sweep, scoring `documented` (min/mean top1, min/mean top3).
    Returns the round's measured times."""
    round_, ranks, meta, measured, earlier = heldout_round(index)
    shapes = {s for _, s in measured}
    assert len(shapes) == 6 and not shapes & earlier
    assert meta["round"] == round_ and meta["commit_before_recording"].startswith(commit)
    assert_ranking_committed_before_sweep(round_)
    assert_round(score(measured, ranks), 6, documented)
    return measured


def recorded_time_error(measured, round_, mape, tol):
    """The time error of the times recorded with `round_`'s ranking against its sweep: one
    per swept config, MAPE as documented (`tol`)."""
    err = time_error(measured, recorded_times(CALIBRATION_DIR / "h200", round_))
    assert err["n"] == 6 * 372 and err["mape"] == pytest.approx(mape, abs=tol)
    return err


def check_neighbour_record(measured, round_, documented, mape):
    """The measured-neighbour ranking recorded with `round_`: committed before its sweep,
    scoring `documented` (min/mean top1, min/mean top3), its times at MAPE `mape`.
    Returns (score rows, time error)."""
    folder = CALIBRATION_DIR / "h200"
    ranks, _ = preregistered(folder, round_, NEIGHBOUR_RECORD_FILE)
    rows = score(measured, ranks)
    assert_round(rows, 6, documented)
    err = time_error(measured, recorded_times(folder, round_, NEIGHBOUR_RECORD_FILE))
    assert err["n"] == 6 * 372 and err["mape"] == pytest.approx(mape, abs=0.0005)
    assert_file_committed_before_sweep(NEIGHBOUR_RECORD_FILE, round_)
    return rows, err


def check_second_sweep(round_, again_file, worst_shape, worst_pct):
    """A round swept a second time (`again_file`, reverse order, fresh inputs): the same
    6 x 372 (config, shape) pairs; the recorded ranking's worst shape is `worst_shape` against
    both sweeps, at `worst_pct` = (top1 % against the first, against the second).
    Returns resweep.agreement(first, again) for the caller's own bounds."""
    from gemmmodel.model.resweep import agreement, read_sweep

    folder = CALIBRATION_DIR / "h200"
    first = sweep_measured(folder, round_)
    again = read_sweep(folder, again_file)
    assert set(again) == set(first) and len(again) == 6 * 372
    ranks, _ = preregistered(folder, round_)
    for measured, documented in zip((first, again), worst_pct):
        worst = min(score(measured, ranks), key=lambda r: r["top1_pct_of_best"])
        assert worst["shape"] == worst_shape
        assert worst["top1_pct_of_best"] == pytest.approx(documented, abs=0.05)
    return agreement(first, again)
