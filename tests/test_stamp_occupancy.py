"""Stamped launches against the swept build's occupancy (gemmmodel.model.stamp_occupancy;
session 70, run BM): which committed block stamps ran at another blocks-per-SM than the
build the sweeps time, and what that does to the single-buffer edge-tail fit."""

import json

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model.edge_tail import fit_edge_tail_scale
from gemmmodel.model.selection import all_sweeps
from gemmmodel.model.stamp_occupancy import mismatches, stamped_occupancy

FOLDER = CALIBRATION_DIR / "h200"


@pytest.fixture(scope="module")
def rows():
    return stamped_occupancy("h200")


def test_every_stamped_launch_is_compared(rows):
    # runs T (tail_stamps.json), U, AB, AD, AE, AQ, BK and BM: 81 distinct launches, 20 of
    # them bounds-checked builds forced at a tile multiple (+edge), not the swept build
    assert len(rows) == 81
    assert sum(r["forced_edge"] for r in rows) == 20
    assert all(r["swept"] is not None for r in rows)
    forced = [r for r in rows if r["forced_edge"]]
    assert {r["size"] for r in forced} == {"1088x896x5200", "3072x1024x1024",
                                           "3584x8960x704"}


def test_the_stamps_that_ran_at_another_occupancy(rows):
    got = sorted((r["file"], r["size"], r["config"], r["stamped"], r["swept"])
                 for r in mismatches(rows))
    assert got == [
        ("block_stamps_bk.json", "1100x1100x3000", "64x64x16/8x4/p4", 4, 5),
        ("block_stamps_bk.json", "1800x1800x1600", "64x64x16/8x4/p4", 4, 5),
        ("block_stamps_bk.json", "3600x1800x1600", "64x64x16/8x4/p4", 4, 5),
        ("block_stamps_bm.json", "1920x1920x3840", "64x128x16/8x8/p4/db", 4, 3),
        ("block_stamps_bm.json", "2304x1536x2816", "64x128x16/8x8/p4/db", 4, 3),
        ("tail_stamps_ad.json", "1000x1000x1000", "64x64x16/8x4/p4", 4, 5),
        ("tail_stamps_ad.json", "2048x2048x2048", "32x32x16/4x4/p4", 16, 14),
        ("tail_stamps_u.json", "3000x1000x1024", "64x64x16/8x4", 4, 5),
    ]


def test_run_bm_the_stamped_twin_is_not_the_swept_launch():
    """At 2304x1536x2816 the stamped 64x128x16/8x8/p4/db (4 blocks per SM, one round of 432
    blocks) ended in about 581 us; the sweep's build (3 per SM, two rounds) took 856 us. The
    single buffer, whose twin and swept build both fit 4, agrees with its sweep within 3 %."""
    runs = json.loads((FOLDER / "block_stamps_bm.json").read_text())["runs"]
    sweeps = _sweeps()

    def makespan_s(config, size):
        return np.median([r["makespan_us"] for r in runs
                          if r["config"] == config and r["size"] == size]) * 1e-6

    shape = (2304, 1536, 2816, 1)
    db, sb = "64x128x16/8x8/p4/db", "64x128x16/8x8/p4"
    assert makespan_s(db, "2304x1536x2816") / sweeps[(db, shape)] < 0.75
    assert makespan_s(sb, "2304x1536x2816") / sweeps[(sb, shape)] == pytest.approx(1.0, abs=0.03)
    assert {r["capacity"] for r in runs} == {4}


def test_the_edge_tail_fit_without_the_mismatched_launches(rows):
    """Two of the 18 single-buffer launches behind edge_tail_scale ran at 4 blocks per SM
    where the swept build fits 5; without them the least squares gives 0.39 (0.42 with
    them, the committed value). docs/model.md "Session 70": LOKO tau 0.8973 -> 0.8971 with
    0.39, so the committed value stays."""
    bad = {(r["size"], r["config"]) for r in mismatches(rows)}
    res = fit_edge_tail_scale("h200")
    kept = [r for r in res["rows"] if (r["size"], r["config"]) not in bad]
    assert len(res["rows"]) - len(kept) == 2
    x = np.array([r["rho_model"] - 1.0 for r in kept])
    y = np.array([r["rho"] - 1.0 for r in kept])
    assert float(x @ y / (x @ x)) == pytest.approx(0.39, abs=0.01)
    assert res["scale"] == pytest.approx(0.42, abs=0.01)


