"""Device run BF (session 65; docs/model.md "Session 65"): what a tile round costs a block
that waits for its loads, cold and warm (calibration/h200/cold_touch.json, written by
tools/device/cold_touch.py on the H200). CPU only: these read the committed data."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model import load_calib

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "device"))
from cold_touch import _bases, _stats

DOC = json.loads((CALIBRATION_DIR / "h200" / "cold_touch.json").read_text())


def _rows(pitch=4096, rounds=8):
    """{(blocks per SM, share, mode): row} at one pitch and round count."""
    return {(r["blocks_per_sm"], r["share"], r["mode"]): r for r in DOC["results"]
            if r["pitch_bytes"] == pitch and r["rounds"] == rounds}


def test_run_bf_provenance_and_coverage():
    assert DOC["gpu"] == "NVIDIA H200" and DOC["commit"].startswith("4856dfa")
    assert DOC["clocks"]["sm_clock_hz"] == 1.98e9
    # 2 pitches x 3 blocks per SM x 3 shares x 4 round counts x 3 modes
    assert len(DOC["results"]) == 216
    assert DOC["reps"] == 15 and DOC["l2_bytes"] == 60 << 20


def test_run_bf_a_cold_round_waits_far_longer_than_the_dram_chase():
    rows = _rows()
    calib = load_calib("h200")
    clock = calib.values["clock_hz"]
    l2_clk = calib.values["l2_latency_s"] * clock         # the L2 chase: 281 clk
    dram_clk = calib.values["dram_latency_s"] * clock     # the DRAM chase: 683 clk
    for per_sm in (1, 2, 4):
        for share in (1, 2, 4):
            fresh = rows[(per_sm, share, "fresh")]["later_round_clk"]
            warm = rows[(per_sm, share, "warm")]["later_round_clk"]
            assert 1150 < fresh < 1400 and 450 < warm < 600
            # a warm round is the L2 latency plus ~200 clk of store, barrier and read-back;
            # the cold round's wait for its lines, with that overhead taken off, is ~1.5x
            # the DRAM chase
            overhead = warm - l2_clk
            assert 150 < overhead < 300
            assert 1.3 < (fresh - overhead) / dram_clk < 1.8


def test_run_bf_the_first_round_costs_more_and_sharing_saves_little():
    rows = _rows()
    for per_sm in (1, 2, 4):
        for share in (1, 2, 4):
            for mode in ("fresh", "warm"):
                row = rows[(per_sm, share, mode)]
                assert row["first_round_clk"] > row["later_round_clk"] + 100
        first = {s: rows[(per_sm, s, "fresh")]["first_round_clk"] for s in (1, 2, 4)}
        # blocks that read one tile together save 140-300 clk of the ~900 a cold first round
        # adds over a warm one: the later readers wait on the first one's miss
        assert 100 < first[1] - first[4] < 350
        cold_extra = first[1] - rows[(per_sm, 1, "warm")]["first_round_clk"]
        assert cold_extra > 800
    # eight rounds' makespan: 5.5-7 us cold against 2.2-3.4 us warm
    for per_sm in (1, 2, 4):
        fresh = rows[(per_sm, 1, "fresh")]["makespan_ns"]
        warm = rows[(per_sm, 1, "warm")]["makespan_ns"]
        assert 5000 < fresh < 7500 and fresh > 2 * warm


def test_run_bf_contiguous_rows_re_read_their_lines():
    # at a 128-B pitch a round moves one row, not one tile: 31 of its 32 lines were read
    # the round before, so its later rounds are L2 hits even on fresh data
    rows = _rows(pitch=128)
    for per_sm in (1, 2, 4):
        fresh = rows[(per_sm, 1, "fresh")]
        assert fresh["later_round_clk"] < 600 < fresh["first_round_clk"]


def test_cold_touch_stats_hand_worked():
    # 2 repetitions x 2 blocks x 3 rounds: stamps [start ns, end ns, cumulative clk ...]
    stamps = np.array([[[0, 900, 100, 150, 210], [10, 1000, 120, 170, 220]],
                       [[5, 800, 110, 160, 230], [0, 950, 100, 140, 190]]], dtype=np.uint64)
    res = _stats(stamps, 3)
    assert res["first_round_clk"] == pytest.approx(np.median([100, 120, 110, 100]))
    later = [np.mean([50, 60]), np.mean([50, 50]), np.mean([50, 70]), np.mean([40, 50])]
    assert res["later_round_clk"] == pytest.approx(np.median(later))
    assert res["total_clk"] == pytest.approx(np.median([210, 220, 230, 190]))
    assert res["makespan_ns"] == pytest.approx(np.median([1000 - 0, 950 - 0]))
    one = _stats(stamps[:, :, :3], 1)
    assert one["later_round_clk"] is None


def test_cold_touch_regions_hand_worked():
    # fresh: a new region per launch, wrapping at the pool's end
    assert _bases("fresh", 10, 4, 2, 20, 3) == ([10, 14, 0], 4)
    # rotate: n_rot adjacent regions in turn; restarts at 0 where they would not fit
    assert _bases("rotate", 3, 4, 2, 20, 5) == ([3, 7, 3, 7, 3], 11)
    assert _bases("rotate", 15, 4, 2, 20, 2) == ([0, 4], 8)
    # warm: one region for every launch
    assert _bases("warm", 6, 4, 2, 20, 3) == ([6, 6, 6], 10)
