"""The bank-conflict simulator against Nsight Compute's shared-memory counters, measured on
the H200 (calibration/h200/ncu_shared_1024.csv: 12 catalogue kernels at 1024^3, ncu 2025.3,
tools/device/run_d.sh). Wavefronts per warp instruction = l1tex__data_pipe_lsu_wavefronts_
mem_shared_op_{ld,st}.sum / smsp__inst_executed_op_shared_{ld,st}.sum.

Measured / simulated wavefronts per instruction (2026-11-21):
  stores: 2 1.08/1.00, 3 1.13/1.00, 3.3 4.10/4.00, 4 2.51/2.40, 7.3 2.43/2.40,
          8.3 8.67/8.50, 8.4 8.66/8.50, 9 8.58/8.50, 10 2.50/2.40  -> within 12% everywhere
  loads:  2 1.20/1.00, 3 3.00/2.00, 3.3-7.7 3.00/3.00, 8.3 1.50/1.00, 8.4 1.00/1.00,
          9 1.00/1.00, 10 5.00/5.00
The 128-bit loads (3.3, 4, 5, 7, 7.3, 7.7, 10) match exactly since the spec's merge windows
(sm_90 lds_merge_windows, measured with the lane-pattern microbenchmark, 2026-11-23); with
the 8-lane phases alone the simulator said 4.00 and 6.00. The scalar-source kernels 2, 3
and 8.3 stay within a factor 1.5: the compiler did not vectorise their reads as the
simulator assumes. The tests pin both, so that a change in either direction shows."""

import csv
from pathlib import Path

import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.catalogue import load_catalogue
from gemmmodel.model.kernel import describe
from gemmmodel.model.lds import lds_table
from gemmmodel.spec import load_spec

NCU = Path(CALIBRATION_DIR) / "h200" / "ncu_shared_1024.csv"


def _measured():
    rows = list(csv.reader(NCU.open()))
    head = {name: i for i, name in enumerate(rows[0])}

    def get(row, key):
        return float(row[head[key]].replace(",", ""))

    out = {}
    for row in rows[2:]:
        kid = row[head["Kernel Name"]].removeprefix("sgemm_").replace("_", ".")
        out[kid] = {kind: get(row, f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
                    / get(row, f"smsp__inst_executed_op_shared_{op}.sum")
                    for kind, op in (("read", "ld"), ("write", "st"))}
    return out


def _simulated(kid, kind):
    spec = load_spec("h200")
    table = [r for r in lds_table(describe(load_catalogue()[kid].params), spec)
             if r["kind"] == kind]
    count = sum(r["per_iter"] for r in table)
    return sum(r["per_iter"] * r["passes"] for r in table) / count


MEASURED = _measured()


@pytest.mark.parametrize("kid", sorted(MEASURED))
def test_store_wavefronts_match_ncu(kid):
    assert _simulated(kid, "write") == pytest.approx(MEASURED[kid]["write"], rel=0.12)


VECTOR_READS = ("3.3", "4", "5", "7", "7.3", "7.7", "10")


@pytest.mark.parametrize("kid", VECTOR_READS)
def test_128_bit_load_wavefronts_match_ncu(kid):
    assert _simulated(kid, "read") == pytest.approx(MEASURED[kid]["read"], rel=0.01)


@pytest.mark.parametrize("kid", sorted(MEASURED))
def test_load_wavefronts_within_known_broadcast_gap(kid):
    ratio = _simulated(kid, "read") / MEASURED[kid]["read"]
    assert 1 / 1.52 <= ratio <= 1.52, ratio  # 1.5 plus ncu rounding of the counts


def test_the_data_covers_the_conflict_heavy_kernels():
    assert {"3.3", "8.4", "9", "10"} <= set(MEASURED)
    assert MEASURED["8.4"]["write"] > 8  # 8-way store conflicts measured
