"""Held-out rounds 8-39 of issue 8 on the H200: each ranking recorded (at the commit named)
and committed before its sweep, scored as docs/selection.md gives it, with the times it
recorded; from round 14 the measured-neighbour ranking recorded beside it
(tests/heldout_rounds.py holds the checks)."""

import pytest
from heldout_rounds import (
    check_heldout_round,
    check_neighbour_record,
    recorded_time_error,
)

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model.selection import sweep_measured

#: Held-out rounds 8-13 (HELDOUT_ROUNDS index): the commit their ranking was recorded at
#: (before the sweep), their scores as docs/selection.md gives them (min / mean top1, min /
#: mean top3), the MAPE of the times recorded with the ranking (and its tolerance), and the
#: least share of those times within 25 % where the docs quote it.
RECORDED_ROUNDS = [
    # model change 12, the busiest SIMD's waves
    (7, "4c6dd5d", (68.7, 88.3, 76.7, 91.7), 0.1412, 0.0005, None),
    # model change 13, the checked path of the bounds-checked build (90 % within 25 %)
    (8, "4833a36", (58.7, 79.2, 73.2, 87.2), 0.1190, 0.0005, 0.9),
    # model change 14, the lookahead under loaded LDS latency
    (9, "1369184", (74.3, 94.2, 76.1, 94.6), 0.1119, 0.0005, None),
    # the model of the tenth round (session 18 added only the ceiling diagnostic)
    (10, "6bbde39", (76.5, 90.6, 90.2, 94.95), 0.1154, 0.0005, None),
    # the weighted fit of the fifteenth change (91 % within 25 %)
    (11, "7aab797", (60.3, 86.4, 84.3, 91.6), 0.1120, 0.0005, 0.9),
    # the model and fit of round 12 (session 20 changed only explain's diff)
    (12, "2781f9f", (77.2, 90.65, 77.2, 92.06), 0.112, 0.001, 0.89),
]


@pytest.mark.parametrize("index,commit,documented,mape,tol,within_25", RECORDED_ROUNDS,
                         ids=[f"heldout{r[0] + 1}" for r in RECORDED_ROUNDS])
def test_heldout_round_was_recorded_before_its_sweep(index, commit, documented, mape, tol,
                                                    within_25):
    measured = check_heldout_round(index, commit, documented)
    assert len(measured) == 6 * 372
    err = recorded_time_error(measured, f"heldout{index + 1}", mape, tol)
    if within_25 is not None:
        assert err["within_25pct"] > within_25


def test_thirteenth_heldout_round_has_batched_shapes_with_edges():
    # two of its shapes are batched, one of them with edges in every tile (112 x 336)
    measured = sweep_measured(CALIBRATION_DIR / "h200", "heldout13")
    assert {"224x224x384x48", "112x336x704x30"} <= {"x".join(map(str, s))
                                                   for _, s in measured}


def test_fourteenth_heldout_round_recorded_the_model_and_the_neighbour_ranking():
    # recorded before its sweep with the model and fit of heldout12/13 unchanged, and with
    # it the ranking of predict --neighbours (gemmmodel.model.neighbours, session 21);
    # docs/selection.md: the model min top1 84.1 %, mean 91.1 %; min top3 88.0 %, mean
    # 93.6 %; its recorded times: MAPE 10.3 %
    measured = check_heldout_round(13, "47e18c2", (84.1, 91.1, 88.0, 93.6))
    recorded_time_error(measured, "heldout14", 0.1026, 0.0005)
    # the neighbour ranking, recorded in the same commit: min top1 83.1 %, mean 94.1 %;
    # min top3 83.1 %, mean 95.6 %; its recorded times: MAPE 6.2 %, 80 % within 10 %
    _, err = check_neighbour_record(measured, "heldout14", (83.1, 94.1, 83.1, 95.6), 0.0622)
    assert err["within_10pct"] > 0.79


def test_fifteenth_heldout_round_recorded_after_the_sixteenth_change():
    # recorded at 5b2d057 (the spill latency of the sixteenth change and its refit), with the
    # neighbour ranking; docs/selection.md: the model min top1 72.2 %, mean 86.1 %; min top3
    # 74.2 %, mean 90.6 %; its recorded times MAPE 11.9 %
    measured = check_heldout_round(14, "5b2d057", (72.2, 86.1, 74.2, 90.6))
    recorded_time_error(measured, "heldout15", 0.1193, 0.0005)
    # the neighbour ranking: top1 >= 95 % on all six shapes (min 95.7 %, mean 98.8 %), top3
    # min 97.7 % (one shape short of 98 %), mean 99.6 %; its times MAPE 6.0 %
    rows, _ = check_neighbour_record(measured, "heldout15", (95.7, 98.8, 97.7, 99.6), 0.0604)
    assert all(r["top1_pct_of_best"] >= 95.0 for r in rows)
    assert sum(r["top3_pct_of_best"] < 98.0 for r in rows) == 1


def test_sixteenth_heldout_round_recorded_the_same_build_neighbour_ranking():
    # recorded at f014c06 (the model of round 15 refitted after the seventeenth change; the
    # neighbour correction from shapes of the same build only); docs/selection.md: the
    # model min top1 88.9 %, mean 93.6 %; min top3 88.9 %, mean 95.6 %; times MAPE 11.2 %
    measured = check_heldout_round(15, "f014c06", (88.9, 93.6, 88.9, 95.6))
    recorded_time_error(measured, "heldout16", 0.1116, 0.0005)
    # the neighbour ranking: top3 >= 98 % on all six shapes (min 99.3 %, mean 99.9 %), top1
    # short of 95 % on the two batched shapes (min 88.9 %, mean 96.7 %); times MAPE 5.9 %
    rows, _ = check_neighbour_record(measured, "heldout16", (88.9, 96.7, 99.3, 99.9), 0.0592)
    assert all(r["top3_pct_of_best"] >= 98.0 for r in rows)
    assert sorted(r["shape"] for r in rows if r["top1_pct_of_best"] < 95.0) == \
        ["144x144x288x48", "320x192x384x24"]


