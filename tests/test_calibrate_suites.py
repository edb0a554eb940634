"""Every suite's Python against its kernels on a fake GPU: the micro suite end to end
(rows, summary.json, load(), folder check), the template sweep and the vendor batched sweep
with real GEMM arithmetic in the fake, so the correctness check really passes or fails."""

import json
import math

import pytest
from test_calibrate_fake import FAKE_CYCLES, FAKE_NS, FakeBlas, FakeRuntime

from gemmmodel.calibrate import gemm, load, oracle, run_calibration, sweeps
from gemmmodel.calibrate.context import Context, facts_from_device
from gemmmodel.calibrate.summary import conflict_wavefronts
from gemmmodel.calibrate.validate import check_folder
from gemmmodel.spec import load_spec


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
            "smem_stride", "chase", "smem_chase", "launch"} <= names
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
    from gemmmodel.calibrate.context import facts_from_device
    from gemmmodel.calibrate.micro_memory import chase_steps

    dram_steps = chase_steps("dram", facts_from_device(FakeRuntime().device_info()))
    assert dram_steps > 10_000  # the DRAM path outgrows the fake's 1 MiB L2 (chase_steps)
    assert value("chase", "latency_s", level="dram") == pytest.approx(FAKE_NS * 1e-9 / dram_steps)
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
    configs = oracle.template_configs(ctx.spec)[0]
    grid = sweeps.template_grid(configs)
    assert 50 < len(grid) < 600
    assert [m.name for m in plan[:2]] == ["cublas", "cublas"]
    assert len(plan) == 2 + len(configs) + 2 * len(grid)
    timed = [m for m in plan if m.name == "template"]
    occupancy = [m for m in plan if m.name == "occupancy_template"]
    assert len(occupancy) == len(configs)
    for m in plan[:2] + timed[:4]:
        rows = m.run(ctx)
        assert rows[0]["check_passed"] is True, (m.label, rows[0])
        assert rows[0]["rel_err"] < 1e-5 and rows[0]["nan_count"] == 0
        assert rows[0]["value"] == pytest.approx(2 * math.prod(
            [m.params["M"], m.params["N"], m.params["K"]]) / rows[0]["time_s"])
    (blocks, regs) = occupancy[0].run(ctx)
    assert blocks["quantity"] == "occupancy_blocks_per_sm" and blocks["value"] >= 1
    assert regs["quantity"] == "regs_per_thread" and regs["unit"] == "regs"
    # every shape's device inputs were uploaded once and are freed by release()
    assert len(ctx.cache["gemm_shapes"]) == 2
    gemm.release(ctx)
    assert not rt.mem


def test_a_kernel_that_leaves_outputs_unwritten_fails_the_check(monkeypatch):
    rt = FakeRuntime()
    ctx = _ctx(rt)
    monkeypatch.setattr(FakeRuntime, "launch_plan", lambda self, *a: None)
    monkeypatch.setattr(sweeps, "TEMPLATE_SHAPES", ((64, 64, 32),))
    plan = sweeps.template_measurements(ctx.device, 0.05, "cublas", ctx.spec)
    (timed, *_) = [m for m in plan if m.name == "template"]
    rows = timed.run(ctx)
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

    def launch(a, b, c):
        rt.launch_plan(None, _Plan, 64, 64, 32, 1.0, a, b, 0.0, c)

    rows = sweeps.measure_gemm(ctx, "slow", launch, 64, 64, 32)
    assert rows[0]["runs"] == 1 and rows[0]["noisy"] is True and "not repeated" in rows[0]["note"]
    assert rows[0]["check_passed"] is True
    with pytest.raises(sweeps.Skip, match="predicted"):
        sweeps.measure_gemm(ctx, "slow", launch, 64 * 8, 64 * 8, 32 * 8)


class _Plan:
    entry, grid, block = "x", (1, 1, 1), (1, 1, 1)


def test_kernels_suite_plans_occupancy_then_sizes_per_kernel(monkeypatch):
    ids, why = oracle.catalogue_ids()
    if why:
        pytest.skip(why)
    rt = FakeRuntime()
    ctx = _ctx(rt)
    monkeypatch.setattr(sweeps, "KERNEL_SIZES", (256, 512))
    monkeypatch.setattr("gemmmodel.runtime.vendor.vendor_blas", FakeBlas)
    plan = sweeps.kernel_measurements(ctx.device, 0.05, "cublas")
    assert [m.name for m in plan[:3]] == ["cublas", "cublas", "occupancy"]
    assert len(plan) == 2 + 3 * len(ids)
    for m in plan[:5]:
        rows = m.run(ctx)
        assert rows[0]["status"] == "ok", (m.label, rows)
        if m.name == "kernel":
            assert rows[0]["check_passed"] is True


def test_batched_rows_come_from_the_runtime_runner(monkeypatch):
    from gemmmodel.runtime import runner

    seen = {}

    def fake_run_kernels(rt, names, sizes, *, check, budget_s, trans):
        seen.update(names=names, sizes=sizes, check=check, trans=trans)
        return [runner.RunRow(kernel="batched", size="64x64x32x30", m=64, n=64, k=32, batch=30,
                              median_s=7e-6, p20_s=6.9e-6, p80_s=7.1e-6, spread=0.03, reps=40,
                              noisy=True, rel_err=2e-7, nan_count=0, passed=True)]

    monkeypatch.setattr(runner, "run_kernels", fake_run_kernels)
    ctx = _ctx(FakeRuntime())
    plan = sweeps.batched_measurements(ctx.device, 0.05, "cublas")
    nt = next(m for m in plan if m.name == "batched" and m.params["trans"] == "NT")
    (row,) = nt.run(ctx)
    assert seen == {"names": ["batched"], "sizes": [(64, 64, 32, 30)], "check": True,
                    "trans": "NT"}
    assert row["value"] == pytest.approx(2 * 64 * 64 * 32 * 30 / 7e-6)
    assert (row["time_s"], row["runs"], row["noisy"], row["check_passed"]) == (7e-6, 40, True,
                                                                                True)


def test_each_suite_times_with_its_own_bench_budget():
    from gemmmodel.calibrate.plan import Measurement
    from gemmmodel.calibrate.runner import run_one
    from gemmmodel.calibrate.suites import BENCH_BUDGET_S

    seen = []
    ctx = _ctx(FakeRuntime())
    ctx.bench_budgets_s = dict(BENCH_BUDGET_S)
    ctx.bench = lambda fn, **kw: seen.append(kw["budget_s"])
    for suite in ("micro", "kernels"):
        run_one(Measurement(suite, "clock", {}, 0.0,
                            lambda c: c.time(lambda i: None) or []), ctx)
    assert seen == [BENCH_BUDGET_S["micro"], BENCH_BUDGET_S["kernels"]]
    assert BENCH_BUDGET_S["micro"] != BENCH_BUDGET_S["kernels"]


def test_dram_chase_path_outgrows_the_l2():
    """The DRAM chase repeats one path per launch: it must touch more lines than the L2 holds."""
    from gemmmodel.calibrate.micro_memory import CHASE_SLOT_BYTES, chase_footprint, chase_steps
    from gemmmodel.calibrate.context import facts_from_spec
    from gemmmodel.spec import load_spec

    dev = facts_from_spec(load_spec("h200"))
    assert chase_steps("dram", dev) * CHASE_SLOT_BYTES > 2 * dev.l2_bytes
    assert chase_footprint("dram", dev) // CHASE_SLOT_BYTES >= chase_steps("dram", dev)
    assert chase_steps("l2", dev) * CHASE_SLOT_BYTES < dev.l2_bytes
