"""Each model term against a hand-worked value."""

import json
import math

import pytest

from gemmmodel.model import predict_kernel
from gemmmodel.model.combine import MODES, Components, evaluate, independent_streams
from gemmmodel.model.kernel import describe
from gemmmodel.model.latency import (
    exposed_per_unit_iter,
    issue_cycles_per_wave_iter,
    lookahead_streams,
    valu_cycles_per_instr,
)
from gemmmodel.model.spawn import cycles_per_block, spawn_terms
from gemmmodel.model.waves import estimate_registers, wave_info
from gemmmodel.model.work import Mix, analytic_mix, iterations, work_term
from gemmmodel.spec import load_spec

P44 = {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "TK": 1, "threads": 256, "padding": 0, "vector_width": 4,
           "buffering": "single", "a_lds_layout": "transposed", "thread_map": "row"}
P88 = dict(P44, BM=128, BN=128, BK=8, TM=8, TN=8)
NAIVE = {"BM": 16, "BN": 16, "BK": 1, "TM": 1, "TN": 1, "threads": 256, "padding": 0, "vector_width": 1,
             "buffering": "single", "a_lds_layout": "none", "thread_map": "row"}


def test_work_counts_64x64x16():
    desc = describe(P44)
    mix = analytic_mix(desc, 64)
    assert mix.fma == 4 * 4 * 16
    assert mix.lds_read == {"b128": 32}                  # 1 A + 1 B float4 read per k
    assert mix.global_load == {"b128": 2.0}              # (64*16 + 16*64) / (256 * 4)
    assert mix.barrier == 2
    assert iterations(desc, 256) == 16
    term = work_term(desc, (256, 256, 256, 1), blocks=16, wave_size=64, mix=mix)
    assert term.value == 2 * 256 ** 3
    assert term.child("fma_wave_instructions").value == 256 * 16 * 4 * 16


def test_work_counts_naive_and_double_buffer():
    naive = describe(NAIVE)
    assert not naive.uses_lds and iterations(naive, 100) == 100
    assert analytic_mix(naive, 32).global_load == {"b32": 2.0}
    db = describe(dict(P44, buffering="lds-double"))
    assert analytic_mix(db, 32).barrier == 1


def test_mix_from_compile_facts_scaled_to_one_iteration():
    desc = describe(P44)
    # a loop holding half a tile iteration (128 FMAs) and no barrier: counts scale by 2,
    # global loads and barriers come from the parameters
    facts = {"mix_loop": {"fma": 128, "lds_read_b128": 16, "other": 5, "waitcnt": 4}}

    class F:
        mix_loop = facts["mix_loop"]
        scratch_bytes = 0
        spills = 0

    from gemmmodel.model.work import kernel_mix

    mix = kernel_mix(desc, 64, F())
    assert mix.source == "compile facts"
    assert mix.lds_read == {"b128": 32.0} and mix.other == 10.0 and mix.waitcnt == 8.0
    assert mix.global_load == {"b128": 2.0} and mix.barrier == 2


def test_register_estimate_close_to_hipcc():
    # hipcc -O3 gfx906 (measured here): 36 and 93 VGPRs for these two plain kernels
    assert abs(estimate_registers(describe(P44)) - 36) <= 4
    assert abs(estimate_registers(describe(P88)) - 93) <= 4


def test_wave_quantisation_h100_128x128():
    spec = load_spec("h100")
    info = wave_info(describe(P88), spec, (4096, 4096, 4096, 1),
                     facts={"regs": 128, "lds_bytes": 8192})
    # 128 regs x 32 lanes = 4096 per warp -> 16 warps -> 2 blocks of 8 warps per SM
    assert info.blocks == 1024 and info.blocks_per_cu == 2
    assert info.rounds == math.ceil(1024 / 264)
    assert info.efficiency == pytest.approx(1024 / (4 * 264))
    assert info.busiest_cu_blocks == math.ceil(1024 / 132)
    assert info.waves_per_simd == pytest.approx(2 * 8 / 4)


