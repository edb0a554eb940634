"""The build that runs: a template config at a shape that is not a tile multiple (or any
batched launch) runs its bounds-checked build (EDGE=1), whose registers, spills and load
round trips come from calibration/template_facts_sm_90_edge.csv (CPU; the last test needs
nvcc)."""

import pytest

from gemmmodel.compile.classify import classify_sass
from gemmmodel.compile.facts import KernelFacts, empty_mix
from gemmmodel.compile.table import (
    edge_build_facts,
    template_facts,
    template_table_facts,
    template_table_path,
    tile_facts,
)
from gemmmodel.model import assemble, load_calib
from gemmmodel.model.kernel import describe
from gemmmodel.model.work import analytic_mix, mix_from_facts, with_table_spills
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name, search_space
from gemmmodel.template.plan import shape_needs_edge

H200 = load_spec("h200")
SPILLER = "64x32x32/8x8/db"      # 211 registers plain; 255 and spills when bounds-checked


def test_local_memory_is_its_own_category():
    assert classify_sass("LDL.64") == ("local_load", False)
    assert classify_sass("STL") == ("local_store", False)
    assert classify_sass("LDG.E.128") == ("global_load_b128", False)


def test_which_shapes_run_the_checked_build():
    cfg = parse_name("64x64x16/8x8")
    assert not shape_needs_edge(cfg, (4096, 4096, 4096))
    assert not shape_needs_edge(cfg, (4096, 4096, 4096, 1))
    assert shape_needs_edge(cfg, (3000, 1024, 1024))
    assert shape_needs_edge(cfg, (1024, 1024, 1000))
    assert shape_needs_edge(cfg, (64, 64, 64, 2))       # batched: always checked


def test_edge_table_covers_the_search_space_and_differs():
    plain = template_table_facts("sm_90")
    edge = template_table_facts("sm_90", edge=True)
    names = {c.name for c in search_space(H200)}
    assert names <= set(edge) and names <= set(plain)
    # the checked build needs more registers for most configs and spills for some
    more = sum(edge[n]["regs"] > plain[n]["regs"] for n in names)
    assert more > len(names) / 2
    assert edge[SPILLER]["regs"] == 255 and edge[SPILLER]["spill_ops_per_tile"] > 10
    assert plain[SPILLER]["spill_ops_per_tile"] == 0


def test_template_facts_follow_the_shape():
    cfg = parse_name(SPILLER)
    plain = template_facts(cfg, H200, 211, (4096, 4096, 4096))
    assert plain["regs"] == 211 and "edge" not in plain and "spill_ops_per_tile" not in plain
    checked = template_facts(cfg, H200, 211, (3000, 1000, 1024))
    assert checked["edge"] and checked["regs"] == 255
    assert checked["spill_ops_per_tile"] == template_table_facts("sm_90", True)[SPILLER][
        "spill_ops_per_tile"]
    # no shape: the plain build, as before
    assert template_facts(cfg, H200, 211) == plain
    # a GPU without an edge table keeps the registers it was given
    mi100 = template_facts(cfg, load_spec("mi100"), 96, (3000, 1000, 1024))
    assert mi100 == {"regs": 96, "lds_bytes": cfg.lds_bytes}


def test_tile_facts_scale_the_loop_to_one_tile_iteration():
    cfg = parse_name("64x64x16/8x8")            # 8*8*16 = 1024 FMAs per tile iteration
    loop = empty_mix()
    loop.update(fma=2048, barrier=2, local_load=30, local_store=10)
    flat = KernelFacts(kernel="k", target="sm_90", vendor="nvidia", regs=255,
                       load_round_trips=4.0, mix_loop=loop).flat()
    out = tile_facts(cfg, flat)
    assert out == {"regs": 255, "load_round_trips_per_tile": 2.0, "spill_ops_per_tile": 20.0}
    built = edge_build_facts(cfg, KernelFacts.from_flat({**flat, "status": "ok"}))
    assert built == {"regs": 255, "lds_bytes": cfg.lds_bytes, "load_round_trips_per_tile": 2.0,
                     "spill_ops_per_tile": 20.0, "edge": True}


