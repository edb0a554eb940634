"""The shortlist record (gemmmodel.model.shortlist): how close timing the first k configs of
a pre-registered ranking came to the swept best, and where predict and selection show it."""

from __future__ import annotations

import json

import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.cli import main
from gemmmodel.errors import BadArgument
from gemmmodel.model.shortlist import SHORTLIST_K, best_of_top, shortlist_record, summarise

S1, S2 = (64, 64, 64, 1), (128, 128, 128, 2)


def test_best_of_top_by_hand():
    # ranked a < b < c < d; measured 4, 2, 3, 1 s: the best (d) is ranked last
    measured = {("a", S1): 4.0, ("b", S1): 2.0, ("c", S1): 3.0, ("d", S1): 1.0,
                ("x", S2): 1.0, ("y", S2): 2.0, ("unranked", S2): 0.5}
    order = {("a", S1): 1, ("b", S1): 2, ("c", S1): 3, ("d", S1): 4,
             ("x", S2): 1, ("y", S2): 2}
    rows = best_of_top(measured, order, ks=(1, 2, 3, 4, 10))
    by_shape = {r["shape"]: r for r in rows}
    assert by_shape["64x64x64"]["best_of_top_pct"] == pytest.approx(
        {1: 25.0, 2: 50.0, 3: 50.0, 4: 100.0, 10: 100.0})
    # a config without a rank is not a candidate (as in selection.score)
    assert by_shape["128x128x128x2"]["configs"] == 2
    assert by_shape["128x128x128x2"]["best_of_top_pct"][1] == pytest.approx(100.0)
    per_k = {r["k"]: r for r in summarise(rows, ks=(1, 2, 3, 4, 10))}
    assert per_k[1]["min_pct_of_best"] == pytest.approx(25.0)
    assert per_k[1]["mean_pct_of_best"] == pytest.approx(62.5)
    assert per_k[1]["share_at_95"] == pytest.approx(0.5)
    assert per_k[4]["share_at_98"] == pytest.approx(1.0)


def test_record_of_the_committed_h200_rounds(h200_comparison):
    from gemmmodel.model.selection import HELDOUT_ROUNDS

    rec = shortlist_record(CALIBRATION_DIR / "h200")
    assert rec["rounds"] == ["first", *HELDOUT_ROUNDS]
    assert rec["shapes"] == 9 + 4 + 6 * 82 == len(rec["rows"])
    per_k = {r["k"]: r for r in rec["per_k"]}
    assert list(per_k) == list(SHORTLIST_K)
    # k = 1 and 3 are the top-1 / top-3 over every pre-registered shape
    comparison = h200_comparison
    honest = comparison["all_preregistered"]
    # selection --posthoc builds the same table from the rounds it has read already
    assert comparison["shortlist"] == {"shapes": rec["shapes"], "per_k": rec["per_k"]}
    assert per_k[1]["mean_pct_of_best"] == pytest.approx(honest["mean_top1_pct_of_best"])
    assert per_k[3]["min_pct_of_best"] == pytest.approx(honest["min_top3_pct_of_best"])
    # a longer shortlist never does worse; docs/selection.md quotes these
    means = [per_k[k]["mean_pct_of_best"] for k in SHORTLIST_K]
    assert means == sorted(means)
    assert per_k[10]["mean_pct_of_best"] == pytest.approx(97.74, abs=0.05)   # 487 shapes (97.75 over 481; 97.74 over 475; 97.65 over 457, also over 451; 97.64 over 445)
    assert per_k[40]["mean_pct_of_best"] == pytest.approx(99.53, abs=0.05)
    assert per_k[40]["min_pct_of_best"] == pytest.approx(87.98, abs=0.05)


def test_no_round_no_record(tmp_path):
    assert shortlist_record(tmp_path) is None


def test_predict_shows_the_record_and_names_its_gpu(capsys):
    assert main(["predict", "--gpu", "gfx906", "--size", "1024x1024x1024", "--top", "1",
                 "--jobs", "1", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["track_record"]
    assert rec["gpu"] == "h200" and rec["same_gpu"] is False and "rows" not in rec
    assert main(["predict", "--gpu", "h200", "--size", "1024x1024x1024", "--top", "1",
                 "--jobs", "1"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("track record (h200;") and "another GPU" not in line
    assert "top 1 / 3 / 5 / 10 / 20 / 40" in line


def test_selection_posthoc_prints_the_shortlist_table(capsys):
    assert main(["selection", "--gpu", "h200", "--posthoc"]) == 0
    out = capsys.readouterr().out
    assert "the fastest of the recorded top k" in out
    # gemmmodel.model.neighbours: scored round by round next to the model alone
    assert "measured-neighbour correction, prequential" in out
    assert "the model alone on these shapes" in out
    assert out.rstrip().splitlines()[-1].split()[0] == "40"


def test_verify_refuses_a_batched_shape():
    from gemmmodel.predict import verify

    res = {"shape": {"M": 64, "N": 64, "K": 32, "batch": 30}, "top": []}
    with pytest.raises(BadArgument, match="batched"):
        verify(res, runtime=object())
