"""Instruction fetch (gemmmodel/model/fetch.py; device run AC, calibration/h200/icache.json;
docs/model.md section 10, twenty-third change): the issue rate of a straight-line FFMA loop
against its code size, interpolated, and the issue-pipe floor the model takes from it."""

import json
from dataclasses import replace

import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.compile.table import template_facts
from gemmmodel.model import assemble, load_calib
from gemmmodel.model.combine import evaluate
from gemmmodel.model.fetch import (
    NO_STALL_WARPS,
    NVIDIA_INSTRUCTION_BYTES,
    code_kib,
    fetch_rate,
    fetch_term,
    load_icache,
    ncu_fetch_stalls,
    stall_rate,
)
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name

FOLDER = CALIBRATION_DIR / "h200"


def test_run_ac_was_measured_on_the_h200_with_every_point_placed():
    doc = json.loads((FOLDER / "icache.json").read_text())
    assert doc["gpu"] == "NVIDIA H200" and doc["sms"] == 132
    assert doc["clocks"]["sm_clock_hz"] == pytest.approx(1.98e9)
    rows = doc["rows"]
    assert len(rows) == 19 * 6
    for r in rows:   # every SM ran exactly nb blocks, all at once
        assert r["sms_used"] == 132 and r["blocks_per_sm_seen"] == [r["blocks_per_sm"]]
        assert r["min_blocks_at_once"] == r["blocks_per_sm"]


def test_one_warp_per_scheduler_falls_off_two_cliffs():
    table = load_icache(FOLDER)
    # docs/model.md: 0.94-0.98 up to 28 KiB, 0.41 from 40 KiB, 0.17 from 144 KiB (w = 1)
    assert all(fetch_rate(table, k, 1) > 0.94 for k in (8, 16, 24, 28))
    assert all(fetch_rate(table, k, 1) == pytest.approx(0.41, abs=0.01) for k in (40, 64, 112))
    assert all(fetch_rate(table, k, 1) == pytest.approx(0.17, abs=0.005) for k in (144, 256))
    # two warps stay near the peak up to 112 KiB; four sit near 0.66 beyond 48 KiB
    assert all(fetch_rate(table, k, 2) > 0.95 for k in (8, 48, 96, 112))
    assert fetch_rate(table, 192, 2) == pytest.approx(0.33, abs=0.01)
    assert fetch_rate(table, 64, 4) == pytest.approx(0.66, abs=0.01)


def test_fetch_rate_interpolates_and_holds_at_the_ends():
    table = ((8.0, 1.0, 0.9), (16.0, 1.0, 0.5), (8.0, 2.0, 1.0), (16.0, 2.0, 0.7))
    assert fetch_rate(table, 12.0, 1.0) == pytest.approx(0.7)
    assert fetch_rate(table, 12.0, 1.5) == pytest.approx(0.5 * (0.7 + 0.85))
    assert fetch_rate(table, 4.0, 1.0) == pytest.approx(0.9)      # below the smallest size
    assert fetch_rate(table, 40.0, 8.0) == pytest.approx(0.7)     # beyond both ends
    assert fetch_rate((), 40.0, 1.0) == 1.0 and fetch_rate(table, None, 1.0) == 1.0


def test_code_size_needs_an_nvidia_build_with_its_instruction_count():
    class Spec:
        vendor = "nvidia"

    class Amd:
        vendor = "amd"

    assert code_kib({"code_instructions": 2048}, Spec()) == 2048 * 16 / 1024 == 32.0
    assert NVIDIA_INSTRUCTION_BYTES == 16
    assert code_kib({"code_instructions": 2048}, Amd()) is None
    assert code_kib({}, Spec()) is None and code_kib(None, Spec()) is None


H200 = load_spec("h200")


def components(name, shape, calib):
    cfg = parse_name(name)
    return assemble(cfg.params(32), template_facts(cfg, H200, None, shape), H200, shape, calib)


