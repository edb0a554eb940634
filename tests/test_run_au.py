"""Device run AU (session 58, H200; tools/device/run_au.sh): the cp.async tall-tile cost
against K, and tools/mirror_bias.py that reads it.

Over every committed H200 sweep, a cp.async double buffer with a tall block tile (BM > BN)
ran slower than predicted against its mirror (BN x BM) where K, the row pitch of A, is not
a power of two. Run AU holds M = N = 2048 and varies K alone (calibration/h200/
kpitch_sweep.csv, the whole search space at K = 2048, 2304, 2560, 3072, 4096):
- cp.async tall / wide ratio, less its value at K = 2048: +0.042, +0.043, +0.041 log at
  2304, 2560, 3072, and +0.005 at 4096 (a power of two again);
- the register-staged builds (/db off: ld.global into registers) of the same tiles: within
  0.003 at every K. So the cost belongs to the cp.async path, whose A copies are 4-byte
  gathers along the rows of A (kernels/template/sgemm_tile.cu fetch_async);
- ncu (ncu_au_*.txt, each launch once): per unit of K the shared-memory wavefronts
  (the LDS pipe: fragment reads and the copies' writes) grow at K = 2304 by 7 % for
  128x64x16/8x8/p4/db and 20 % for 256x64x16/8x8/db (its bank conflicts by 29 %), by 5 and
  8 % for their wide mirrors, while the instructions stay the same (within 0.2 %);
- ncu again (MODE=ncu2, ncu_au2_*.txt), loads and cp.async writes apart, for BK 32 tiles
  with and without padding: the fragment reads are the same at both K, the copies' writes
  take 1.4-1.6 x the wavefronts; padding lowers that growth and the slowdown.
- per 4-byte copy of A (session 59, tools/mirror_bias.py --wavefronts), the extra
  wavefronts are the same at a tall and a wide tile of one depth and padding.
Every fitted shape has a power-of-two K; the thirtieth change (gemmmodel/model/pitch.py,
tests/test_model_pitch.py) reads the slowdown from this sweep.
"""

import importlib.util
import math
from pathlib import Path

import pandas as pd
import pytest
from ncu_counters import counter, launches

from gemmmodel import CALIBRATION_DIR

spec = importlib.util.spec_from_file_location(
    "mirror_bias", Path(__file__).resolve().parents[1] / "tools" / "mirror_bias.py")
mirror_bias = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mirror_bias)

FOLDER = CALIBRATION_DIR / "h200"
SIZES = ("2048x2048x2048", "2048x2048x2304")
TALL = ("128x64x16/8x8/p4/db", "256x64x16/8x8/db")
WIDE = ("64x128x16/8x8/p4/db", "64x256x16/8x8/db")


def test_the_sweep_is_whole_and_error_free():
    s = pd.read_csv(FOLDER / mirror_bias.KPITCH_FILE)
    assert len(s) == 5 * 372
    assert s["error"].isna().all()
    assert set(s["gpu"]) == {"NVIDIA H200"}
    assert (s["median_s"] > 0).all()
    assert "commit 38c4320 mode sweep" in (FOLDER / "gpu_au.txt").read_text()


@pytest.fixture(scope="module")
def effect():
    return mirror_bias.kpitch_effect(mirror_bias.read_kpitch(FOLDER))


def test_cp_async_tall_tiles_lose_where_k_is_not_a_power_of_two(effect):
    cp = effect["cp_async"]
    assert set(cp) == {2048, 2304, 2560, 3072, 4096}
    for k in (2304, 2560, 3072):
        assert 0.03 < cp[k] < 0.06, (k, cp[k])
    assert abs(cp[4096]) < 0.015


def test_register_staged_builds_do_not(effect):
    assert all(abs(v) < 0.01 for v in effect["register"].values()), effect["register"]


@pytest.mark.parametrize("name", TALL + WIDE)
def test_the_same_instructions_at_either_k(name):
    a, b = (launches(f"ncu_au_{s}.txt")[name] for s in SIZES)
    per_k = [counter(x, "smsp__inst_executed.sum") / k for x, k in ((a, 2048), (b, 2304))]
    assert per_k[1] == pytest.approx(per_k[0], rel=0.005)


