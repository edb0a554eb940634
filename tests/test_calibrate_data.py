"""The committed calibration data (calibration/<gpu>/): schema, units and provenance of
every folder that exists, by gemmmodel.calibrate.validate.check_folder (whose own failure
detection is tested in test_calibrate_suites.py)."""

import json

import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.calibrate import load
from gemmmodel.calibrate.provenance import RUN_STATUSES
from gemmmodel.calibrate.store import SUITES
from gemmmodel.calibrate.validate import check_folder

FOLDERS = sorted(p for p in CALIBRATION_DIR.glob("*")
                 if p.is_dir() and any((p / f"{s}.csv").exists() for s in SUITES))


def test_folders_found_are_calibration_folders():
    # A folder under calibration/ with a provenance file must also hold suite CSVs.
    for path in CALIBRATION_DIR.glob("*/provenance.json"):
        assert path.parent in FOLDERS, path


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_schema_units_and_provenance(folder):
    assert check_folder(folder) == []


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_provenance_names_the_gpu_clocks_and_commit(folder):
    prov = json.loads((folder / "provenance.json").read_text())
    for run in prov["runs"]:
        assert run["gpu_name"] and run["sms"] and run["date_utc"].endswith("Z")
        assert run["clocks_before"]["sm_clock_hz"] or run["clocks_before"]["sm_clock_max_hz"]
        assert run["gemmmodel_commit"]
        assert run["status"] in RUN_STATUSES


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_loads_into_frames_with_one_row_per_quantity(folder):
    frames = load(folder)
    assert frames
    for suite, df in frames.items():
        key = df[["name", "params", "quantity"]].astype(str).agg("|".join, axis=1)
        assert key.is_unique, suite
        ok = df[(df.status == "ok") & (df.quantity != "none")]
        assert ok.value.notna().all(), suite
        timed = ok[ok.time_s.notna()]
        assert (timed.time_s > 0).all() and (timed.time_p20_s <= timed.time_p80_s).all()
