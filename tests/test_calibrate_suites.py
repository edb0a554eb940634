"""Every suite's Python against its kernels on a fake GPU: the micro suite end to end
(rows, summary.json, load(), folder check), the template sweep and the vendor batched sweep
with real GEMM arithmetic in the fake, so the correctness check really passes or fails."""

import json
import math

import pytest

from gemmmodel.calibrate import load, run_calibration
from gemmmodel.calibrate import sweeps
from gemmmodel.calibrate.context import Context, facts_from_device
from gemmmodel.calibrate.summary import conflict_wavefronts
from gemmmodel.calibrate.validate import check_folder
from gemmmodel.spec import load_spec
from test_calibrate_fake import FAKE_CYCLES, FAKE_NS, FakeBlas, FakeRuntime


@pytest.fixture(scope="module")
def micro_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("h100")
    with pytest.MonkeyPatch.context() as mp:   # durability is not under test: skip fsync
        mp.setattr("gemmmodel.calibrate.store.os.fsync", lambda fd: None)
        report = run_calibration(["micro"], out_dir=out, runtime=FakeRuntime())
    assert report["status"] == "finished"
    assert report["suites"][0]["errors"] == 0, report["suites"][0]["error_notes"]
    return out


def test_micro_suite_rows_and_folder_are_valid(micro_dir):
    assert check_folder(micro_dir) == []
    frames = load(micro_dir)
    micro = frames["micro"]
    names = set(micro["name"])
    assert {"clock", "dram_read", "dram_write", "dram_copy", "l2_read", "fma_peak", "fma_curve",
            "smem_stride", "chase", "smem_chase", "launch", "occupancy_template"} <= names
    curve = micro[(micro.name == "fma_curve") & (micro.quantity == "flop_per_s")]
    assert len(curve) == 40 and set(curve.ilp) == {1, 2, 4, 8}
    assert set(curve.warps) == {1, 2, 4, 8, 12, 16, 24, 32, 48, 64}
    smem = micro[(micro.name == "smem_stride") & (micro.quantity == "cycles_per_access")]
    assert {32, 33, 1, 64} <= set(smem.stride) and set(smem.bits) == {32, 64, 128}
    launch = micro[(micro.name == "launch") & (micro.quantity == "launch_time_s")]
    assert set(launch.threads) == {32, 64, 128, 256, 512, 1024}
    assert launch.blocks.min() == 1 and launch.blocks.max() >= 1_000_000
    assert (micro.unit[micro.quantity == "latency_s"] == "s").all()


def test_micro_derived_values_follow_the_kernel_counters(micro_dir):
    micro = load(micro_dir)["micro"]

    def value(name, quantity, **match):
        sel = micro[(micro.name == name) & (micro.quantity == quantity)]
        for key, want in match.items():
            sel = sel[sel[key] == want]
        (val,) = sel.value
        return val

    clock = FAKE_CYCLES / FAKE_NS * 1e9
    assert value("clock", "clock_hz") == pytest.approx(clock)
    assert value("chase", "latency_cycles", level="l1") == pytest.approx(FAKE_CYCLES / 100_000)
    assert value("chase", "latency_s", level="dram") == pytest.approx(FAKE_NS * 1e-9 / 10_000)
    accesses = 32 * 64 * 32           # warps x iters x loads per iter, per SM
    assert value("smem_stride", "cycles_per_access", bits=32, stride=1) == \
        pytest.approx(FAKE_CYCLES / accesses)
    assert value("smem_stride", "bytes_per_clk_per_sm", bits=128, stride=1) == \
        pytest.approx(512 / (FAKE_CYCLES / accesses))
    # the fake times every launch at 1e-4 s: bandwidth = bytes moved / 1e-4
    read = micro[(micro.name == "dram_read")]
    assert read.value.iloc[0] == pytest.approx(read.work.iloc[0] / 1e-4)


def test_summary_has_every_headline_next_to_the_spec(micro_dir):
    summary = json.loads((micro_dir / "summary.json").read_text())
    head = summary["headline"]
    for key in ("dram_read_Bps", "dram_write_Bps", "dram_copy_Bps", "l2_read_Bps",
                "lds_Bps_per_sm", "lds_bytes_per_clk_per_sm", "fma_peak_flop_per_s",
                "launch_overhead_s", "spawn_blocks_per_s", "clock_hz", "latency_l1_s",
                "latency_l2_cycles", "latency_dram_s", "latency_lds_cycles"):
        assert head[key]["measured"] is not None, key
    spec = load_spec("h100")
    assert head["dram_read_Bps"]["spec"] == spec.dram_bandwidth_Bps
    assert head["fma_peak_flop_per_s"]["spec"] == pytest.approx(spec.fp32_peak_flops)
    assert summary["spec"] == spec.name
    assert set(summary["lds_conflict_cost_by_degree"]) == {"b32", "b64", "b128"}


