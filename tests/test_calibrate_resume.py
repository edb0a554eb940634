"""Resumable runs: interrupt a fake-GPU calibration, rerun, no duplicates; budgets; errors."""

import json

import pytest
from test_calibrate_fake import FakeRuntime

from gemmmodel.calibrate import run_calibration
from gemmmodel.calibrate.plan import Measurement, Skip, rows_for
from gemmmodel.calibrate.runner import run_measurements
from gemmmodel.calibrate.store import ResultStore, read_rows
from gemmmodel.runtime.base import GpuError

ONLY = ["clock", "fma_curve", "smem_stride"]


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch):
    """Durability is not under test here; fsync costs seconds on slow disks."""
    monkeypatch.setattr("gemmmodel.calibrate.store.os.fsync", lambda fd: None)


def _keys(rows):
    return [(r["suite"], r["name"], r["params"], r["quantity"]) for r in rows]


def test_interrupted_run_resumes_without_duplicates(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        run_calibration(["micro"], out_dir=tmp_path, only=ONLY,
                        runtime=FakeRuntime(interrupt_after=400))
    first = read_rows(tmp_path / "micro.csv")
    first_keys = {(r["name"], r["params"]) for r in first}
    assert 0 < len(first_keys) < 101
    prov = json.loads((tmp_path / "provenance.json").read_text())
    assert [r["status"] for r in prov["runs"]] == ["interrupted"]

    report = run_calibration(["micro"], out_dir=tmp_path, only=ONLY, runtime=FakeRuntime())
    (suite,) = report["suites"]
    assert suite["already_done"] == len(first_keys)
    assert suite["measured"] == 101 - len(first_keys)
    rows = read_rows(tmp_path / "micro.csv")
    keys = _keys(rows)
    assert len(keys) == len(set(keys)), "a measurement was written twice"
    assert len({(r["name"], r["params"]) for r in rows}) == 101   # 1 + 40 + 60
    ids = [r["provenance_id"] for r in json.loads(
        (tmp_path / "provenance.json").read_text())["runs"]]
    assert len(ids) == 2 and {r["provenance_id"] for r in rows} == set(ids)
    # the second run measured only what the first lacked
    second = {(r["name"], r["params"]) for r in rows if r["provenance_id"] == ids[1]}
    assert not second & first_keys

    again = run_calibration(["micro"], out_dir=tmp_path, only=ONLY, runtime=FakeRuntime())
    assert again["suites"][0]["measured"] == 0
    assert len(read_rows(tmp_path / "micro.csv")) == len(rows)


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _synthetic(clock, n, suite="micro", fail=None, est=1.0):
    def make(i):
        def run(ctx):
            clock.t += 1.0
            if fail and i in fail:
                raise fail[i]
            return rows_for({"clock_hz": 1e9 + i})
        return run
    return [Measurement(suite, "clock", {"i": i}, est, make(i)) for i in range(n)]


def test_suite_budget_stops_cleanly_and_rerun_continues(tmp_path):
    store, clock, progress = ResultStore(tmp_path), FakeClock(), []
    reps = run_measurements(_synthetic(clock, 6), None, store, "p1",
                            suite_budgets={"micro": 3.5}, clock=clock, progress=progress.append)
    assert (reps[0].measured, reps[0].not_run, reps[0].stop_reason) == (3, 3, "suite budget")
    assert progress[0] == "[1/6] micro/clock i=0 …"
    reps = run_measurements(_synthetic(clock, 6), None, store, "p2",
                            suite_budgets={"micro": 3.5}, clock=clock)
    assert (reps[0].already_done, reps[0].measured, reps[0].stop_reason) == (3, 3, "")
    assert len(store.rows()) == 6


def test_total_budget_caps_every_suite(tmp_path):
    clock = FakeClock()
    plan = _synthetic(clock, 3) + _synthetic(clock, 3, suite="kernels")
    reps = run_measurements(plan, None, ResultStore(tmp_path), "p1", budget_s=2.5,
                            suite_budgets={"micro": 100, "kernels": 100}, clock=clock)
    assert [r.measured for r in reps] == [2, 0]
    assert [r.stop_reason for r in reps] == ["total budget", "total budget"]


def test_errors_are_recorded_retried_and_three_in_a_row_end_the_suite(tmp_path):
    store, clock = ResultStore(tmp_path), FakeClock()
    boom = {i: RuntimeError(f"boom {i}") for i in (1, 2, 3)}
    plan = _synthetic(clock, 6, fail=boom) + _synthetic(clock, 2, suite="kernels")
    reps = run_measurements(plan, None, store, "p1", clock=clock)
    assert (reps[0].measured, reps[0].errors, reps[0].stop_reason) == (1, 3, "errors")
    assert reps[1].measured == 2                      # the next suite still runs
    assert "RuntimeError: boom 1" in reps[0].error_notes[0]
    reps = run_measurements(_synthetic(clock, 6), None, store, "p2", clock=clock)
    assert (reps[0].already_done, reps[0].measured) == (1, 5)   # errors were retried


def test_a_gpu_error_ends_the_whole_run_and_skips_are_done(tmp_path):
    store, clock = ResultStore(tmp_path), FakeClock()
    fail = {0: Skip("not on this GPU"), 1: GpuError("cuLaunchKernel", "CUDA_ERROR_ILLEGAL_ADDRESS")}
    plan = _synthetic(clock, 3, fail=fail) + _synthetic(clock, 2, suite="kernels")
    reps = run_measurements(plan, None, store, "p1", clock=clock)
    assert (reps[0].skipped, reps[0].errors, reps[0].not_run) == (1, 1, 1)
    assert reps[1].stop_reason == "GPU error" and reps[1].not_run == 2
    rows = store.rows()
    assert rows[0]["status"] == "skipped" and rows[0]["note"] == "not on this GPU"
    assert "micro/clock/i=0" in store.done_keys() and "micro/clock/i=1" not in store.done_keys()


def test_missing_tools_do_not_stop_the_suite(tmp_path):
    from gemmmodel.errors import ToolMissing

    clock = FakeClock()
    fail = {i: ToolMissing("CuPy is not installed") for i in range(4)}
    reps = run_measurements(_synthetic(clock, 6, fail=fail), None, ResultStore(tmp_path), "p1",
                            clock=clock)
    assert (reps[0].errors, reps[0].measured, reps[0].stop_reason) == (4, 2, "")
