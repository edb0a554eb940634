"""The measurements the device tools committed outside the calibrate suites (calibration/
h200/block_placement.json, smem_latency_loaded.json): provenance, and the facts
docs/model.md §10 reports from them."""

import json

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR

H200 = CALIBRATION_DIR / "h200"


def _load(name):
    doc = json.loads((H200 / name).read_text())
    assert doc["gpu"] == "NVIDIA H200" and doc["sms"] == 132
    assert doc["clocks"]["sm_clock_hz"] == pytest.approx(1.98e9)
    assert doc["commit"] and doc["date_utc"].startswith("2026-11-23")
    return doc


def test_block_placement_tail_is_uneven():
    doc = _load("block_placement.json")
    runs = doc["runs"]
    assert {r["capacity"] for r in runs} == {1, 2, 3, 4, 8}
    for r in runs:
        sm = np.array(r["sm"])
        # the record is complete: every block once, every SM used, counts re-derived
        assert len(sm) == r["blocks"] and sm.max() < doc["sms"]
        assert np.bincount(sm).max() == r["max_blocks_per_sm"]
        assert r["makespan_rounds"] == pytest.approx(np.ceil(r["blocks"] / (132 * r["capacity"])),
                                                     abs=0.05)
    two = [r for r in runs if r["capacity"] == 2 and r["waves"] == 1.45]
    # docs: 119 tail blocks on 73-81 SMs, so the busiest SM runs 4 blocks (even spread: 3)
    assert all(r["tail_blocks"] == 119 and 73 <= r["sms_with_tail"] <= 81 for r in two)
    assert all(r["max_blocks_per_sm"] == 4 and r["even_spread_blocks"] == 3 for r in two)
    one = [r for r in runs if r["capacity"] == 1]
    assert all(r["tail_per_sm_max"] <= 2 for r in one)  # one slot: nothing to clump into


def test_loaded_smem_latency_grows_with_the_lds_queue():
    doc = _load("smem_latency_loaded.json")
    lat = {r["background_warps"]: r["cycles_per_step_median"] for r in doc["rows"]}
    assert lat[0] == pytest.approx(23.1, abs=0.2)          # unloaded, as the 32-bit chase
    assert max(lat[b] for b in (1, 3)) < 25                  # <= 1 warp per scheduler
    values = [lat[b] for b in sorted(lat)]
    assert values == sorted(values)                          # more load, longer wait
    # saturated LDS pipe: the wait is the queue, ~5-9 cycles per background warp
    for b in (7, 11, 15, 23, 31):
        assert 4.5 <= lat[b] / b <= 9.0
