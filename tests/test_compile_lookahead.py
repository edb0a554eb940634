"""Fragment lookahead (gemmmodel/compile/lookahead.py): synthetic SASS with known answers, and
the device builds of run BH (calibration/h200/device_sass_check.csv; CPU only)."""

import csv

import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.compile.listing import Instr
from gemmmodel.compile.lookahead import fragment_lookahead


def nv(op, operands):
    return Instr(op, "other", operands=operands)


def test_one_step_lookahead_counts_the_ffmas_in_between():
    # the next step's fragment (R40..R43) is read before this step's four FFMAs on R32
    body = [nv("LDS.128", "R40, [R6+0x100]"),
            *[nv("FFMA", f"R{60 + i}, R32, R{50 + i}, R{60 + i}") for i in range(4)],
            nv("FFMA", "R70, R41, R50, R70")]
    assert fragment_lookahead(body) == (pytest.approx(4.0), 1)


def test_no_lookahead_and_the_mean_over_lds():
    # the first fragment (R40, .64: R40-R41) is used by the very next FFMA; the second
    # (R44) after two others: mean (0 + 2) / 2
    body = [nv("LDS.64", "R40, [R6]"), nv("FFMA", "R60, R41, R50, R60"),
            nv("LDS", "R44, [R6+0x8]"), nv("FFMA", "R61, R32, R50, R61"),
            nv("FFMA", "R62, R33, R50, R62"), nv("FFMA", "R63, R44, R51, R63")]
    assert fragment_lookahead(body) == (pytest.approx(1.0), 2)


def test_an_unused_fragment_and_writes_to_a_fragment_register_do_not_count():
    # the FFMA that writes R40 (its destination) does not read the fragment; LDSM is not LDS
    body = [nv("LDS.128", "R40, [R6]"), nv("FFMA", "R40, R30, R31, R39"),
            nv("LDSM.16.M88.4", "R44, [R6]"), nv("FFMA", "R60, R44, R50, R60")]
    assert fragment_lookahead(body) == (None, 0)


def test_run_bh_bounds_checked_register_staged_builds_lose_their_lookahead():
    # the device NVRTC's builds (run BH): the bounds-checked register-staged double buffers
    # that the model puts 0.14-0.25 log too fast at one block per SM keep 0-16 FFMAs of
    # lookahead; their single buffers and their batched twins 27-62
    with (CALIBRATION_DIR / "h200" / "device_sass_check.csv").open() as fh:
        rows = {(r["config"], r["build"]): r for r in csv.DictReader(fh)}

    def ahead(cfg, build):
        return float(rows[(cfg, build)]["device_fragment_lookahead"])

    for tile, top in (("32x128x32/4x4/p4", 1.0), ("64x256x16/8x8/p4", 6.0),
                      ("128x64x16/8x8/p4", 17.0)):
        assert ahead(tile + "/db", "edge") < top
        assert ahead(tile, "edge") > 25.0
        assert ahead(tile + "/db", "batched") > 25.0
    # the pair where the /db is measured faster (run BG's exception) keeps its lookahead
    assert ahead("32x64x32/4x4/p4/db", "edge") > 25.0


def test_amdgcn_ranges_and_fma_forms():
    # hipcc's one-step lookahead (gfx906 ISA of the template): the next step's fragments
    # v[43:46] / v[47:50] are read before this step's 16 v_fmac on v[35:42]
    amd = [Instr("ds_read_b128", "other", operands="v[43:46], v52 offset:256"),
           Instr("ds_read_b128", "other", operands="v[47:50], v51 offset:8448"),
           Instr("s_waitcnt", "other", operands="lgkmcnt(2)"),
           *[Instr("v_fmac_f32_e32", "other", operands=f"v{11 + i}, v{35 + i % 4}, v39")
             for i in range(16)],
           Instr("v_pk_fma_f32", "other", operands="v[0:1], v[43:44], v[47:48], v[0:1]")]
    assert fragment_lookahead(amd, "amd") == (pytest.approx(16.0), 2)
    # the accumulator (first operand) is not a read of the fragment; s registers are not v
    late = [Instr("ds_read_b32", "other", operands="v60, v52"),
            Instr("v_fmac_f32_e32", "other", operands="v60, v1, v2"),
            Instr("v_fma_f32", "other", operands="v3, s60, v4, v3"),
            Instr("v_mac_f32_e32", "other", operands="v5, v60, v6")]
    assert fragment_lookahead(late, "amd") == (pytest.approx(2.0), 1)
    with pytest.raises(ValueError):
        fragment_lookahead(late, "intel")


def test_the_compile_facts_tables_carry_it_for_both_vendors():
    # every catalogue kernel with SASS or AMDGCN has a value (PTX-only sm_61 has none)
    from gemmmodel.compile.table import load_compile_facts

    df = load_compile_facts()
    ok = df[df["status"] == "ok"]
    for target in ("gfx900", "gfx906", "gfx908", "gfx90a", "sm_80", "sm_90"):
        assert ok[ok["target"] == target]["fragment_lookahead"].notna().sum() >= 20, target
    assert ok[ok["target"] == "sm_61"]["fragment_lookahead"].isna().all()
