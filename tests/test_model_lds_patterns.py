"""The bank-conflict simulator against the lane-pattern microbenchmark measured on the H200
(calibration/h200/micro.csv, `smem_pattern` rows: kernels/micro/smem.cu mb_smem_pattern,
14 lane -> element patterns x 32/64/128-bit loads, cycles per warp access at full occupancy;
ncu counted the same wavefronts, calibration/h200/ncu_lds_patterns.txt). The measured cycles
are whole numbers of 128-byte passes (within 7%), so the simulated passes must equal them
after rounding. The sm_90 merge windows (spec lds_merge_windows) are what makes the
broadcast patterns fit: without them 128-bit all-same reads would take 4 passes, not 2."""

import csv
from pathlib import Path

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.calibrate.micro_compute import SMEM_PATTERNS
from gemmmodel.model.lds import conflict_passes, lane_groups, merge_windows
from gemmmodel.spec import load_spec

MICRO = Path(CALIBRATION_DIR) / "h200" / "micro.csv"


def _measured():
    out = {}
    with MICRO.open(newline="") as fh:
        for row in csv.DictReader(fh):
            if row["name"] == "smem_pattern" and row["quantity"] == "cycles_per_access" \
                    and row["status"] == "ok":
                p = dict(kv.split("=") for kv in row["params"].split(";"))
                out[(int(p["bits"]), p["pattern"])] = float(row["value"])
    return out


MEASURED = _measured()


def _passes(spec, bits, pattern, windows=True):
    width = bits // 8
    addr = np.asarray(SMEM_PATTERNS[pattern], dtype=np.int64) * width
    wins = merge_windows(spec, width, "read") if windows else ()
    return float(conflict_passes(addr, width, lane_groups(spec, width, "read"), 32, 4, wins)[0])


def test_every_pattern_was_measured():
    assert set(MEASURED) == {(b, p) for b in (32, 64, 128) for p in SMEM_PATTERNS}


@pytest.mark.parametrize("bits, pattern", sorted(MEASURED))
def test_simulated_passes_equal_measured_cycles(bits, pattern):
    measured = MEASURED[(bits, pattern)]
    assert abs(measured - round(measured)) < 0.15 * round(measured)
    assert _passes(load_spec("h200"), bits, pattern) == round(measured)


def test_without_merge_windows_broadcasts_would_cost_double():
    spec = load_spec("h200")
    assert _passes(spec, 128, "all_same", windows=False) == 4
    assert _passes(spec, 128, "all_same") == 2 == round(MEASURED[(128, "all_same")])
    # a repeated group of distinct words is NOT merged (runs of equal addresses overflow)
    assert _passes(spec, 128, "lane_mod_4") == 4 == round(MEASURED[(128, "lane_mod_4")])


def test_stores_and_other_vendors_have_no_windows():
    assert merge_windows(load_spec("h200"), 16, "write") == []
    assert merge_windows(load_spec("gfx906"), 16, "read") == []