def test_the_batched_bk32_8x8_build_is_fetch_bound_and_its_bk16_twin_is_not():
    # 64x64x32/8x8/p4/db, batched entry: 9437 instructions (147 KiB), one warp per
    # scheduler at 176x104x448x40; ncu (run AB) put 45 % of its warp samples on no_instruction
    calib = load_calib("h200")
    comp = components("64x64x32/8x8/p4/db", (176, 104, 448, 40), calib)
    fetch = comp.terms["instruction_fetch_rate"]
    assert fetch.inputs["code_KiB"] == pytest.approx(9437 * 16 / 1024)
    assert fetch.inputs["w"] == 1.0 and comp.fetch_rate == pytest.approx(0.169, abs=0.002)
    theta = calib.theta()
    assert evaluate(comp, theta)["pipe_issue"] == pytest.approx(comp.issue_s / comp.fetch_rate)
    # the BK 16 twin's code fits below the first cliff: its issue pipe is the usual one
    twin = components("64x64x16/8x8/p4/db", (176, 104, 448, 40), calib)
    assert twin.terms["instruction_fetch_rate"].inputs["code_KiB"] < 100
    p = evaluate(twin, theta)
    usual = twin.issue_s / theta["issue_efficiency"] + theta["mem_instr_clk"] * twin.mem_instr_s
    assert p["pipe_issue"] == pytest.approx(max(usual, twin.issue_s / twin.fetch_rate))


def test_no_fetch_term_without_the_table():
    calib = load_calib("h200")
    shape = (176, 104, 448, 40)
    comp = components("64x64x32/8x8/p4/db", shape, calib)
    bare = components("64x64x32/8x8/p4/db", shape, replace(calib, icache=()))
    assert "instruction_fetch_rate" not in bare.terms and bare.fetch_rate == 1.0
    theta = calib.theta()
    assert evaluate(bare, theta)["total"] < evaluate(comp, theta)["total"]


def test_ncu_measured_no_fetch_stall_from_three_warps_per_scheduler():
    """The evidence for NO_STALL_WARPS (fetch.py, twenty-ninth change): the committed ncu
    runs of the template's launches (calibration/h200/ncu_*.txt, runs G to AS)."""
    rows = ncu_fetch_stalls(FOLDER)
    assert len(rows) >= 150
    busy = [r["no_instruction"] for r in rows if r["warps"] >= 2.6]
    few = [r["no_instruction"] for r in rows if r["warps"] < 2.0]
    assert len(busy) >= 90 and max(busy) <= 0.15
    assert sorted(busy)[len(busy) // 2] <= 0.05
    # below two active warps the large loops stall on fetch (run AB's batched BK 32 8x8 build
    # 1.42; run AS's bounds-checked BK 32 8x8 /db builds at 3072x1024x1024 0.28-0.36)
    assert max(few) > 1.0 and sum(x >= 0.25 for x in few) >= 8
    forced = {r["config"]: r["no_instruction"] for r in rows
              if r["file"] == "ncu_as_3072x1024x1024.txt"}
    for tile in ("32x128x32/8x8/db", "64x64x32/8x8/db", "128x64x32/8x8/db"):
        assert forced[tile + "+edge"] > forced[tile] + 0.1


def test_the_floor_applies_below_three_warps_per_scheduler_only():
    table = load_icache(FOLDER)
    assert NO_STALL_WARPS == 3.0
    assert stall_rate(table, 64, 4) == 1.0 and fetch_rate(table, 64, 4) < 0.7
    assert stall_rate(table, 192, 2) == fetch_rate(table, 192, 2) < 0.34
    assert stall_rate(table, 64, 1) == pytest.approx(0.41, abs=0.01)
    term = fetch_term(table, 64.0, 4.0)
    assert term.value == 1.0 and term.inputs["eta_table"] == pytest.approx(0.66, abs=0.01)
    assert fetch_term(table, 64.0, 1.0).value == pytest.approx(0.41, abs=0.01)


def test_a_bounds_checked_build_at_three_warps_has_no_floor_and_its_last_round_does():
    # 128x64x8/8x8/db at 3000x1000x1024: 3 blocks per SM (w = 3), one round, no floor;
    # 128x64x32/8x8/db (w = 2) keeps its table rate, and its partial last round at w = 1
    calib = load_calib("h200")
    comp = components("128x64x8/8x8/db", (3000, 1000, 1024, 1), calib)
    assert comp.w == 3.0 and comp.fetch_rate == 1.0
    assert comp.terms["instruction_fetch_rate"].inputs["eta_table"] < 0.8
    two = components("128x64x32/8x8/db", (3000, 1000, 1024, 1), calib)
    assert two.w == 2.0 and two.fetch_rate < 0.8
    assert two.tail_w == 1.0 and two.tail_fetch_rate < two.fetch_rate
