"""Load round trips (gemmmodel/compile/trips.py): synthetic listings with known answers, and
the real compilers on template configs whose staging differs (CPU; compilers required)."""

import pytest

from gemmmodel.compile.listing import Instr
from gemmmodel.compile.trips import load_round_trips


def nv(op, operands):
    return Instr(op, "other", operands=operands)


def amd(op, operands=""):
    return Instr(op, "other", operands=operands)


def test_nvidia_all_loads_first_is_one_trip():
    body = [nv("LDG.E.128", "R40, desc[UR8][R2.64]"), nv("LDG.E.128", "R44, desc[UR8][R4.64]"),
            nv("STS.128", "[R6], R40"), nv("STS.128", "[R6+0x10], R44"), nv("BAR.SYNC", "0x0")]
    assert load_round_trips(body, "nvidia") == pytest.approx(1.0, abs=0.01)


def test_nvidia_staged_groups_wait_in_series():
    # two loads, store them, reuse the registers for two more: two latencies in series
    body = [nv("LDG.E.128", "R40, desc[UR8][R2.64]"), nv("LDG.E.128", "R44, desc[UR8][R4.64]"),
            nv("STS.128", "[R6], R40"), nv("STS.128", "[R6+0x10], R44"),
            nv("LDG.E.128", "R40, desc[UR8][R8.64]"), nv("STS.128", "[R6+0x20], R40"),
            nv("LDG.E.64", "R48, desc[UR8][R10.64]"), nv("STS.64", "[R6+0x30], R49")]
    assert load_round_trips(body, "nvidia") == pytest.approx(3.0, abs=0.01)


def test_nvidia_prefetch_for_next_trip_counts_once():
    # registers loaded at the end of a trip are stored at the start of the next one
    body = [nv("STS.128", "[R6], R40"), nv("FFMA", "R10, R11, R12, R10"),
            nv("LDG.E.128", "R40, desc[UR8][R2.64]")]
    assert load_round_trips(body, "nvidia") == pytest.approx(1.0, abs=0.01)


def test_no_loads_and_no_operands():
    assert load_round_trips([nv("FFMA", "R1, R2, R3, R1")], "nvidia") == 0.0
    assert load_round_trips([Instr("FFMA", "fma")], "nvidia") is None  # PTX: no registers
    assert load_round_trips([], "amd") is None


def test_amd_vmcnt():
    one = [amd("global_load_dwordx4", "v[0:3], v[8:9], off"),
           amd("global_load_dwordx4", "v[4:7], v[10:11], off"),
           amd("s_waitcnt", "vmcnt(0)"), amd("ds_write_b128", "v12, v[0:3]")]
    assert load_round_trips(one, "amd") == pytest.approx(1.0, abs=0.01)
    two = [amd("global_load_dwordx4", "v[0:3], v[8:9], off"), amd("s_waitcnt", "vmcnt(0)"),
           amd("ds_write_b128", "v12, v[0:3]"),
           amd("global_load_dwordx4", "v[0:3], v[10:11], off"), amd("s_waitcnt", "vmcnt(0)"),
           amd("ds_write_b128", "v12, v[0:3]"), amd("s_waitcnt", "lgkmcnt(0)")]
    assert load_round_trips(two, "amd") == pytest.approx(2.0, abs=0.01)
    # vmcnt(1) lets the younger load stay in flight: still one latency
    staged = [amd("global_load_dwordx4", "v[0:3], v[8:9], off"),
              amd("global_load_dwordx4", "v[4:7], v[10:11], off"),
              amd("s_waitcnt", "vmcnt(1)"), amd("ds_write_b128", "v12, v[0:3]"),
              amd("s_waitcnt", "vmcnt(0)"), amd("ds_write_b128", "v13, v[4:7]")]
    assert load_round_trips(staged, "amd") == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize("name,target,trips", [
    ("32x64x32/8x8/p4", "sm_90", 6.0),    # 24 loads per thread staged a few at a time
    ("32x64x16/8x8/p4", "sm_90", 3.0),
    ("128x64x16/8x8/p4", "sm_90", 1.0),   # 6 loads: all in flight at once
    ("128x128x8/8x8", "gfx906", 1.0),
    ("64x64x16/4x4", "gfx908", 1.0),
])
def test_real_compilers(require_tool, name, target, trips):
    from gemmmodel.compile import compile_facts
    from gemmmodel.template import ENTRY, TEMPLATE_SOURCE, parse_name

    require_tool("nvcc", "nvdisasm") if target.startswith("sm_") else require_tool("hipcc")
    facts = compile_facts(TEMPLATE_SOURCE, target, defines=parse_name(name).defines(),
                          entry=ENTRY)[0]
    assert facts.load_round_trips == pytest.approx(trips, abs=0.05)


@pytest.mark.parametrize("name", ["32x64x32/8x8/p4", "64x128x32/8x8/p4", "32x128x32/8x4/p4"])
def test_committed_sm90_table_matches_the_compiler(require_tool, name):
    from gemmmodel.compile import compile_facts, facts_for
    from gemmmodel.compile.table import load_compile_facts, template_table_path
    from gemmmodel.template import ENTRY, TEMPLATE_SOURCE, parse_name

    require_tool("nvcc", "nvdisasm")
    shipped = facts_for(name, "sm_90", table=load_compile_facts(template_table_path("sm_90")))
    fresh = compile_facts(TEMPLATE_SOURCE, "sm_90", defines=parse_name(name).defines(),
                          entry=ENTRY)[0]
    assert shipped.load_round_trips == pytest.approx(fresh.load_round_trips, abs=0.05)
    assert shipped.regs == fresh.regs and shipped.mix_loop == fresh.mix_loop


@pytest.mark.parametrize("name,trips", [("64x128x16/8x8/db", 1.0), ("64x64x16/8x4/p4/db", 1.0)])
def test_bounds_checked_build_counts_one_path(require_tool, name, trips):
    # EDGE=1 loops hold the unchecked float4 loads and, behind a branch, the checked scalar
    # loads into the same registers; one trip runs one of them. Replaying the whole body
    # counted the second group's write-after-write as a second latency (2.0 before).
    from gemmmodel.compile import compile_facts
    from gemmmodel.compile.table import template_table_facts
    from gemmmodel.template import ENTRY, TEMPLATE_SOURCE, parse_name

    require_tool("nvcc", "nvdisasm")
    cfg = parse_name(name)
    fresh = compile_facts(TEMPLATE_SOURCE, "sm_90", defines={**cfg.defines(), "EDGE": 1},
                          entry=ENTRY)[0]
    assert fresh.load_round_trips == pytest.approx(trips, abs=0.05)
    shipped = template_table_facts("sm_90", True)[cfg.name]
    assert shipped["load_round_trips_per_tile"] == pytest.approx(trips, abs=0.05)
