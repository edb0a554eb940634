"""Parsers and facts on saved compiler outputs (tests/fixtures/compile_*; CPU only).

Expected values come from the kernel sources, worked by hand:
tiny_sgemm (64x64x16 tile, 4x4 per thread, k loop unrolled): one main-loop trip holds
16 k x 4 x 4 = 256 FMAs, 16 x 2 float4 LDS reads, 2 barriers; the epilogue adds 16 FMAs;
LDS = (16 x 68 + 16 x 64) floats x 4 B = 8448 B. two_entries/copy_async: 256 float4 of LDS =
4096 B, one cp.async, its commit and wait. Register counts are checked against a second
source in the same output (the AMDGPU metadata) rather than typed in.
"""

import re

import pytest

from gemmmodel.compile.driver import facts_from_output
from gemmmodel.compile.facts import CATEGORY_KEYS
from gemmmodel.compile.isa_amd import amd_kernel_names, parse_amd_remarks
from gemmmodel.compile.ptx import parse_ptx
from gemmmodel.compile.routes import RawOutput, Route
from gemmmodel.compile.sass import parse_ptxas_info, parse_sass

TINY_LDS_BYTES = (16 * 68 + 16 * 64) * 4


def load(fixtures_dir, stem, target):
    base = fixtures_dir / f"compile_{stem}_{target}"
    listing = (base.parent / f"{base.name}.listing.txt").read_text()
    info = (base.parent / f"{base.name}.info.txt").read_text()
    return listing, info


def facts(fixtures_dir, stem, target):
    listing, info = load(fixtures_dir, stem, target)
    if target.startswith("gfx"):
        route, source = Route("hipcc", target, "test", ()), "amdgcn"
    else:
        route = Route("nvcc", target, "test", ())
        source = "ptx (no SASS disassembler)" if listing.lstrip().startswith("//") else "sass"
    return {f.kernel: f for f in facts_from_output(RawOutput(listing, info, source), route)}


def metadata(listing, key):
    """AMDGPU code-object metadata values, kernel by kernel in file order."""
    return [int(v) for v in re.findall(rf"^\s*-?\s*\.{key}:\s+(\d+)", listing, re.MULTILINE)]


def lane_fmas(mix):
    return mix["fma"] + mix["fma_packed"]  # a v_pk_fma_f32 does two FMAs per lane


@pytest.mark.parametrize("target", ["gfx906", "gfx90a", "sm_90", "sm_61"])
def test_tiny_sgemm_mix_matches_the_source(fixtures_dir, target):
    f = facts(fixtures_dir, "tiny_sgemm", target)["sgemm_tiny"]
    assert lane_fmas(f.mix_loop) == 256
    assert lane_fmas(f.mix_total) == 256 + 16
    assert f.mix_loop["lds_read_b128"] == 32
    assert f.mix_loop["barrier"] == 2
    assert f.lds_bytes == TINY_LDS_BYTES
    assert f.main_loop_depth == 1
    assert f.mix_outer["instructions"] == 0
    for mix in (f.mix_total, f.mix_loop):
        assert sum(mix[k] for k in CATEGORY_KEYS) == mix["instructions"]
    assert f.mix_loop["instructions"] < f.mix_total["instructions"]


def test_amd_fma_count_matches_a_text_search(fixtures_dir):
    listing, _ = load(fixtures_dir, "tiny_sgemm", "gfx906")
    f = facts(fixtures_dir, "tiny_sgemm", "gfx906")["sgemm_tiny"]
    grep = len(re.findall(r"^\s+v_(fmac|fma|mac|mad)_f32", listing, re.MULTILINE))
    assert f.mix_total["fma"] == grep


def test_gfx90a_uses_packed_fma(fixtures_dir):
    f = facts(fixtures_dir, "tiny_sgemm", "gfx90a")["sgemm_tiny"]
    assert f.mix_loop["fma_packed"] > 0
    assert f.mix_loop["fma"] < 256  # fewer instructions than lane FMAs