def _shared_per_k(name: str, metric: str = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"):
    a, b = (launches(f"ncu_au_{s}.txt")[name] for s in SIZES)
    return counter(a, metric) / 2048, counter(b, metric) / 2304


@pytest.mark.parametrize("name,low,high", [(TALL[0], 1.05, 1.10), (TALL[1], 1.15, 1.25),
                                           (WIDE[0], 1.03, 1.07), (WIDE[1], 1.05, 1.11)])
def test_shared_wavefronts_per_k_grow_off_the_power_of_two(name, low, high):
    at_2048, at_2304 = _shared_per_k(name)
    assert low < at_2304 / at_2048 < high


def test_the_tallest_tile_grows_most_and_by_bank_conflicts():
    growth = {n: (lambda a, b: b / a)(*_shared_per_k(n)) for n in TALL + WIDE}
    assert growth[TALL[1]] == max(growth.values())
    c0, c1 = _shared_per_k(TALL[1], "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")
    assert 1.2 < c1 / c0 < 1.4


def test_mirror_pairs_on_a_hand_made_frame():
    s = (256, 256, 2304, 1)
    f = pd.DataFrame({"config": ["128x64x16/8x8/db", "64x128x16/8x8/db", "128x64x16/8x8"],
                      "shape": [s, s, s], "meas": [1.1, 1.0, 1.0], "pred": [1.0, 1.0, 1.0]})
    j = mirror_bias.mirror_pairs(f)
    assert list(j.config) == ["128x64x16/8x8/db"]      # the single build has no mirror here
    assert j.m.iloc[0] == pytest.approx(math.log(1.1))
    assert j.d.iloc[0] == pytest.approx(math.log(1.1))
    assert bool(j.cp_async.iloc[0]) and int(j.k.iloc[0]) == 2304
    batched = f.assign(shape=[(256, 256, 2304, 4)] * 3)
    assert not mirror_bias.mirror_pairs(batched).cp_async.any()


def test_helpers():
    assert mirror_bias.mirror_of("256x64x16/8x8/p4/db") == "64x256x16/8x8/p4/db"
    assert [mirror_bias.is_power_of_two(n) for n in (2048, 2304, 12288, 1)] == \
        [True, False, False, True]


# MODE=ncu2 (at 1e5afe1): the shared-memory loads and the cp.async writes counted apart,
# for BK 32 builds with and without padding (ncu_au2_*.txt)
NCU2 = ("64x64x32/8x8/db", "64x64x32/8x8/p4/db", "128x32x32/8x4/db", "128x32x32/8x4/p4/db")


def _per_k2(name: str, metric: str):
    a, b = (launches(f"ncu_au2_{s}.txt")[name] for s in SIZES)
    return counter(a, metric) / 2048, counter(b, metric) / 2304


@pytest.mark.parametrize("name", NCU2)
def test_the_growth_is_the_copies_writes_not_the_fragment_reads(name):
    shared = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
    loads = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    (s0, s1), (l0, l1) = _per_k2(name, shared), _per_k2(name, loads)
    assert l1 == pytest.approx(l0, rel=0.001)                # the fragment reads: the same
    writes = ((s1 - l1) / (s0 - l0))                          # the rest: the cp.async writes
    assert 1.35 < writes < 1.65
    copies = _per_k2(name, "smsp__inst_executed_op_ldgsts.sum")
    assert copies[1] == pytest.approx(copies[0], rel=0.001)  # the same copy instructions
    assert "commit 1e5afe1 mode ncu2" in (FOLDER / "gpu_au.txt").read_text()


def test_padding_lowers_the_growth_and_the_slowdown():
    def growth(name, metric):
        a, b = _per_k2(name, metric)
        return b / a
    for plain, padded in ((NCU2[0], NCU2[1]), (NCU2[2], NCU2[3])):
        conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
        assert growth(padded, conflicts) < growth(plain, conflicts)
        assert growth(padded, "gpu__time_duration.sum") < growth(plain, "gpu__time_duration.sum")


# Session 59: the growth per 4-byte copy of A (pitch.a_copy_extra_wavefronts through
# tools/mirror_bias.py --wavefronts), from both ncu runs
@pytest.fixture(scope="module")
def per_copy():
    return mirror_bias.extra_wavefronts(FOLDER)


def test_every_profiled_config_has_a_row(per_copy):
    assert set(per_copy) == set(TALL + WIDE + NCU2)
    assert per_copy["256x64x16/8x8/db"]["a_copies_per_tile"] == 256 * 16 / 32


def test_a_tall_and_a_wide_tile_gain_the_same_per_a_copy(per_copy):
    # the growth is per copy of A, not per tile: tiles with 1, 2 and 4 times the A copies of
    # one depth and padding agree within 10 %
    groups = {}
    for r in per_copy.values():
        groups.setdefault((r["bk"], r["padded"]), []).append(r["extra_per_a_copy"])
    assert set(groups) == {(16, False), (16, True), (32, False), (32, True)}
    for key, vals in groups.items():
        assert len(vals) == 2 and max(vals) / min(vals) < 1.10, (key, vals)
    mean = {k: sum(v) / len(v) for k, v in groups.items()}
    assert 4.5 < mean[(16, False)] < 5.5 and 1.4 < mean[(16, True)] < 1.9
    assert 6.3 < mean[(32, False)] < 7.3 and 3.0 < mean[(32, True)] < 3.6
    # padding lowers the growth; a deeper tile (fewer rows per copy instruction) grows more
    for bk in (16, 32):
        assert mean[(bk, True)] < 0.6 * mean[(bk, False)]
    for padded in (False, True):
        assert mean[(32, padded)] > mean[(16, padded)]
