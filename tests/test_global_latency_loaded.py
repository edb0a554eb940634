"""The L2 load latency under load (device run X, tools/device/global_latency_loaded.py,
calibration/h200/global_latency_loaded.json; H200 1980 MHz, driver 580.159.04): measured
for the register-staged /db miss (docs/model.md section 10, session 29), which it does not
explain; not a model term."""

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
