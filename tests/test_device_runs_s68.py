"""Session 68 (docs/model.md "Session 68"): device run BJ (tools/device/run_bj.sh: ncu warp
states and per-SASS stall samples at round 68's worst shape, 1100x1100x3000) and what the
model makes of the two register-staged double buffers it ranks the wrong way round there.
CPU only: these read the committed data."""

from __future__ import annotations

import numpy as np
import pytest
from ncu_counters import counter, launches, stall
from test_ncu_run_z import _num, share, source_pages

from gemmmodel import CALIBRATION_DIR

FOLDER = CALIBRATION_DIR / "h200"
SHAPE = "1100x1100x3000"
SHORT_READ, LONG_READ = "64x32x16/4x4/db", "64x64x16/8x4/p4/db"


def _run() -> dict:
    return launches(f"ncu_bj_{SHAPE}.txt")


def _pages() -> dict:
    return source_pages(SHAPE, "bj")


def test_run_bj_provenance():
    gpu = (FOLDER / "gpu_bj.txt").read_text()
    assert "NVIDIA H200" in gpu and "580.159.04" in gpu and "commit 9283e61" in gpu
    expected = {SHORT_READ, LONG_READ, "64x32x16/4x4", "64x64x16/8x4/p4"}
    assert set(_run()) == expected and set(_pages()) == expected


def test_run_bj_the_short_lookahead_build_waits_on_its_fragments():
    # 64x32x16/4x4/db (device D 12.1 FMAs, 4.6 warps per scheduler) puts 5.5 warps per
    # issue on short_scoreboard and issues on 55 % of cycles; 64x64x16/8x4/p4/db (D 40.7,
    # 2.4 warps) 0.69 and 71 %
    run = _run()
    short, long_ = run[SHORT_READ], run[LONG_READ]
    assert stall(short, "short_scoreboard") > 5.0
    assert stall(long_, "short_scoreboard") < 0.8
    assert stall(short, "short_scoreboard") > 7 * stall(long_, "short_scoreboard")
    issue = "smsp__issue_active.avg.pct_of_peak_sustained_active"
    assert counter(short, issue) < 60
    assert counter(long_, issue) > 65
    warps = "smsp__warps_active.avg.per_cycle_active"
    assert counter(short, warps) > 4.0
    assert counter(long_, warps) < 3.0


def test_run_bj_the_waits_sit_at_the_first_ffma_after_each_lds():
    # per SASS instruction: the FFMAs hold 61 % of all the short-lookahead build's warp
    # samples on short_scoreboard (the FFMA right after an LDS.128 each time), 18 % of the
    # other's
    pages = _pages()
    for cfg, lo, hi in ((SHORT_READ, 0.55, 0.70), (LONG_READ, 0.12, 0.25)):
        rows = pages[cfg]
        assert lo < share(rows, "FFMA", "stall_short_sb") < hi
        # the heaviest FFMA follows an LDS directly
        ffma = [i for i, r in enumerate(rows) if r["Source"].split()[0].startswith("FFMA")]
        worst = max(ffma, key=lambda i: _num(rows[i], "stall_short_sb"))
        assert rows[worst - 1]["Source"].split()[0].startswith("LDS")


def test_round_68_the_model_ranks_the_two_builds_the_wrong_way_round():
    # the measured order at 1100x1100x3000: the long-lookahead build 15 % faster; the model
    # (session 67's, unchanged in session 68) has the short-lookahead build faster. This
    # pins the miss docs/model.md "Session 68" describes; a change that fixes it moves it
    from pathlib import Path

    from gemmmodel.model.selection import posthoc_predictions, sweep_measured
    from gemmmodel.spec import load_spec

    shape = (1100, 1100, 3000, 1)
    measured = sweep_measured(Path(FOLDER), "heldout68")
    keys = [(SHORT_READ, shape), (LONG_READ, shape)]
    pred = posthoc_predictions(Path(FOLDER), load_spec("h200"), keys)
    assert measured[keys[1]] < 0.88 * measured[keys[0]]
    assert pred[keys[0]] < pred[keys[1]]
    # the model: the short-lookahead build within 7 % too fast, the other 15-20 % too slow
    assert np.log(pred[keys[0]] / measured[keys[0]]) == pytest.approx(-0.06, abs=0.03)
    assert np.log(pred[keys[1]] / measured[keys[1]]) == pytest.approx(0.17, abs=0.03)


def _stamps() -> list:
    import json

    return json.loads((FOLDER / "block_stamps_bk.json").read_text())["runs"]


def _sm_ends(run) -> dict:
    """{blocks an SM ran: [its last block's end (us) per such SM]} of one stamped launch."""
    sm = np.array(run["sm"])
    start = np.array(run["start_ns"]) / 1e3
    end = np.array(run["end_ns"]) / 1e3 - start.min()
    out: dict = {}
    for s in set(sm.tolist()):
        mine = sm == s
        out.setdefault(int(mine.sum()), []).append(float(end[mine].max()))
    return out


def test_run_bk_provenance_and_not_edge_tail_training_data():
    from gemmmodel.model.edge_tail import STAMP_GLOB

    gpu = (FOLDER / "gpu_bk.txt").read_text()
    assert "NVIDIA H200" in gpu and "580.159.04" in gpu and "commit 4179ce7" in gpu
    runs = _stamps()
    assert len(runs) == 3 * 4 * 3   # three shapes, four configs, three repeats
    assert not (FOLDER / "block_stamps_bk.json").match(STAMP_GLOB)


def test_run_bk_one_round_the_edge_block_ends_the_launch():
    # 1100x1100x3000, one round (324 blocks, 2 or 3 per SM): the launch ends with an edge
    # block in every repeat; for 64x64x16/8x4/p4/db it runs 1.42x the interior median and
    # ends 50 us after its three-block SMs' median (the model's t_edge: 96 us)
    runs = [r for r in _stamps() if r["size"] == SHAPE and r["config"] == LONG_READ]
    for r in runs:
        assert r["block_us_edge"] == pytest.approx(r["makespan_us"], rel=0.01)
        assert 1.35 < r["block_us_edge"] / r["block_us_interior"] < 1.50
        ends = _sm_ends(r)
        assert set(ends) == {2, 3}
        assert 40 < max(ends[3]) - np.median(ends[3]) < 60
