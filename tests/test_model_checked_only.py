"""What an edge block executes (docs/model.md section 10, twenty-sixth change): the checked
path's ratio r takes the bounds-checked build with its unchecked path compiled out (EDGE=2,
calibration/template_facts_sm_90_checked.csv and ..._batched_checked.csv) over the plain
build, not the bounds-checked build's whole loop, which also holds the unchecked path that
edge blocks skip (CPU; one test needs nvcc)."""

import pytest

from gemmmodel.compile.table import template_facts, template_table_facts, template_table_path
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name, search_space

H200 = load_spec("h200")
TARGET = str(H200.compile_target)


def _per_tile(edge=False, batched=False, checked=False):
    return {name: f["instructions_per_tile"]
            for name, f in template_table_facts(TARGET, edge, batched, checked).items()
            if f.get("instructions_per_tile")}


@pytest.mark.parametrize("batched", [False, True])
def test_checked_tables_cover_the_search_space_and_sit_between_the_builds(batched):
    plain = _per_tile()
    both = _per_tile(edge=True, batched=batched)
    alone = _per_tile(edge=True, batched=batched, checked=True)
    assert set(alone) == {c.name for c in search_space(H200)} == set(plain)
    ratios = [alone[n] / both[n] for n in alone]
    # the checked loads cost more than the unchecked ones: above the plain loop everywhere
    assert all(alone[n] > plain[n] for n in alone)
    # without the unchecked path the loop is shorter (nvcc schedules the two builds apart:
    # at most 1.2 % longer, for 3 of 372 uniform and 1 of 372 batched configs)
    assert max(ratios) < 1.015
    assert sum(r < 1 for r in ratios) > 0.98 * len(ratios)
    # of the whole loop's extra over the plain one, an edge block executes a median 80 %
    # (uniform) and 86 % (batched); the rest is the unchecked path's code
    extra = sorted((alone[n] - plain[n]) / (both[n] - plain[n]) for n in alone)
    assert 0.7 < extra[len(extra) // 2] < 0.9 and extra[len(extra) // 10] < 0.7


def test_template_facts_take_the_checked_path_alone():
    cfg = parse_name("32x128x32/8x4/p4/db")
    plain = template_table_facts(TARGET, False)[cfg.name]["instructions_per_tile"]
    for shape, batched in (((3000, 1000, 1024), False), ((96, 488, 352, 36), True)):
        alone = template_table_facts(TARGET, True, batched, True)[cfg.name]
        both = template_table_facts(TARGET, True, batched)[cfg.name]
        r = template_facts(cfg, H200, 128, shape)["checked_path_ratio"]
        assert r == pytest.approx(alone["instructions_per_tile"] / plain)
        # the edge build's whole loop (both paths) would say more: 1.48 vs 1.32 uniform
        assert r < both["instructions_per_tile"] / plain - 0.1


def test_without_a_checked_row_the_whole_loop_is_the_bound(monkeypatch):
    from gemmmodel.compile import table

    cfg = parse_name("64x64x16/8x4/p4/db")
    real = table.template_table_facts

    def no_checked(target, edge=False, batched=False, checked=False):
        return {} if checked else real(target, edge, batched)

    monkeypatch.setattr(table, "template_table_facts", no_checked)
    both = real(TARGET, True)[cfg.name]["instructions_per_tile"]
    plain = real(TARGET, False)[cfg.name]["instructions_per_tile"]
    r = table.template_facts(cfg, H200, 80, (200, 200, 300))["checked_path_ratio"]
    assert r == pytest.approx(both / plain)


def test_facts_checked_needs_a_bounds_checked_build(capsys):
    from gemmmodel.cli import main

    assert main(["facts", "--checked", "--search-space", "h200"]) == 2
    assert "--checked needs --edge or --batched" in capsys.readouterr().err


def test_committed_checked_tables_match_the_compiler(require_tool):
    from gemmmodel.compile import compile_facts, facts_for
    from gemmmodel.compile.table import load_compile_facts, template_sources

    require_tool("nvcc", "nvdisasm")
    for batched in (False, True):
        path = template_table_path(TARGET, edge=True, batched=batched, checked=True)
        table = load_compile_facts(path)
        for name in ("32x64x16/8x8/p4/db", "128x128x16/8x8/p4/db"):
            (_, source, entry, defines), = template_sources([name], edge=True,
                                                            batched=batched, checked=True)
            assert defines["EDGE"] == 2
            shipped = facts_for(name, TARGET, table=table)
            fresh = compile_facts(source, TARGET, defines=defines, entry=entry)[0]
            assert shipped.mix_loop == fresh.mix_loop and shipped.regs == fresh.regs
