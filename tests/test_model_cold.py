"""The thirty-eighth change (session 73): a double buffer alone on its SM in one round of
blocks has its prefetch cover the cold tile load (gemmmodel/model/cold.py; device runs BF,
BQ, BR and BU); the thirty-ninth and fortieth (sessions 74, 75) extend it to three blocks per
SM and to one warp per scheduler (runs BV, BW)."""

import json

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model.calib import Calib, load_calib, load_cold_round, transfer_calib
from gemmmodel.model.cold import cold_tile_latency
from gemmmodel.spec import load_spec

FOLDER = CALIBRATION_DIR / "h200"


def test_the_cold_round_comes_from_run_bf():
    # fresh minus warm later rounds at one block per SM, unshared, 4 KiB pitch, 8 rounds:
    # 1205.07 - 485.43 clk at the file's 1980 MHz
    assert load_cold_round(FOLDER) == pytest.approx((1205.0714 - 485.4286) / 1.98e9, rel=1e-4)
    assert load_calib("h200").cold_round_extra_s == pytest.approx(363.5e-9, rel=1e-3)


def test_where_run_bf_was_not_measured_it_is_zero(tmp_path):
    assert load_cold_round(tmp_path) == 0.0
    assert load_calib("h100").cold_round_extra_s == 0.0
    # a calibration carried to a sibling board leaves it behind (it waits on the DRAM)
    assert transfer_calib("h200", load_spec("h100")).cold_round_extra_s == 0.0
    # a file without both modes at the same rounds gives nothing
    data = json.loads((FOLDER / "cold_touch.json").read_text())
    data["results"] = [r for r in data["results"] if r["mode"] != "warm"]
    (tmp_path / "cold_touch.json").write_text(json.dumps(data))
    assert load_cold_round(tmp_path) == 0.0


def test_the_term_and_where_it_is_off():
    spec, calib = load_spec("h200"), load_calib("h200")
    t = cold_tile_latency(spec, calib, 2.0, True, 1, 1.0, 1.0)
    l2 = calib.values["l2_latency_s"]
    assert t.value == pytest.approx(l2 + calib.cold_round_extra_s)   # r is not applied
    assert t.inputs["r"] == 2.0 and 480e-9 < t.value < 530e-9
    assert cold_tile_latency(spec, calib, 1.0, False, 1, 1.0, 1.0) is None   # a single buffer
    assert cold_tile_latency(spec, calib, 1.0, True, 2, 1.0, 1.0) is None    # two rounds
    # three blocks per SM, whatever their warps
    assert cold_tile_latency(spec, calib, 1.0, True, 1, 3.0, 2.0).value == t.value
    assert cold_tile_latency(spec, calib, 1.0, True, 1, 4.0, 2.0) is None    # four, w = 2
    # four one-warp blocks: each warp has its scheduler to itself (fortieth change, run BW)
    assert cold_tile_latency(spec, calib, 1.0, True, 1, 4.0, 1.0).value == t.value
    assert cold_tile_latency(spec, calib, 1.0, True, 1, 6.0, 1.5) is None    # six one-warp
    assert cold_tile_latency(spec, Calib(), 1.0, True, 1, 1.0, 1.0) is None  # not measured
    assert cold_tile_latency(load_spec("h100"), load_calib("h100"), 1.0, True, 1, 1.0,
                             1.0) is None


def _components(name, shape):
    from gemmmodel.model.selection import swept_components

    got = swept_components(FOLDER, load_spec("h200"), [(name, shape)], load_calib("h200"))
    return got[(name, shape)]


@pytest.mark.parametrize(("name", "shape", "on"), [
    ("32x32x8/4x4/db", (512, 256, 8192, 1), True),        # cp.async, 128 blocks, one round
    ("32x32x16/4x4/p4/db", (64, 64, 4096, 16), True),     # register-staged, 64 blocks
    ("32x32x8/4x4", (512, 256, 8192, 1), False),          # a single buffer
    ("32x32x8/4x4/db", (1024, 256, 4096, 1), True),       # two blocks per SM
    ("32x32x8/4x4/db", (768, 512, 4096, 1), True),        # three (run BV)
    ("32x64x8/8x4/p4/db", (2048, 512, 2048, 1), False),   # four two-warp blocks
    ("32x32x8/8x4/p4/db", (64, 64, 4096, 132), True),     # four one-warp blocks (run BW)
    ("32x32x8/8x4/p4/db", (64, 64, 4096, 198), False),    # six one-warp blocks
    ("32x32x8/4x4/db", (2048, 512, 2048, 1), False),      # eight per SM
    ("128x128x16/8x8/db", (4096, 4096, 4096, 1), False),  # several rounds
])
def test_where_the_term_is_on(name, shape, on):
    comp = _components(name, shape)
    assert (comp.lat_cold_s > 0) is on
    assert ("cold_tile_latency_s" in comp.terms) is on


def _measured(round_, name, shape):
    from gemmmodel.model.selection import sweep_measured

    return sweep_measured(FOLDER, round_)[(name, shape)]


def _predicted(keys):
    from gemmmodel.model.selection import posthoc_predictions

    return posthoc_predictions(FOLDER, load_spec("h200"), keys)


def test_the_builds_it_was_made_for():
    # post hoc (the term was written after rounds 76 and 77 were swept): session 72's model
    # put 32x32x8/4x4/db at 512x256x8192 at 224 us (-0.94 log; measured 574) and round 77's
    # pick 32x32x16/4x4/p4/db at 64x64x4096x16 at 71 us (-0.87; measured 170), below its BK 32
    # twin (103 us; measured 96)
    a = ("32x32x8/4x4/db", (512, 256, 8192, 1))
    pick = ("32x32x16/4x4/p4/db", (64, 64, 4096, 16))
    twin = ("32x32x32/4x4/p4/db", (64, 64, 4096, 16))
    got = _predicted([a, pick, twin])
    assert abs(np.log(got[a] / _measured("heldout76", *a))) < 0.1
    assert np.log(got[pick] / _measured("heldout77", *pick)) > -0.3
    assert got[pick] > got[twin]             # the BK 32 twin now ranks ahead, as measured
    assert abs(np.log(got[twin] / _measured("heldout77", *twin))) < 0.1
