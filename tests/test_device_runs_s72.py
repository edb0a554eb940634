"""Device run BS (session 72; docs/model.md "Session 72"): ncu on the 16-warp cp.async double
buffers 128x128x16/4x8/db and /8x4/db, which LOKO put 0.13-0.19 log too fast at every
shape before the thirty-seventh change (chain.py, which this run led to), against their
single-buffer twin 128x128x16/4x8, the 8-warp 128x128x16/8x8/db and 64x128x16/8x4/db, at
8192x256x2048 (one block per SM) and 4096^3. Run BT: the same kind of builds at two to
four blocks per SM.
H200, driver 580.159.04, SM clock 1980 MHz (calibration/h200/gpu_bs.txt)."""

import collections
import csv
import gzip
import io

import numpy as np
import pytest

from gemmmodel import CALIBRATION_DIR

FOLDER = CALIBRATION_DIR / "h200"
SIXTEEN = ("128x128x16/4x8/db", "128x128x16/8x4/db")
BUILDS = (*SIXTEEN, "128x128x16/4x8", "128x128x16/8x8/db", "64x128x16/8x4/db")
#: SMs with a block at 8192x256x2048 for the 128x128 tiles (2 x 64 blocks, one per SM)
ACTIVE_SMS = 128


def _launches(size: str, run: str = "bs") -> dict:
    """{build: {counter: value}} of run `run`'s ncu launches at `size`."""
    from gemmmodel.ingest import read_ncu_launches

    text = (FOLDER / f"ncu_{run}_{size}.txt").read_text(errors="replace")
    return {fields[2]: {k: v[0] for k, v in launch.counters.items()}
            for fields, launch in read_ncu_launches(text)}


def _overlap_per_k(c: dict, sms: int, k: int) -> float:
    """Clocks per k step by which the shared-memory pipe's wavefronts (per SM with work)
    and one scheduler's issued instructions overlap: their sum minus the launch's cycles."""
    lsu = c["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"] / sms
    issue = c["smsp__inst_executed.sum"] / (4 * sms)
    return (lsu + issue - c["sm__cycles_elapsed.avg"]) / k


