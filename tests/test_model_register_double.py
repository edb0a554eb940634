"""A register-staged double buffer (thirty-fourth change, session 63; docs/model.md
"Session 63"): its pipes lose overlap only on its checked tiles (q x checked_share), and its
edge blocks take the launch's last edge block t_edge with their own scale,
edge_tail_scale_db, in place of the twenty-fourth change's critical last round (CPU only)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.compile.table import template_facts
from gemmmodel.model import assemble, load_calib
from gemmmodel.model.calib import DEFAULT_FIT
from gemmmodel.model.combine import MODES, evaluate
from gemmmodel.model.edge_tail import fit_edge_tail_scale
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name

H200 = load_spec("h200")
EDGE_SHAPE = (3000, 1000, 1024, 1)


def components(name, shape, edge=None):
    cfg = parse_name(name)
    params = cfg.params(32)
    if edge is not None:
        params = {**params, "bounds_checked": edge}
    return assemble(params, template_facts(cfg, H200, None, shape, edge=edge), H200, shape,
                    load_calib("h200"))


def theta():
    return load_calib("h200").theta()


def test_no_overlap_loss_without_checked_tiles():
    # the EDGE=1 build at a tile multiple (run P's 2048^3): registers, no checked tile
    comp = components("64x64x16/8x4/p4/db", (2048, 2048, 2048, 1), edge=True)
    assert comp.mode_code == MODES["double"] and comp.copy_share == 0
    assert comp.checked_share == 0
    # none beyond its two end tiles (thirty-fifth change: 1 / n of the full q, n = 128)
    assert comp.end_share == pytest.approx(1 / 128)
    parts = evaluate(comp, theta())
    assert evaluate(replace(comp, end_share=0.0), theta())["loss"] == 0.0
    assert 0 < parts["loss"] < 0.02 * parts["top"]
    # with half its tiles checked, half the overlap loss of the full q comes back
    half = evaluate(replace(comp, checked_share=0.5), theta())
    assert half["loss"] > 0 and half["total"] > parts["total"]
    # a single buffer keeps the full q whatever its checked share
    single = components("64x64x16/8x4/p4", (2048, 2048, 2048, 1), edge=True)
    assert evaluate(single, theta())["loss"] > 0
    assert evaluate(replace(single, checked_share=0.5), theta())["loss"] == \
        pytest.approx(evaluate(single, theta())["loss"])
    # the cp.async build (plain, the same shape) keeps its full q too
    copies = components("64x64x16/8x4/p4/db", (2048, 2048, 2048, 1))
    assert copies.copy_share > 0 and evaluate(copies, theta())["loss"] > 0


def test_register_double_edge_tail_hand_worked():
    comp = components("64x64x8/8x8/db", EDGE_SHAPE)
    assert comp.mode_code == MODES["double"] and comp.copy_share == 0
    assert comp.edge_issue_full > 1.0 and 0 < comp.checked_share < 0.1
    th = theta()
    parts = evaluate(comp, th)
    # rho_model: every block on the checked path (issue and its stalls x f) and every tile
    # checked (checked_share 1), over the launch as it is; launch and ramp left out
    f = comp.edge_issue_full
    full = evaluate(replace(comp, issue_s=comp.issue_s * f, mem_instr_s=comp.mem_instr_s * f,
                            checked_share=1.0, edge_issue_full=1.0), th)["total"]
    fixed = comp.launch_s + comp.ramp_s
    rho = (full - fixed) / (parts["total"] - parts["t_edge"] - fixed)
    assert parts["edge_ratio"] == pytest.approx(rho)
    assert parts["t_edge"] == pytest.approx(
        0.63 * (rho - 1.0) * parts["t_block"] * comp.edge_pile)
    assert evaluate(comp, {**th, "edge_tail_scale_db": 0.0})["t_edge"] == 0.0
    # the single buffers' scale does not touch it
    assert evaluate(comp, {**th, "edge_tail_scale": 0.0})["t_edge"] == \
        pytest.approx(parts["t_edge"])
    # the last round's latency is no longer the edge blocks': no edge_critical field
    assert not hasattr(comp, "edge_critical")


def test_no_edge_tail_at_a_tile_multiple():
    comp = components("64x64x8/8x8/db", (3072, 1024, 1024, 1), edge=True)
    parts = evaluate(comp, theta())
    assert comp.edge_issue_full == 1.0 and parts["t_edge"] == 0.0


def test_edge_tail_scale_db_is_the_fit_to_the_block_stamps():
    """Least squares through the origin over the 11 stamped register-staged launches
    (runs U, AB, AE, AQ); the committed value (calib.DEFAULT_FIT, both fit.json files) is
    that fit, rounded."""
    res = fit_edge_tail_scale("h200", double=True)
    assert res["n"] == 11
    assert all("/db" in r["config"] for r in res["rows"])
    assert res["scale"] == pytest.approx(0.63, abs=0.01)
    assert res["rms"] < 0.1
    assert DEFAULT_FIT["edge_tail_scale_db"] == 0.63
    for gpu in ("h200", "h100"):
        fit = json.loads((CALIBRATION_DIR / gpu / "fit.json").read_text())
        assert fit["params"]["edge_tail_scale_db"] == 0.63
        assert "edge_tail_scale_db" not in fit["fitted"]


def test_run_az_register_staged_edge_cost():
    """Run AZ (never fitted to): the register-staged builds' edge cost, measured +0.133 and
    +0.163 log; the twenty-fourth change's critical round put it at +0.033 and +0.051, the
    thirty-fourth change at +0.173 and +0.221 (over, by less)."""
    from gemmmodel.model.edge_shapes import edge_shape_check

    res = edge_shape_check("h200")
    doubles = [g for p in res["pairs"] for g in p["groups"]
               if g["buffering"] == "double (registers)"]
    assert len(doubles) == 2
    for g, before in zip(doubles, (0.033, 0.051)):
        assert g["n"] == 164 and g["correlation"] > 0.6
        assert abs(g["model_edge_cost"] - g["measured_edge_cost"]) < \
            abs(before - g["measured_edge_cost"])
    assert all(p["kendall_tau"] > 0.7 for p in res["pairs"])


def test_stamped_register_double_launches_are_the_known_limit():
    """The 11 stamped register-staged launches' makespans (not fitted to): the model is
    over by +0.126 log on average (the twenty-fourth change: +0.009), most at one warp per
    scheduler, where the base launch is already too slow (the fetch floor, run AY) and the
    pile multiplies an edge extra that is waiting rather than issuing."""
    import glob

    from gemmmodel.model.edge_tail import measured_edge_ratios

    runs = {}
    for path in glob.glob(str(CALIBRATION_DIR / "h200" / "tail_stamps*.json")):
        for r in json.loads(open(path).read())["runs"]:
            if "/db" in r["config"] and r.get("edge_blocks"):
                runs.setdefault((r["size"], r["config"]), []).append(r["makespan_us"])
    assert len(runs) == 11 == len([r for r in measured_edge_ratios("h200")
                                   if "/db" in r["config"]])
    errors, at_one = [], []
    for (size, name), spans in runs.items():
        shape = tuple(int(x) for x in size.split("x")) + (1,)
        comp = components(name, shape)
        err = float(np.log(evaluate(comp, theta())["total"] * 1e6 / np.median(spans)))
        errors.append(err)
        if comp.w == 1:
            at_one.append(err)
    assert 0.05 < np.mean(errors) < 0.2
    assert np.median(np.abs(errors)) < 0.1
    assert len(at_one) == 2 and min(at_one) > 0.25
