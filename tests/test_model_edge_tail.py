"""The launch's last edge block of a single buffer (twenty-eighth change, session 55;
gemmmodel/model/edge_tail.py, combine.evaluate_arrays)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.compile.table import template_facts
from gemmmodel.model import assemble, load_calib
from gemmmodel.model.calib import DEFAULT_FIT
from gemmmodel.model.combine import evaluate
from gemmmodel.model.edge_tail import fit_edge_tail_scale, measured_edge_ratios
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name

EDGE_SHAPE = (3000, 1000, 1024, 1)      # the training set's bounds-checked shape
MULTIPLE = (3072, 1024, 1024, 1)        # the same blocks, no block crosses M or N


def _parts(name, shape, **theta):
    spec, calib = load_spec("h200"), load_calib("h200")
    cfg = parse_name(name)
    comp = assemble(cfg.params(32), template_facts(cfg, spec, None, shape), spec, shape, calib)
    return comp, evaluate(comp, {**calib.fit, **theta})


def test_the_block_stamps_hold_edge_and_interior_durations():
    rows = measured_edge_ratios("h200")
    assert len(rows) == 29                      # runs U, AB, AD, AE, AQ with edge blocks
    single = [r["rho"] for r in rows if "/db" not in r["config"]]
    double = [r["rho"] for r in rows if "/db" in r["config"]]
    # the register double buffers' edge blocks run much longer than the single buffers'
    assert np.median(double) > 1.2 > np.median(single) > 1.05


def test_edge_tail_scale_is_the_fit_to_the_block_stamps():
    """Least squares through the origin over the 18 stamped single-buffer launches; the
    committed value (calib.DEFAULT_FIT, both fit.json files) is that fit, rounded."""
    res = fit_edge_tail_scale("h200")
    assert res["n"] == 18
    # 0.391 before session 59, 0.404 before session 63 (the thirty-fourth change's refit)
    assert res["scale"] == pytest.approx(0.42, abs=0.01)
    assert res["rms"] < 0.07
    assert DEFAULT_FIT["edge_tail_scale"] == 0.42
    for gpu in ("h200", "h100"):
        fit = json.loads((CALIBRATION_DIR / gpu / "fit.json").read_text())
        assert fit["params"]["edge_tail_scale"] == 0.42
        assert "edge_tail_scale" not in fit["fitted"]


def test_a_single_buffer_launch_ends_with_its_last_edge_block():
    """64x64x8/4x8 at 3000x1000x1024 (one round of 752 blocks, edge blocks in it): measured
    253.6 us (calibration/h200/template.csv); its EDGE=1 build at 3072x1024x1024, where no
    block crosses M or N, 202.4 us (run P). The term adds the edge block's extra."""
    comp, with_edge = _parts("64x64x8/4x8", EDGE_SHAPE)
    _, without = _parts("64x64x8/4x8", EDGE_SHAPE, edge_tail_scale=0.0)
    assert comp.edge_issue_full > 1.2
    assert with_edge["edge_ratio"] > 1.1
    # times the pile (thirty-third change): this build holds 6 blocks per SM, so the most
    # edge blocks on one SM are about twice a typical edge block's (tests/test_model_edge_pile)
    assert 1.5 < comp.edge_pile < 2.5
    assert with_edge["t_edge"] == pytest.approx(
        0.42 * (with_edge["edge_ratio"] - 1.0) * with_edge["t_block"] * comp.edge_pile)
    measured = 253.6e-6
    assert abs(np.log(with_edge["total"] / measured)) < abs(np.log(without["total"] / measured))
    # no block crosses M or N: nothing to wait for
    comp, plain = _parts("64x64x8/4x8", MULTIPLE)
    assert comp.edge_issue_full == 1.0 and plain["t_edge"] == 0.0 and plain["edge_ratio"] == 1.0
    assert comp.edge_pile == 1.0


def test_a_register_double_buffer_takes_its_own_scale():
    # thirty-fourth change (tests/test_model_register_double.py): edge_tail_scale_db
    comp, parts = _parts("64x64x8/8x8/db", EDGE_SHAPE)
    assert comp.edge_issue_full > 1.0 and parts["t_edge"] > 0.0
    _, off = _parts("64x64x8/8x8/db", EDGE_SHAPE, edge_tail_scale_db=0.0)
    assert off["t_edge"] == 0.0


def test_explain_shows_the_edge_term():
    _, parts = _parts("128x32x8/8x8", EDGE_SHAPE)
    from gemmmodel.explain import explain_kernel

    out = explain_kernel("128x32x8/8x8", "h200", "3000x1000x1024", allow_compile=False)
    text = json.dumps(out)
    assert "rho_model" in text and "edge_tail_scale" in text
    assert parts["t_edge"] > 0