def test_wave_quantisation_small_grid_counts_the_busiest_cus_blocks():
    spec = load_spec("h100")
    info = wave_info(describe(P44), spec, (256, 256, 64, 1), facts={"regs": 64})
    # 16 blocks on 132 SMs: the busiest SM holds one block (its 8 warps hide each other's
    # latency there), not the GPU-wide average 16/132
    assert info.blocks == 16 and info.busiest_cu_blocks == 1
    assert info.resident_blocks == pytest.approx(1.0)
    assert info.waves_per_simd == pytest.approx(1.0 * 8 / 4)
    # 300 blocks of a 2-per-SM kernel: 3 on the busiest SM, 2 of them resident at once
    info = wave_info(describe(P88), spec, (128 * 15, 128 * 20, 64, 1),
                     facts={"regs": 128, "lds_bytes": 8192})
    assert info.blocks == 300 and info.blocks_per_cu == 2 and info.busiest_cu_blocks == 3
    assert info.resident_blocks == pytest.approx(2.0)
    # 200 blocks: 2 on the busiest SM, both resident
    info = wave_info(describe(P88), spec, (128 * 10, 128 * 20, 64, 1),
                     facts={"regs": 128, "lds_bytes": 8192})
    assert info.blocks == 200 and info.busiest_cu_blocks == 2
    assert info.resident_blocks == pytest.approx(2.0)


def test_busiest_simd_holds_the_ceiling_of_the_waves():
    """5 one-warp blocks on the busiest SM (4096x320x3072, 32x64 tiles: 640 blocks on 132
    SMs) leave 2 warps on one of its 4 schedulers: ncu run K measured
    smsp__warps_launched.max = 2 and that scheduler's instructions = 2 warps' worth."""
    from gemmmodel.model import assemble
    from gemmmodel.template import parse_name

    spec = load_spec("h200")
    params = parse_name("32x64x8/8x8/p4").params(32)
    info = wave_info(describe(params), spec, (4096, 320, 3072, 1),
                     facts={"regs": 128, "lds_bytes": 3328})
    assert info.blocks == 640 and info.busiest_cu_blocks == 5 and info.resident_blocks == 5
    assert info.waves_per_simd == 2.0                       # not 5 / 4
    comp = assemble(params, {"regs": 128, "lds_bytes": 3328}, spec, (4096, 320, 3072, 1))
    assert comp.terms["t_issue_s"].inputs["wave_iterations_per_simd"] == 2 * 3072 // 8
    # whole warps per SIMD are unchanged: 8 four-warp blocks -> 8 per SIMD
    info = wave_info(describe(parse_name("64x64x16/8x4/p4").params(32)), spec,
                     (4096, 4096, 1024, 1), facts={"regs": 74, "lds_bytes": 8704})
    assert info.waves_per_simd == info.resident_blocks * 4 / 4


def test_spawn_cycles():
    gfx906, h200 = load_spec("gfx906"), load_spec("h200")
    assert cycles_per_block(gfx906, None, 256).value == pytest.approx(256 / 64)
    assert cycles_per_block(gfx906, None, 512).value == pytest.approx(512 / 64)
    # 64-thread blocks are charged as the next full-rate size (256): assumption
    assert cycles_per_block(gfx906, None, 64).value == pytest.approx(256 / 64)
    assert cycles_per_block(h200, None, 256).value == pytest.approx(1 / h200.spawn_blocks_per_clk)
    spawn, ramp, launch = spawn_terms(gfx906, None, 256, blocks=1024, slots=128)
    assert spawn.value == pytest.approx(1024 * 4 / gfx906.clock_hz)
    assert ramp.value == pytest.approx(0.5 * 128 * 4 / gfx906.clock_hz)
    assert launch.value == gfx906.launch_overhead_s


def test_issue_cycles():
    amd, nv = load_spec("gfx906"), load_spec("h100")
    assert valu_cycles_per_instr(amd) == 4 and valu_cycles_per_instr(nv) == 1
    mix = Mix(fma=8, other=2, lds_read={"b128": 4}, waitcnt=2)     # valu 10, non-valu 6
    # AMD, one wave per SIMD: every instruction takes the SIMD's turn (4 clocks)
    assert issue_cycles_per_wave_iter(amd, mix, 1).value == 4 * 16
    # two waves: LDS/waits co-issue with the other wave's VALU -> VALU-bound
    assert issue_cycles_per_wave_iter(amd, mix, 2).value == 4 * 10
    # NVIDIA: one instruction per clock whatever the occupancy
    assert issue_cycles_per_wave_iter(nv, mix, 8).value == 16


