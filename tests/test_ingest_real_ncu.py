"""A real Nsight Compute export (ncu 2025.3, --csv --page raw, captured on the H200 of the
GPU machine, 2026-11-21, with the program's own stdout interleaved as ncu writes it):
`ncu --csv --page raw --launch-count 4 -k regex:sgemm_7_ --metrics gpu__time_duration.sum,
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,… python3 -m gemmmodel run
--kernel 7.3,7.4 --size 1024x1024x1024` (tools/device/run_a.sh)."""

from pathlib import Path

import pytest

from gemmmodel.ingest import identify, read_ncu_csv

REAL = Path(__file__).parent / "fixtures" / "ingest_ncu_raw_h200.csv"


def test_real_ncu_raw_export_parses():
    launches = read_ncu_csv(REAL.read_text())
    assert len(launches) == 4
    first = launches[0]
    assert first.kernel_name == "sgemm_7_3" and identify(first.kernel_name) == "7.3"
    # 93,184 ns in the export's gpu__time_duration.sum column
    assert first.time_s == pytest.approx(93184e-9)
    assert first.regs == 48 and first.lds_bytes == 8704
    conflicts = first.counters["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"][0]
    assert conflicts == 552224.0


def _launch_run(*launches) -> str:
    """The text of an ncu run of tools/device/ncu_launch.py: an order line and a raw CSV row
    per (config, size, duration in ns)."""
    head = '"ID","Kernel Name","gpu__time_duration.sum"\n"","","ns"\n'
    order = "".join(f"order,{i},{c},sgemm_tile,{size}\n" for i, (c, size, _) in enumerate(launches))
    rows = "".join(f'"{i}","sgemm_tile","{ns:,}"\n' for i, (_, _, ns) in enumerate(launches))
    return "==PROF== Connected\n" + order + head + rows


def test_ncu_launch_run_keys_launches_by_their_order_lines():
    from gemmmodel.errors import BadArgument
    from gemmmodel.ingest import read_ncu_launch_run

    text = _launch_run(("64x64x16/8x4", "512x512x512", 1000),
                       ("128x64x16/8x8/p4", "512x512x512", 2500))
    runs = read_ncu_launch_run(text)
    assert list(runs) == ["64x64x16/8x4", "128x64x16/8x8/p4"]
    assert runs["128x64x16/8x8/p4"].time_s == pytest.approx(2.5e-6)
    with pytest.raises(BadArgument, match="no order line"):
        read_ncu_launch_run(text.replace("order,1,", "other,1,"))


def test_ncu_launches_keep_a_config_launched_twice_in_order():
    from gemmmodel.ingest import read_ncu_launch_run, read_ncu_launches

    text = _launch_run(("64x64x16/8x4", "512x512x512", 1000),
                       ("64x64x16/8x4", "1024x512x512", 2000))
    launches = read_ncu_launches(text)
    assert [(f[2], f[-1]) for f, _ in launches] == [("64x64x16/8x4", "512x512x512"),
                                                     ("64x64x16/8x4", "1024x512x512")]
    assert [x.time_s for _, x in launches] == pytest.approx([1e-6, 2e-6])
    # keyed by name, the later launch of a name stands
    assert read_ncu_launch_run(text)["64x64x16/8x4"].time_s == pytest.approx(2e-6)
