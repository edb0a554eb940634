"""Compile for real with hipcc / nvcc / NVRTC (marker `compiler`; skipped with a reason where
a tool is missing, FAIL under CI=true: see conftest.require_tool)."""

import argparse
import json

import pandas as pd
import pytest

from gemmmodel import CALIBRATION_DIR, KERNELS_DIR
from gemmmodel.commands import compile as compile_cmd
from gemmmodel.commands import facts as facts_cmd
from gemmmodel.compile import compile_facts, routes
from gemmmodel.compile.facts import MIX_KEYS
from gemmmodel.compile.table import catalogue_sources, load_compile_facts

pytestmark = pytest.mark.compiler

TOOLS = {"gfx906": ("hipcc",), "gfx90a": ("hipcc",), "sm_90": ("nvcc", "nvdisasm"),
         "sm_61": ("nvcc", "nvrtc", "ptxas12")}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMMODEL_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("target", sorted(TOOLS))
def test_tiny_sgemm_live(require_tool, fixtures_dir, target):
    """Live compile: the hand-worked counts of tiny_sgemm (see test_compile_parsers)."""
    require_tool(*TOOLS[target])
    src = fixtures_dir / "compile_kernels" / "tiny_sgemm.cu"
    (f,) = compile_facts(src, target)
    assert f.mix_loop["fma"] + f.mix_loop["fma_packed"] == 256
    assert f.mix_loop["lds_read_b128"] == 32
    assert f.lds_bytes == (16 * 68 + 16 * 64) * 4
    assert f.spills == 0
    assert (f.vgprs if target.startswith("gfx") else f.regs) > 16


def test_second_compile_is_a_cache_hit(require_tool, fixtures_dir, monkeypatch):
    require_tool("hipcc")
    src = fixtures_dir / "compile_kernels" / "two_entries.cu"
    first = compile_facts(src, "gfx906", defines={"UNUSED_MACRO": 3})

    def boom(*args, **kwargs):
        raise AssertionError("compiler ran although the result was cached")

    monkeypatch.setattr("gemmmodel.compile.driver.run_route", boom)
    again = compile_facts(src, "gfx906", defines={"UNUSED_MACRO": 3})
    assert again == first
    with pytest.raises(AssertionError, match="compiler ran"):
        compile_facts(src, "gfx906", defines={"UNUSED_MACRO": 4})  # other flags: a miss


def test_compile_command_json(require_tool, fixtures_dir, capsys):
    require_tool("hipcc")
    parser = argparse.ArgumentParser()
    compile_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["compile", str(fixtures_dir / "compile_kernels" / "two_entries.cu"),
                              "--gpu", "gfx908", "--entry", "copy_async", "--json"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert [f["kernel"] for f in out] == ["copy_async"]
    assert out[0]["lds_bytes"] == 4096 and out[0]["agprs"] == 0


def test_facts_command_on_a_small_catalogue(require_tool, fixtures_dir, tmp_path, capsys):
    require_tool("hipcc", "nvcc", "nvdisasm")
    kdir = fixtures_dir / "compile_kernels"
    cat = tmp_path / "catalogue.toml"
    cat.write_text(f'[kernel."t1"]\nsource = "{kdir / "tiny_sgemm.cu"}"\nentry = "sgemm_tiny"\n'
                   f'[kernel."t2"]\nsource = "{kdir / "two_entries.cu"}"\nentry = "sgemm_naive"\n')
    out_csv = tmp_path / "facts.csv"
    parser = argparse.ArgumentParser()
    facts_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["facts", "--targets", "gfx906,sm_90", "--catalogue", str(cat),
                              "--out", str(out_csv), "--json"])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["failed"] == []
    df = load_compile_facts(out_csv)
    assert sorted(zip(df.kernel_id, df.target)) == [("t1", "gfx906"), ("t1", "sm_90"),
                                                    ("t2", "gfx906"), ("t2", "sm_90")]
    tiny = df[(df.kernel_id == "t1") & (df.target == "sm_90")].iloc[0]
    assert tiny.loop_fma == 256 and tiny.regs > 0 and tiny.status == "ok"


SAMPLE_IDS = ("1", "7.4", "8.4")


def test_catalogue_sample_matches_committed_table(require_tool):
    """Recompile a few catalogue kernels and compare with calibration/compile_facts.csv."""
    table_file = CALIBRATION_DIR / "compile_facts.csv"
    if not table_file.is_file() or not (KERNELS_DIR / "catalogue.toml").is_file():
        pytest.skip("no catalogue or committed compile_facts.csv yet")
    require_tool("hipcc", "nvcc", "nvdisasm")
    table = load_compile_facts(table_file)
    kernels = {kid: (src, entry) for kid, src, entry in catalogue_sources()}
    sample = [k for k in SAMPLE_IDS if k in kernels][:2] or list(kernels)[:2]
    assert len(sample) >= 2
    for target in ("gfx906", "sm_90"):
        route = routes.choose_route(target, "amd" if target.startswith("gfx") else "nvidia")
        for kid in sample:
            row = table[(table.kernel_id == kid) & (table.target == target)].iloc[0]
            if row.compiler != route.versions:
                pytest.skip(f"table made with {row.compiler!r}, here {route.versions!r}")
            (f,) = compile_facts(kernels[kid][0], target, entry=kernels[kid][1], route=route)
            flat = f.flat()
            for col in ["vgprs", "regs", "lds_bytes", "scratch_bytes", "spills",
                        "main_loop_depth", *(f"{prefix}_{k}" for prefix in ("total", "loop", "outer")
                                             for k in MIX_KEYS)]:
                want = row[col]
                got = flat[col]
                if got is None:
                    assert want is pd.NA, (kid, target, col)  # empty in the CSV
                else:
                    assert got == want, (kid, target, col)


def test_template_facts_table_matches_the_compiler(require_tool):
    """The shipped calibration/template_facts.csv (what explain/compare use without a
    compiler) equals a fresh compile of its configs on gfx906 and sm_90."""
    from gemmmodel.compile.table import TEMPLATE_CONFIGS, TEMPLATE_TABLE_FILE, template_sources

    require_tool("hipcc", "nvcc")
    table = load_compile_facts(TEMPLATE_TABLE_FILE)
    items = template_sources()
    assert sorted(table.kernel_id.unique()) == sorted(TEMPLATE_CONFIGS)
    for target in ("gfx906", "sm_90"):
        route = routes.choose_route(target, "amd" if target.startswith("gfx") else "nvidia")
        for name, source, entry, defines in items:
            row = table[(table.kernel_id == name) & (table.target == target)].iloc[0]
            if row.compiler != route.versions:
                pytest.skip(f"table made with {row.compiler!r}, here {route.versions!r}")
            (f,) = compile_facts(source, target, defines=defines, entry=entry, route=route)
            flat = f.flat()
            for col in ("vgprs", "regs", "lds_bytes", "spills", "loop_fma"):
                got, want = flat[col], row[col]
                assert (want is pd.NA) if got is None else got == want, (name, target, col)