def test_run_bs_profiled_every_build_at_both_shapes():
    assert (FOLDER / "gpu_bs.txt").read_text().startswith("NVIDIA H200")
    for size in ("8192x256x2048", "4096x4096x4096"):
        got = _launches(size)
        assert set(got) == set(BUILDS)
        # every build does the same FMAs
        m, n, k = map(int, size.split("x"))
        assert {c["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]
                for c in got.values()} == {m * n * k}


def test_the_sixteen_warp_double_buffers_fit_two_blocks_on_an_sm():
    # 64 registers on the device (nvrtc) against 66 for the single buffer: at 4096^3 they
    # run two blocks per SM (about 7.7 warps per scheduler), the single buffer one (4.0)
    big = _launches("4096x4096x4096")
    for name in SIXTEEN:
        assert big[name]["launch__registers_per_thread"] == 64
        assert big[name]["smsp__warps_active.avg.per_cycle_active"] > 7.5
    single = big["128x128x16/4x8"]
    assert single["launch__registers_per_thread"] == 66
    assert single["smsp__warps_active.avg.per_cycle_active"] == pytest.approx(4.0, abs=0.05)


def test_the_copies_cost_three_times_the_single_buffers_stores():
    one = _launches("8192x256x2048")
    db, single = one["128x128x16/4x8/db"], one["128x128x16/4x8"]
    ld = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    total = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
    # the same fragment reads
    assert db[ld] == single[ld]
    # 5 cp.async per warp per tile (4 x 4 B of the transposed A, 1 x 16 B of B)
    assert db["smsp__inst_executed_op_ldgsts.sum"] == 128 * 128 * 16 * 5
    copies, stores = db[total] - db[ld], single[total] - single[ld]
    assert 2.7 < copies / stores < 3.3
    # and the double buffer's extra cycles are 0.6-0.8 of its extra wavefronts per SM
    extra_cycles = db["sm__cycles_elapsed.avg"] - single["sm__cycles_elapsed.avg"]
    assert 0.6 < extra_cycles / ((copies - stores) / ACTIVE_SMS) < 0.8


def test_at_one_block_per_sm_the_pipes_overlap_by_a_few_dozen_clocks_per_k_step():
    # 45-75 clk per k step whatever the warps per scheduler (2 for /8x8/db, 4 for the
    # others); with about two blocks per SM (64x128x16/8x4/db) 85 or more
    one = _launches("8192x256x2048")
    k = 2048
    for name in (*SIXTEEN, "128x128x16/4x8", "128x128x16/8x8/db"):
        assert 45 < _overlap_per_k(one[name], ACTIVE_SMS, k) < 75
    assert _overlap_per_k(one["64x128x16/8x4/db"], 132, k) > 85


def _stall_shares(run: str = "bs") -> dict:
    """{build: {(instruction class, reason): share of all warp samples}} from run `run`'s
    per-SASS samples at 8192x256x2048."""
    with gzip.open(FOLDER / f"ncu_{run}_src_8192x256x2048.txt.gz", "rt") as fh:
        text = fh.read()
    names = [line.split(",")[2] for line in text.splitlines() if line.startswith("order,")]
    out = {}
    for name, block in zip(names, text.split('"Kernel Name","sgemm_tile",')[1:]):
        rows = list(csv.reader(io.StringIO(block.strip())))
        head = rows[0]
        reasons = [h for h in head if h.startswith("stall_") and "(Not" not in h]
        count = collections.Counter()
        for r in rows[1:]:
            if len(r) < len(head):
                continue
            op = r[1].split()[0] if r[1].split() else ""
            op = r[1].split()[1] if op.startswith("@") else op
            cls = next((c for c in ("LDGSTS", "LDS", "STS", "FFMA") if op.startswith(c)),
                       "other")
            for h in reasons:
                count[(cls, h[6:])] += int(r[head.index(h)] or 0)
        total = sum(count.values())
        out[name] = {key: n / total for key, n in count.items()}
    return out


def test_their_warps_wait_on_fragment_reads_not_on_the_barrier():
    shares = _stall_shares()
    assert set(shares) == set(BUILDS)
    for name in SIXTEEN:
        s = shares[name]
        assert s[("FFMA", "short_sb")] > 0.40
        assert sum(v for (_, why), v in s.items() if why == "barrier") < 0.05
    # the 8-warp double buffer waits less on them, the single buffer at its stores on the
    # global loads (long scoreboard)
    assert shares["128x128x16/8x8/db"][("FFMA", "short_sb")] < 0.32
    assert shares["128x128x16/4x8"][("STS", "long_sb")] > 0.15


def _measured(size: str) -> dict:
    """{config: measured s} of the template sweep (calibration/h200/template.csv) at size."""
    from gemmmodel.calibrate.load import load

    m, n, k = (int(x) for x in size.split("x"))
    df = load("h200")["template"]
    rows = df[(df["name"] == "template") & (df["M"] == m) & (df["N"] == n) & (df["K"] == k)]
    return dict(zip(rows["config"], rows["time_s"]))


def _errors(size: str) -> dict:
    """log(predicted / measured) of the five builds at `size` (stored fit)."""
    from gemmmodel.model.selection import posthoc_predictions
    from gemmmodel.spec import load_spec

    shape = tuple(int(x) for x in size.split("x"))
    meas = _measured(size)
    got = posthoc_predictions(FOLDER, load_spec("h200"), [(b, shape) for b in BUILDS])
    return {b: float(np.log(got[(b, shape)] / meas[b])) for b in BUILDS}


def test_the_fragment_chain_brings_them_close_at_one_block_per_sm():
    # the thirty-seventh change (chain.py): -0.154 / -0.188 log before it at 8192x256x2048;
    # the chain charges 59 clk per k step where run BS's excess over the LDS pipe is 79
    # (/4x8/db) and 100 (/8x4/db), so /8x4/db stays too fast
    err = _errors("8192x256x2048")
    assert abs(err["128x128x16/4x8/db"]) < 0.05
    assert -0.14 < err["128x128x16/8x4/db"] < -0.08
    for name in ("128x128x16/4x8", "128x128x16/8x8/db", "64x128x16/8x4/db"):
        assert abs(err[name]) < 0.05


def test_at_two_blocks_per_sm_they_stay_too_fast():
    # known limit (not fixed): at 4096^3 (two blocks per SM) the chain is off, as the
    # fragment cover of register-staged double buffers; both stay -0.13 / -0.15 log
    err = _errors("4096x4096x4096")
    for name in SIXTEEN:
        assert err[name] < -0.1
    assert abs(err["128x128x16/8x8/db"]) < 0.05


def test_run_bt_a_second_block_does_not_hide_the_sixteen_warp_builds_wait():
    # run BT (docs/model.md "Session 72"): at 8192x512x2048 the 16-warp double buffers run
    # two blocks per SM (64 registers), the chain is off there, and the model stays 0.13-0.17
    # log below ncu's cycles; the 8-warp /8x8/db is right
    from gemmmodel.model.selection import posthoc_predictions
    from gemmmodel.spec import load_spec

    cycles = {b: c["sm__cycles_elapsed.avg"]
              for b, c in _launches("8192x512x2048", "bt").items()}
    assert set(cycles) == {*SIXTEEN, "128x128x16/4x8", "128x128x16/8x8/db"}
    shape = (8192, 512, 2048)
    got = posthoc_predictions(FOLDER, load_spec("h200"), [(b, shape) for b in cycles])
    err = {b: float(np.log(got[(b, shape)] * 1.98e9 / c)) for b, c in cycles.items()}
    for name in SIXTEEN:
        assert -0.2 < err[name] < -0.1
    assert abs(err["128x128x16/8x8/db"]) < 0.05


def test_run_bt_the_bk32_double_buffers_all_wait_on_their_fragments():
    # 43-50 % of the samples are FFMAs on the short scoreboard in all three cp.async BK 32
    # builds, though the model is right on two of them; the single buffer 8 %
    shares = _stall_shares("bt")
    for name in ("128x32x32/8x8/db", "128x32x32/4x8/db", "128x64x32/4x8/db"):
        assert 0.40 < shares[name][("FFMA", "short_sb")] < 0.52
    assert shares["128x32x32/8x8"][("FFMA", "short_sb")] < 0.10
    # the 177-register /8x8/db waits on the long scoreboard outside its FFMAs and LDS reads
    assert shares["128x32x32/8x8/db"][("other", "long_sb")] > 0.15
    assert shares["128x32x32/4x8/db"][("other", "long_sb")] < 0.12
