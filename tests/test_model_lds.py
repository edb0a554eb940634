"""The LDS bank-conflict simulator against known patterns (hand-worked degrees)."""

import numpy as np
import pytest

from gemmmodel.model.access import lds_accesses, thread_tiles
from gemmmodel.model.kernel import describe
from gemmmodel.model.lds import (
    conflict_passes,
    ideal_passes_for_width,
    lds_passes_per_iter,
    lds_table,
    stride_pattern,
)
from gemmmodel.spec import load_spec

WARP = [list(range(32))]                       # NVIDIA b32: the whole warp is one group
HALVES = [list(range(32)), list(range(32, 64))]  # AMD b32: half-waves
QUARTERS8 = [list(range(i, i + 8)) for i in range(0, 32, 8)]  # NVIDIA b128: 8 lanes


def passes(addr, width, groups):
    return float(conflict_passes(np.asarray(addr), width, groups, 32, 4)[0])


@pytest.mark.parametrize("stride,degree", [(1, 1), (2, 2), (4, 4), (8, 8), (16, 16),
                                           (32, 32), (33, 1), (3, 1), (64, 32)])
def test_b32_stride_sweep_warp32(stride, degree):
    # lane l reads word l*stride: banks (l*stride) % 32, distinct words everywhere
    assert passes(stride_pattern(stride, 32), 4, WARP) == degree


@pytest.mark.parametrize("stride,expected", [(1, 2), (2, 4), (32, 64), (33, 2)])
def test_b32_stride_sweep_wave64_half_waves(stride, expected):
    # two half-wave groups, each with the warp32 degree
    assert passes(stride_pattern(stride, 64), 4, HALVES) == expected


def test_broadcast_same_word_is_one_pass():
    assert passes(np.zeros(32, dtype=np.int64), 4, WARP) == 1
    # two distinct words in one bank -> 2, however many lanes share each
    addr = np.where(np.arange(32) < 16, 0, 128)
    assert passes(addr, 4, WARP) == 2


def test_float4_rows_nvidia_groups():
    # lane l reads float4 at 16*l bytes: each 8-lane group covers 32 distinct banks
    assert passes(np.arange(32) * 16, 16, QUARTERS8) == 4
    # float4 chunks 32 bytes apart (thread tile TN = 8 read contiguously): 2-way per group
    assert passes(np.arange(32) * 32, 16, QUARTERS8) == 8
    # all lanes the same float4 (A fragment broadcast): one pass per group
    assert passes(np.zeros(32), 16, QUARTERS8) == 4


def test_idle_lanes_do_not_count():
    addr = np.full(32, -1)
    addr[:4] = np.arange(4) * 128           # 4 active lanes, same bank, distinct words
    assert passes(addr, 4, WARP) == 4
    assert passes(np.full(32, -1), 4, WARP) == 0


def test_ideal_passes_from_spec_groups():
    amd, nv = load_spec("gfx906"), load_spec("h100")
    assert ideal_passes_for_width(amd, 4) == 2      # 2 half-waves x 128 B
    assert ideal_passes_for_width(amd, 16) == 8     # 8 groups of 8 lanes
    assert ideal_passes_for_width(nv, 4) == 1
    assert ideal_passes_for_width(nv, 16) == 4      # 4 wavefronts of 128 B


def _params(**kw):
    base = {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "TK": 1, "threads": 256, "padding": 0,
                "vector_width": 4, "buffering": "single", "a_lds_layout": "transposed",
                "thread_map": "row"}
    base.update(kw)
    return base


def test_padding_removes_transposed_store_conflicts():
    # A loaded as float4 along k and stored transposed As[k][m] (row length 64 + pad):
    # in a warp, lane l stores m = l // 4 at k = 4 * (l % 4). Bank = (k * (64 + pad) + m) % 32:
    # pad 0 -> every k on bank m (4-way); pad 4 -> k*68 % 32 = 0, 16, 0, 16 (2-way);
    # pad 2 -> k*66 % 32 = 0, 8, 16, 24 and m < 8: conflict-free
    spec = load_spec("h100")
    for pad, worst in ((0, 4.0), (4, 2.0), (2, 1.0)):
        rows = lds_table(describe(_params(padding=pad)), spec)
        writes = [r for r in rows if r["kind"] == "write" and "A" in r["name"]]
        assert max(r["conflict_factor"] for r in writes) == pytest.approx(worst)


def test_template_strided_fragments_conflict_free_where_contiguous_8x8_is_not():
    spec = load_spec("h100")
    contiguous = describe(_params(BM=128, BN=128, BK=8, TM=8, TN=8))
    strided = describe({**_params(BM=128, BN=128, BK=8, TM=8, TN=8), "thread_map": "warp",
                        "warp_tile": [4, 8], "fragment": "strided"})
    b_reads = [r for r in lds_table(contiguous, spec) if r["kind"] == "read" and "B" in r["name"]]
    assert all(r["conflict_factor"] == 2.0 for r in b_reads)
    s_reads = [r for r in lds_table(strided, spec) if r["kind"] == "read"]
    assert all(r["conflict_factor"] <= 1.0 for r in s_reads)  # < 1 where broadcasts merge
    # fewer passes per iteration for the same FMAs
    assert lds_passes_per_iter(strided, spec).value < lds_passes_per_iter(contiguous, spec).value


def test_thread_tiles_cover_block_tile_once():
    for params in (_params(), _params(thread_map="warp", warp_tile=[8, 8]),
                   _params(thread_map="zorder", warp_tile=[8, 8]),
                   {**_params(BM=128, BN=128, BK=8, TM=8, TN=8), "thread_map": "warp",
                    "warp_tile": [4, 8], "fragment": "strided"}):
        desc = describe(params)
        for wave in (32, 64):
            rows, cols = thread_tiles(desc, wave)
            cells = {(int(r), int(c)) for i in range(desc.threads)
                     for r in rows[i] for c in cols[i]}
            assert len(cells) == desc.bm * desc.bn, (params, wave)


def test_accesses_count_per_iteration():
    desc = describe(_params())
    acc = lds_accesses(desc, 64)
    reads = [a for a in acc if a.kind == "read"]
    writes = [a for a in acc if a.kind == "write"]
    # float4 fragments: one A and one B read per k, BK = 16 times
    assert sum(a.per_iter for a in reads) == 32
    # A: one float4 load per thread stored as 4 scalars; B: one float4 store
    assert len(writes) == 5 and {a.width_bytes for a in writes} == {4, 16}


def test_zorder_lane_placement_matches_kernel_8_4():
    # kernel 8.4: lane bits alternately to column and row (bit 0 column, bit 1 row, bit 2
    # column, the rest to the row) on a 16 x 4 lane grid (wave64)
    from gemmmodel.model.access import _morton

    rows, cols = _morton(np.arange(64), 16, 4)
    assert list(zip(rows[:8].tolist(), cols[:8].tolist())) == [
        (0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (0, 3), (1, 2), (1, 3)]
    assert (rows[8], cols[8]) == (2, 0) and rows.max() == 15 and cols.max() == 3
    assert len(set(zip(rows.tolist(), cols.tolist()))) == 64
