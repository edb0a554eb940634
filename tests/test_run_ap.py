"""Device run AP (tools/device/run_ap.sh, H200; docs/model.md "Session 46"): round 44's worst
shape for the model, 96x488x352x36 (batched; the last 32x64 block column is an edge column),
against the same batch at 96x512x352x36 (no edge tile for 32x64 or 32x128 blocks). The
one-warp 8x8 picks run 1.5-1.7x as long with the edge column; the launch lasts as long as
the schedulers that hold two edge warps."""

import math
import statistics

import pytest
from ncu_counters import counter, launches

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model.resweep import read_sweep

FOLDER = CALIBRATION_DIR / "h200"
EDGE, PLAIN = "96x488x352x36", "96x512x352x36"
E, P = (96, 488, 352, 36), (96, 512, 352, 36)
PICKS = ("32x64x16/8x8/p4/db", "32x64x16/8x8/p4")


def test_the_edge_column_costs_the_one_warp_picks_their_time():
    ap = read_sweep(FOLDER, "sweep_ap.csv")
    assert len(ap) == 3 * 372
    for cfg in PICKS:
        assert ap[(cfg, E)] > 1.45 * ap[(cfg, P)]
    # the best config at the edge shape pays far less for it
    best = min((t, c) for (c, s), t in ap.items() if s == E)[1]
    assert best == "32x128x32/8x4/p4/db"
    assert ap[(best, E)] < 1.3 * ap[(best, P)]
    # round 44's sweep of the same shape, repeated: the median config moved < 1 %, and
    # fewer than 2 % of the configs by more than 5 %
    r44 = read_sweep(FOLDER, "selection_sweep_heldout44.csv")
    moved = [abs(math.log(r44[(c, E)] / ap[(c, E)])) for c, s in ap if s == E]
    assert statistics.median(moved) < 0.01
    assert sum(m > 0.05 for m in moved) < 0.02 * len(moved)


def test_the_busiest_scheduler_runs_two_edge_warps():
    edge, plain = launches(f"ncu_ap_{EDGE}.txt"), launches(f"ncu_ap_{PLAIN}.txt")
    pick_e, pick_p = edge[PICKS[0]], plain[PICKS[0]]
    inst = "smsp__inst_executed.sum"
    # 108 edge one-warp blocks of 864 (the last of 8 block columns): 6 % more instructions
    assert counter(pick_e, "sm__ctas_launched.sum") == 864
    assert counter(pick_e, inst) == pytest.approx(1.06 * counter(pick_p, inst), rel=0.02)
    per_warp = counter(pick_p, inst) / 864
    extra = (counter(pick_e, inst) - counter(pick_p, inst)) / 108
    # an edge warp executes ~1.5x an interior one's instructions (the static loop ratio of the
    # bounds-checked build, edge_block_extra, says 1.70)
    assert 0.4 < extra / per_warp < 0.6
    # the busiest scheduler: two interior warps without the edge column, two edge warps with it
    busiest = "smsp__inst_executed.max"
    assert counter(pick_p, busiest) == pytest.approx(2 * per_warp, rel=0.03)
    assert counter(pick_e, busiest) == pytest.approx(2 * (per_warp + extra), rel=0.03)
    # so the busiest SM is active 1.5x its mean there, 1.07x without the edge column
    active = "sm__cycles_active"
    assert counter(pick_e, f"{active}.max") > 1.45 * counter(pick_e, f"{active}.avg")
    assert counter(pick_p, f"{active}.max") < 1.1 * counter(pick_p, f"{active}.avg")
