"""Device run AB (tools/device/run_ab.sh; docs/model.md section 10, session 34): the
twenty-fourth round's two 8x8 misses. Per-block stamps: at 1100x900x5200 the register double
buffer's edge blocks (checked loads every tile) set the launch's time; with the
bounds-checked build forced at 1088x896x5200 (no edge tile) every block runs as the
interior ones. ncu: the batched BK 32 8x8 build waits on instruction fetch."""

import json
from statistics import median

import pytest
from test_ncu_run_z import share
from test_ncu_run_z import source_pages as run_z_pages

from gemmmodel import CALIBRATION_DIR

FOLDER = CALIBRATION_DIR / "h200"


def runs(name: str = "tail_stamps_ab.json") -> dict:
    """{(size, config): [stamped run, ...]} of a committed per-block stamp file (H200)."""
    doc = json.loads((FOLDER / name).read_text())
    assert doc["gpu"] == "NVIDIA H200" and doc["clocks"]["sm_clock_hz"] == pytest.approx(1.98e9)
    out = {}
    for r in doc["runs"]:
        out.setdefault((r["size"], r["config"]), []).append(r)
    return out


def med(rows, key):
    return median(r[key] for r in rows)


def test_edge_blocks_of_the_register_double_buffer_set_the_launch_time():
    r = runs()
    db = r[("1100x900x5200", "32x64x8/8x8/p4/db")]
    assert db[0]["edge_blocks"] == 49 and db[0]["blocks"] == 525
    # docs/model.md: edge 585 us, interior 388 us, launch 625 us; forced edge build 386 us
    assert med(db, "block_us_edge") / med(db, "block_us_interior") == pytest.approx(1.51, abs=0.02)
    assert med(db, "makespan_us") > med(db, "block_us_edge") > 575
    forced = r[("1088x896x5200", "32x64x8/8x8/p4/db")]
    assert forced[0]["edge_blocks"] == 0
    assert med(forced, "makespan_us") == pytest.approx(med(db, "block_us_interior"), rel=0.02)
    # the single buffer waits its loads in every block anyway: edge and interior alike
    single = r[("1100x900x5200", "32x64x8/8x8/p4")]
    assert med(single, "block_us_edge") == pytest.approx(med(single, "block_us_interior"),
                                                         rel=0.01)


def source_pages(shape):
    """{config: [row dict per SASS instruction]} of ncu_ab_src_<shape>.txt.gz."""
    return run_z_pages(shape, "ab")


def no_inst(rows):
    def num(row, key):
        return float(row[key].replace(",", "") or 0)
    total = sum(num(r, "Warp Stall Sampling (All Samples)") for r in rows)
    return sum(num(r, "stall_no_inst") for r in rows) / total


def test_the_batched_bk32_8x8_build_waits_on_instruction_fetch():
    pages = source_pages("176x104x448x40")
    assert list(pages) == ["64x64x32/8x8/p4/db", "64x64x32/8x4/p4"]
    assert no_inst(pages["64x64x32/8x8/p4/db"]) == pytest.approx(0.45, abs=0.01)
    assert no_inst(pages["64x64x32/8x4/p4"]) < 0.05
    assert share(pages["64x64x32/8x4/p4"], "FFMA", "stall_selected") > 0.2