def test_run_bn_the_swept_builds_have_the_models_registers(rows):
    """Run BN (tools/device/tail_stamps.py with build_check, calibration/h200/
    stamp_builds_bn.json) compiled both entries on the H200 for five launches: the swept
    build's registers and blocks per SM are the model's (template.csv, build_registers.csv),
    the stamped twin's are not, except where both fit the same (the single buffer)."""
    runs = json.loads((FOLDER / "stamp_builds_bn.json").read_text())["runs"]
    got = {(r["size"], r["config"]): (r["stamped_regs"], r["capacity"], r["swept_regs"],
                                      r["swept_capacity"], r["capacity_matches"])
           for r in runs}
    assert got == {
        ("2304x1536x2816", "64x128x16/8x8/p4/db"): (127, 4, 133, 3, False),
        ("2304x1536x2816", "64x128x16/8x8/p4"): (127, 4, 122, 4, True),
        ("1000x1000x1000", "64x64x16/8x4/p4"): (111, 4, 95, 5, False),
        ("2048x2048x2048", "32x32x16/4x4/p4"): (64, 16, 66, 14, False),
        ("3000x1000x1024", "64x64x16/8x4"): (111, 4, 95, 5, False),
    }
    model = {(r["size"], r["config"]): r["swept"] for r in rows}
    for (size, config), (_, _, _, swept_capacity, _) in got.items():
        if (size, config) in model:
            assert model[(size, config)] == swept_capacity


def _bo_runs():
    return [r for r in json.loads((FOLDER / "stamp_builds_bo.json").read_text())["runs"]
            if r["rep"] == 0]


def _sweeps():
    out = {}
    for measured in all_sweeps(FOLDER).values():
        out.update(measured)
    return out


def test_run_bo_padded_twins_run_at_the_swept_occupancy_and_near_the_swept_time():
    """Run BO: each twin at the swept build's blocks per SM (64x128x16/8x8/p4/db padded
    with 32256 bytes of unused dynamic shared memory, 4 -> 3 per SM); its makespan 0.88-1.05
    of the swept time, where the unpadded twin of run BM was 0.66-0.68."""
    sweeps = _sweeps()
    for r in _bo_runs():
        assert r["capacity"] == r["swept_capacity"] and r["capacity_matches"]
        padded = r["config"] == "64x128x16/8x8/p4/db"
        assert (r["pad_bytes"] == 32256) is padded and (r["pad_bytes"] == 0) is not padded
        shape = tuple(int(x) for x in r["size"].split("x")) + (1,)
        if padded and (r["config"], shape) in sweeps:
            assert 0.88 < r["makespan_us"] * 1e-6 / sweeps[(r["config"], shape)] < 1.05


def test_run_bo_the_launch_ends_with_the_sms_that_got_two_tail_blocks():
    """64x128x16/8x8/p4/db at 2304x1536x2816 and 1920x1920x3840: the tail blocks alone on
    their SM run as long as the model's last round (within 3 %), but a few SMs got two and
    the launch ends with them, 15-25 % after the SMs that got one."""
    from gemmmodel.catalogue import resolve
    from gemmmodel.explain import parse_shape, predict_ref
    from gemmmodel.model import load_calib
    from gemmmodel.spec import load_spec

    spec, calib = load_spec("h200"), load_calib("h200")

    def last_round_s(config, size):
        pred, _, _ = predict_ref(resolve(config), spec, parse_shape(size), calib, False)
        return pred.root.child("t_last_round_s").value

    runs = {(r["size"], r["config"]): r for r in _bo_runs()}
    for size, n_two in (("2304x1536x2816", 6), ("1920x1920x3840", 7)):
        r = runs[(size, "64x128x16/8x8/p4/db")]
        sm = np.array(r["sm"])
        t0, t1 = np.array(r["start_ns"]) / 1e3, np.array(r["end_ns"]) / 1e3
        tail = t0 >= r["first_wave_end_us"]
        per_sm = np.bincount(sm[tail], minlength=132)
        assert (per_sm >= 2).sum() == n_two and per_sm.max() == 2
        alone = []
        for i in np.flatnonzero(tail):
            mid = 0.5 * (t0[i] + t1[i])
            others = (sm == sm[i]) & (np.arange(len(sm)) != i) & (t0 <= mid) & (t1 >= mid)
            if not others.any():
                alone.append(t1[i] - t0[i])
        model = last_round_s("64x128x16/8x8/p4/db", size) * 1e6
        assert np.median(alone) == pytest.approx(model, rel=0.03)
        one = np.isin(sm, np.flatnonzero(per_sm == 1)) & tail
        two = np.isin(sm, np.flatnonzero(per_sm == 2)) & tail
        assert t1[two].max() == pytest.approx(r["makespan_us"], rel=1e-6)
        assert 1.15 < t1[two].max() / t1[one].max() < 1.25
