"""Traffic against closed forms for the naive and tiled kernels, and the roofline."""

from types import SimpleNamespace

import pytest

from gemmmodel.model.kernel import describe
from gemmmodel.model.traffic import (
    _raster_panels,
    _round_panels,
    compute_peak,
    dram_bytes,
    l2_bytes,
    lds_bytes,
    raster_coords,
    roofline,
)
from gemmmodel.model.work import analytic_mix
from gemmmodel.spec import load_spec

TILED = {"BM": 64, "BN": 128, "BK": 16, "TM": 4, "TN": 8, "threads": 256, "padding": 0, "vector_width": 4,
             "buffering": "single", "a_lds_layout": "transposed", "thread_map": "row"}
NAIVE = {"BM": 16, "BN": 16, "BK": 1, "TM": 1, "TN": 1, "threads": 256, "padding": 0, "vector_width": 1,
             "buffering": "single", "a_lds_layout": "none", "thread_map": "row"}


@pytest.mark.parametrize("params", [TILED, NAIVE])
def test_l2_bytes_closed_form(params):
    m, n, k = 1024, 2048, 512
    desc = describe(params)
    blocks = (m // desc.bm) * (n // desc.bn)
    t = l2_bytes(desc, (m, n, k, 1), blocks, analytic_mix(desc, 32))
    closed = m * n * k * 4 * (1 / desc.bn + 1 / desc.bm) + 2 * m * n * 4
    assert t.value == pytest.approx(closed)


def test_dram_compulsory_when_operands_fit_l2():
    spec = load_spec("h100")            # 50 MB L2
    desc = describe(TILED)
    m = n = k = 1024                    # A and B 4 MiB each
    t = dram_bytes(desc, spec, (m, n, k, 3), slots=264)
    assert t.value == pytest.approx(3 * (m * k + k * n + 2 * m * n) * 4)
    assert t.inputs["A_kept_in_l2"] and t.inputs["B_kept_in_l2"]


def test_dram_rounds_hand_worked():
    # a tiny fake L2 so nothing is kept: 4x4 blocks of 64x128 (M=256, N=512), 6 at a time
    class Spec:
        l2_bytes = 1024

    desc = describe(TILED)
    k = 100
    t = dram_bytes(desc, Spec, (256, 512, k, 1), slots=6)
    # rounds: blocks 0-5 -> rows {0,1}, cols 4; 6-11 -> rows {1,2}, cols 4; 12-15 -> row 3, 4
    assert _round_panels(0, 6, 4) == (2, 4)
    assert _round_panels(6, 12, 4) == (2, 4)
    assert _round_panels(12, 16, 4) == (1, 4)
    a_panel, b_panel = 64 * k * 4, 128 * k * 4
    expected = (2 + 2 + 1) * a_panel + (4 + 4 + 4) * b_panel + 2 * 256 * 512 * 4
    assert t.value == pytest.approx(expected)
    # one round holding every block reads everything once: the compulsory traffic
    once = dram_bytes(desc, Spec, (256, 512, k, 1), slots=16)
    assert once.value == pytest.approx((256 * k + k * 512 + 2 * 256 * 512) * 4)


def _block_coords(bid: int, gx: int, gy: int, g: int) -> tuple[int, int]:
    """kernels/template/sgemm_tile.cu block_coords(), transcribed: (by, bx)."""
    per_group = g * gx
    group = bid // per_group
    first = group * g
    rows = min(gy - first, g)
    in_group = bid - group * per_group
    return first + in_group % rows, in_group // rows


@pytest.mark.parametrize("gx, gy, g", [(4, 10, 8), (7, 3, 8), (16, 24, 8), (5, 9, 2)])
def test_swizzled_raster_matches_the_kernel(gx, gy, g):
    by, bx = raster_coords(gx, gy, g)
    assert [(int(r), int(c)) for r, c in zip(by, bx)] == \
        [_block_coords(i, gx, gy, g) for i in range(gx * gy)]
    assert len(set(zip(by.tolist(), bx.tolist()))) == gx * gy      # every tile once
    rows, cols = raster_coords(gx, gy, 0)
    assert rows.tolist() == [i // gx for i in range(gx * gy)]
    assert cols.tolist() == [i % gx for i in range(gx * gy)]


def test_dram_swizzle_hand_worked():
    # 4 x 10 blocks of 64x128 (M = 640, N = 512), groups of 8 block-rows, 8 blocks a round:
    # rounds 0-3 walk rows 0-7 of one column each (8 rows, 1 column); round 4 is the last
    # group, rows 8-9 over 4 columns -> rows 8*4 + 2 = 34, columns 4 + 4 = 8. Row-major: 5
    # rounds of 2 rows x 4 columns -> rows 10, columns 20.
    class Spec:
        l2_bytes = 1024

    assert _raster_panels(4, 10, 8, 8) == (34, 8)
    k = 100
    a_panel, b_panel, c = 64 * k * 4, 128 * k * 4, 2 * 640 * 512 * 4
    swz = dram_bytes(describe(dict(TILED, swizzle=8)), Spec, (640, 512, k, 1), slots=8)
    row = dram_bytes(describe(TILED), Spec, (640, 512, k, 1), slots=8)
    assert swz.value == pytest.approx(34 * a_panel + 8 * b_panel + c)
    assert row.value == pytest.approx(10 * a_panel + 20 * b_panel + c)
    assert swz.inputs["raster"] == "swizzle 8 block-rows" and row.inputs["raster"] == "row-major"


def test_swizzle_cuts_dram_traffic_of_a_large_square_launch():
    """8192^3 with 128x128 tiles on the H200 (2 blocks per SM): a round of 264 row-major
    blocks spans ~5 block-rows and all 64 columns; swizzled by 8 it spans 8 rows and ~33
    columns, so B is re-read about half as often."""
    spec = load_spec("h200")
    tile = dict(TILED, BM=128, BN=128, TM=8, TN=8)
    row = dram_bytes(describe(tile), spec, (8192, 8192, 8192, 1), slots=264)
    swz = dram_bytes(describe(dict(tile, swizzle=8)), spec, (8192, 8192, 8192, 1), slots=264)
    assert swz.value < 0.75 * row.value
    assert swz.value > swz.inputs["compulsory_bytes"]


def test_lds_bytes_tiled():
    desc = describe(TILED)
    spec = load_spec("h100")
    t = lds_bytes(desc, spec, (64, 128, 32, 1), blocks=1)
    # per thread per iteration: reads (TM + TN) * BK floats, writes (BM*BK + BK*BN)/threads
    per_thread = ((4 + 8) * 16 + (64 * 16 + 16 * 128) / 256) * 4
    assert t.value == pytest.approx(2 * 256 * per_thread)


def test_compute_peak_picks_instruction_kind():
    mi100 = load_spec("gfx908")
    vec = compute_peak(mi100)
    assert vec.value == pytest.approx(mi100.fp32_flop_per_clk_per_cu * 120 * mi100.clock_hz)

    mat = compute_peak(mi100, SimpleNamespace(mix_total={"mfma": 64, "fma": 0}))
    assert mat.inputs["kind"] == "matrix (MFMA)"
    assert mat.value == pytest.approx(2 * vec.value)   # 256 vs 128 FLOP/clk/CU (ARCH-FACTS)


def test_roofline_naive_is_memory_side():
    spec = load_spec("h100")
    desc = describe(NAIVE)
    shape = (4096, 4096, 4096, 1)
    blocks = 256 * 256
    flop = 2.0 * 4096 ** 3
    l2 = l2_bytes(desc, shape, blocks, analytic_mix(desc, 32))
    dr = dram_bytes(desc, spec, shape, slots=132 * 8)
    lb = lds_bytes(desc, spec, shape, blocks)
    roof = roofline(flop, spec, None, compute_peak(spec), l2, dr, lb)
    assert roof.inputs["limit"] in ("l2", "dram")
    assert roof.value < spec.fp32_peak_flops
