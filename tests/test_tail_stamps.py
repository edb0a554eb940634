"""Tail stamps (tools/device/tail_stamps.py, kernels/template/sgemm_tile.cu GM_STAMPS=1):
the summary of per-block SM / start / end stamps, the instrumented entry's build, and the
numbers of device run T (calibration/h200/tail_stamps.json; H200 1980 MHz, driver
580.159.04) that docs/model.md section 10 quotes."""

import json
import subprocess
import sys

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR, KERNELS_DIR
from gemmmodel.catalogue import resolve

sys.path.insert(0, str(CALIBRATION_DIR.parent / "tools" / "device"))
from tail_stamps import edge_mask, summarise  # noqa: E402

RUN_T = CALIBRATION_DIR / "h200" / "tail_stamps.json"


def test_summary_tells_a_paired_tail_from_a_spread_one():
    # 4 SMs x 2 slots: 8 first-wave blocks 0..100, then 2 tail blocks 100..200
    sm_first, t0_first, t1_first = [0, 0, 1, 1, 2, 2, 3, 3], [0] * 8, [100] * 8
    paired = summarise(np.array(sm_first + [0, 0]), np.array(t0_first + [100, 100]),
                       np.array(t1_first + [200, 200]), 4, 2)
    spread = summarise(np.array(sm_first + [0, 1]), np.array(t0_first + [100, 100]),
                       np.array(t1_first + [150, 150]), 4, 2)
    assert paired["tail_blocks"] == spread["tail_blocks"] == 2
    assert (paired["tail_sms"], paired["tail_per_sm_max"]) == (1, 2)
    assert (spread["tail_sms"], spread["tail_per_sm_max"]) == (2, 1)
    # SM 0 busy 200 of 200 ns, the other three 100: 5/8
    assert paired["active_share"] == pytest.approx(5 / 8)
    assert spread["active_share"] == pytest.approx((150 + 150 + 100 + 100) / (4 * 150))
    assert paired["first_end_spread_us"] == 0.0
    # a tail block alone on its SM is reported as such; paired ones are not
    assert paired["block_us_alone"] is None
    assert spread["block_us_alone"] == pytest.approx(0.05)


def test_edge_mask_marks_the_last_block_row_and_column():
    # 3000 x 1000 with 64 x 128 tiles: 47 block rows (the last 56 rows deep), 8 block
    # columns (the last 104 wide): 47 + 8 - 1 = 54 edge blocks, at linear index by * 8 + bx
    mask = edge_mask((8, 47), (64, 128), (3000, 1000))
    assert mask.shape == (376,) and mask.sum() == 54
    assert mask[7] and mask[46 * 8] and not mask[0] and not mask[45 * 8 + 6]
    assert not edge_mask((8, 48), (64, 128), (3072, 1024)).any()
    tail = summarise(np.array([0, 1, 0]), np.array([0, 0, 100]), np.array([100, 100, 300]),
                     2, 1, edge=np.array([False, False, True]))
    assert tail["edge_blocks"] == 1 and tail["edge_in_tail"] == 1
    assert tail["block_us_edge"] == pytest.approx(0.2)
    assert tail["block_us_interior"] == pytest.approx(0.1)


@pytest.mark.compiler
def test_the_stamped_entry_builds_only_when_asked(require_tool, tmp_path):
    require_tool("nvcc")
    plan = resolve("64x128x16/8x4/db").plan(2200, 1400, 3400)
    found = {}
    for stamps in (0, 1):
        out = tmp_path / f"s{stamps}.cubin"
        defs = [f"-D{k}={v}" for k, v in {**plan.defines, "GM_STAMPS": stamps}.items()]
        proc = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", f"-I{KERNELS_DIR}", *defs,
                               "-o", str(out), str(plan.source)],
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr
        found[stamps] = b"sgemm_tile_stamped" in out.read_bytes()
    assert found == {0: False, 1: True}


def _runs(size, config):
    runs = json.loads(RUN_T.read_text())["runs"]
    return [r for r in runs if r["size"] == size and r["config"] == config]


def test_run_t_summaries_follow_from_the_stamps():
    for run in json.loads(RUN_T.read_text())["runs"]:
        again = summarise(np.array(run["sm"]), np.array(run["start_ns"]),
                          np.array(run["end_ns"]), 132, run["capacity"])
        assert again["active_share"] == pytest.approx(run["active_share"])
        assert again["tail_sms"] == run["tail_sms"]


def test_run_t_lock_step_first_wave_pairs_the_tail():
    # 2200x1400x3400, 385 blocks on 132 SMs x 2 (1.46 waves): the BK 16 twin's first wave
    # ends within ~10 us and its 121 tail blocks land two to an SM on 81-83 SMs (SMs busy
    # 67 % of the launch); the BK 32 twin's first wave ends over ~105 us and its tail
    # spreads one per SM (80-91 %), 620-700 us against 796
    bk16 = _runs("2200x1400x3400", "64x128x16/8x4/db")
    bk32 = _runs("2200x1400x3400", "64x128x32/8x4/db")
    assert len(bk16) == len(bk32) == 3
    for r in bk16:
        assert r["first_end_spread_us"] < 12 and r["tail_blocks"] == 121
        assert 81 <= r["tail_sms"] <= 83 and r["tail_per_sm_max"] == 2
        assert r["active_share"] == pytest.approx(0.672, abs=0.005)
    for r in bk32:
        assert r["first_end_spread_us"] > 100 and r["tail_sms"] == 121
        assert r["tail_per_sm_max"] == 1 and r["active_share"] > 0.80
    assert min(r["makespan_us"] for r in bk16) > max(r["makespan_us"] for r in bk32)


def test_run_t_placement_varies_between_launches_at_3200_cubed():
    # the same 128x128x16/8x8/p4 launch: one rep with SMs busy 83 %, two at 94 %
    shares = sorted(r["active_share"] for r in _runs("3200x3200x3200", "128x128x16/8x8/p4"))
    assert shares[0] == pytest.approx(0.826, abs=0.005)
    assert shares[1] == pytest.approx(0.937, abs=0.005)
