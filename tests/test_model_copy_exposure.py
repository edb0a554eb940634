"""copy_exposure (thirty-second change, session 60): fitted to the ncu cycles of device runs
AV and AW, not to the kernel timings (gemmmodel/model/copy_exposure.py)."""

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.errors import GemmModelError
from gemmmodel.model.calib import DEFAULT_FIT
from gemmmodel.model.copy_exposure import (COPY_RUNS, check_copy_exposure, fit_copy_exposure,
                                           measured_cycles)


@pytest.fixture(scope="module")
def fit():
    return fit_copy_exposure("h200")


def test_the_committed_value_is_the_fit(fit):
    # the fixed point: refitting with the committed fit.json gives DEFAULT_FIT's value back
    assert fit["n"] == 25
    assert fit["exposure"] == pytest.approx(DEFAULT_FIT["copy_exposure"], abs=0.02)
    # and it explains the ncu cycles clearly better than the thirty-first change (0)
    assert fit["rms"] < 0.075
    assert fit["rms_at_zero"] > 1.5 * fit["rms"]


def test_the_pipe_saturated_builds_move_most(fit):
    # run AW's BK 8 8x8 builds at 4096^3: their copies are most of the LDS pipe, so the
    # exposure takes the most off them; the model now lies within 10 % of ncu's cycles there
    rows = {(r["config"], r["shape"][:3]): r for r in fit["rows"]}
    for config in ("128x64x8/8x8/db", "64x64x8/8x8/db"):
        r = rows[(config, (4096, 4096, 4096))]
        assert abs(np.log(r["model_cycles"] / r["cycles"])) < 0.10, (config, r)


def test_measured_cycles_reads_runs_av_and_aw():
    rows = measured_cycles("h200")
    assert len(rows) == 25
    assert {r["shape"] for r in rows} == {(8192, 256, 8192, 1), (8192, 256, 2048, 1),
                                         (4096, 4096, 4096, 1)}
    # every launch issued fewer warp instructions per scheduler than its SM had cycles
    assert all(0.3 < r["issued"] / r["cycles"] < 1.0 for r in rows)
    assert len(COPY_RUNS) == 3


def test_no_runs_is_a_clear_error():
    with pytest.raises(GemmModelError, match="no ncu run"):
        fit_copy_exposure("h100")


def test_held_out_launches_of_run_ax():
    # run AX (session 60): 16 other cp.async builds at 256x8192x2048 and 2048^3, not fitted
    # to; measured: rms 0.071 at the committed value, 0.156 at 0 (the thirty-first change)
    res = check_copy_exposure("h200")
    assert res["n"] == 16
    assert res["rms"] < 0.085
    assert res["rms_at_zero"] > 1.8 * res["rms"]
    assert abs(res["mean"]) < 0.04 < res["mean_at_zero"]
    assert "commit 962466b" in (CALIBRATION_DIR / "h200" / "gpu_ax.txt").read_text()


def test_run_at_launches_are_held_out_too():
    # run AT (session 57; ncu of five 4x8 / 8x4 pairs at 8192x256x2048) was not fitted to
    # either: rms 0.068 at the committed value, 0.108 at 0. The ratio within each pair got
    # worse (tests/test_run_at.py)
    res = check_copy_exposure("h200", runs=("ncu_at_8192x256x2048.txt",))
    assert res["n"] == 10
    assert res["rms"] < 0.08 and res["rms_at_zero"] > 1.4 * res["rms"]