def test_amd_resources_agree_with_metadata(fixtures_dir):
    for stem, target in [("tiny_sgemm", "gfx906"), ("tiny_sgemm", "gfx90a"),
                         ("two_entries", "gfx908")]:
        listing, info = load(fixtures_dir, stem, target)
        names = amd_kernel_names(listing)
        remarks = parse_amd_remarks(info)
        vgprs = metadata(listing, "vgpr_count")
        lds = metadata(listing, "group_segment_fixed_size")
        meta_names = re.findall(r"^\s+\.name:\s+(\w+)", listing, re.MULTILINE)
        by_name = dict(zip(meta_names, zip(vgprs, lds)))
        for name in names:
            assert (remarks[name]["vgprs"], remarks[name]["lds_bytes"]) == by_name[name]
            assert 1 <= remarks[name]["occupancy_waves_per_simd"] <= 10


def test_gfx908_reports_agprs_and_both_kernels(fixtures_dir):
    got = facts(fixtures_dir, "two_entries", "gfx908")
    assert set(got) == {"sgemm_naive", "copy_async"}
    assert got["copy_async"].lds_bytes == 256 * 16
    assert got["sgemm_naive"].lds_bytes == 0
    assert all(f.agprs is not None for f in got.values())
    assert got["copy_async"].main_loop_depth == 0
    assert got["copy_async"].mix_loop["instructions"] == 0
    assert got["sgemm_naive"].mix_loop["fma"] >= 1


def test_gfx906_has_no_agprs(fixtures_dir):
    assert facts(fixtures_dir, "tiny_sgemm", "gfx906")["sgemm_tiny"].agprs is None


def test_sm80_cp_async(fixtures_dir):
    got = facts(fixtures_dir, "two_entries", "sm_80")
    ca = got["copy_async"]
    assert ca.mix_total["cp_async"] == 1
    assert ca.mix_total["waitcnt"] == 2     # LDGDEPBAR (commit) + DEPBAR (wait)
    assert ca.mix_total["barrier"] == 1
    assert ca.lds_bytes == 4096
    assert got["sgemm_naive"].lds_bytes == 0


def test_ptxas_info_parsing(fixtures_dir):
    _, info = load(fixtures_dir, "two_entries", "sm_80")
    entries, res = parse_ptxas_info(info)
    assert entries == ["copy_async", "sgemm_naive"]
    regs = [int(r) for r in re.findall(r"Used (\d+) registers", info)]
    assert [res[e]["regs"] for e in entries] == regs
    assert res["copy_async"]["spill_store_bytes"] == 0


def test_sass_sections_and_never_executed_instructions():
    text = """
//--------------------- .text.k          --------------------------
k:
        /*0000*/              @!PT LDS RZ, [RZ] ;
        /*0010*/                   LDGSTS.E.BYPASS.128 [R9], desc[UR6][R2.64] ;
.L_x_1:
        /*0020*/                   FFMA R1, R2, R3, R1 ;
        /*0030*/               @P0 BRA `(.L_x_1) ;
        /*0040*/                   EXIT ;
"""
    lst = parse_sass(text)["k"]
    ins = lst.instructions()
    assert [i.category for i in ins] == ["other", "cp_async", "fma", "other", "other"]
    assert ins[3].target == ".L_x_1" and ins[3].conditional
    assert ins[4].ends_flow


def test_ptx_entries_and_branches(fixtures_dir):
    listing, _ = load(fixtures_dir, "tiny_sgemm", "sm_61")
    lst = parse_ptx(listing)["sgemm_tiny"]
    branches = [i for i in lst.instructions() if i.target]
    assert branches and all(b.target.startswith("$L__") for b in branches)
    assert sum(i.category == "fma" for i in lst.instructions()) == \
        len(re.findall(r"^\s+fma\.rn\.f32", listing, re.MULTILINE))