def test_latency_hiding():
    # C = 100, L = 300 + 2*10 single buffer, 2 blocks: (100 + 320) / 2 - 100 = 110 exposed
    assert exposed_per_unit_iter(100, 100, 2, "single", 300, 10, 0, 1, 1.0) == (320, 110)
    # double buffer: the global latency minus one iteration of own work is left
    assert exposed_per_unit_iter(100, 100, 2, "double", 300, 10, 0, 1, 1.0) == (210, 55)
    # 8 blocks hide everything
    assert exposed_per_unit_iter(100, 100, 8, "single", 300, 10, 0, 1, 1.0)[1] == 0
    # naive: loads in flight divide the latency
    assert exposed_per_unit_iter(10, 10, 4, "none", 400, 0, 0, 4, 1.0) == (100, 17.5)


def _comp(issue, lds, w, **kw):
    base = {"issue_s": issue, "lds_s": lds, "l2_s": 0.0, "dram_s": 0.0, "spawn_s": 0.0, "w": w, "lookahead": 0.0,
            "units": 100.0,
                "n_unit_iters": 1.0, "alone_factor": 1.0, "lat_g_s": 0.0, "lat_lds_s": 0.0,
                "lat_spill_s": 0.0, "ilp": 1.0, "mode_code": MODES["single"], "fill_blocks": 0.0,
                "ramp_s": 0.0, "launch_s": 0.0}
    base.update(kw)
    return Components(**base)


def test_overlap_of_pipes_depends_on_waves():
    theta = {"overlap_loss": 1.0}
    # two equal pipes: one wave per SIMD serialises them, two waves -> 1/(1 - 0.25)
    assert evaluate(_comp(1.0, 1.0, 1.0), theta)["t_pipes"] == pytest.approx(2.0)
    assert evaluate(_comp(1.0, 1.0, 2.0), theta)["t_pipes"] == pytest.approx(1 / 0.75)
    assert evaluate(_comp(1.0, 1.0, 40.0), theta)["t_pipes"] == pytest.approx(1.0, rel=1e-9)
    # a single pipe is never slowed
    assert evaluate(_comp(1.0, 0.0, 1.0), theta)["t_pipes"] == pytest.approx(1.0)
    # launch and ramp add
    assert evaluate(_comp(1.0, 0.0, 1.0, launch_s=0.5, ramp_s=0.25), theta)["total"] == \
        pytest.approx(1.75)


def test_lookahead_streams_hand_worked():
    h200, gfx906 = load_spec("h200"), load_spec("gfx906")
    assert h200.wave_lookahead_steps == 1 and gfx906.wave_lookahead_steps == 0
    clock = 1e9
    lat = 16e-9  # 16 clocks
    # sm_90: c_v = 1, one step ahead: an 8x8 tile runs 64 FMA clocks per 16-clock latency
    t = lookahead_streams(h200, 8, 8, True, lat, clock)
    assert t.inputs["x"] == pytest.approx(4.0) and t.value == pytest.approx(3.0)
    # 4x4: 16 clocks cover the latency exactly once, no extra stream; 2x2 not even once
    assert lookahead_streams(h200, 4, 4, True, lat, clock).value == 0.0
    assert lookahead_streams(h200, 2, 2, True, lat, clock).value == 0.0
    # no LDS, or a GPU whose lookahead is not measured: none
    assert lookahead_streams(h200, 8, 8, False, lat, clock).value == 0.0
    assert lookahead_streams(gfx906, 8, 8, True, lat, clock).value == 0.0


