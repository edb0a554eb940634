"""Device run BL (session 69; tools/device/icache_phase.py, kernels/micro/icache_phase.cu;
calibration/h200/icache_phase.json): a hot loop of 24 or 48 KiB of FFMAs inside up to 128
KiB more code that runs once per pass. What it says about run AC's fetch table
(calibration/h200/icache.json, gemmmodel.model.fetch), which the model reads at the whole
code's size (docs/model.md "Session 69"). CPU only: these read the committed data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model.fetch import fetch_rate, load_icache

FOLDER = CALIBRATION_DIR / "h200"


@pytest.fixture(scope="module")
def run():
    doc = json.loads((FOLDER / "icache_phase.json").read_text())
    return doc, doc["rows"], load_icache(FOLDER)


def _rows(rows, **want):
    return [r for r in rows if all(r[k] == v for k, v in want.items())]


def test_run_bl_was_measured_on_the_h200_with_every_point_placed(run):
    doc, rows, _ = run
    assert doc["gpu"] == "NVIDIA H200" and doc["commit"] == "9e74e0a"
    assert doc["clocks"]["sm_clock_hz"] == 1.98e9 and doc["clocks"]["driver"] == "580.159.04"
    # 2 hot sizes x (1 + 4 x 2 skews) code layouts x 3 trips x 3 w
    assert len(rows) == 2 * 9 * 3 * 3
    for r in rows:
        w = r["warps_per_scheduler"]
        assert r["blocks_per_sm_seen"] == [w] and r["min_blocks_at_once"] == w
        assert r["sms_used"] == 132 and 0.0 < r["fma_rate_per_scheduler"] <= 1.0
        assert r["code_kib"] == pytest.approx((r["hot_ffma"] + r["cold_ffma"]) * 16 / 1024)


def test_a_loop_alone_reproduces_run_ac(run):
    # no cold code: the 24 and 48 KiB loops run at run AC's rate for their size (within 2 %)
    _, rows, table = run
    alone = _rows(rows, cold_ffma=0)
    assert len(alone) == 18
    for r in alone:
        ac = fetch_rate(table, r["hot_kib"], r["warps_per_scheduler"])
        assert r["fma_rate_per_scheduler"] == pytest.approx(ac, rel=0.02)


def test_one_warp_per_scheduler_runs_its_loop_and_its_cold_code_each_at_its_own_rate(run):
    # w = 1, the 24 KiB loop inside 56-152 KiB: the instructions in the loop at the loop's
    # table rate and the rest at the whole code's predict every point within 0.21 log (mean
    # 0.07); the whole code's rate alone, as the model charges it, is 0.26-1.43 log slow
    _, rows, table = run
    pts = [r for r in _rows(rows, warps_per_scheduler=1, hot_ffma=1536) if r["cold_ffma"]]
    assert len(pts) == 24
    mixed, whole = [], []
    for r in pts:
        hot = r["trips"] * r["hot_ffma"]
        share = hot / (hot + r["cold_ffma"])
        eta_hot, eta_whole = (fetch_rate(table, kib, 1) for kib in (r["hot_kib"], r["code_kib"]))
        mixed.append(np.log(1 / (share / eta_hot + (1 - share) / eta_whole)
                            / r["fma_rate_per_scheduler"]))
        whole.append(np.log(eta_whole / r["fma_rate_per_scheduler"]))
    assert max(np.abs(mixed)) < 0.22 and np.mean(np.abs(mixed)) < 0.08
    assert max(whole) < -0.25 and np.mean(whole) < -0.6


def test_two_warps_per_scheduler_slow_down_when_the_blocks_are_out_of_step(run):
    # w = 2, the 48 KiB loop inside 80-112 KiB (all under run AC's 0.96 up to 112 KiB): in
    # step 0.97 at every trip count; out of step (each block starts part-way through its
    # trips, so another block's cold code runs while it loops) 0.59-0.75
    _, rows, _ = run
    for kib in (80.0, 112.0):
        for trips in (4, 16, 64):
            step = _rows(rows, warps_per_scheduler=2, hot_ffma=3072, code_kib=kib,
                         trips=trips, skew=0)[0]["fma_rate_per_scheduler"]
            skew = _rows(rows, warps_per_scheduler=2, hot_ffma=3072, code_kib=kib,
                         trips=trips, skew=7919)[0]["fma_rate_per_scheduler"]
            assert step > 0.95 and 0.55 < skew < 0.76


def test_a_short_loop_with_cold_code_is_slower_than_either_size_alone(run):
    # w = 2, the 24 KiB loop inside 88-152 KiB, 4 or 16 trips per pass: 0.29-0.46, below run
    # AC's rate for the loop (0.985) and for the whole code (0.33 only from 144 KiB on)
    _, rows, table = run
    pts = [r for r in _rows(rows, warps_per_scheduler=2, hot_ffma=1536)
           if r["cold_ffma"] >= 4096 and r["trips"] <= 16]
    assert len(pts) == 12
    for r in pts:
        assert 0.28 < r["fma_rate_per_scheduler"] < 0.47
        if r["code_kib"] < 128:
            assert r["fma_rate_per_scheduler"] < 0.5 * fetch_rate(table, r["code_kib"], 2)
