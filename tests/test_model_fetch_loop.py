"""A loop inside larger code (gemmmodel/model/fetch.py, forty-first change, session 76): at two
warps per scheduler the fetch floor's rate is the larger of run AC's (a straight-line loop
of the whole code's size) and run BL's (a hot loop of the main loop's size run `trips` times
inside the whole code, the blocks out of step; calibration/h200/icache_phase.json)."""

from dataclasses import replace

import pytest
from test_model_fetch import components

from gemmmodel import CALIBRATION_DIR
from gemmmodel.compile.table import template_table_facts
from gemmmodel.model import load_calib
from gemmmodel.model.combine import evaluate
from gemmmodel.model.fetch import (
    LOOP_IN_CODE_WARPS,
    NO_STALL_WARPS,
    fetch_term,
    load_icache,
    load_icache_phase,
    loop_code_kib,
    loop_in_code_rate,
)
from gemmmodel.spec import load_spec

FOLDER = CALIBRATION_DIR / "h200"
SHAPE = (3000, 1000, 1024, 1)


def _measured(name: str) -> float:
    """The committed median time of a template build at 3000x1000x1024 (template.csv)."""
    import csv

    want = f"K=1024;M=3000;N=1000;config={name}"
    with open(FOLDER / "template.csv") as fh:
        rows = [r for r in csv.DictReader(fh) if r["name"] == "template" and r["params"] == want]
    assert len(rows) == 1, name
    return float(rows[0]["time_s"])


def test_run_bl_is_loaded_with_both_steps_at_every_point():
    table = load_icache_phase(FOLDER)
    assert len(table) == 162
    assert sorted({r[0] for r in table}) == [1.0, 2.0, 4.0]
    assert sorted({r[1] for r in table}) == [24.0, 48.0]
    assert sorted({r[2] for r in table}) == [4.0, 16.0, 64.0]
    assert {r[4] for r in table} == {True, False}
    assert load_icache_phase(FOLDER / "no-such-gpu") == ()


def test_the_rate_is_run_bls_out_of_step_at_its_points_and_held_at_its_ends():
    table = load_icache_phase(FOLDER)
    measured = {(r[4]): r[5] for r in table
                if r[0] == 2.0 and r[1] == 48.0 and r[2] == 64.0 and r[3] == 144.0}
    assert measured[True] == pytest.approx(0.93, abs=0.01)
    assert measured[False] == pytest.approx(0.57, abs=0.01)
    assert loop_in_code_rate(table, 48, 144, 64, 2) == pytest.approx(measured[False])
    # a 59 KiB loop is held at run BL's 48 KiB, 128 trips at its 64
    assert loop_in_code_rate(table, 59, 144, 128, 2) == pytest.approx(measured[False])
    # halfway between two measured code sizes and between the two loop sizes
    at = {(r[1], r[3]): r[5] for r in table
          if r[0] == 2.0 and r[2] == 64.0 and not r[4]}
    assert loop_in_code_rate(table, 48, 160, 64, 2) == pytest.approx(
        (at[(48.0, 144.0)] + at[(48.0, 176.0)]) / 2)
    # fewer trips: the cold code's share grows and the rate falls
    assert loop_in_code_rate(table, 48, 144, 4, 2) < measured[False] - 0.05


def test_the_rule_is_off_outside_two_warps_and_without_its_inputs():
    table = load_icache_phase(FOLDER)
    assert LOOP_IN_CODE_WARPS == 2.0 and NO_STALL_WARPS == 3.0
    assert loop_in_code_rate(table, 48, 144, 32, 1.0) is None
    assert loop_in_code_rate(table, 48, 144, 32, 3.0) is None
    assert loop_in_code_rate((), 48, 144, 32, 2.0) is None
    assert loop_in_code_rate(table, None, 144, 32, 2.0) is None
    assert loop_in_code_rate(table, 48, None, 32, 2.0) is None


def test_run_bl_only_raises_run_acs_rate():
    ac = load_icache(FOLDER)
    past = fetch_term(ac, 156.0, 2.0, loop_eta=0.56)
    assert past.value == pytest.approx(0.56)
    assert past.inputs["eta_AC"] == pytest.approx(0.33, abs=0.01)
    # below the cliff run AC's 0.97 stays, whatever run BL says
    below = fetch_term(ac, 96.0, 2.0, loop_eta=0.45)
    assert below.value == pytest.approx(0.97, abs=0.01) and "eta_AC" not in below.inputs


def test_the_loop_size_comes_from_the_template_table():
    spec = load_spec("h200")
    facts = template_table_facts("sm_90", True)["32x128x32/8x8/db"]
    assert loop_code_kib(facts, spec) == pytest.approx(3798 * 16 / 1024)
    assert loop_code_kib({"code_instructions": 9978.0}, spec) is None
    assert loop_code_kib(facts, load_spec("mi100")) is None


def test_the_bk32_8x8_edge_builds_past_the_cliff_move_towards_their_times():
    """The rows that motivated the change: LOKO had 32x128x32/8x8/db and 64x64x32/8x8/db at
    3000x1000x1024 +0.47 and +0.45 log slow with run AC's 0.33-0.36 (ncu run AS: 47 % of
    cycles issuing at 1.9 warps per scheduler, more than that floor allows)."""
    import math

    calib = load_calib("h200")
    theta = calib.theta()
    for name, kib in (("32x128x32/8x8/db", 155.9), ("64x64x32/8x8/db", 143.0)):
        comp = components(name, SHAPE, calib)
        bare = components(name, SHAPE, replace(calib, icache_phase=()))
        term = comp.terms["instruction_fetch_rate"]
        assert term.inputs["code_KiB"] == pytest.approx(kib, abs=0.1)
        assert term.inputs["trips"] == 32 and term.inputs["eta_BL"] == comp.fetch_rate
        assert bare.fetch_rate < 0.37 and 0.5 < comp.fetch_rate < 0.6
        meas = _measured(name)
        new = math.log(evaluate(comp, theta)["total"] / meas)
        old = math.log(evaluate(bare, theta)["total"] / meas)
        assert old > 0.4 and 0.0 < new < old - 0.15


def test_a_build_below_the_cliff_keeps_run_acs_rate():
    # 64x32x16/8x8/db at 3000x1000x1024: 98 KiB at w = 2, run AC 0.97 above run BL's
    calib = load_calib("h200")
    comp = components("64x32x16/8x8/db", SHAPE, calib)
    bare = components("64x32x16/8x8/db", SHAPE, replace(calib, icache_phase=()))
    assert comp.w == 2.0 and comp.fetch_rate == bare.fetch_rate == pytest.approx(0.97, abs=0.01)
