"""The busiest CU's partial last round (combine.py evaluate_arrays, assemble._tail_round;
docs/model.md section 10, session 28): where the busiest CU runs more blocks than fit at
once and their count is not a multiple of what fits, the last round's blocks run without
the others' overlap, and the model combines that round with its own units and waves."""

import math

import numpy as np
import pandas as pd
import pytest
from model_parts import components
from scipy.stats import kendalltau

from gemmmodel import CALIBRATION_DIR
from gemmmodel.compile.table import template_facts
from gemmmodel.model import assemble, load_calib, predict_components
from gemmmodel.model.combine import evaluate
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name

#: Every efficiency at 1 and no fitted per-instruction or wait cost: hand-worked numbers.
PLAIN = {"issue_efficiency": 1.0, "lds_efficiency": 1.0, "mem_efficiency": 1.0,
         "overlap_loss": 1.0, "mem_instr_clk": 0.0, "async_wait_clk": 0.0,
         "latency_scale": 1.0, "edge_tail_scale": 0.0}


def _comp(**kw):
    """Three block-iterations of 1 s on the busiest CU, 2 blocks resident, L = 1 s."""
    return components(**{"issue_s": 3.0, "w": 2.0, "units": 2.0, "n_unit_iters": 3.0,
                         "lat_g_s": 1.0, **kw})


def test_last_round_hand_worked():
    # three block-iterations of 1 s each on the busiest CU, 2 blocks resident, L = 1 s.
    # All rounds full (no tail): C_cu = 1, (C_alone + L)/u - C_cu = 0, q_L = 0.5^2,
    # exposed = 1/3 per unit iteration -> 3 + 3 * 1/3 = 4
    assert evaluate(_comp(), PLAIN)["total"] == pytest.approx(4.0)
    # 2 together, then 1 alone (s = 1/3, u = 1, w = 1): the full round 2 + 2/3, the last
    # round 1 s of pipes and exposed max((1 + 1)/1 - 1, 1 * 0.5 / 0.5) = 1 -> 4 2/3
    parts = evaluate(_comp(tail_share=1 / 3, tail_units=1.0, tail_w=1.0), PLAIN)
    assert parts["t_tail"] == pytest.approx(2.0)
    assert parts["t_tail_latency"] == pytest.approx(1.0)
    assert parts["total"] == pytest.approx(4.0 + 2.0 / 3.0)
    # the last round keeps the full rounds' overlap where it has as many units and waves
    same = evaluate(_comp(tail_share=1 / 3, tail_units=2.0, tail_w=2.0), PLAIN)
    assert same["total"] == pytest.approx(4.0)
    # each round group waits its own prologue: fill 1.5 latencies -> 1 + 1
    fill = evaluate(_comp(fill_blocks=1.5, tail_share=1 / 3, tail_units=2.0, tail_w=2.0),
                    PLAIN)
    assert fill["fill"] == pytest.approx(2.0)


def _h200_components(name, shape):
    spec = load_spec("h200")
    calib = load_calib("h200")
    cfg = parse_name(name)
    facts = template_facts(cfg, spec, None, shape)
    return assemble(cfg.params(32), facts, spec, shape, calib), calib


def test_tail_round_fields_from_occupancy():
    # the bounds-checked 64x128x16/8x8 (181 registers, 2 blocks/SM) at 3000x1000x1024:
    # 47 x 8 = 376 blocks on 132 SMs, the busiest SM runs 3: 2 together, then 1 alone
    comp, _ = _h200_components("64x128x16/8x8", (3000, 1000, 1024, 1))
    assert comp.tail_share == pytest.approx(1 / 3)
    assert comp.tail_units == 1.0
    assert comp.tail_w == 1.0                          # 4 warps on 4 schedulers
    assert comp.tail_alone == 1.0
    # 128x128x32/4x4 (4 blocks/SM at 64 registers) at 3072x1024x1024: 192 blocks, 2 on the
    # busiest SM together, no partial round
    comp, _ = _h200_components("128x128x32/4x4", (3072, 1024, 1024, 1))
    assert comp.tail_share == 0.0


def test_last_round_orders_the_bounds_checked_builds_of_run_p(monkeypatch):
    """Run P (calibration/h200/edge_cost_edge.csv, H200): the bounds-checked builds timed at
    3072x1024x1024, where no block crosses M or N. Their register counts move many of them
    to fewer blocks per SM and a partial last round; the committed model orders the 372
    builds with Kendall tau 0.51 (0.36 without the last round, session 27)."""
    from gemmmodel.template import plan

    spec = load_spec("h200")
    calib = load_calib("h200")
    frame = pd.read_csv(CALIBRATION_DIR / "h200" / "edge_cost_edge.csv")
    frame = frame[frame["shape"] == "3072x1024x1024x1"]
    shape = (3072, 1024, 1024, 1)
    # the EDGE=1 build at a tile multiple: its registers, and no cp.async
    monkeypatch.setattr(plan, "shape_needs_edge", lambda cfg, s: True)
    monkeypatch.setattr(plan, "needs_edge", lambda cfg, m, n, k: True)
    pred = []
    for name in frame["config"]:
        cfg = parse_name(name)
        comp = assemble(cfg.params(32), template_facts(cfg, spec, None, shape), spec, shape,
                        calib)
        pred.append(predict_components(comp, shape, calib).time_s)
    assert len(pred) == 372
    tau = kendalltau(pred, frame["median_s"])[0]
    assert tau > 0.45
    err = np.abs(np.log(np.array(pred) / frame["median_s"].to_numpy()))
    assert math.exp(np.mean(err)) - 1 < 0.13