# Rounds recorded with the sixteen-neighbour correction beside the model (docs/selection.md):
# round, index in HELDOUT_ROUNDS, commit recorded at, the model's (min top1, mean top1, min
# top3, mean top3) and recorded-times MAPE, the same for the neighbour ranking, its shapes
# below 95 % top1 and its shapes at 100 %.
SIXTEEN_NEIGHBOUR_ROUNDS = [
    # 17 (b476755): the model and fit of round 16 unchanged, 16 neighbours instead of 8;
    # the neighbours' worst: 96x384x256x32 (batched)
    ("heldout17", 16, "b476755", (84.96, 92.40, 84.96, 93.64), 0.1097,
     (80.32, 94.38, 92.14, 97.37), 0.0692, ["6144x768x3072", "96x384x256x32"],
     ["1536x4608x1536"]),
    # 18 (b8840f9): the model, fit and correction of round 17; the model's worst:
    # 208x208x416x32 (batched), the neighbours': 2200x1400x3400
    ("heldout18", 17, "b8840f9", (65.83, 85.14, 70.85, 87.82), 0.1350,
     (82.29, 95.98, 90.16, 98.35), 0.0775, ["208x208x416x32", "2200x1400x3400"],
     ["128x128x128x96", "15360x512x1536", "3200x3200x3200", "384x192x320x28"]),
    # 19 (b29857f): the eighteenth change (the partial last round) and its refit; the
    # model's worst: 160x96x384x60 (batched), the neighbours': 352x176x704x36
    ("heldout19", 18, "b29857f", (67.26, 87.08, 79.42, 92.86), 0.1111,
     (75.36, 92.28, 91.62, 96.80), 0.0505, ["272x272x544x24", "352x176x704x36"],
     ["11264x640x1536", "160x96x384x60"]),
    # 20 (7e00131): the nineteenth change (the batched entry's resources), no refit; the
    # model's worst: 56x112x896x96 (batched, 54.7 %), the neighbours': 320x160x640x28
    ("heldout20", 19, "7e00131", (54.70, 82.40, 73.28, 88.94), 0.1040,
     (91.83, 96.86, 91.83, 97.81), 0.0558, ["120x240x360x44", "320x160x640x28"],
     ["176x112x448x50", "2304x1536x2816"]),
    # 21 (c3ba8af): the twentieth change (a block's waves counted as correlated overlap
    # streams) and its refit; the model's worst: 240x96x480x48 (batched, 74.9 %), the
    # neighbours': 3584x1792x2560
    ("heldout21", 20, "c3ba8af", (74.88, 86.74, 86.50, 93.54), 0.1032,
     (80.82, 94.76, 94.06, 99.01), 0.0502,
     ["1792x5376x1024", "3584x1792x2560", "80x160x1280x64"],
     ["144x208x576x40", "240x96x480x48", "512x7168x3072"]),
    # 22 (73508f8): the twenty-first change (the checked tiles of a register double buffer
    # wait their loads) and its refit; the model's worst: 200x120x400x40 (batched, 81.2 %),
    # the neighbours': 152x152x608x36
    ("heldout22", 21, "73508f8", (81.23, 92.45, 88.83, 94.89), 0.1009,
     (92.93, 97.54, 92.93, 98.33), 0.0437,
     ["152x152x608x36"],
     ["200x120x400x40", "6144x768x1536"]),
    # 23 (3e50f1d): the model and fit of round 22, unchanged; the model's worst:
    # 136x200x520x44 (batched, 87.2 %, best 64x256x32/8x8/p4), also the neighbours' (76.2 %)
    ("heldout23", 22, "3e50f1d", (87.22, 93.96, 91.44, 95.90), 0.1057,
     (76.19, 94.30, 82.80, 96.50), 0.0568,
     ["136x200x520x44", "900x3300x1700"],
     ["3072x2304x1536", "768x1536x9216"]),
    # 24 (6022d1b): the twenty-second change (a register double buffer waits its load round
    # trips); the model's worst: 176x104x448x40 (batched, 56.1 %, 64x64x32/8x8/p4/db picked,
    # best 64x64x32/8x4/p4) and 1100x900x5200 (69.1 %, 32x64x8/8x8/p4/db); the neighbours'
    # 120x168x480x48 (74.0 %)
    ("heldout24", 23, "6022d1b", (56.06, 85.54, 61.47, 86.56), 0.1069,
     (73.97, 93.79, 94.20, 97.81), 0.0581,
     ["120x168x480x48", "1800x2600x3000"],
     ["1536x1024x12288", "4096x2560x1280"]),
    # 25 (12093ec): the twenty-third and twenty-fourth changes (instruction fetch, the last
    # round as long as its edge blocks); the model's worst: 144x184x496x44 (batched, 69.7 %,
    # 32x32x16/4x4/p4 picked, best 64x64x16/8x4/p4); the neighbours' 1700x1300x2900 (91.4 %)
    ("heldout25", 24, "12093ec", (69.68, 92.97, 92.03, 97.19), 0.1023,
     (91.44, 96.44, 96.14, 99.36), 0.0584,
     ["144x184x496x44", "1700x1300x2900"],
     ["200x72x640x36", "640x1280x14336"]),
    # 26 (d1ca02d): the model and fit of round 25, unchanged; the model's worst:
    # 168x120x544x40 (batched, 91.7 %, 64x64x32/4x4/p4 picked, best 64x128x32/8x4/db); the
    # neighbours' 3100x900x2700 (95.2 %): every shape at 95 % or more by the neighbours
    ("heldout26", 25, "d1ca02d", (91.72, 93.61, 93.40, 95.44), 0.0939,
     (95.23, 98.34, 95.59, 98.55), 0.0453,
     [],
     ["112x208x384x52", "1152x640x13312"]),
    # 27 (95b7d56): the model and fit of round 25, unchanged, the correction with round 26's
    # sweep; the model's worst: 1900x1100x2300 (87.2 %, 128x32x16/8x8/p4/db picked, best
    # 128x32x16/8x4/p4); the neighbours' 104x248x672x28 (96.3 %): every shape at top1 >= 95 %
    # and top3 >= 98 % by the neighbours (the targets, met in this round)
    ("heldout27", 26, "95b7d56", (87.22, 93.34, 94.30, 97.27), 0.0959,
     (96.27, 99.25, 100.0, 100.0), 0.0565,
     [],
     ["1900x1100x2300", "2048x4096x1536", "232x136x480x36", "896x1536x11264"]),
    # 28 (2594718): the model and fit of round 25, unchanged, the correction with round 27's
    # sweep; the model's worst: 88x184x416x60 (batched, 92.1 %, 32x32x16/4x4/p4 picked, best
    # 64x64x16/8x4/p4); the neighbours' 152x216x608x32 (93.2 %, 32x64x16/4x4/p4 picked)
    ("heldout28", 27, "2594718", (92.09, 96.26, 94.67, 97.11), 0.0920,
     (93.19, 96.96, 93.19, 98.10), 0.0358,
     ["152x216x608x32", "2300x1300x3500"],
     ["3072x2048x3072", "768x1280x14336"]),
    # 29 (675fcd7): the model and fit of round 25, unchanged, the correction with round 28's
    # sweep; the model's worst: 2560x1536x3584 (91.2 %, 128x128x32/8x8/p4/s8 picked, best
    # 64x256x16/8x8/p4/db), both batched shapes right (4x4 picks at 100 %); the neighbours'
    # 200x96x576x48 (88.5 %, 32x32x16/8x4/p4/db picked)
    ("heldout29", 28, "675fcd7", (91.18, 96.53, 94.08, 97.58), 0.0895,
     (88.45, 95.96, 95.67, 99.16), 0.0431,
     ["200x96x576x48"],
     ["1500x2900x2100"]),
    # 30 (eb30dfb): the model and fit of round 25, unchanged, the correction with round 29's
    # sweep; the model's worst: 264x104x608x44 (batched, 91.4 %, 32x64x16/4x8/p4 picked,
    # best 128x128x32/8x8/p4); the neighbours' 2600x1900x1500 (91.7 %), their top3 >= 98.5 %
    ("heldout30", 29, "eb30dfb", (91.45, 96.41, 91.45, 96.79), 0.0958,
     (91.75, 97.46, 98.50, 99.75), 0.0448,
     ["1300x2300x2900", "2600x1900x1500"],
     ["1280x768x15360", "264x104x608x44", "3584x2048x2048"]),
    # 31 (045f9c6): the model and fit of round 25, unchanged, the correction with round 30's
    # sweep; the model's worst: 1900x2700x1300 (81.4 %, 64x128x16/8x4/p4 picked, best
    # 64x64x8/8x8/p4/db) and 216x136x512x40 (batched, 86.1 %, 32x32x8/8x4/p4 picked, best
    # 128x64x16/8x4/p4/db, which the neighbours picked); the neighbours' 2400x1600x1900 (92.1 %)
    ("heldout31", 30, "045f9c6", (81.36, 90.42, 86.14, 92.86), 0.0882,
     (92.08, 97.75, 92.15, 98.20), 0.0476,
     ["1900x2700x1300", "2400x1600x1900"],
     ["104x200x704x52", "216x136x512x40", "3840x2560x2048", "896x1280x13824"]),
    # 32 (fbc766b): the model and fit of round 25, unchanged, the correction with round 31's
    # sweep; the model's worst: 184x232x448x36 (batched, 88.5 %, 64x128x32/8x8/p4 picked,
    # best 64x128x16/8x4/p4/db, which the neighbours picked); the neighbours' 2100x2900x1700
    # (92.4 %, 128x128x16/8x8/p4/db picked, best 128x128x8/8x8/p4/db)
    ("heldout32", 31, "fbc766b", (88.51, 94.60, 94.35, 97.26), 0.0930,
     (92.38, 96.52, 95.14, 98.31), 0.0363,
     ["2100x2900x1700", "2900x1700x2300"],
     ["1152x896x14848", "184x232x448x36"]),
    # 33 (6273005): the model and fit of round 25, unchanged, the correction with round 32's
    # sweep; the model's worst: 200x248x576x34 (batched, 84.1 %, 32x64x16/8x8/p4/db picked,
    # best 64x64x32/8x4/p4/db, which the model ranked 195th); the neighbours' worst: the same
    # shape (85.8 %, 32x128x32/4x8/p4/db picked); 1024x1280x14336 exactly right
    ("heldout33", 32, "6273005", (84.09, 94.94, 88.29, 95.64), 0.0955,
     (85.78, 95.35, 97.26, 99.18), 0.0544,
     ["1700x2900x2100", "200x248x576x34"],
     ["1024x1280x14336"]),
    # 34 (1fa260b): the model and fit of round 25, unchanged, the correction with round 33's
    # sweep; the model's worst: 1900x2500x2700 (73.4 %, 64x32x8/8x4/db picked, best
    # 64x64x16/8x4/p4/db, which the model ranked 45th); the neighbours' worst: the same shape
    # (94.4 %, 64x64x8/8x4/p4/db picked); three shapes exactly right
    ("heldout34", 33, "1fa260b", (73.36, 86.84, 78.23, 91.87), 0.0938,
     (94.39, 98.81, 94.64, 99.11), 0.0476,
     ["1900x2500x2700"],
     ["168x216x480x40", "2816x3584x1536", "96x352x704x26"]),
    # 35 (af38b9e): the model and fit of round 25, unchanged, the correction with round 34's
    # sweep; the model's worst: 120x328x576x36 (batched, 77.8 %, 32x32x8/8x4/p4 picked, best
    # 128x128x32/8x8/p4, ranked 27th); the neighbours' worst: 3500x1700x1400 (80.4 %,
    # 128x128x8/8x8/db/s8 picked; the model picked 128x64x8/8x8/p4/db there, 99.9 %)
    ("heldout35", 34, "af38b9e", (77.79, 92.61, 89.72, 96.32), 0.0892,
     (80.42, 94.48, 94.99, 97.72), 0.0404,
     ["2300x1300x2600", "3500x1700x1400"],
     ["1280x1024x11264", "3072x3584x1792"]),
    # 36 (6cc87b5): the model and fit of round 25, unchanged, the correction with round 35's
    # sweep; the model's worst: 200x136x704x28 (batched, 90.9 %, 32x32x16/4x4/db picked, best
    # 32x32x16/4x4/p4, which the neighbours picked); the neighbours' worst: 3800x1300x1700
    # (96.1 %, 64x64x8/8x4/p4/db picked, best 64x64x8/8x4/db): every shape at top1 >= 95 %
    # and top3 >= 98 % by the neighbours (the targets, met in this round)
    ("heldout36", 35, "6cc87b5", (90.94, 95.23, 93.34, 98.06), 0.0906,
     (96.06, 98.73, 100.0, 100.0), 0.0405,
     [],
     ["200x136x704x28"]),
    # 37 (410329a): the model and fit of round 25, unchanged, the correction with round 36's
    # sweep; the model's worst: 1700x3100x1900 (76.1 %, the bounds-checked 64x32x8/8x4/db
    # picked, as in round 34, best 64x64x16/8x4/p4/db, which the neighbours picked); the
    # neighbours' worst: 232x168x512x36 (batched, 98.7 %): every shape at top1 >= 95 % and
    # top3 >= 98 % by the neighbours (the targets, met in this round)
    ("heldout37", 36, "410329a", (76.15, 89.77, 83.40, 94.18), 0.0960,
     (98.71, 99.38, 98.71, 99.63), 0.0482,
     [],
     ["1700x3100x1900", "2900x1100x2500"]),
    # 38 (5125323): the model and fit of round 25, unchanged, the correction with round 37's
    # sweep; the model's worst: 152x312x672x26 (batched, 84.6 %, 32x32x16/4x4/p4 picked, best
    # 64x64x16/8x4/p4); the neighbours' worst: the same shape (90.2 %, 32x64x16/4x4/p4
    # picked); the neighbours met the targets in rounds 36 and 37, not here
    ("heldout38", 37, "5125323", (84.57, 92.96, 87.74, 94.23), 0.0927,
     (90.19, 94.27, 94.73, 99.10), 0.0428,
     ["1500x2700x2500", "152x312x672x26", "216x184x576x32", "3840x2304x1792"],
     []),
    # 39 (9ab47c4): the model and fit of round 25, unchanged, the correction with round 38's
    # sweep; the model's worst: 2700x1900x1700 (90.8 %, 128x64x8/8x8/p4/db picked, best
    # 64x64x8/8x4/db), mean top1 95.3 %; the neighbours' worst: 3300x1500x2300 (90.8 %)
    ("heldout39", 38, "9ab47c4", (90.79, 95.30, 94.24, 97.43), 0.0985,
     (90.80, 96.18, 95.33, 98.27), 0.0451,
     ["2700x1900x1700", "3300x1500x2300"],
     ["1408x1152x12800", "2816x2560x2304"]),
    # 40 (ee8c020): the model and fit of round 25, unchanged, the correction with round 39's
    # sweep; the first round swept with the checked hold (runner.HeldTimer). The model's
    # worst: 216x120x640x42 (batched, 83.1 %, 32x32x16/4x4/p4 picked, best 64x64x16/8x4/p4,
    # which the neighbours picked); the neighbours' worst: 2300x2900x1500 (86.5 %)
    ("heldout40", 39, "ee8c020", (83.10, 93.88, 90.61, 97.00), 0.0930,
     (86.55, 95.90, 100.00, 100.00), 0.0369,
     ["168x232x560x38", "2300x2900x1500"],
     ["216x120x640x42", "7168x384x3072"]),
    # 41 (8ac0047): the model and fit of round 25, unchanged, the correction with round 40's
    # sweep. The model's worst: 104x296x512x40 (batched, 83.7 %, 64x128x32/8x8/p4 picked,
    # best 128x128x32/8x8/p4); 248x152x384x30 89.6 % (32x32x16/4x4/p4 picked again, best
    # 64x64x16/8x4/p4). The neighbours' worst: 248x152x384x30 (92.8 %, 64x64x32/8x4/p4)
    ("heldout41", 40, "8ac0047", (83.68, 92.94, 89.09, 95.46), 0.0925,
     (92.84, 97.22, 94.65, 97.82), 0.0452,
     ["248x152x384x30"],
     []),
    # 42 (0233ce8): the twenty-fifth change (the L2 latency under load), refitted, the
    # correction with round 41's sweep. The model's worst: 2900x700x5200 (90.1 %,
    # 128x64x16/8x8/p4/db picked, best its single-buffer twin, ranked 2nd) and
    # 6400x1200x1100 (91.2 %, 128x128x8/8x8/p4 picked, best its /db twin); at the two batched
    # shapes it picked the best. The neighbours' worst: 168x280x352x44 (91.9 %)
    ("heldout42", 41, "0233ce8", (90.09, 96.54, 92.67, 98.57), 0.0955,
     (91.92, 97.19, 98.05, 99.67), 0.0530,
     ["168x280x352x44", "6400x1200x1100"],
     ["2900x700x5200"]),
    # 43 (4d168c4): the same model, the correction with round 42's sweep. The model's worst:
    # 232x120x832x28 (batched, 91.1 %, 64x64x32/4x4/p4 picked, best 64x128x32/8x4/db) and
    # 136x376x480x32 (batched, 91.6 %, 32x128x16/8x8/p4/db, best 32x128x32/4x8/p4/db); the
    # neighbours' worst: 5400x2100x900 (91.2 %, 64x128x8/8x8/p4, best 128x128x8/8x8/p4/db)
    ("heldout43", 42, "4d168c4", (91.14, 95.22, 91.59, 96.66), 0.0988,
     (91.22, 97.01, 93.86, 98.35), 0.0537,
     ["5400x2100x900"],
     ["640x640x9216"]),
    # 44 (8dc64cc): the same model, the correction with round 43's sweep. The model's worst:
    # 96x488x352x36 (batched, 72.2 %, 32x64x16/8x8/p4/db picked, best 32x128x32/8x4/p4/db)
    # and 12800x320x1600 (90.8 %, 256x64x16/8x8/p4, best 128x64x16/8x8/p4); the neighbours'
    # worst: 96x488x352x36 (92.8 %, 32x64x16/8x4/p4/db)
    ("heldout44", 43, "8dc64cc", (72.20, 93.26, 76.26, 95.51), 0.1011,
     (92.85, 97.86, 92.85, 98.79), 0.0528,
     ["200x312x704x26", "96x488x352x36"],
     ["1100x6100x2100", "12800x320x1600", "512x1664x14336"]),
    # 45 (80606d0): the twenty-sixth change (the checked path alone), the correction with
    # round 44's sweep. The model's worst: 2600x5300x1100 (78.5 %, 128x128x8/8x8/p4 picked,
    # best its /db twin) and 280x200x736x24 (batched, 82.3 %, 32x32x8/8x4/p4); the
    # neighbours' worst: 152x264x416x40 (batched, 97.3 %, 32x64x16/8x4/p4/db)
    ("heldout45", 44, "80606d0", (78.49, 86.98, 82.31, 89.87), 0.0934,
     (97.32, 99.55, 97.32, 99.55), 0.0494,
     [],
     ["1536x512x11264", "16384x256x2048", "2600x5300x1100", "280x200x736x24",
      "3700x1700x4300"]),
    # 46 (bd276d6): the same model, the correction with round 45's sweep. The model's worst:
    # 2800x2800x6400 (85.3 %, 128x128x8/8x8/p4 picked, best 128x256x16/8x8/db) and
    # 96x320x640x36 (batched, 94.7 %, 32x32x16/4x4/p4); the neighbours' worst:
    # 224x136x288x56 (batched, 82.9 %, 32x32x16/8x4/p4/db) and 5000x2200x1800 (91.1 %)
    ("heldout46", 45, "bd276d6", (85.34, 94.36, 85.34, 96.27), 0.0882,
     (82.91, 94.60, 94.91, 98.20), 0.0472,
     ["224x136x288x56", "5000x2200x1800"],
     ["2800x2800x6400", "384x12288x1536"]),
    # 47 (e3a15ad): the same model, the correction with round 46's sweep. The model's worst:
    # 160x416x288x48 (batched, 80.8 %, 32x32x8/4x8/p4/db picked, best 32x32x16/8x4/p4/db)
    # and 3600x9000x700 (83.6 %, 128x128x8/8x8/p4 picked, best its /db twin, the fourth
    # time); the neighbours' worst: 352x176x960x20 (batched, 94.4 %, 32x64x16/4x4/p4)
    ("heldout47", 46, "e3a15ad", (80.79, 89.21, 84.44, 90.70), 0.0974,
     (94.43, 97.30, 96.16, 98.88), 0.0520,
     ["1100x1500x14000", "352x176x960x20", "4400x3600x1400"],
     ["160x416x288x48", "3600x9000x700", "6144x640x5120"]),
    # 48 (0c8cc03): the same model, the correction with round 47's sweep. The model's worst:
    # 1536x768x20000 (92.0 %, 32x64x16/4x4/p4 picked, best 32x128x32/8x4/p4) and
    # 5120x1536x1536 (94.9 %, 128x128x32/8x8/p4 picked, best 64x256x16/8x8/p4/db); the
    # neighbours' worst: 224x200x704x40 (batched, 90.0 %, 32x32x16/8x4/p4/db picked, best
    # 32x32x8/8x4/p4); their top3 is 99.0 % or more at every shape
    ("heldout48", 47, "0c8cc03", (92.01, 96.24, 92.01, 97.02), 0.0876,
     (90.01, 97.72, 99.02, 99.84), 0.0500,
     ["224x200x704x40"],
     ["1536x768x20000", "512x12288x2048", "7000x1200x3000"]),
    # 49 (4f10cac): the same model, the correction with round 48's sweep. The model's worst:
    # 320x4096x12288 (93.3 %, 32x64x16/4x4/p4 picked, best 32x128x32/8x4/p4) and
    # 2816x2816x512 (93.4 %, 64x256x16/8x8/p4 picked, best its /db twin); the neighbours'
    # worst: 48x1536x768x16 (batched, 92.4 %, 32x128x32/4x8/p4 picked, best 64x64x16/8x4/p4)
    ("heldout49", 48, "4f10cac", (93.34, 94.31, 94.11, 96.30), 0.0898,
     (92.36, 98.48, 96.10, 99.35), 0.0435,
     ["48x1536x768x16"],
     ["1280x3584x2560", "160x224x512x48", "320x4096x12288", "6656x5120x768"]),
    # 50 (c30732b): the same model, the correction with round 49's sweep. The model's worst:
    # 64x2048x1024x12 (batched, 88.7 %, 32x128x16/4x8/p4/db picked, best 64x64x16/4x8/db)
    # and 2560x640x10240 (91.6 %, 64x128x32/8x8/p4 picked, best 32x64x16/8x8/p4/db, ranked
    # 270th); the neighbours' worst: 2560x640x10240 (93.4 %, 64x128x32/8x4/p4 picked)
    ("heldout50", 49, "c30732b", (88.72, 93.25, 91.47, 94.91), 0.0930,
     (93.38, 97.90, 93.55, 98.93), 0.0421,
     ["2560x640x10240"],
     ["4608x4608x384", "64x2048x1024x12", "768x6144x4608"]),
    # 51 (85f7fe1): the same model, the correction with round 50's sweep. The model's worst:
    # 80x1024x2048x20 (batched, 89.4 %, 32x128x16/8x8/p4/db picked, best 32x128x32/8x4/p4/db)
    # and 384x3072x6144 (92.1 %, 32x64x16/4x4/p4 picked, best 32x128x32/8x4/p4); the four-
    # warp 128x64x16/8x8/p4 best at three shapes. The neighbours' worst: 80x1024x2048x20
    # (89.4 %, the same pick); their top3 is 100 % at every shape
    ("heldout51", 50, "85f7fe1", (89.35, 95.52, 92.13, 96.75), 0.0989,
     (89.35, 98.23, 100.0, 100.0), 0.0496,
     ["80x1024x2048x20"],
     ["200x136x1088x36", "3328x7424x896", "384x3072x6144", "5632x2816x1024", "9216x640x2048"]),
    # 52 (44ab95a): the twenty-seventh change (the L1 line cost of global accesses), the
    # correction with round 51's sweep. The model's worst: 6400x1600x2560 (76.6 %, the
    # cp.async 64x64x32/8x4/p4/db picked, best the four-warp single 128x64x16/8x8/p4) and
    # 144x240x768x30 (batched, 84.6 %, 32x32x16/4x4/p4); session 47's model would have scored
    # 84.6 / 94.1 / 84.9 / 95.7 (hindsight). The neighbours' worst: 1000x3000x8000 (91.4 %,
    # 64x128x16/8x4/p4 picked, best 64x128x32/8x4/db)
    ("heldout52", 51, "44ab95a", (76.62, 91.35, 92.52, 97.77), 0.0823,
     (91.39, 97.51, 91.47, 97.63), 0.0371,
     ["1000x3000x8000"],
     ["4480x4480x1536", "6400x1600x2560"]),
    # 53 (c26af8b): the twenty-eighth change (a single buffer's last edge block) and the
    # edge build's NVRTC registers, the correction with round 52's sweep. The model's worst:
    # 4000x3000x640 (87.8 %, 128x128x8/8x8/p4 picked, best its /db twin) and five of six
    # below 95 %; the neighbours' worst 1800x5400x2200 (94.4 %, 64x64x16/8x4/p4/db picked,
    # best 128x128x8/8x8/p4/db), their top3 100 % at every shape
    ("heldout53", 52, "c26af8b", (87.84, 92.33, 88.89, 93.58), 0.0888,
     (94.38, 98.85, 100.0, 100.0), 0.0440,
     ["1800x5400x2200"],
     ["4000x3000x640", "5632x2816x1536", "72x360x1080x48", "896x896x14336"]),
    # 54 (e36df44, the model of c26af8b), the correction with round 53's sweep. The model's
    # worst: 1152x4608x2304 (82.6 %, the cp.async 64x128x16/8x8/p4/db picked, best the
    # single 64x128x32/8x8/p4, which the neighbours pick); the neighbours' worst
    # 128x256x1024x40 (batched, 83.1 %, 64x64x16/8x4/p4 picked, best 64x64x16/4x8/db)
    ("heldout54", 53, "e36df44", (82.59, 94.98, 92.31, 98.42), 0.0831,
     (83.06, 94.95, 92.04, 97.41), 0.0447,
     ["104x312x624x52", "128x256x1024x40", "2200x2200x6600"],
     ["1152x4608x2304", "3072x5120x896", "4864x2432x3072"]),
    # 55 (d41518c: the twenty-ninth change, no fetch floor from three
    # warps per scheduler), the correction with round 54's sweep. The model's worst:
    # 80x400x960x40 (batched, 86.0 %, 32x32x8/4x8/p4/db picked, best 32x64x32/8x4/p4/db);
    # the neighbours' worst the same shape (97.2 %, 32x32x16/4x4/p4/db picked): their top1
    # >= 95 % at every shape, top3 97.2 % there
    ("heldout55", 54, "d41518c", (85.96, 92.54, 95.31, 97.65), 0.0840,
     (97.23, 99.08, 97.23, 99.36), 0.0374,
     [],
     ["144x240x576x36", "5376x2688x2560", "768x1024x15360"]),
    # 56 (5ea4279, the same model), the correction with round 55's sweep. The model's worst:
    # 240x96x512x52 (batched, 86.5 %, 64x32x16/4x4/p4 picked, best 32x32x16/4x4/p4);
    # the neighbours' worst the same shape (90.8 %, 64x32x32/4x4/p4/db picked) and
    # 112x208x704x44 (94.7 %): their top3 100 % at every shape, top1 below 95 % at the two
    # batched shapes
    ("heldout56", 55, "5ea4279", (86.46, 96.22, 90.96, 98.48), 0.0832,
     (90.78, 97.34, 100.0, 100.0), 0.0311,
     ["112x208x704x44", "240x96x512x52"],
     ["1536x640x12288", "3328x5120x2304", "6400x1536x3200"]),
    # 57 (5184fa9, the thirtieth change: the A pitch factor), the correction with round 56's
    # sweep. The model's worst: 1280x6144x3584 (94.9 %, 128x128x32/8x8/p4 picked, best
    # 64x256x16/8x8/p4/db); without the pitch factor it would have picked the best there
    # but 64x128x16/8x8/p4/db at 2816x1792x2816 (82.0 %). The neighbours' top1 >= 95 % at
    # every shape (worst 200x184x608x40, 95.2 %), top3 96.1 % at 3072x3072x1280
    ("heldout57", 56, "5184fa9", (94.94, 97.55, 94.94, 98.42), 0.0651,
     (95.16, 97.61, 96.07, 99.34), 0.0303,
     [],
     ["4352x2304x1792", "5120x1280x5376"]),
    # 58 (4707c60, the thirty-first change: a cp.async double buffer's copies in series with
    # its issue; edge_tail_scale still 0.39 when recorded), the correction with round 57's
    # sweep. The model's worst: 176x248x736x36 (batched, 93.8 %, 64x128x16/8x8/p4/db picked,
    # best 64x128x16/8x4/p4/db); its top3 >= 98 % at every shape. The neighbours meet both
    # targets at every shape (worst top1 95.2 % at 176x248x736x36, top3 100 %)
    ("heldout58", 57, "4707c60", (93.80, 96.38, 98.01, 99.67), 0.0653,
     (95.24, 98.56, 100.0, 100.0), 0.0308,
     [],
     ["3328x3328x1536", "4608x2560x1024", "6144x768x4096", "768x6144x6144"]),
    # 59 (732cf02, the thirty-second change: the copies' exposure, copy_exposure 0.47), the
    # correction with round 58's sweep. The model's worst: 200x136x600x40 (batched, 83.3 %,
    # 32x32x8/4x8/p4/db picked, best 128x64x16/8x4/p4/db, its rank 5); at 1280x7168x1024
    # and 7168x1280x3072 it picks 64x128x32/8x8/p4 (97.1, 95.5 %) and ranks the best,
    # 128x64x16/8x8/p4, 64th and 58th. The neighbours' top1 >= 95 % at every shape (worst
    # 7168x1280x3072, 95.5 %), top3 below 98 % at the two skinny-K shapes
    ("heldout59", 58, "732cf02", (83.34, 93.84, 87.98, 95.92), 0.0650,
     (95.51, 97.52, 95.51, 98.77), 0.0313,
     [],
     ["200x136x600x40"]),
    # 60 (d7de29e, the same model), the correction with round 59's sweep. The model's worst:
    # 1000x3000x2500 (bounds-checked, 90.8 %, 128x64x8/8x8/p4/db picked, best
    # 64x128x8/8x8/p4, its rank 15); the neighbours' worst the same shape (90.3 %,
    # 128x64x8/8x8/db picked), which keeps both rankings below both targets
    ("heldout60", 59, "d7de29e", (90.81, 95.67, 90.81, 97.33), 0.0695,
     (90.26, 97.74, 90.81, 97.83), 0.0371,
     ["1000x3000x2500"],
     ["1536x1536x10240", "3584x2048x3072", "6656x1024x2048"]),
    # 61 (e8066cf, the thirty-third change: the edge-block pile-up), the correction with
    # round 60's sweep. The model's worst: 136x264x720x40 (batched, 79.4 %,
    # 32x64x16/8x8/p4/db picked, best 32x64x16/8x4/p4, its rank 23) and 704x704x18432
    # (81.7 %, 64x64x32/8x4/p4/db picked, best 32x64x32/8x4/p4/db). The neighbours pick the
    # best at 704x704x18432 and are below 95 % at two bounds-checked shapes
    ("heldout61", 60, "e8066cf", (79.40, 90.53, 81.73, 92.74), 0.0811,
     (91.38, 95.24, 91.38, 97.23), 0.0476,
     ["1500x4500x1800", "7000x500x3000"],
     ["704x704x18432"]),
    # 62 (654e0c8, the thirty-fourth change: register-staged double buffers), the correction
    # with round 61's sweep. The model's worst: 256x192x448x48 (batched, tile multiples,
    # 86.7 %, 32x64x32/8x4/p4/db picked, best 64x64x16/4x8/db, its rank 44) and
    # 2200x1800x2600 (89.1 %, 64x128x16/8x8/db picked, best 64x64x16/8x4/p4/db). The
    # neighbours pick the best at 1152x1152x13824 and are below 95 % at both batched shapes
    ("heldout62", 61, "654e0c8", (86.69, 94.17, 86.69, 95.00), 0.0736,
     (86.41, 95.69, 88.87, 97.10), 0.0482,
     ["160x344x600x36", "256x192x448x48"],
     ["1152x1152x13824"]),
    # 63 (103f90c, the thirty-fourth change reviewed), ranked before its sweep (device run F
    # at fc847f2). The model's worst: 200x280x520x40 (batched, 91.4 %, 128x128x8/8x8/p4
    # picked, best 256x128x16/8x8/db, its rank 35) and 1800x2900x1200 (91.9 %,
    # 32x128x32/8x4/p4/db picked, best 64x64x16/8x4/p4/db, its rank 18). The neighbours
    # pick the best at three shapes and are below 95 % at 200x280x520x40 only
    ("heldout63", 62, "103f90c", (91.45, 95.50, 92.86, 97.79), 0.0764,
     (93.10, 97.63, 97.94, 99.66), 0.0461,
     ["200x280x520x40"],
     ["192x320x384x56", "6144x640x2048", "768x1280x10240"]),
    # 64 (706392b, the thirty-fifth change: a register-staged double buffer's end tiles),
    # ranked before its sweep (device run F at b4b1ba0). The model's worst: 1400x3800x900
    # (81.5 %, the single buffer 64x128x16/8x4/p4 picked, best 64x128x32/8x4/db, its rank
    # 7) and 2600x1400x1800 (91.1 %, 128x256x16/8x8/db/s8 picked, best 64x64x16/8x4/p4/db,
    # its rank 13). The neighbours meet both targets on every shape of the round
    ("heldout64", 63, "706392b", (81.52, 94.95, 91.06, 97.60), 0.0733,
     (95.22, 98.85, 98.06, 99.68), 0.0387,
     [],
     ["112x400x640x48", "288x224x320x32", "7168x512x1024"]),
    # 65 (a548a3b, the thirty-fifth change reviewed), ranked before its sweep (device run F
    # at e712cf8): an M family at N = 1400, K = 1200 (M = 350 ... 11200, a quarter of a
    # round to ~8 rounds of blocks). The model's worst: 350x1400x1200 (77.2 %,
    # 32x128x32/4x4/p4/db picked, one block per SM, measured 0.25 log slower than predicted;
    # best 32x64x32/4x4/p4/db, its rank 9); it is below 95 % at five of the six shapes. The
    # neighbours pick the best at three shapes and are below 95 % at 350x1400x1200 only
    ("heldout65", 64, "a548a3b", (77.24, 91.52, 86.10, 94.14), 0.0856,
     (86.10, 96.54, 96.02, 99.22), 0.0517,
     ["350x1400x1200"],
     ["11200x1400x1200", "1400x1400x1200", "700x1400x1200"]),
    # 66 (0331b28, the model of a548a3b), ranked before its sweep (device run F at
    # ed9d27f): a K family at M = N = 1400 (K = 96 ... 10016), every launch one round of at
    # most one block per SM for the large tiles. The model picks 128x128x16/8x8/p4/db at
    # five shapes (89.6-90.5 %; one block per SM, 0.09-0.16 log faster than measured) and
    # is below 95 % at all six. The neighbours pick 128x64x16/8x8/p4 at all six (90.3-97.0
    # %), with top3 >= 98.3 % everywhere
    ("heldout66", 65, "0331b28", (89.64, 90.97, 89.64, 91.82), 0.0778,
     (90.26, 93.36, 98.32, 99.29), 0.0626,
     ["1400x1400x1600", "1400x1400x256", "1400x1400x4000", "1400x1400x640", "1400x1400x96"],
     []),
    # 67 (cfd8887, the thirty-sixth change with the fragment cover at every occupancy),
    # ranked before its sweep (device run F at 5cef925): an N family at M = 1400, K = 1200
    # (N = 350 ... 11200). The model's worst: 1400x350x1200 (94.8 %, 32x64x32/4x4/db
    # picked, best 32x64x32/4x4/p4/db, its rank 3). Session 66's model makes the same six
    # picks. The neighbours pick the best at two shapes and are below 95 % at N = 350 only
    ("heldout67", 66, "cfd8887", (94.83, 96.76, 97.78, 99.19), 0.0850,
     (94.83, 98.81, 99.36, 99.81), 0.0513,
     ["1400x350x1200"],
     ["1400x5600x1200", "1400x700x1200"]),
    # 68 (1e00332, the thirty-sixth change's kept form: at one block per SM only), ranked
    # before its sweep (device run F at 4cb5d94): six shapes off every tile, about one round
    # of the large tiles. The model's worst: 1100x1100x3000 (84.8 %) and 900x1300x2000
    # (87.4 %), both 64x32x16/4x4/db picked, best 64x64x16/8x4/p4/db (its rank 28 and 26).
    # Session 66's model makes the same six picks. The neighbours are below 95 % at
    # 1300x1000x1500 only
    ("heldout68", 67, "1e00332", (84.81, 92.11, 91.83, 95.06), 0.0798,
     (89.10, 96.57, 96.87, 99.48), 0.0579,
     ["1300x1000x1500"],
     ["1200x1200x900", "1450x1250x1800"]),
    # 69 (4edba8f, session 67's model; session 68 changed nothing), ranked before its sweep
    # (device run F at 9283e61): an M family at N = 1800, K = 1600 (M = 225 ... 7200). The
    # model's worst: 7200x1800x1600 (92.0 %, 64x128x16/8x8/db picked, best
    # 128x128x8/8x8/p4/db, its rank 18) and 1800x1800x1600 (93.6 %, 128x256x16/8x8/db/s8
    # picked, best 64x64x16/8x4/p4/db, its rank 11; the same best at 3600x1800x1600, rank
    # 16, as at five of round 68's shapes). The neighbours are below 95 % at
    # 3600x1800x1600 only and pick no shape's best
    ("heldout69", 68, "4edba8f", (92.04, 96.20, 94.66, 97.25), 0.0983,
     (91.05, 97.34, 94.66, 98.40), 0.0589,
     ["3600x1800x1600"],
     []),
    # 70 (6d8b1fd, session 68's model; ranked in session 69 before its sweep, device run F at
    # 93fde96): a batch family at 192x192x384 (batch 12 ... 384, 108 ... 3456 blocks of 64x64).
    # The model's worst: batch 96 (93.0 %, 64x64x16/4x8/p4/db picked, best 64x64x16/8x8/p4/db)
    # and batch 12 (97.2 %, 32x64x32/4x4/p4/db picked, best 64x64x32/8x4/p4/db); it picks the
    # best at batch 24, 48 and 384. The neighbours miss at batch 96 (83.7 %) and pick the best
    # at batch 48 and 384
    ("heldout70", 69, "6d8b1fd", (93.04, 98.22, 97.23, 99.38), 0.0878,
     (83.72, 95.96, 97.16, 98.85), 0.0699,
     ["192x192x384x96"],
     ["192x192x384x384", "192x192x384x48"]),
    # 71 (9e74e0a, the same model; ranked in session 69 before its sweep, device run F at
    # 34a5036): a diagonal family M = N, K = 2M (384 ... 3072), plain builds. The model's
    # worst: 1920x1920x3840 (92.7 %, 64x64x8/8x4/p4 picked, best 128x64x16/8x8/p4, its rank
    # 10) and 1536x1536x3072 (93.8 %); it picks the best at 384 and 768. At 3072x3072x6144
    # both rankings pick 64x128x32/8x8/p4 (95.0 %; the best, 128x64x16/8x8/p4, the model's
    # rank 35)
    ("heldout71", 70, "9e74e0a", (92.72, 96.13, 94.97, 97.99), 0.0773,
     (93.28, 98.04, 94.97, 99.16), 0.0575,
     ["1152x1152x2304", "3072x3072x6144"],
     ["1536x1536x3072", "1920x1920x3840", "384x384x768", "768x768x1536"]),
    # 72 (bafbf15, the same model; ranked in session 70 before its sweep, device run F at
    # c0976b2): LLM projection shapes at 128-512 tokens (N or K 4096-14336). The model's
    # top1 is at least 95 % on every shape (worst 384x6144x2048, 95.6 %, 64x64x32/8x4/p4
    # picked, best 32x128x16/8x4/p4) and it picks the best at 128x4096x14336,
    # 512x4096x11008 and 512x4096x14336; its top3 misses at 512x11008x4096 (97.2 %: the
    # best, 128x64x16/8x8/p4, its rank 52)
    ("heldout72", 71, "bafbf15", (95.65, 98.22, 97.17, 99.44), 0.0650,
     (97.75, 99.22, 97.75, 99.53), 0.0460,
     [],
     ["128x4096x14336", "256x14336x4096", "512x4096x11008"]),
    # 73 (d0161c9, the same model; ranked in session 70 before its sweep, device run F at
    # ccf0346): sizes that are no tile multiple (bounds-checked builds). The model's worst:
    # 700x2500x3500 (92.9 %, 128x128x16/8x8/p4/db picked, best 128x64x16/8x8/p4, its rank
    # 43) and 2500x700x1500 (95.0 %); it picks the best at 1500x1500x900. The neighbours
    # pick the best at 700x2500x3500 and miss at 3333x777x2048 (85.9 %)
    ("heldout73", 72, "d0161c9", (92.93, 96.29, 92.93, 97.53), 0.0737,
     (85.87, 96.71, 94.86, 98.91), 0.0518,
     ["3333x777x2048"],
     ["1500x1500x900", "700x2500x3500"]),
    # 74 (4c197c7, the same model; ranked in session 71 before its sweep, device run F at
    # 9328ae7): small batched shapes of 4-6 tiles of K. The model's worst: 128x64x96x32
    # (83.1 %) and 64x64x64x48 (88.4 %), where it picks 32x32x16/4x4/p4/db (predicted
    # 4.1 / 3.5 us, measured 7.6 / 6.0 us) and the best are BK 32 builds; its times are
    # 13.7 % off (the cold one-round launches of runs BC and BF)
    ("heldout74", 73, "4c197c7", (83.06, 91.93, 92.01, 96.64), 0.1367,
     (83.06, 91.55, 91.71, 97.67), 0.0906,
     ["128x64x96x32", "256x128x64x24", "64x64x64x48", "80x80x160x30", "96x96x32x40"],
     ["48x192x128x36"]),
    # 75 (b01daf4, the same model; ranked in session 72 before its sweep, device run F at
    # 96d4e04): mid-size batched shapes of 4-16 tiles of K. The model's worst:
    # 384x128x256x8 (87.7 %) and 192x192x256x10 (89.1 %), where it picks
    # 32x32x16/4x4/p4/db (16 tiles) and the best is 32x32x32/4x4/p4/db (8 tiles, its rank
    # 2): round 74's miss again; its times are 12.4 % off, every pick predicted too fast
    ("heldout75", 74, "b01daf4", (87.69, 92.62, 91.95, 96.92), 0.1238,
     (86.89, 94.65, 91.38, 96.83), 0.0804,
     ["128x384x192x12", "256x256x64x12", "256x512x128x6"],
     ["192x192x256x10", "384x128x256x8"]),
    # 76 (a96ddd2, session 72's model; ranked in session 73 before its sweep, device run F
    # at 67b745c): few blocks, long K (2-D, 256-640 rows and columns, K 4096-16384). The
    # model picks the best (32x64x32/4x4/p4/db) at five shapes and 32x32x32/4x4/p4/db at
    # 512x256x8192 (99.4 %); its times are 15.5 % off, the BK 8 builds up to 0.95 log too
    # fast (the cold tile load, device run BU). The neighbours pick 32x64x32/8x4/p4/db at
    # three shapes (88-90 %)
    ("heldout76", 75, "a96ddd2", (99.41, 99.90, 99.41, 99.90), 0.1549,
     (88.27, 94.26, 99.41, 99.90), 0.1119,
     ["384x384x6144", "448x448x7168", "640x320x10240"],
     ["256x768x4096", "320x640x16384"]),
    # 77 (64826a2, the same model; ranked in session 73 before its sweep, device run F at
    # 5044724): batched, few blocks, long K (4-16 batches of 64-160 square-ish tiles, K
    # 2048-8192). Both rankings pick 32x32x16/4x4/p4/db at every shape (55.6-59.3 % of the
    # best); the best is its BK 32 twin 32x32x32/4x4/p4/db (the model's rank 2 or 3) at
    # every shape. The model puts the pick at 36-140 us, measured 86-335 us: the cold tile
    # load of runs BP-BR and BU, which it does not have (one 2-warp block per SM waits about
    # 660 ns a tile; the BK 32 twin's tile work covers it)
    ("heldout77", 76, "64826a2", (55.62, 56.82, 100.00, 100.00), 0.1934,
     (55.62, 56.82, 100.00, 100.00), 0.1772,
     ["128x128x2048x8", "128x64x6144x6", "160x160x2048x10", "64x128x8192x4", "64x64x4096x16",
      "96x96x3072x12"],
     []),
    # 78 (ce2d612, the thirty-eighth change, the cold tile load; ranked in session 73 before
    # its sweep, device run F at 5215a50): its test, few blocks and long K again (2-D and
    # batched). The model picks the best (32x32x32/4x4/p4/db) at four shapes; at
    # 160x96x3072x14 (210 blocks, 1.6 per SM, where the term is off) it picks
    # 32x32x16/4x4/p4/db (59.0 %, round 77's miss), at 576x288x6144 64x32x32/4x4/p4/db
    # (91.9 %). The neighbours, with round 77 among them, pick the best at all six
    ("heldout78", 77, "ce2d612", (58.95, 91.80, 100.00, 100.00), 0.1790,
     (100.00, 100.00, 100.00, 100.00), 0.0762,
     [],
     ["160x96x3072x14", "192x96x2048x6", "384x192x12288", "576x288x6144", "64x96x6144x8",
      "96x64x4096x12"]),
    # 79 (20327bb, the thirty-ninth change, the cold tile load at up to three blocks per SM;
    # ranked in session 74 before its sweep, device run F at beb456b): its test, one round
    # at two or three 32x32 blocks per SM, K 3072-6144 (2-D and batched). Both rankings
    # pick the best at three shapes, 96x64x6144x30 among them (session 73's model there:
    # 32x32x16/4x4/p4/db, 58.4 %); they pick 32x32x32/4x4/p4/db at 576x576x5120 (86.9 %) and
    # 704x448x4096 (93.9 %), where its 8x4 twin is the best, and at 128x64x4096x40 (90.5 %)
    # where 64x64x32/8x4/p4/db is. The BK 32 double buffers are 0.17 log too slow
    ("heldout79", 78, "20327bb", (86.89, 95.21, 90.48, 98.41), 0.1510,
     (86.89, 95.21, 90.48, 98.41), 0.0703,
     ["128x64x4096x40", "576x576x5120", "704x448x4096"],
     ["640x384x6144", "64x96x3072x60", "96x64x6144x30"]),
    # 80 (b3440e1, the fortieth change, the cold tile load at one warp per scheduler; ranked
    # in session 75 before its sweep, device run F at 7dd15e6): one round at about four
    # 32x32 blocks per SM (2-D and batched). Both rankings pick the best 2-D shapes; the
    # model's misses are session 74's lead 1 again: at the batched 64x64x2048x132 and
    # 128x64x3072x66 the best is 64x64x32/8x4/p4/db at one warp per scheduler (ranked 8th
    # and 12th: its fetch floor, eta 0.41 from 73 KiB of code, where ncu counts no fetch
    # stall, run BW), and the model picks 32x64x32/4x4/p4/db (85.2 / 83.6 %)
    ("heldout80", 79, "b3440e1", (83.58, 93.71, 83.58, 94.73), 0.1331,
     (85.20, 93.66, 94.13, 98.95), 0.0954,
     ["128x64x3072x66", "64x64x2048x132", "96x96x1024x58"],
     ["1056x512x1536", "704x768x2048"]),
    # 81 (094a85f, the forty-first change, run BL's loop-in-code fetch rate at two warps per
    # scheduler; ranked in session 76 before its sweep, device run F at 328399e): no tile
    # multiples (2-D) and batched shapes, where the BK 32 8x8 /db builds with 143-168 KiB of
    # code run at w = 2. Their 60 timings: mean log error +0.314 with session 75's model,
    # +0.022 with the change (mean |error| 0.137); the picks are the same with either model
    # (those builds rank near the end at these shapes). The model's worst: 1900x1900x768
    # (88.5 %, 128x256x16/8x8/db/s8 picked)
    ("heldout81", 80, "094a85f", (88.51, 92.95, 88.51, 95.33), 0.0695,
     (94.41, 97.07, 94.41, 97.23), 0.0489,
     ["200x232x576x36", "3300x700x2048"],
     ["136x312x640x30", "1900x1900x768"]),
    # 82 (3cf09bd, session 76's model unchanged; ranked in session 77 before its sweep,
    # device run F at e2ed074): short K (128-256), three 2-D shapes (a first: only 1400x1400
    # at K 96 and 256 before) and three batched. The model's worst: 192x320x192x40 (91.3 %,
    # 64x64x16/8x4/p4/db picked where 64x64x16/4x8/db is best). Tried post hoc, not kept:
    # the C tile's bytes left out of the loop's bytes in flight (the loaded-latency factor),
    # mean top1 96.25 -> 95.87 %, times 8.3 -> 8.9 % (docs/model.md, session 77)
    ("heldout82", 81, "3cf09bd", (91.28, 96.25, 91.28, 97.00), 0.0832,
     (89.42, 97.67, 91.28, 98.50), 0.0534,
     ["192x320x192x40"],
     ["1536x3072x256", "256x256x128x48", "3000x2200x192"]),
    # 83 (89810b4, the same model; ranked in session 77 before its sweep, device run F at
    # 8b6c06e): round 82's miss as a family, batched launches of two to three rounds at K
    # 160-256 where the 64x64 8x4 /db builds run two blocks per SM, and three 2-D shapes.
    # At all three batched shapes the model picks a build it puts -0.17...-0.32 log fast
    # (82.7, 90.6, 89.0 %); in the 64x64x16 family the 8x4 builds are -0.11...-0.27 log fast,
    # the 4x4 and 4x8 /db ones within 0.03 but one, and 64x64x16/4x8/db is best at two of
    # the three, as at round 82's 192x320x192x40
    ("heldout83", 82, "89810b4", (82.66, 92.65, 85.52, 93.49), 0.0804,
     (84.47, 92.68, 85.52, 94.71), 0.0513,
     ["192x256x256x48", "256x320x224x30", "320x192x160x36"],
     ["1600x1216x192", "1920x1088x256"]),
]


@pytest.mark.parametrize(("round_", "index", "commit", "model", "model_mape", "neighbours",
                          "neighbours_mape", "below_95", "at_100"), SIXTEEN_NEIGHBOUR_ROUNDS)
def test_sixteen_neighbour_rounds_recorded_both_rankings(round_, index, commit, model,
                                                         model_mape, neighbours,
                                                         neighbours_mape, below_95, at_100):
    measured = check_heldout_round(index, commit, model)
    recorded_time_error(measured, round_, model_mape, 0.0005)
    rows, _ = check_neighbour_record(measured, round_, neighbours, neighbours_mape)
    assert sorted(r["shape"] for r in rows if r["top1_pct_of_best"] < 95.0) == below_95
    assert sorted(r["shape"] for r in rows
                  if r["top1_pct_of_best"] == pytest.approx(100.0)) == at_100
