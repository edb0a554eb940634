"""tools/twin_bias.py: the thread-tile twin comparison on a hand-made frame."""

import importlib.util
import math
from pathlib import Path

import pandas as pd
import pytest

spec = importlib.util.spec_from_file_location(
    "twin_bias", Path(__file__).resolve().parents[1] / "tools" / "twin_bias.py")
twin_bias = importlib.util.module_from_spec(spec)
spec.loader.exec_module(twin_bias)


def frame(rows):
    f = pd.DataFrame(rows, columns=["config", "shape", "meas", "pred", "w", "kind"])
    f["thread_tile"] = [c.split("/")[1] for c in f.config]
    f["twin"] = [twin_bias.twin_of(c, t) for c, t in zip(f.config, f.thread_tile)]
    f["best"] = f.groupby("shape").meas.transform("min")
    return f


def test_d_is_the_measured_ratio_over_the_predicted_one():
    f = frame([
        # at 2048^3 4x4 runs 1.2x its 4x8 twin where the model said 1.0x: d = ln 1.2
        ("64x64x16/4x4/p4", "2048x2048x2048", 1.2, 1.0, 4.0, "multiple"),
        ("64x64x16/4x8/p4", "2048x2048x2048", 1.0, 1.0, 2.0, "multiple"),
        # a batched shape where the model is right about the pair: d = 0, but far from
        # that shape's best (a 3rd config at 0.5)
        ("32x32x8/4x4", "64x64x32x30", 2.0, 1.0, 2.0, "batched"),
        ("32x32x8/4x8", "64x64x32x30", 4.0, 2.0, 1.0, "batched"),
        ("64x64x16/8x8/p4", "64x64x32x30", 0.5, 0.5, 1.0, "batched"),
        # no twin: left out
        ("128x128x8/8x8", "2048x2048x2048", 3.0, 3.0, 1.0, "multiple"),
    ])
    res = twin_bias.twin_bias(f, "4x4", "4x8")
    assert res["pairs"] == 2
    assert res["median_d"] == pytest.approx(0.5 * math.log(1.2))
    assert res["near_best_pairs"] == 1 and res["near_best_median_d"] == pytest.approx(
        math.log(1.2))
    assert res["by_kind"] == {"batched": 0.0, "multiple": pytest.approx(math.log(1.2), abs=1e-4)}
    assert res["by_w"] == {"2": 0.0, "4": pytest.approx(math.log(1.2), abs=1e-4)}
    # the other way round the sign flips
    back = twin_bias.twin_bias(f, "4x8", "4x4")
    assert back["median_d"] == pytest.approx(-res["median_d"])


def test_an_unswept_gpu_is_a_clear_error(capsys, monkeypatch):
    monkeypatch.setattr("sys.argv", ["twin_bias.py", "--gpu", "no-such-gpu"])
    assert twin_bias.main() == 2
    assert "no calibration/no-such-gpu/" in capsys.readouterr().err
