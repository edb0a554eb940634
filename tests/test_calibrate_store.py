"""The calibration store: keys, schema and units, append-only writes, torn lines."""

import pytest

from gemmmodel.calibrate.store import (
    COLUMNS,
    QUANTITIES,
    ResultStore,
    format_row,
    measurement_key,
    params_text,
    parse_params,
    read_rows,
)


def _row(**over):
    row = {"provenance_id": "p1", "timestamp_utc": "2026-01-01T00:00:00Z", "suite": "micro",
           "name": "fma_curve", "params": "ilp=4;warps=16", "status": "ok", "time_s": 1e-3,
           "quantity": "flop_per_s", "value": 5e13, "work": 5e10, "work_unit": "FLOP"}
    row.update(over)
    return row


def test_params_text_is_canonical_and_parses_back():
    assert params_text({"warps": 16, "ilp": 4}) == "ilp=4;warps=16"
    assert params_text({"x": 2.0}) == "x=2"
    assert parse_params("M=64;config=128x128x8/8x8;level=l1;r=0.5") == {
        "M": 64, "config": "128x128x8/8x8", "level": "l1", "r": 0.5}
    assert measurement_key("micro", "fma_curve", {"ilp": 4, "warps": 16}) == \
        "micro/fma_curve/ilp=4;warps=16"
    with pytest.raises(ValueError):
        params_text({"bad": "a;b"})


def test_unit_is_fixed_by_the_quantity():
    line = format_row(_row())
    rec = dict(zip(COLUMNS, line.rstrip("\n").split(",")))
    assert rec["unit"] == "FLOP/s" == QUANTITIES["flop_per_s"]
    with pytest.raises(ValueError, match="must be in"):
        format_row(_row(unit="TFLOP/s"))
    with pytest.raises(ValueError, match="unknown quantity"):
        format_row(_row(quantity="tflops"))
    with pytest.raises(ValueError, match="unknown columns"):
        format_row(_row(gflops=3))
    with pytest.raises(ValueError, match="unknown suite"):
        format_row(_row(suite="misc"))


def test_every_quantity_name_states_its_unit():
    for name, unit in QUANTITIES.items():
        if name.endswith("_per_s"):
            assert unit.endswith("/s"), name
        elif name.endswith("_Bps"):
            assert unit == "B/s", name
        elif name.endswith("_s"):
            assert unit == "s", name
        elif name.endswith("_hz"):
            assert unit == "Hz", name
        elif name.endswith("_cycles") or name.startswith("cycles_"):
            assert unit == "cycles", name


def test_append_read_done_keys(tmp_path):
    store = ResultStore(tmp_path)
    store.append([_row(), _row(quantity="flop_per_clk_per_sm", value=256.0)])
    store.append([_row(name="smem_stride", params="bits=32;stride=2", status="error",
                       quantity="none", value=None, note="boom")])
    store.append([_row(name="chase", params="level=l1", status="skipped", quantity="none",
                       value=None, note="why")])
    rows = store.rows("micro")
    assert len(rows) == 4
    assert (tmp_path / "micro.csv").read_text().splitlines()[0] == ",".join(COLUMNS)
    assert store.done_keys() == {"micro/fma_curve/ilp=4;warps=16", "micro/chase/level=l1"}
    assert not list(tmp_path.glob(".*tmp"))


def test_torn_last_line_is_ignored_then_cut_before_the_next_append(tmp_path):
    store = ResultStore(tmp_path)
    store.append([_row()])
    path = tmp_path / "micro.csv"
    with path.open("a") as fh:
        fh.write("p1,2026-01-01T00:00:00Z,micro,fma_curve,ilp=8")   # crash mid-row
    assert len(read_rows(path)) == 1
    store.append([_row(params="ilp=8;warps=1")])
    rows = read_rows(path)
    assert [r["params"] for r in rows] == ["ilp=4;warps=16", "ilp=8;warps=1"]
    assert path.read_text().endswith("\n")


def test_notes_with_newlines_stay_one_line(tmp_path):
    store = ResultStore(tmp_path)
    store.append([_row(status="error", quantity="none", value=None, note="a\nb,c")])
    assert len((tmp_path / "micro.csv").read_text().splitlines()) == 2
    assert store.rows()[0]["note"] == "a | b,c"