def test_lookahead_uses_the_lds_latency_under_load():
    """Fourteenth change (docs/model.md section 10): the latency a wave's lookahead covers
    is the LDS latency measured under load at the kernel's warps per scheduler
    (calibration/h200/smem_latency_loaded.json), interpolated."""
    from gemmmodel.model.calib import Calib, load_calib
    from gemmmodel.model.latency import loaded_lds_latency_clk

    table = Calib(lds_latency_loaded=((1.0, 20.0), (2.0, 40.0), (4.0, 100.0)))
    assert loaded_lds_latency_clk(table, 0.5) == 20.0            # clamped below
    assert loaded_lds_latency_clk(table, 3.0) == pytest.approx(70.0)
    assert loaded_lds_latency_clk(table, 8.0) == 100.0           # clamped above
    assert loaded_lds_latency_clk(Calib(), 3.0) is None
    assert loaded_lds_latency_clk(None, 3.0) is None
    h200 = load_spec("h200")
    calib = load_calib("h200")
    assert calib.lds_latency_loaded[0][0] == 0.25 and len(calib.lds_latency_loaded) >= 6
    # 8x8 at 1 warp per scheduler (~24 clk): 64/24 - 1 extra streams; at 4 (~85 clk): none
    one = lookahead_streams(h200, 8, 8, True, 23e-9, 1.98e9,
                            loaded_lds_latency_clk(calib, 1.0))
    four = lookahead_streams(h200, 8, 8, True, 23e-9, 1.98e9,
                             loaded_lds_latency_clk(calib, 4.0))
    assert one.value == pytest.approx(64 / calib.lds_latency_loaded[2][1] - 1)
    assert four.value == 0.0 and "under load" in four.note
    # the assembled prediction uses it; without a calibration the unloaded latency
    from gemmmodel.model import assemble
    from gemmmodel.template import parse_name

    params = parse_name("128x128x16/8x8").params(32)
    facts = {"regs": 128, "lds_bytes": 16384}
    with_cal = assemble(params, facts, h200, (4096, 4096, 4096), calib)
    without = assemble(params, facts, h200, (4096, 4096, 4096))
    assert with_cal.w == 4.0 and with_cal.lookahead == 0.0 and without.lookahead > 1.0


def test_global_latency_load_factor_from_the_loaded_table():
    """Session 45 (docs/model.md section 10): the L2 latency of a tile loop's loads is the
    pointer chase's latency at the tile bytes one SM has in flight (run X's table), over the
    unloaded one; a running max over bytes, linear between rows, 1 without a table."""
    from gemmmodel.model.calib import Calib, load_calib
    from gemmmodel.model.latency import global_latency_load_factor

    table = Calib(global_latency_loaded=((0.0, 100.0), (1000.0, 150.0), (2000.0, 140.0),
                                         (4000.0, 300.0)))
    # b = 500 * 4 / 2 = 1000 bytes: 150 / 100
    assert global_latency_load_factor(table, 500.0, 4.0, 2.0).value == pytest.approx(1.5)
    # the dip at 2000 is lifted to 150 (running max): b = 3000 -> (150 + 300) / 2 = 225
    three = global_latency_load_factor(table, 3000.0, 1.0, 1.0)
    assert three.value == pytest.approx(2.25) and three.inputs["bytes_in_flight"] == 3000.0
    assert global_latency_load_factor(table, 1e6, 1.0, 1.0).value == pytest.approx(3.0)
    assert global_latency_load_factor(Calib(), 1e6, 1.0, 1.0).value == 1.0
    assert global_latency_load_factor(None, 1e6, 1.0, 1.0).value == 1.0
    # the H200 table (run X): 0 bytes first at 275 clocks; 31 warps x 8 loads x 512 B last
    calib = load_calib("h200")
    rows = calib.global_latency_loaded
    assert rows[0][0] == 0.0 and 270.0 < rows[0][1] < 280.0
    assert rows[-1][0] == 31 * 8 * 512 and rows[-1][1] > 800.0
    # the assembled prediction multiplies the tile loads' latency by it
    from gemmmodel.model import assemble
    from gemmmodel.template import parse_name

    h200 = load_spec("h200")
    params = parse_name("128x128x32/8x8").params(32)
    facts = {"regs": 128, "lds_bytes": 32768}
    bare = Calib(gpu="h200", values=dict(calib.values), fit=dict(calib.fit))
    with_t = assemble(params, facts, h200, (4096, 4096, 4096), calib)
    without = assemble(params, facts, h200, (4096, 4096, 4096), bare)
    g = with_t.terms["global_latency_load_factor"]
    # each resident block: its (128 + 128) x 32 x 4 B tile, plus C's 128 x 128 x 4 B read
    # and written once (beta) spread over the 4096 / 32 tile iterations
    per_block = 32768.0 + 2 * 128 * 128 * 4 / 128
    assert g.inputs["bytes_in_flight"] == pytest.approx(per_block * with_t.units)
    assert g.value > 1.2
    assert with_t.lat_g_s == pytest.approx(without.lat_g_s * g.value)
    assert without.terms["global_latency_load_factor"].value == 1.0


