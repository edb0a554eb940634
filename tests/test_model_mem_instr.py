"""The non-VALU instruction stall (docs/model.md section 10, eleventh change): every LDS,
global, barrier and wait instruction of a wave iteration holds its SIMD's issue
mem_instr_clk clocks beyond its own slot, on the busiest CU:
    P_issue = t_issue / issue_efficiency + mem_instr_clk * n_mem_instr / clock_hz."""

import json

import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model import assemble, load_calib, predict_kernel
from gemmmodel.model.calib import DEFAULT_FIT, FIT_BOUNDS, FITTED_BY_DEFAULT
from gemmmodel.model.combine import components_arrays, evaluate
from gemmmodel.model.fit import fit_theta, predict_times
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name

H200 = load_spec("h200")
SHAPE = (4096, 4096, 4096)


def _comp(name, shape=SHAPE, spec=H200):
    return assemble(parse_name(name).params(int(spec.wave_size)), None, spec, shape)


def test_mem_instr_count_is_the_busiest_simds_non_valu_instructions():
    comp = _comp("64x64x16/4x4")
    issue = comp.terms["t_issue_s"]
    cyc = issue.child("issue_cycles_per_wave_iteration").inputs
    n = issue.inputs["wave_iterations_per_simd"] * cyc["non_valu"]
    assert issue.inputs["n_mem_instr"] == pytest.approx(n) and n > 0
    assert comp.mem_instr_s == pytest.approx(n / comp.clock_hz)
    # hand-worked: 4096^3 with 64x64 blocks of 256 threads = 4096 blocks, ceil(4096/132) = 32
    # on the busiest SM, 8 warps each over 4 schedulers, 256 tile iterations
    assert issue.inputs["wave_iterations_per_simd"] == pytest.approx(32 * 8 / 4 * 256)


def test_issue_pipe_adds_the_stall_per_instruction():
    comp = _comp("64x64x16/4x4")
    a = evaluate(comp, {"issue_efficiency": 0.5, "mem_instr_clk": 0.0})
    b = evaluate(comp, {"issue_efficiency": 0.5, "mem_instr_clk": 3.0})
    assert a["pipe_issue"] == pytest.approx(comp.issue_s / 0.5)
    assert b["pipe_issue"] - a["pipe_issue"] == pytest.approx(3.0 * comp.mem_instr_s)
    assert b["total"] > a["total"]


def test_stall_weighs_more_on_lds_heavy_tiles():
    """A 4x4 tile issues 2 128-bit LDS reads per 16 FMAs of a k step, an 8x8 tile 4 per 64:
    the stall's share of the issue pipe is larger for the 4x4 tile."""
    share = {}
    for name in ("64x64x16/4x4", "128x128x16/8x8"):
        comp = _comp(name)
        share[name] = comp.mem_instr_s / comp.issue_s
    assert share["64x64x16/4x4"] > 1.5 * share["128x128x16/8x8"]


def test_default_is_negligible_and_fitted_by_default():
    assert DEFAULT_FIT["mem_instr_clk"] == pytest.approx(0.1)
    assert "mem_instr_clk" in FITTED_BY_DEFAULT and len(FITTED_BY_DEFAULT) <= 5
    lo, hi = FIT_BOUNDS["mem_instr_clk"]
    assert 0 < lo < DEFAULT_FIT["mem_instr_clk"] < hi


def test_fit_recovers_a_known_stall():
    truth = {"overlap_loss": 1.5, "lds_efficiency": 0.85, "issue_efficiency": 0.7,
             "async_wait_clk": 120.0, "mem_instr_clk": 2.5}
    comps = [_comp(n, s)
             for n in ("64x32x8/8x8/db", "64x64x16/4x4/db", "128x128x32/8x8", "32x32x8/4x4",
                       "64x32x8/8x8", "128x64x16/8x8/p4", "32x64x16/4x8")
             for s in ((4096, 4096, 4096), (1024, 1024, 1024), (2048, 512, 8192),
                       (8192, 256, 2048))]
    times = predict_times(components_arrays(comps), truth)
    res = fit_theta(comps, times)
    assert res.fitted == FITTED_BY_DEFAULT
    assert res.params["mem_instr_clk"] == pytest.approx(2.5, rel=0.03)
    assert res.params["issue_efficiency"] == pytest.approx(0.7, rel=0.03)
    assert res.rms_log_error < 1e-3


def test_h200_fit_has_the_stall_and_the_tree_shows_it():
    data = json.loads((CALIBRATION_DIR / "h200" / "fit.json").read_text())
    lo, hi = FIT_BOUNDS["mem_instr_clk"]
    assert "mem_instr_clk" in data["fitted"] and lo < data["params"]["mem_instr_clk"] < hi
    pred = predict_kernel(parse_name("64x64x16/4x4").params(32), None, H200, SHAPE,
                          load_calib("h200"))
    issue = pred.root.child("t_pipes_s").child("t_issue_s")
    stall = issue.inputs["mem_instr_stall_s"]
    assert stall > 0
    assert issue.value == pytest.approx(issue.inputs["base_s"] / issue.inputs["issue_efficiency"]
                                        + stall)
