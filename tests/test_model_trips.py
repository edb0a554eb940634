"""Load round trips in the model: r per tile iteration from the facts, and the latency it
feeds: single buffer L = r * L_g + 2 L_lds, register-staged double buffer r * L_g in place of
L_g (CPU only)."""

import pytest

from gemmmodel.compile.facts import KernelFacts, empty_mix
from gemmmodel.compile.table import template_facts, template_load_trips
from gemmmodel.model import assemble, load_calib
from gemmmodel.model.combine import evaluate
from gemmmodel.model.kernel import describe
from gemmmodel.model.latency import load_trips_per_tile
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name, search_space

H200 = load_spec("h200")


def facts_with_loop(fma, trips, barrier=2):
    loop = empty_mix()
    loop.update(fma=fma, barrier=barrier)
    return KernelFacts(kernel="k", target="sm_90", vendor="nvidia", regs=128,
                       load_round_trips=trips, mix_loop=loop)


def test_trips_scaled_from_loop_to_tile_iteration():
    desc = describe(parse_name("32x64x16/8x8/p4").params(32))   # 8*8*16 = 1024 FMAs per tile
    assert load_trips_per_tile(desc, facts_with_loop(2048, 6.0)).value == pytest.approx(3.0)
    assert load_trips_per_tile(desc, facts_with_loop(1024, 3.0)).value == pytest.approx(3.0)
    # a loop without the barrier is not the tile loop: no scaling basis, r = 1
    assert load_trips_per_tile(desc, facts_with_loop(1024, 3.0, barrier=0)).value == 1.0
    assert load_trips_per_tile(desc, None).value == 1.0
    assert load_trips_per_tile(desc, {"load_round_trips_per_tile": 0.4}).value == 1.0
    assert load_trips_per_tile(desc, {"load_round_trips_per_tile": 2.5}).value == 2.5


def test_single_buffer_latency_multiplies_global_latency():
    cfg = parse_name("32x64x32/8x8/p4")
    calib = load_calib("h200")
    shape = (3072, 3072, 3072)
    base = assemble(cfg.params(32), {"regs": 167, "lds_bytes": cfg.lds_bytes}, H200, shape, calib)
    staged = assemble(cfg.params(32), {"regs": 167, "lds_bytes": cfg.lds_bytes,
                                       "load_round_trips_per_tile": 6.0}, H200, shape, calib)
    # r multiplies the loaded latency; staged in 6 groups, fewer bytes are in flight at once
    # (the twenty-fifth change: L_g at b / r, so its load factor g is at most the base's)
    g_base = base.terms["global_latency_load_factor"]
    g_staged = staged.terms["global_latency_load_factor"]
    assert g_staged.inputs["bytes_in_flight"] == pytest.approx(
        g_base.inputs["bytes_in_flight"] / 6.0)
    assert 1.0 <= g_staged.value <= g_base.value
    assert staged.lat_g_s == pytest.approx(6.0 * base.lat_g_s * g_staged.value / g_base.value)
    assert staged.terms["load_round_trips"].value == 6.0
    # a cp.async double buffer (sm_90, whole tiles, one launch): the round trips do not
    # enter, it waits for its copies (t_async)
    db = parse_name("32x64x32/8x8/p4/db")
    regs = {"regs": 168, "lds_bytes": db.lds_bytes}
    d1 = assemble(db.params(32), regs, H200, shape, calib)
    d2 = assemble(db.params(32), {**regs, "load_round_trips_per_tile": 6.0}, H200, shape, calib)
    assert "async_copies" in d2.terms
    assert d1.lat_g_s == d2.lat_g_s and "load_round_trips" not in d2.terms


def test_register_staged_double_buffer_waits_its_round_trips():
    """A register-staged double buffer (a batched launch or an edge shape: no cp.async)
    waits for its prefetch in the same trip: L = (1 - s) max(0, r L_g - C_alone) + s r L_g
    + L_lds, so r multiplies L_g as for the single buffer (at its own load factor g)."""
    db = parse_name("32x32x8/4x4/p4/db")
    calib = load_calib("h200")
    regs = {"regs": 64, "lds_bytes": db.lds_bytes}
    for shape in ((240, 96, 480, 48), (1200, 800, 6000)):
        d1 = assemble(db.params(32), {**regs, "load_round_trips_per_tile": 1.0}, H200, shape,
                      calib)
        d2 = assemble(db.params(32), {**regs, "load_round_trips_per_tile": 2.0}, H200, shape,
                      calib)
        assert "async_copies" not in d2.terms
        assert d2.terms["load_round_trips"].value == 2.0
        g1 = d1.terms["global_latency_load_factor"].value
        g2 = d2.terms["global_latency_load_factor"].value
        assert d2.lat_g_s == pytest.approx(2.0 * d1.lat_g_s * g2 / g1)
        theta = calib.theta()
        assert evaluate(d2, theta)["latency_per_iter"] > evaluate(d1, theta)["latency_per_iter"]


def test_committed_sm90_table_covers_the_search_space():
    trips = template_load_trips("sm_90")
    single = [c for c in search_space(H200) if not c.dbuf]
    assert single and all(c.name in trips for c in single)
    assert trips["32x64x32/8x8/p4"] == pytest.approx(6.0, abs=0.05)
    assert trips["128x64x16/8x8/p4"] == pytest.approx(1.0, abs=0.05)
    assert template_facts(parse_name("128x64x16/8x8/p4"), H200, 127) == {
        "regs": 127, "lds_bytes": parse_name("128x64x16/8x8/p4").lds_bytes,
        "load_round_trips_per_tile": trips["128x64x16/8x8/p4"], "code_instructions": 1563.0,
        "loop_code_instructions": 1127.0,
        # the plain build's fragment lookahead as the device's NVRTC built it (run BH)
        "fragment_lookahead": 42.16, "fragment_lookahead_source": "device SASS (h200, run BH)"}
    assert template_facts(parse_name("128x64x16/8x8/p4"), load_spec("mi100")) is None