def test_lookahead_counts_as_resident_streams():
    theta = {"overlap_loss": 1.0}
    # one wave plus one stream of lookahead overlaps like two waves
    two = evaluate(_comp(1.0, 1.0, 2.0), theta)["t_pipes"]
    assert evaluate(_comp(1.0, 1.0, 1.0, lookahead=1.0), theta)["t_pipes"] == pytest.approx(two)
    assert two < evaluate(_comp(1.0, 1.0, 1.0), theta)["t_pipes"]


def test_independent_streams_count_blocks_not_waves():
    """Twentieth change (docs/model.md section 7): the waves of one block count
    1/overlap_loss stream each beyond the first per SIMD; waves of different blocks 1."""
    # four 4-wave blocks per SM: one wave of each block on every SIMD, 4 independent streams
    assert independent_streams(4.0, 4.0, 2.0) == pytest.approx(4.0)
    # two 8-wave blocks: 2 blocks + 2 correlated waves at 1/2 each = 3
    assert independent_streams(4.0, 2.0, 2.0) == pytest.approx(3.0)
    # one 16-wave block: 1 + 3/2; the lookahead counts like a correlated wave
    assert independent_streams(4.0, 1.0, 2.0) == pytest.approx(2.5)
    assert independent_streams(4.0, 1.0, 2.0, lookahead=1.0) == pytest.approx(3.0)
    # fewer waves than blocks on a SIMD (2-wave blocks): every wave independent
    assert independent_streams(2.0, 4.0, 3.0) == pytest.approx(2.0)
    # two equal pipes, w = 4 per SIMD, overlap_loss 2: q = (1/2) ** s
    theta = {"overlap_loss": 2.0}
    four = evaluate(_comp(1.0, 1.0, 4.0, units=4.0), theta)
    two = evaluate(_comp(1.0, 1.0, 4.0, units=2.0), theta)
    assert four["q"] == pytest.approx(0.5 ** 4) and two["q"] == pytest.approx(0.5 ** 3)
    assert two["t_pipes"] == pytest.approx(1.0 / (1.0 - 0.125))
    assert four["t_pipes"] < two["t_pipes"]
    # the latency chance term counts the same streams: q_L = (1/2) ** 3 with 2 blocks
    c = _comp(1.0, 0.0, 4.0, units=2.0, lat_g_s=1.0, mode_code=MODES["none"])
    assert evaluate(c, theta)["q_latency"] == pytest.approx(0.5 ** 3)


def test_latency_chance_term_hand_worked():
    # one unit-iteration: C_cu = 1 s of CU time, C_alone = 1 s, L = 1 s, 8 units hide the
    # average (Little: (1 + 1)/8 - 1 < 0), so only the chance term exposes latency:
    # q_L = (1 / 2) ** w, exposed = C_cu * q_L / (1 - q_L)
    theta = {"overlap_loss": 1.0}
    for w, want in ((1.0, 1.0), (2.0, 1 / 3), (3.0, 1 / 7)):
        c = _comp(1.0, 0.0, w, units=8.0, lat_g_s=1.0, mode_code=MODES["none"])
        got = evaluate(c, theta)
        assert got["q_latency"] == pytest.approx(0.5 ** w)
        assert got["t_latency"] == pytest.approx(want)
    # Little's law still binds where it is larger: one unit, (1 + 1)/1 - 1 = 1 > q term
    c = _comp(1.0, 0.0, 4.0, units=1.0, lat_g_s=1.0, mode_code=MODES["none"])
    assert evaluate(c, theta)["t_latency"] == pytest.approx(1.0)


