"""Device run BU (session 73; docs/model.md "Session 73"): round 76's few-block long-K
launches timed cold (inputs rotated past the L2, as every sweep) and warm (one input set
kept in the L2) with the sweeps' tile-multiple builds (/db: the cp.async double buffer).
H200, driver 580.159.04, SM clock 1980 MHz (calibration/h200/gpu_bu.txt)."""

import numpy as np
import pytest
from test_device_runs_s71 import _rows as short_launch_rows

from gemmmodel import CALIBRATION_DIR

FOLDER = CALIBRATION_DIR / "h200"
#: one input set fits in the L2 and few blocks per SM: at most one of any of the 8 configs
#: (1024x256x4096: two of the 32x32 tiles)
FEW_BLOCKS = ("512x256x8192", "256x256x8192", "1024x256x4096")


def _rows(run: str = "bu") -> dict:
    """run BU's rows (or another short_launch run's: BV, test_device_runs_s74) by (shape,
    config), as run BP's (test_device_runs_s71), with the cold minus warm time per tile
    iteration."""
    out = {}
    for r in short_launch_rows(run):
        r["per_tile_s"] = (r["cold_s"] - r["warm_s"]) / r["tiles"]
        out[(r["shape"], r["config"])] = r
    return out


def _model(keys) -> dict:
    from gemmmodel.model.selection import posthoc_predictions
    from gemmmodel.spec import load_spec

    shaped = [(name, (tuple(int(x) for x in shape.split("x")) + (1,))[:4])
              for shape, name in keys]
    got = posthoc_predictions(FOLDER, load_spec("h200"), shaped)
    return {key: got[s] for key, s in zip(keys, shaped)}


def test_run_bu_times_32_launches_cold_twice_and_warm_once():
    rows = _rows()
    assert len(rows) == 4 * 8 and {r["gpu"] for r in rows.values()} == {"NVIDIA H200"}
    assert max(abs(np.log(r["cold_s"] / r["again_s"])) for r in rows.values()) < 0.02
    # the cold timing is the sweep's: round 76 measured 32x32x8/4x4/db at 576.0 us
    assert rows[("512x256x8192", "32x32x8/4x4/db")]["cold_s"] == pytest.approx(576.0e-6,
                                                                               rel=0.02)


def test_few_blocks_per_sm_bk8_builds_pay_the_cold_tile_load():
    # every BK 8 build pays 180-320 ns per tile cold (the cp.async double buffers 180-250,
    # their prefetch one tile ahead notwithstanding); the 1-warp single buffer 32x32x16/4x8
    # 690-730 ns; a BK 32 double buffer's tile work (about 1500 clk) hides nearly all of it
    rows = _rows()
    for shape in FEW_BLOCKS:
        for name in ("32x32x8/4x4/db", "32x32x8/4x4", "32x64x8/8x4/p4/db", "128x128x8/8x8"):
            assert 0.17e-6 < rows[(shape, name)]["per_tile_s"] < 0.32e-6
        assert 0.65e-6 < rows[(shape, "32x32x16/4x8")]["per_tile_s"] < 0.75e-6
        for name in ("32x64x32/4x4/p4/db", "64x64x16/8x4/p4/db"):
            assert abs(rows[(shape, name)]["per_tile_s"]) < 0.03e-6


def test_several_blocks_per_sm_hide_it():
    # 2048x512x2048: eight 32x32 blocks per SM lose at most 31 ns per tile cold; the
    # 64 blocks of 128x128x8/8x8 (fewer than the SMs) still about 300
    rows = _rows()
    for name in ("32x32x8/4x4/db", "32x32x8/4x4", "32x32x32/4x4/db", "32x64x8/8x4/p4/db"):
        assert rows[("2048x512x2048", name)]["per_tile_s"] < 0.035e-6
    assert rows[("2048x512x2048", "128x128x8/8x8")]["per_tile_s"] > 0.25e-6


def test_the_cold_tile_load_puts_the_double_buffers_alone_on_an_sm_right():
    # the thirty-eighth change (cold.py): at one block per SM the cp.async BK 8 builds are
    # within 0.1 log of their cold times (session 72's model: -0.64 and -0.94), and so too
    # slow warm (+0.45); known limits, not fixed: the single buffers (the fit holds their
    # cold cost: 32x32x16/4x8 -0.6, 32x32x8/4x4 -0.43); at two blocks per SM the term was
    # off (1024x256x4096: 32x32x8/4x4/db -0.52, 180 ns a tile cold) until the thirty-ninth
    # change (session 74) took it to three blocks per SM
    keys = [(shape, name) for shape in FEW_BLOCKS
            for name in ("32x64x8/8x4/p4/db", "32x32x8/4x4/db", "32x32x16/4x8", "32x32x8/4x4")]
    pred, rows = _model(keys), _rows()
    err = {k: (np.log(pred[k] / rows[k]["cold_s"]), np.log(pred[k] / rows[k]["warm_s"]))
           for k in keys}
    for shape in ("512x256x8192", "256x256x8192"):
        for name in ("32x64x8/8x4/p4/db", "32x32x8/4x4/db"):
            assert abs(err[(shape, name)][0]) < 0.11 and err[(shape, name)][1] > 0.4
        assert err[(shape, "32x32x16/4x8")][0] < -0.5
        assert err[(shape, "32x32x8/4x4")][0] < -0.35
    assert abs(err[("1024x256x4096", "32x32x8/4x4/db")][0]) < 0.1