def test_conflict_degree_follows_the_spec_bank_model():
    spec = load_spec("h200")
    assert conflict_wavefronts(32, 1, spec) == (1, 1)
    assert conflict_wavefronts(32, 2, spec) == (2, 2)
    assert conflict_wavefronts(32, 32, spec) == (32, 32)
    assert conflict_wavefronts(32, 33, spec) == (1, 1)
    assert conflict_wavefronts(64, 1, spec) == (2, 1)      # two half-warp phases
    assert conflict_wavefronts(128, 1, spec) == (4, 1)
    assert conflict_wavefronts(128, 2, spec)[1] == 2


def test_folder_check_finds_broken_rows(micro_dir, tmp_path):
    for name in ("micro.csv", "provenance.json"):
        (tmp_path / name).write_text((micro_dir / name).read_text())
    text = (tmp_path / "micro.csv").read_text().splitlines()
    text[1] = text[1].replace(",Hz,", ",MHz,", 1)
    text[2] = "unknown-run" + text[2][text[2].index(","):]
    (tmp_path / "micro.csv").write_text("\n".join(text) + "\n")
    problems = check_folder(tmp_path)
    assert any("must be in 'Hz'" in p for p in problems)
    assert any("not in provenance" in p for p in problems)


def _ctx(rt):
    spec = load_spec("h100")
    return Context(rt=rt, device=facts_from_device(rt.device_info(), spec), spec=spec)


def test_template_sweep_checks_and_times_on_the_fake(monkeypatch):
    rt = FakeRuntime()
    ctx = _ctx(rt)
    monkeypatch.setattr(sweeps, "TEMPLATE_SHAPES", ((128, 128, 64), (96, 80, 32)))
    monkeypatch.setattr("gemmmodel.runtime.vendor.vendor_blas", FakeBlas)
    plan = sweeps.template_measurements(ctx.device, 0.05, "cublas", ctx.spec)
    assert [m.name for m in plan[:2]] == ["cublas", "cublas"]
    grid = sweeps.template_grid(sweeps.template_configs(ctx.spec)[0])
    assert len(plan) == 2 + 2 * len(grid) and 50 < len(grid) < 600
    for m in plan[:4]:
        rows = m.run(ctx)
        assert rows[0]["check_passed"] is True, (m.label, rows[0])
        assert rows[0]["rel_err"] < 1e-5 and rows[0]["nan_count"] == 0
        assert rows[0]["value"] == pytest.approx(2 * math.prod(
            [m.params["M"], m.params["N"], m.params["K"]]) / rows[0]["time_s"])


def test_a_kernel_that_leaves_outputs_unwritten_fails_the_check(monkeypatch):
    rt = FakeRuntime()
    ctx = _ctx(rt)
    monkeypatch.setattr(FakeRuntime, "launch_plan", lambda self, *a: None)
    monkeypatch.setattr(sweeps, "TEMPLATE_SHAPES", ((64, 64, 32),))
    monkeypatch.setattr("gemmmodel.runtime.vendor.vendor_blas", FakeBlas)
    plan = sweeps.template_measurements(ctx.device, 0.05, "cublas", ctx.spec)
    rows = plan[1].run(ctx)
    assert rows[0]["check_passed"] is False and rows[0]["nan_count"] == 64 * 64


def test_vendor_batched_rows_at_the_contest_cases(monkeypatch):
    rt = FakeRuntime()
    ctx = _ctx(rt)
    monkeypatch.setattr("gemmmodel.runtime.vendor.vendor_blas", FakeBlas)
    plan = sweeps.batched_measurements(ctx.device, 0.05, "cublas")
    vendor = [m for m in plan if m.name == "cublas_batched"]
    shapes = {(m.params["M"], m.params["N"], m.params["K"], m.params["batch"]) for m in vendor}
    assert set(sweeps.CONTEST_CASES) <= shapes
    assert {m.params["trans"] for m in plan if m.name == "batched"} == {"NN", "NT", "TN", "TT"}
    rows = vendor[0].run(ctx)
    assert rows[0]["check_passed"] is True and rows[0]["work"] == 2 * 64 * 64 * 32 * 30


def test_slow_kernels_are_timed_once_and_bigger_shapes_predicted(monkeypatch):
    rt = FakeRuntime()
    ctx = _ctx(rt)
    monkeypatch.setattr("test_calibrate_fake.FAKE_LAUNCH_S", 2.0)   # every launch "takes" 2 s
    rows = sweeps.measure_gemm(ctx, "slow", lambda a, b, c, alpha=1.0, beta=0.0:
                               rt.launch_plan(None, _Plan, 64, 64, 32, alpha, a, b, beta, c),
                               64, 64, 32)
    assert rows[0]["runs"] == 1 and rows[0]["noisy"] is True and "not repeated" in rows[0]["note"]
    with pytest.raises(sweeps.Skip, match="predicted"):
        sweeps.measure_gemm(ctx, "slow", None, 64 * 8, 64 * 8, 32 * 8)


class _Plan:
    entry, grid, block = "x", (1, 1, 1), (1, 1, 1)
