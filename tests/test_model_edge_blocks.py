"""Edge blocks (work.edge_block_term, combine.py t_edge; docs/model.md section 10, session
27): the blocks of the last block row and column take the checked loads and run longer
than the interior blocks of their round, and the launch's last block is one of them. Device
run U (calibration/h200/tail_stamps_u.json; H200 1980 MHz, driver 580.159.04) measured it.
Since session 55 the term prices a single buffer's last edge block by the model's own
fully-checked launch (edge_tail.py, tests/test_model_edge_tail.py)."""

import json

import numpy as np
import pytest
from model_parts import components

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model.calib import DEFAULT_FIT
from gemmmodel.model.combine import evaluate
from gemmmodel.model.kernel import describe
from gemmmodel.model.work import edge_block_term
from gemmmodel.template import parse_name

RUN_U = CALIBRATION_DIR / "h200" / "tail_stamps_u.json"


def test_edge_block_extra_hand_worked():
    desc = describe(parse_name("64x128x32/8x4/db").params(32))
    # 3000 x 1000: 47 x 8 blocks, 54 cross M or N: r - 1
    t = edge_block_term(desc, (3000, 1000, 1024, 1), {"checked_path_ratio": 1.3})
    assert t.value == pytest.approx(0.3) and t.inputs["edge_blocks"] == 54
    # a tile multiple (a batched launch of whole tiles, or K % BK alone): no block differs
    assert edge_block_term(desc, (3072, 1024, 1024, 1), {"checked_path_ratio": 1.3}).value == 0
    assert edge_block_term(desc, (3072, 1024, 1000, 1), {"checked_path_ratio": 1.3}).value == 0
    # rows not 16-byte aligned: every block checks, none is slower than the others
    assert edge_block_term(desc, (3000, 1002, 1024, 1), {"checked_path_ratio": 1.3}).value == 0
    # no ratio (plain build, catalogue kernel)
    assert edge_block_term(desc, (3000, 1000, 1024, 1), {}).value == 0


def _comp(**kw):
    """One 1-s issue pipe of 100 resident blocks, nothing else."""
    return components(**{"issue_s": 1.0, "units": 100.0, **kw})


def test_edge_time_is_the_last_rounds_share():
    assert DEFAULT_FIT["edge_tail_scale"] == 0.42
    # a single buffer whose every block on the checked path would issue 1.4x the work: the
    # fully checked launch takes 1.4 s for the 1-s issue pipe, rho_model = 1.4
    comp = _comp(edge_extra=0.4, rounds=2.0, edge_issue_full=1.4)
    on = evaluate(comp, {"edge_tail_scale": 1.0})
    assert on["edge_ratio"] == pytest.approx(1.4)
    # one round of the two (0.5 s) runs 0.4 longer for its edge block
    assert on["t_block"] == pytest.approx(0.5) and on["t_edge"] == pytest.approx(0.2)
    assert on["total"] == pytest.approx(1.2)
    assert evaluate(comp, {})["total"] == pytest.approx(1.0 + 0.42 * 0.4 * 0.5)
    assert evaluate(_comp(edge_extra=0.4, edge_issue_full=1.4),
                    {"edge_tail_scale": 0.5})["total"] == pytest.approx(1.2)
    # no edge block (or no checked path: edge_issue_full 1): nothing added
    assert evaluate(_comp(edge_extra=0.4, rounds=2.0), {"edge_tail_scale": 1.0})["total"] == \
        pytest.approx(1.0)


def _rep0(size):
    return {r["config"]: r for r in json.loads(RUN_U.read_text())["runs"]
            if r["size"] == size and r["rep"] == 0}


def _first_wave(run):
    """Median durations (us) of the first wave's interior and last-column blocks."""
    s, e = np.array(run["start_ns"]) / 1e3, np.array(run["end_ns"]) / 1e3
    gx, gy = run["grid"]
    by, bx = np.divmod(np.arange(len(s)), gx)
    first = s < 5
    col, row = bx == gx - 1, by == gy - 1
    return (float(np.median((e - s)[first & ~col & ~row])),
            float(np.median((e - s)[first & col])))


def test_run_u_edge_blocks_run_longer_only_where_they_cross_n():
    edge, whole = _rep0("3000x1000x1024"), _rep0("3072x1024x1024")
    assert set(edge) == set(whole) and len(edge) == 10
    assert all(r["edge_build"] == 1 for r in (*edge.values(), *whole.values()))
    ratios = {}
    for name in edge:
        if name == "128x128x16/8x8":  # 192 blocks on 132 SMs x 2: its last column runs alone
            continue
        inner_e, col_e = _first_wave(edge[name])
        inner_w, col_w = _first_wave(whole[name])
        # interior blocks equal at both shapes; the last column slower only at 3000 x 1000
        assert inner_e == pytest.approx(inner_w, rel=0.04), name
        ratios[name] = col_e / inner_e
        assert col_e / inner_e > 1.15, name
        assert col_w / inner_w < 1.25, name
    assert 1.15 < min(ratios.values()) and max(ratios.values()) < 1.5
    # the launch ends on them: 64x64x8/8x8/db, one round (0.95 waves), 235 us against 164
    assert edge["64x64x8/8x8/db"]["makespan_us"] > 1.3 * whole["64x64x8/8x8/db"]["makespan_us"]
