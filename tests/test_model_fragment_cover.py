"""The fragment cover of a register-staged double buffer (thirty-sixth change, session 67;
docs/model.md "Session 67"): the share of a fragment read's LDS latency that a warp hides
under its own FMAs, phi = min(1, w * c_v * D / L_lds_clk), D = the FMAs its loop issues
between an LDS read and the first FMA that uses the fragment (compile facts). The tiles its
prefetch covers lose overlap too where phi < 1: q x (s + (1 - s)(1 - phi)) (CPU only)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_model_register_double import H200, components, theta

from gemmmodel.compile.facts import KernelFacts
from gemmmodel.compile.table import (
    device_fragment_lookahead,
    load_compile_facts,
    template_facts,
    template_table_path,
)
from gemmmodel.model import load_calib
from gemmmodel.model.combine import MODES, Q_MAX, evaluate, independent_streams
from gemmmodel.model.latency import fragment_cover, loaded_lds_latency_clk
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name

M350 = (350, 1400, 1200, 1)     # round 65's first shape: one block per SM, edge builds
H100 = load_spec("h100")


def test_fragment_cover_term_hand_worked():
    # sm_90: c_v = 1; w = 2 warps per scheduler, D = 4.45 FMAs, L = 38.2 clk under load
    term = fragment_cover(H200, 4.45, 2.0, 30e-9, 1.98e9, loaded_clk=38.2)
    assert term.value == pytest.approx(2 * 4.45 / 38.2)
    assert term.inputs == {"w": 2.0, "c_v": 1.0, "D": 4.45, "L_lds_clk": 38.2}
    assert fragment_cover(H200, 40.0, 2.0, 30e-9, 1.98e9, 38.2).value == 1.0   # capped
    assert fragment_cover(H200, 0.0, 4.0, 30e-9, 1.98e9, 85.0).value == 0.0
    # without the loaded table: the unloaded latency in clocks
    unloaded = fragment_cover(H200, 10.0, 1.0, 20e-9, 2.0e9)
    assert unloaded.value == pytest.approx(10.0 / 40.0)
    assert unloaded.inputs["L_lds_clk"] == pytest.approx(40.0)
    assert "unloaded" in unloaded.note


def test_the_loaded_latency_grows_with_the_warps_that_take_turns():
    # why w multiplies D: the loaded LDS latency grows about as fast as the warps that
    # interleave, so one warp's D FMAs cover about the same share at w = 1, 2 and 4
    calib = load_calib("h200")
    per_fma = [w / loaded_lds_latency_clk(calib, w) for w in (1.0, 2.0, 4.0)]
    assert max(per_fma) / min(per_fma) < 1.25
    assert loaded_lds_latency_clk(calib, 4.0) > 3 * loaded_lds_latency_clk(calib, 1.0)


def test_the_h200_and_h100_take_the_devices_builds_else_the_local_table(monkeypatch):
    from gemmmodel.compile import table

    device, folder = device_fragment_lookahead("h200")
    assert len(device) == 3 * 372 and folder == "h200"
    cfg = parse_name("128x64x16/8x8/p4/db")
    h200 = template_facts(cfg, H200, None, M350)
    assert h200["fragment_lookahead"] == pytest.approx(15.8)
    assert h200["fragment_lookahead_source"] == "device SASS (h200, run BH)"
    # the H100's runs used the same NVRTC (13.0) for the same target: the same SASS
    assert device_fragment_lookahead("h100")[1] == "h200"
    assert template_facts(cfg, H100, None, M350)["fragment_lookahead"] == pytest.approx(15.8)
    assert device_fragment_lookahead("gfx908") == ({}, "")
    # without device SASS: the local table's build, which nvcc 13.0 here schedules with
    # its lookahead (49.2 FMAs)
    monkeypatch.setattr(table, "device_fragment_lookahead", lambda gpu: ({}, ""))
    local = template_facts(cfg, H100, None, M350)
    assert local["fragment_lookahead_source"] == "edge table"
    assert local["fragment_lookahead"] > 40.0
    batched = template_facts(cfg, H100, None, (256, 256, 1024, 16))
    assert batched["fragment_lookahead_source"] == "batched table"


def test_a_sibling_needs_the_same_target_and_one_nvrtc_version(monkeypatch):
    from gemmmodel.compile import table

    assert table._nvrtc_versions("h100") == {"13.0"} == table._nvrtc_versions("h200")
    assert table._nvrtc_siblings("h100", "h100") == ["h200"]
    monkeypatch.setattr(table, "_nvrtc_versions",
                        lambda folder: {"12.9"} if folder == "h200" else {"13.0"})
    assert table._nvrtc_siblings("h100", "h100") == []


def test_every_local_sm90_table_carries_the_lookahead():
    for edge, batched, checked in ((False, False, False), (True, False, False),
                                   (False, True, False), (True, False, True),
                                   (False, True, True)):
        df = load_compile_facts(template_table_path("sm_90", edge, batched, checked))
        ok = df[df["status"] == "ok"]
        assert ok["fragment_lookahead"].notna().all(), (edge, batched, checked)
        assert ok["fragment_lookahead"].between(0.0, 512.0).all()
    edge = load_compile_facts(template_table_path("sm_90", edge=True)).set_index("kernel_id")
    # the same schedule as the device's for the two worst of run BH's builds
    assert edge.loc["32x128x32/4x4/p4/db", "fragment_lookahead"] == 0.0
    assert edge.loc["64x256x16/8x8/p4/db", "fragment_lookahead"] < 6.0
    assert edge.loc["64x256x16/8x8/p4", "fragment_lookahead"] > 25.0


def test_kernel_facts_round_trip_the_field():
    facts = KernelFacts(kernel="k", target="sm_90", vendor="nvidia", fragment_lookahead=12.5)
    assert facts.flat()["fragment_lookahead"] == 12.5
    assert KernelFacts.from_flat(facts.flat()).fragment_lookahead == 12.5
    assert KernelFacts(kernel="k", target="sm_90", vendor="nvidia").fragment_lookahead is None


def test_assemble_sets_the_cover_for_register_staged_double_buffers_only():
    low = components("32x128x32/4x4/p4/db", M350)          # D = 0 on the device
    assert low.mode_code == MODES["double"] and low.copy_share == 0
    assert low.fragment_cover == 0.0 and "fragment_cover" in low.terms
    mid = components("128x64x16/8x8/p4/db", M350)          # D = 15.8 at w = 1
    assert 0.5 < mid.fragment_cover < 0.8
    assert mid.terms["fragment_cover"].inputs["w"] == mid.w
    single = components("32x128x32/4x4/p4", M350)
    assert single.fragment_cover == 1.0 and "fragment_cover" not in single.terms
    copies = components("64x64x16/8x4/p4/db", (2048, 2048, 2048, 1))   # cp.async
    assert copies.copy_share > 0 and copies.fragment_cover == 1.0
    batched = components("32x128x32/4x4/p4/db", (256, 256, 1024, 16))  # its lookahead kept
    assert batched.fragment_cover == 1.0


def test_overlap_loss_hand_worked():
    th = theta()
    comp = components("32x128x32/4x4/p4/db", M350)
    s = comp.checked_share + (1 - comp.checked_share) * comp.end_share
    assert 0 < s < 1
    parts = evaluate(comp, th)
    pipes = [parts["pipe_issue"], parts["pipe_lds"]]
    f_top = max(pipes) / sum(pipes)
    q_full = min(Q_MAX, (1.0 - f_top) ** float(
        independent_streams(comp.w, comp.units, th["overlap_loss"], comp.lookahead)))
    if comp.tail_share == 0:
        assert parts["q"] == pytest.approx(q_full)                  # phi = 0: the whole q
    assert evaluate(replace(comp, fragment_cover=1.0), th)["q"] == pytest.approx(s * parts["q"])
    half = evaluate(replace(comp, fragment_cover=0.5), th)["q"]
    assert half == pytest.approx((s + (1 - s) * 0.5) * parts["q"])
    # slower as the cover falls; a single buffer ignores the field
    t = [evaluate(replace(comp, fragment_cover=c), th)["total"] for c in (1.0, 0.5, 0.0)]
    assert t[0] < t[1] < t[2]
    single = components("32x128x32/4x4/p4", M350)
    assert evaluate(replace(single, fragment_cover=0.0), th)["total"] == pytest.approx(
        evaluate(single, th)["total"])


def test_round_65_first_shape_the_prefetch_without_lookahead_is_no_faster():
    # 350x1400x1200 (round 65): 32x128x32/4x4/p4/db was measured 84.9 us, its single buffer
    # faster; with phi = 0 the model no longer puts the /db ahead of its single buffer
    th = load_calib("h200").theta()
    db = evaluate(components("32x128x32/4x4/p4/db", M350), th)["total"]
    single = evaluate(components("32x128x32/4x4/p4", M350), th)["total"]
    assert db > 0.97 * single


def test_the_cover_counts_at_one_block_per_sm_only():
    # a second resident block's warps issue under one block's fragment waits: from u = 2 the
    # same q whatever the cover (round 65's 32x64x32/4x4/p4/db, two blocks per SM at M = 350)
    th = theta()
    two = components("32x64x32/4x4/p4/db", M350)
    assert two.units >= 2 and two.mode_code == MODES["double"] and two.copy_share == 0
    assert evaluate(replace(two, fragment_cover=0.0), th)["q"] == pytest.approx(
        evaluate(replace(two, fragment_cover=1.0), th)["q"])
    one = components("32x128x32/4x4/p4/db", M350)
    assert one.units == 1
    assert evaluate(replace(one, fragment_cover=0.0), th)["q"] > 1.5 * evaluate(
        replace(one, fragment_cover=1.0), th)["q"]


def test_the_stamped_edge_blocks_keep_their_fitted_scale():
    # the eleven stamped register-staged launches (runs U, AB, AE, AQ) have two or more
    # blocks per SM, so the cover leaves their rho_model and edge_tail_scale_db's least
    # squares (0.63) as they were; with the cover at every u the fit would move to 0.74
    from gemmmodel.model.edge_tail import fit_edge_tail_scale

    # (0.625 since the forty-first change moved the BK 32 8x8 /db builds' issue at w = 2;
    # the stored 0.63 is kept, within 0.01 of it)
    res = fit_edge_tail_scale("h200", double=True)
    assert res["scale"] == pytest.approx(0.625, abs=0.005)
    assert abs(res["scale"] - load_calib("h200").theta()["edge_tail_scale_db"]) < 0.01
    for row in res["rows"]:
        cfg = row["config"]
        size = tuple(int(x) for x in row["size"].split("x")) + (1,)
        assert components(cfg, size).units >= 2
