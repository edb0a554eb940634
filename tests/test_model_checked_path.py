"""The checked path of the bounds-checked template build (docs/model.md section 10,
thirteenth change): edge tiles run the checked loads, whose cost r is the loop of the build
without the unchecked path over the plain one (committed SASS tables; the edge build's whole
loop before the twenty-sixth change); the issue pipe of a bounds-checked launch grows by
1 + s * (r - 1), s = the share of block tile iterations on edge tiles."""

import pytest

from gemmmodel.compile.table import template_facts, template_table_facts
from gemmmodel.model import assemble
from gemmmodel.model.kernel import describe
from gemmmodel.model.work import checked_path_term
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name

H200 = load_spec("h200")
CFG = parse_name("64x64x16/8x4/p4/db")


def test_share_of_edge_tiles_hand_worked():
    desc = describe(CFG.params(32))
    # 200 x 200: 4 x 4 blocks of 64 x 64, 7 of them past M or N; K = 320 is a multiple
    t = checked_path_term(desc, (200, 200, 320, 24), {"checked_path_ratio": 1.5})
    assert t.inputs["edge_blocks"] == 7 and t.inputs["blocks"] == 16
    assert t.inputs["s"] == pytest.approx(7 / 16)
    assert t.value == pytest.approx(1 + 7 / 16 * 0.5)
    # K = 300: every interior block also runs its last of 19 k tiles checked
    t = checked_path_term(desc, (200, 200, 300, 24), {"checked_path_ratio": 1.5})
    assert t.inputs["s"] == pytest.approx(7 / 16 + 9 / 16 / 19)
    # a batched launch of whole tiles: the edge build, no edge tile
    t = checked_path_term(desc, (256, 256, 256, 40), {"checked_path_ratio": 1.5})
    assert t.value == pytest.approx(1.0)
    # no ratio (plain build, catalogue kernel): 1
    assert checked_path_term(desc, (200, 200, 300, 1), {}).value == 1.0
    assert checked_path_term(desc, (200, 200, 300, 1), None).value == 1.0


def test_template_facts_carry_the_ratio_only_for_the_checked_build():
    target = str(H200.compile_target)
    edge = template_table_facts(target, True)[CFG.name]
    plain = template_table_facts(target, False)[CFG.name]
    assert edge["instructions_per_tile"] > plain["instructions_per_tile"] > 0
    f_edge = template_facts(CFG, H200, 80, (200, 200, 300))      # single launch, EDGE=1
    f_plain = template_facts(CFG, H200, 80, (256, 256, 256, 1))
    # what an edge block executes: the EDGE=2 build's loop (the checked path alone) over
    # the plain build's (twenty-sixth change; tests/test_model_checked_only.py)
    alone = template_table_facts(target, True, False, True)[CFG.name]
    assert f_edge["checked_path_ratio"] == pytest.approx(
        alone["instructions_per_tile"] / plain["instructions_per_tile"])
    assert 1.0 < f_edge["checked_path_ratio"] < \
        edge["instructions_per_tile"] / plain["instructions_per_tile"]
    assert "checked_path_ratio" not in f_plain
    # a batched launch: the strided-batched entry's checked loop over the plain build's
    batched = template_table_facts(target, True, True, True)[CFG.name]
    f_batched = template_facts(CFG, H200, 80, (200, 200, 300, 24))
    assert f_batched["checked_path_ratio"] == pytest.approx(
        batched["instructions_per_tile"] / plain["instructions_per_tile"])


def test_issue_pipe_of_an_edge_launch_grows_by_the_factor():
    shape = (200, 200, 320, 24)
    facts = template_facts(CFG, H200, 80, shape)
    with_ratio = assemble(CFG.params(32), facts, H200, shape)
    without = assemble(CFG.params(32), {k: v for k, v in facts.items()
                                        if k != "checked_path_ratio"}, H200, shape)
    factor = with_ratio.terms["t_issue_s"].child("checked_path_factor").value
    assert factor > 1.05
    assert with_ratio.issue_s == pytest.approx(without.issue_s * factor)
    assert with_ratio.mem_instr_s == pytest.approx(without.mem_instr_s * factor)
    assert with_ratio.lds_s == pytest.approx(without.lds_s)      # LDS work is the same


def test_unaligned_rows_send_every_tile_down_the_checked_path():
    # float4 loads need 16-B aligned rows: N = 250 (B's leading dimension) or K = 1111 (A's)
    # leave no tile on the unchecked path, edge or not (sgemm_tile.cu vec_ab)
    desc = describe(CFG.params(32))
    for shape in ((250, 250, 500, 32), (3333, 2224, 1111, 1)):
        t = checked_path_term(desc, shape, {"checked_path_ratio": 1.5})
        assert t.inputs["s"] == 1.0 and t.value == pytest.approx(1.5)
    # N and K multiples of 4: only the edge tiles (4 x 4 blocks, 7 past M or N)
    t = checked_path_term(desc, (252, 252, 512, 32), {"checked_path_ratio": 1.5})
    assert t.inputs["s"] == pytest.approx(7 / 16)
    # scalar loads (VEC = 1) have no alignment condition
    scalar = describe(parse_name("64x64x16/8x4/v1").params(32))
    t = checked_path_term(scalar, (250, 250, 512, 32), {"checked_path_ratio": 1.5})
    assert t.inputs["s"] == pytest.approx(7 / 16)
