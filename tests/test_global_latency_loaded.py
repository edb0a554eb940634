"""The L2 load latency under load (device run X, tools/device/global_latency_loaded.py,
calibration/h200/global_latency_loaded.json; H200 1980 MHz, driver 580.159.04): measured
for the register-staged /db miss (docs/model.md section 10, session 29), which it does not
explain; a model term since session 45 (latency.global_latency_load_factor)."""

import json

import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model import load_calib

DOC = json.loads((CALIBRATION_DIR / "h200" / "global_latency_loaded.json").read_text())


def _cycles(bg, ilp):
    (row,) = [r for r in DOC["rows"] if r["background_warps"] == bg and r["ilp"] == ilp]
    return row["cycles_per_step_median"]


def test_provenance():
    assert DOC["gpu"] == "NVIDIA H200" and DOC["sms"] == 132
    assert DOC["clocks"]["sm_clock_hz"] == 1.98e9 and DOC["clocks"]["driver"] == "580.159.04"
    assert len(DOC["rows"]) == 1 + 4 * 3


def test_unloaded_chase_is_the_calibrated_l2_latency():
    # the single-thread chase of the calibration (l2_latency_s) and this one agree
    l2_clk = load_calib("h200").values["l2_latency_s"] * DOC["clocks"]["sm_clock_hz"]
    assert _cycles(0, 1) == pytest.approx(l2_clk, rel=0.05)


def test_latency_grows_with_the_loads_in_flight_not_with_the_warps():
    base = _cycles(0, 1)
    # one load in flight per warp: flat up to 31 background warps
    assert all(_cycles(bg, 1) == pytest.approx(base, rel=0.03) for bg in (3, 7, 15, 31))
    # more loads in flight per SM: the latency climbs, 2.4x at 15 x 8, 3x at 31 x 4
    assert _cycles(7, 8) > 1.1 * base
    assert _cycles(15, 8) > 2.2 * base
    assert _cycles(31, 4) > 2.8 * base
    assert _cycles(15, 4) < _cycles(15, 8) < _cycles(31, 4)


def test_loaded_latency_tables_read_measured_rows_sorted(tmp_path):
    """calib's two loaded-latency readers share one row reader: rows without a median are
    dropped, the rest sorted by load; a missing file gives ()."""
    from gemmmodel.model.calib import (
        GLOBAL_LOADED_FILE,
        LDS_LOADED_FILE,
        load_global_loaded,
        load_lds_loaded,
    )

    assert load_lds_loaded(tmp_path) == () and load_global_loaded(tmp_path) == ()
    (tmp_path / LDS_LOADED_FILE).write_text(json.dumps({"rows": [
        {"warps_per_scheduler": 4, "cycles_per_step_median": 60.0},
        {"warps_per_scheduler": 1, "cycles_per_step_median": 25.0},
        {"warps_per_scheduler": 2, "cycles_per_step_median": None}]}))
    assert load_lds_loaded(tmp_path) == ((1.0, 25.0), (4.0, 60.0))
    (tmp_path / GLOBAL_LOADED_FILE).write_text(json.dumps({"rows": [
        {"background_warps": 7, "ilp": 4, "cycles_per_step_median": 284.0},
        {"background_warps": 0, "ilp": 1, "cycles_per_step_median": 275.0}]}))
    # 7 warps x 4 loads x 16 B x 32 lanes in flight; wave64 doubles the bytes
    assert load_global_loaded(tmp_path) == ((0.0, 275.0), (7 * 4 * 512.0, 284.0))
    assert load_global_loaded(tmp_path, wave_size=64)[1][0] == 7 * 4 * 1024.0
