"""The edge-block pile-up (thirty-third change, session 62: edge_tail.edge_pile_term): the
launch ends with the CU that holds the most edge blocks at once. The term against
hand-worked values, its place in assemble and combine, the premise in run U's stamps, and
the held-out check on device run AZ."""

import json
import math

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model.edge_tail import edge_pile_term, most_edge_blocks

H200 = CALIBRATION_DIR / "h200"


def test_most_edge_blocks_hand_worked():
    # one slot per CU: the max of S Bernoulli(p) is 1 unless every CU holds none
    assert most_edge_blocks(1, 0.5, 2) == pytest.approx(0.75)
    assert most_edge_blocks(1, 0.1, 3) == pytest.approx(1 - 0.9 ** 3)
    # one CU: the mean of Binomial(c, p)
    assert most_edge_blocks(2, 0.5, 1) == pytest.approx(1.0)
    assert most_edge_blocks(6, 0.25, 1) == pytest.approx(1.5)
    # two CUs of two slots at p = 1/2: P(max >= 1) = 1 - (1/4)^2, P(max >= 2) = 1 - (3/4)^2
    assert most_edge_blocks(2, 0.5, 2) == pytest.approx((1 - 1 / 16) + (1 - 9 / 16))
    assert most_edge_blocks(4, 0.0, 132) == 0.0


def test_most_edge_blocks_against_an_independent_sum():
    c, p, s = 6, 62 / 752, 132
    pmf = [math.comb(c, k) * p ** k * (1 - p) ** (c - k) for k in range(c + 1)]
    cdf = np.cumsum(pmf)
    # E[max] = sum_k k * (F(k)^S - F(k-1)^S)
    expected = sum(k * (cdf[k] ** s - (cdf[k - 1] ** s if k else 0.0)) for k in range(c + 1))
    assert most_edge_blocks(c, p, s) == pytest.approx(expected, rel=1e-9)


def test_edge_pile_term():
    assert edge_pile_term(0, 768, 6, 132).value == 1.0
    # one slot: the max is at most one edge block, as the typical one's: no pile
    assert edge_pile_term(62, 752, 1, 132).value == 1.0
    t = edge_pile_term(62, 752, 6, 132)
    p = 62 / 752
    assert t.value == pytest.approx(most_edge_blocks(6, p, 132) / (1 + 5 * p))
    assert 1.5 < t.value < 3.0 and t.unit == "1"
    # more blocks per CU pile more edge blocks on one CU
    assert edge_pile_term(62, 752, 8, 132).value > edge_pile_term(62, 752, 3, 132).value
    # fewer blocks than CUs: only the CUs the launch fills count
    assert edge_pile_term(4, 20, 2, 132).inputs["cus"] == 20


def _components(config, shape):
    from gemmmodel.compile.table import template_facts
    from gemmmodel.model import assemble, load_calib
    from gemmmodel.spec import load_spec
    from gemmmodel.template import parse_name

    spec, calib = load_spec("h200"), load_calib("h200")
    cfg = parse_name(config)
    return assemble(cfg.params(32), template_facts(cfg, spec, None, shape), spec, shape,
                    calib), calib


def test_assemble_carries_the_pile_and_combine_scales_the_tail():
    from gemmmodel.model.combine import components_arrays, evaluate_arrays

    comp, calib = _components("64x64x8/4x8", (3000, 1000, 1024, 1))
    term = comp.terms["edge_pile"]
    assert comp.edge_pile == term.value > 1.0
    assert term.inputs["c"] >= 2
    flat, _ = _components("64x64x8/4x8", (3072, 1024, 1024, 1))
    assert flat.edge_pile == 1.0
    a = components_arrays([comp])
    one = dict(a, edge_pile=np.ones(1))
    with_pile = evaluate_arrays(a, calib.theta())
    without = evaluate_arrays(one, calib.theta())
    assert with_pile["t_edge"][0] > 0
    assert with_pile["t_edge"][0] == pytest.approx(without["t_edge"][0] * comp.edge_pile)


def test_run_u_stamps_end_later_with_more_edge_blocks_on_the_sm():
    """The premise: in run U's first round at 3000x1000x1024, the SMs that hold more edge
    blocks end it later (median over SMs with k edge blocks)."""
    import sys

    sys.path.insert(0, str(CALIBRATION_DIR.parent / "tools" / "device"))
    from tail_stamps import edge_mask

    runs = json.loads((H200 / "tail_stamps_u.json").read_text())["runs"]
    checked = 0
    for r in runs:
        if r["size"] != "3000x1000x1024" or r["rep"] != 0 or \
                r["config"] not in ("64x64x8/8x8/db", "64x64x16/8x4", "32x32x16/4x4"):
            continue
        start, end = np.array(r["start_ns"]) / 1e3, np.array(r["end_ns"]) / 1e3
        start, end = start - start.min(), end - start.min()
        sm = np.array(r["sm"])
        bm, bn = (int(x) for x in r["config"].split("/")[0].split("x")[:2])
        em = edge_mask((math.ceil(1000 / bn), math.ceil(3000 / bm)), (bm, bn), (3000, 1000))
        first = start < 5.0
        k = np.bincount(sm[first & em], minlength=132)
        ends = np.array([end[first & (sm == s)].max() if (first & (sm == s)).any() else np.nan
                         for s in range(132)])
        med = [np.nanmedian(ends[k == j]) for j in range(k.max() + 1) if (k == j).sum() >= 2]
        assert len(med) >= 3
        assert med[-1] > med[0] * 1.1, (r["config"], med)
        checked += 1
    assert checked == 3


def test_run_az_held_out_edge_cost(monkeypatch):
    """Run AZ (never fitted to): the single buffers' edge cost, measured against the model,
    with the pile and without it."""
    import sys

    from gemmmodel.model.edge_shapes import edge_shape_check
    from gemmmodel.model.terms import Term

    res = edge_shape_check("h200")
    singles = [g for p in res["pairs"] for g in p["groups"] if g["buffering"] == "single"]
    assert len(singles) == 2
    for g in singles:
        assert g["n"] == 208
        assert abs(g["model_edge_cost"] - g["measured_edge_cost"]) < 0.03
        assert g["rms_difference"] < 0.05 and g["correlation"] > 0.6
    asm = sys.modules["gemmmodel.model.assemble"]   # the package exports the function
    monkeypatch.setattr(asm, "edge_pile_term",
                        lambda *a, **k: Term("edge_pile", 1.0, "1", "1 (test: no pile)"))
    flat = edge_shape_check("h200")
    flat_singles = [g for p in flat["pairs"] for g in p["groups"]
                    if g["buffering"] == "single"]
    for g, f in zip(singles, flat_singles):
        assert g["rms_difference"] < f["rms_difference"]
        assert abs(g["model_edge_cost"] - g["measured_edge_cost"]) < \
            abs(f["model_edge_cost"] - f["measured_edge_cost"])


def test_no_run_az_is_a_clear_error(tmp_path):
    from gemmmodel.errors import GemmModelError
    from gemmmodel.model.edge_shapes import edge_shape_check

    (tmp_path / "h200").mkdir()
    with pytest.raises(GemmModelError, match="no device run AZ"):
        edge_shape_check("h200", tmp_path)
