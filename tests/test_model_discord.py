"""Kendall tau's discordant pairs split by shape (gemmmodel.model.discord), on hand-made
rows whose discordant pairs can be counted by eye."""

import pytest
from scipy.stats import kendalltau

from gemmmodel.model.discord import discordance, discordant_matrix


def _row(shape, pred, meas):
    return {"shape": shape, "predicted_s": pred, "measured_s": meas}


# shape A: a and b swapped by the model (one within-shape pair); shape B's slow row is
# predicted below A's fastest, so it is discordant with every A row it passes
ROWS = [_row("A", 2.0, 1.0), _row("A", 1.0, 2.0), _row("A", 3.0, 3.0),
        _row("B", 0.5, 4.0), _row("B", 5.0, 5.0)]


def test_discordant_matrix_counts_swapped_pairs_once_each_way():
    disc = discordant_matrix([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    assert disc.sum() == 2                     # (1, 2) and (2, 1)
    assert disc[1, 2] and disc[2, 1] and not disc[0, 1]
    # ties are neither concordant nor discordant
    assert not discordant_matrix([1.0, 1.0], [1.0, 2.0]).any()


def test_discordance_by_shape_hand_counted():
    res = discordance(ROWS)
    assert res["pairs"] == 10
    # within A: (a, b); across: B's 4.0 row predicted 0.5 below a, b, c (3 pairs)
    assert (res["within"], res["cross"], res["discordant"]) == (1, 3, 4)
    by = {r["shape"]: r for r in res["by_shape"]}
    assert (by["A"]["within"], by["A"]["cross"]) == (1, 3)
    assert (by["B"]["within"], by["B"]["cross"]) == (0, 3)
    assert by["A"]["tau"] == pytest.approx(kendalltau([2, 1, 3], [1, 2, 3])[0])
    assert res["by_shape"][0]["shape"] == "A"            # most discordant first
    assert res["shape_pairs"] == [{"shapes": ["A", "B"], "discordant": 3}]
    # tau with B exact: only the within-A swap is left, 9 concordant of 10
    assert by["B"]["tau_if_exact"] == pytest.approx(0.8)
    assert by["A"]["tau_if_exact"] == pytest.approx(
        kendalltau([1, 2, 3, 0.5, 5], [1, 2, 3, 4, 5])[0])
    assert by["A"]["tau_if_exact"] > kendalltau([r["predicted_s"] for r in ROWS],
                                                [r["measured_s"] for r in ROWS])[0]


def test_discordance_empty_and_single_row():
    assert discordance([])["pairs"] == 0
    one = discordance([_row("A", 1.0, 1.0)])
    assert one["pairs"] == 0 and one["by_shape"][0]["tau"] is None
