"""The compile-facts table: CSV round trip and lookup (CPU only)."""

import pytest

from gemmmodel.compile.facts import MIX_KEYS, KernelFacts, empty_mix
from gemmmodel.compile.table import (
    DEFAULT_TARGETS,
    FIELDS,
    catalogue_sources,
    facts_for,
    load_compile_facts,
    write_facts_table,
)
from gemmmodel.errors import BadArgument, KernelNotFound


def sample_facts():
    total, loop = empty_mix(), empty_mix()
    total.update(fma=272, lds_read_b128=32, instructions=304)
    loop.update(fma=256, lds_read_b128=32, instructions=288)
    return KernelFacts(kernel="sgemm_7_4", target="gfx906", vendor="amd", vgprs=83, sgprs=30,
                       lds_bytes=8448, occupancy_waves_per_simd=3, main_loop_depth=1,
                       mix_source="amdgcn", mix_total=total, mix_loop=loop,
                       compiler="hipcc x", flags="-O3")


def test_flat_roundtrip():
    f = sample_facts()
    assert KernelFacts.from_flat(f.flat()) == f
    assert {f"loop_{k}" for k in MIX_KEYS} <= set(f.flat())


def test_csv_roundtrip_and_lookup(tmp_path):
    f = sample_facts()
    rows = [{"kernel_id": "7.4", **f.flat(), "status": "ok"},
            {"kernel_id": "7.6", "kernel": "sgemm_7_6", "target": "gfx906", "vendor": "amd",
             "status": "error: hipcc failed"}]
    path = write_facts_table(rows, tmp_path / "facts.csv")
    header = path.read_text().splitlines()[0].split(",")
    assert header == FIELDS
    df = load_compile_facts(path)
    assert len(df) == 2
    got = facts_for("7.4", "gfx906", table=df)
    assert got == f
    assert got.agprs is None and got.vgprs == 83
    with pytest.raises(KernelNotFound, match="did not compile"):
        facts_for("7.6", "gfx906", table=df)
    with pytest.raises(KernelNotFound):
        facts_for("7.4", "sm_90", table=df)


def test_catalogue_sources(tmp_path):
    cat = tmp_path / "catalogue.toml"
    cat.write_text('[kernel."1"]\nsource = "ladder/k1.cu"\nentry = "sgemm_1"\n'
                   '[kernel."7.4"]\nsource = "ladder/k7_4.cu"\nentry = "sgemm_7_4"\n')
    got = catalogue_sources(cat)
    assert [(k, p.name, e) for k, p, e in got] == [("1", "k1.cu", "sgemm_1"),
                                                   ("7.4", "k7_4.cu", "sgemm_7_4")]
    cat.write_text('[kernel."1"]\nsource = "ladder/k1.cu"\n')
    with pytest.raises(BadArgument):
        catalogue_sources(cat)


def test_committed_table_covers_every_catalogue_id_on_every_target():
    """calibration/compile_facts.csv: one compiled row per catalogue id x DEFAULT_TARGETS,
    so later commands never need a compiler; every row has registers and an FMA count."""
    df = load_compile_facts()
    ids = [kid for kid, _, _ in catalogue_sources()]
    assert len(ids) == 28
    assert sorted(zip(df.kernel_id, df.target)) == sorted(
        (kid, target) for kid in ids for target in DEFAULT_TARGETS)
    assert (df.status == "ok").all(), df[df.status != "ok"][["kernel_id", "target", "status"]]
    for kid in ids:
        for target in DEFAULT_TARGETS:
            facts = facts_for(kid, target, table=df)
            assert (facts.vgprs if facts.vendor == "amd" else facts.regs) > 0, (kid, target)
            assert facts.mix_total["fma"] + facts.mix_total["fma_packed"] > 0, (kid, target)