def test_spill_operations_cost_issue_and_memory():
    desc = describe(parse_name(SPILLER).params(32))
    base = analytic_mix(desc, 32)
    mix = with_table_spills(base, {"spill_ops_per_tile": 40.0}, H200)
    assert mix.spill_ops == 40.0 and mix.vmem_instr == pytest.approx(base.vmem_instr + 40.0)
    assert mix.spill_bytes == pytest.approx(160.0)
    assert with_table_spills(base, {"regs": 255}, H200) == base
    # compile-fact mixes count LDL/STL themselves
    loop = empty_mix()
    loop.update(fma=2048, barrier=1, global_load_b128=24, local_load=100, local_store=20)
    facts = KernelFacts(kernel="k", target="sm_90", vendor="nvidia", regs=255,
                        spill_load_bytes=400, spill_store_bytes=80, spills=1, mix_loop=loop)
    fm = mix_from_facts(desc, 32, facts)
    assert fm.global_load["b32"] == pytest.approx(100.0) and fm.global_store["b32"] == 20.0
    assert fm.spill_ops == pytest.approx(120.0) and fm.spill_loads == pytest.approx(100.0)
    assert with_table_spills(fm, {"spill_ops_per_tile": 40.0}, H200) == fm
    assert mix.spill_loads == pytest.approx(20.0)          # the table: half are reloads


def test_spill_latency_is_the_reloads_at_the_measured_l1_latency():
    from gemmmodel.model.calib import Calib
    from gemmmodel.model.latency import spill_latency

    calib = load_calib("h200")                 # summary.json latency_l1_s: 16-KiB chase
    l1 = calib.values["l1_latency_s"]
    assert 10 < l1 * calib.values["clock_hz"] < 100
    term = spill_latency(H200, calib, 59.0, 118.0)
    assert term.value == pytest.approx(59.0 * l1) and term.inputs["n_reload"] == 59.0
    assert spill_latency(H200, calib, 0.0, 0.0).value == 0.0
    # without a measured L1 latency (AMD scratch): one L2 latency per iteration, as before
    bare = Calib(gpu="x", values={"l2_latency_s": 3e-7})
    assert spill_latency(H200, bare, 59.0, 118.0).value == pytest.approx(3e-7)


def test_checked_build_predicts_slower_where_it_spills():
    cfg = parse_name(SPILLER)
    calib = load_calib("h200")
    shape = (2999, 1024, 1024)                 # not a multiple: the checked build runs
    plain = assemble(cfg.params(32), template_facts(cfg, H200, 211), H200, shape, calib)
    checked = assemble(cfg.params(32), template_facts(cfg, H200, 211, shape), H200, shape,
                       calib)
    assert checked.issue_s > plain.issue_s and checked.lat_spill_s > 0 == plain.lat_spill_s
    reloads = checked.terms["spill_latency"].inputs["n_reload"]
    assert reloads == pytest.approx(template_facts(cfg, H200, 211, shape)["spill_ops_per_tile"] / 2)


def test_committed_edge_table_matches_the_compiler(require_tool):
    from gemmmodel.compile import compile_facts, facts_for
    from gemmmodel.compile.table import load_compile_facts
    from gemmmodel.template import ENTRY, TEMPLATE_SOURCE

    require_tool("nvcc", "nvdisasm")
    path = template_table_path("sm_90", edge=True)
    shipped = facts_for(SPILLER, "sm_90", table=load_compile_facts(path))
    fresh = compile_facts(TEMPLATE_SOURCE, "sm_90", entry=ENTRY,
                          defines={**parse_name(SPILLER).defines(), "EDGE": 1})[0]
    assert shipped.regs == fresh.regs == 255
    assert shipped.mix_loop == fresh.mix_loop and fresh.mix_loop["local_load"] > 0


def test_facts_edge_needs_a_template_selection(capsys):
    from gemmmodel.cli import main

    assert main(["facts", "--edge"]) == 2
    assert "--edge needs --search-space" in capsys.readouterr().err


def test_predict_names_the_edge_build_s_registers_at_a_checked_shape():
    from gemmmodel.predict import rank

    res = rank("h200", "3000x1000x1024", top=2)
    assert res["top"] and all(b["regs_source"] == "edge build (device)" for b in res["top"])
    assert res["resources"]["edge build (device)"] == res["ranked"] == 372
    plain = rank("h200", "4096x4096x4096", top=2)
    assert plain["resources"]["edge table"] == 0 and plain["resources"]["device"] > 0
