"""Test helper (not a test module): counters of one launch read back from a committed ncu
run of tools/device/ncu_launch.py (gemmmodel.ingest.read_ncu_launch_run)."""

from gemmmodel import CALIBRATION_DIR
from gemmmodel.ingest import read_ncu_launch_run


def launches(name: str, gpu: str = "h200") -> dict:
    """{config: ProfiledLaunch} of calibration/<gpu>/<name>."""
    return read_ncu_launch_run((CALIBRATION_DIR / gpu / name).read_text())


def counter(launch, name: str) -> float:
    """The value of counter `name` of one launch."""
    return float(launch.counters[name][0])


def stall(launch, reason: str) -> float:
    """Warps stalled for `reason` per issued instruction (ncu's WarpStateStats ratio)."""
    return counter(launch, f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio")