def test_prediction_tree_is_json_and_sums():
    pred = predict_kernel(P44, None, load_spec("h100"), (2048, 2048, 2048))
    data = json.loads(json.dumps(pred.to_dict()))
    assert data["root"]["name"] == "t_total_s"
    root = pred.root
    parts = (root.child("t_pipes_s").value + root.child("t_latency_s").value
             + root.child("t_ramp_s").value + root.child("t_launch_s").value
             + sum(t.value for t in root.children if t.name == "t_async_wait_s"))
    assert root.value == pytest.approx(parts)
    assert pred.flops == pytest.approx(2 * 2048 ** 3 / pred.time_s)
    assert pred.bottleneck in ("issue", "lds", "l2", "dram", "spawn", "latency", "async_wait",
                               "launch")


def test_checked_tiles_of_a_register_double_buffer_wait_their_loads():
    """Twenty-first change (docs/model.md section 7): in a register-staged double buffer the
    checked loads of edge tiles are zero-filled (FSEL) before the tile's compute, so those
    tile iterations wait the whole L_g; the others hide it behind one iteration's work:
    L = (1 - s) * max(0, L_g - C_alone) + s * L_g + L_lds."""
    theta = {"overlap_loss": 1.0}
    # C_cu = 1 s (issue pipe alone, one wave), C_alone = 1 s, L_g = 3 s, L_lds = 0.5 s,
    # one unit: Little's law exposes (C_alone + L) / 1 - C_cu = L
    for share, want in ((0.0, 2.0 + 0.5), (0.25, 0.75 * 2.0 + 0.25 * 3.0 + 0.5),
                        (1.0, 3.0 + 0.5)):
        c = _comp(1.0, 0.0, 1.0, units=1.0, lat_g_s=3.0, lat_lds_s=0.5,
                  mode_code=MODES["double"], checked_share=share)
        got = evaluate(c, theta)
        assert got["latency_per_iter"] == pytest.approx(want)
        assert got["t_latency"] == pytest.approx(want)
    # a single buffer ignores the share (its loads wait before the compute anyway)
    c0 = _comp(1.0, 0.0, 1.0, units=1.0, lat_g_s=3.0, lat_lds_s=0.5)
    c1 = _comp(1.0, 0.0, 1.0, units=1.0, lat_g_s=3.0, lat_lds_s=0.5, checked_share=1.0)
    assert evaluate(c0, theta)["t_latency"] == evaluate(c1, theta)["t_latency"]


def test_checked_share_only_for_register_double_buffers_with_edge_tiles():
    """assemble sets checked_share from checked_path_factor's s for a bounds-checked
    register-staged double buffer, and 0 for its single twin, for a plain (cp.async) build
    and where no tile crosses M or N."""
    from gemmmodel.model.selection import swept_components
    from gemmmodel import PACKAGE_DIR
    from gemmmodel.model import load_calib

    folder = PACKAGE_DIR.parent / "calibration" / "h200"
    spec = load_spec("h200")
    calib = load_calib("h200", folder.parent)
    shape = (176, 112, 448, 50)   # 32 x 32 tiles: 6 x 4 blocks per batch, 9 cross M or N
    keys = [("32x32x8/4x4/p4/db", shape), ("32x32x8/4x4/p4", shape),
            ("32x32x8/4x4/p4/db", (2048, 2048, 2048, 1)),
            ("32x32x8/4x4/p4/db", (2048, 2048, 2048, 4))]
    comps = swept_components(folder, spec, keys, calib)
    assert comps[keys[0]].checked_share == pytest.approx(9 / 24)
    assert comps[keys[1]].checked_share == 0.0
    assert comps[keys[2]].checked_share == 0.0    # plain build: cp.async double buffer
    assert comps[keys[2]].async_iters > 0
    assert comps[keys[3]].checked_share == 0.0    # batched, but no tile crosses M or N
    assert comps[keys[3]].async_iters == 0
