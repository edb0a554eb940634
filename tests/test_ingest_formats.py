"""Profiler exports -> ingested measurements -> explain.

The fixtures tests/fixtures/ingest_*.csv are SYNTHETIC exports written in the formats the
vendors document (ncu --csv --page details / raw, rocprof v1 results.csv, rocprofv3
kernel_trace.csv); their values were made up for the test, not measured. Real exports from
the GPU machine replace them when the lead captures some.
"""

from __future__ import annotations

import json

import pytest

from gemmmodel.cli import main
from gemmmodel.errors import BadArgument
from gemmmodel.ingest import (
    base_name,
    ingest,
    ingested_times,
    load_ingested,
    parse_number,
    read_ncu_csv,
    read_rocprof_csv,
)


def test_parse_number_handles_separators_and_na():
    assert parse_number("1,612,448") == 1612448.0
    assert parse_number('"2,104.00"') == 2104.0
    assert parse_number("n/a") is None
    assert parse_number("") is None
    assert parse_number("1.5e-05") == 1.5e-05


@pytest.mark.parametrize("raw, base", [("sgemm_7_4", "sgemm_7_4"),
                                       ("void sgemm_7_4(int, int, int, float)", "sgemm_7_4"),
                                       ("sgemm_7_4.kd", "sgemm_7_4"),
                                       ("ns::sgemm_tile<128>(float*)", "sgemm_tile")])
def test_base_name(raw, base):
    assert base_name(raw) == base


def test_ncu_details_page(fixtures_dir):
    launches = read_ncu_csv((fixtures_dir / "ingest_ncu_details.csv").read_text())
    assert [x.launch_id for x in launches] == ["0", "1", "2"]
    first = launches[0]
    assert first.kernel_name == "sgemm_7_4"
    assert first.time_s == pytest.approx(1.52e-3)
    assert first.regs == 64
    assert first.lds_bytes == pytest.approx(17.41e3)
    assert first.counters["Achieved Occupancy"] == (37.12, "%")
    assert launches[2].time_s == pytest.approx(2104e-6)      # usecond with a separator
    assert launches[2].regs is None                           # "n/a"


def test_ncu_raw_page_units_row(fixtures_dir):
    launches = read_ncu_csv((fixtures_dir / "ingest_ncu_raw.csv").read_text())
    assert len(launches) == 2
    assert launches[0].time_s == pytest.approx(1612448e-9)
    assert launches[0].counters["dram__bytes_read.sum"] == (612.5, "Mbyte")
    assert launches[0].regs == 58


def test_rocprof_v1_and_v3(fixtures_dir):
    v1 = read_rocprof_csv((fixtures_dir / "ingest_rocprof_results.csv").read_text())
    assert [x.time_s for x in v1] == pytest.approx([11.2e-3, 11.18e-3])
    assert v1[0].regs == 88 and v1[0].lds_bytes == 17408
    assert v1[0].counters["LDSBankConflict"][0] == 1.5
    v3 = read_rocprof_csv((fixtures_dir / "ingest_rocprofv3_kernel_trace.csv").read_text())
    assert v3[0].kernel_name == "sgemm_7_3"
    assert v3[0].time_s == pytest.approx(11.992e-3)
    assert v3[0].regs == 40


def test_not_a_profiler_csv(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(BadArgument):
        read_ncu_csv(bad.read_text())
    with pytest.raises(BadArgument):
        read_rocprof_csv(bad.read_text())


def test_ingest_ncu_names_kernels_and_needs_gpu_when_ambiguous(fixtures_dir, tmp_path):
    src = fixtures_dir / "ingest_ncu_details.csv"
    with pytest.raises(BadArgument, match="--gpu"):
        ingest(src, "ncu", root=tmp_path)          # CC 9.0 matches h200 and sm_90
    res = ingest(src, "ncu", gpu="h200", size=(4096, 4096, 4096), root=tmp_path)
    assert res["gpu"] == "h200" and res["launches"] == 3
    assert res["identified"] == 2 and res["unidentified"] == ["sgemm_tile"]
    rows = load_ingested("h200", tmp_path)
    assert {r["kernel"] for r in rows} == {"7.4", ""}
    times = ingested_times("h200", tmp_path)
    assert len(times) == 1
    assert times[0]["time_s"] == pytest.approx((1.52e-3 + 1.48e-3) / 2)
    assert times[0]["shape"] == (4096, 4096, 4096, 1)


def test_ingest_infers_m_n_from_the_grid(fixtures_dir, tmp_path):
    res = ingest(fixtures_dir / "ingest_ncu_raw.csv", "ncu", gpu="h200", root=tmp_path)
    row = res["rows"][0]
    assert (row["M"], row["N"], row["K"]) == (32 * 64, 32 * 64, None)   # 7.3: 64x64 tiles
    assert ingested_times("h200", tmp_path) == []                        # no K: not matched


def test_rocprof_needs_gpu(fixtures_dir, tmp_path):
    with pytest.raises(BadArgument, match="--gpu"):
        ingest(fixtures_dir / "ingest_rocprof_results.csv", "rocprof", root=tmp_path)


def test_explain_shows_ingested_time(fixtures_dir, tmp_path):
    from gemmmodel.explain import explain_kernel

    ingest(fixtures_dir / "ingest_rocprof_results.csv", "rocprof", gpu="mi100-1472",
           size=(4096, 4096, 4096), root=tmp_path)
    res = explain_kernel("7.4", "mi100-1472", "4096x4096x4096", allow_compile=False,
                         root=tmp_path)
    sources = [m["source"] for m in res["measured"]]
    assert any(s.startswith("ingested rocprof") for s in sources)
    ing = next(m for m in res["measured"] if m["source"].startswith("ingested"))
    assert ing["time_s"] == pytest.approx((11.2e-3 + 11.18e-3) / 2)
    assert ing["error"] == pytest.approx((res["prediction"]["time_s"] - ing["time_s"])
                                         / ing["time_s"])
    regs = next(p for p in ing["profile"] if p["counter"] == "arch_vgpr")
    assert regs["measured"] == 88 and regs["model"] == res["resources"]["regs"]


def test_cli_ingest_json_and_errors(fixtures_dir, tmp_path, capsys, monkeypatch):
    import gemmmodel.ingest as mod

    monkeypatch.setattr(mod, "CALIBRATION_DIR", tmp_path)
    rc = main(["ingest", "--ncu", str(fixtures_dir / "ingest_ncu_raw.csv"), "--gpu", "h200",
               "--size", "2048x2048x2048", "--json"])
    out = capsys.readouterr()
    assert rc == 0
    data = json.loads(out.out)
    assert data["with_shape"] == 2 and (tmp_path / "ingested" / "h200").is_dir()
    rc = main(["ingest", "--ncu", str(tmp_path / "missing.csv"), "--gpu", "h200"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "not found" in err
