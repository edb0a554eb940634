"""`gemmmodel calibrate --dry-run`: the plan and its GPU-time estimate without a GPU; the
suite sizing rules; argument errors."""

import json

import pytest

from gemmmodel.calibrate import dry_run, parse_suites
from gemmmodel.calibrate.context import facts_from_spec
from gemmmodel.calibrate.micro_memory import chase_footprint, dram_bytes, l2_sweep_sizes
from gemmmodel.calibrate.runner import DEFAULT_BUDGET_S
from gemmmodel.calibrate.suites import gpu_dir_name
from gemmmodel.cli import main
from gemmmodel.spec import list_specs, load_spec

NVIDIA = [n for n in list_specs() if load_spec(n).vendor == "nvidia"]


def test_dry_run_lists_every_suite_with_time_and_runs():
    out = dry_run(parse_suites("all"), "h200")
    assert list(out["suites"]) == ["micro", "kernels", "template", "batched"]
    for name, suite in out["suites"].items():
        assert suite["measurements"] > 0 and suite["est_s"] > 0, name
        assert suite["budget_s"] == DEFAULT_BUDGET_S[name] <= 600
        assert suite["device_runs"] * suite["budget_s"] >= suite["est_s"]
    assert out["total_est_s"] == pytest.approx(sum(s["est_s"] for s in out["suites"].values()),
                                               abs=0.5)
    names = {(m["suite"], m["name"]) for m in out["measurements"]}
    assert {("micro", "dram_copy"), ("micro", "fma_curve"), ("micro", "launch"),
            ("kernels", "cublas"), ("template", "template"), ("batched", "batched")} <= names
    keys = [(m["suite"], m["name"], m["params"]) for m in out["measurements"]]
    assert len(keys) == len(set(keys)), "two measurements share a key"


def test_budget_caps_each_suite_and_only_filters():
    out = dry_run(["kernels", "batched"], "h200", only=["cublas", "batched/cublas_batched"],
                  budget_s=60)
    assert {m["name"] for m in out["measurements"]} == {"cublas", "cublas_batched"}
    assert all(s["budget_s"] == 60 for s in out["suites"].values())


@pytest.mark.parametrize("gpu", NVIDIA)
def test_sizes_follow_each_gpu(gpu):
    dev = facts_from_spec(load_spec(gpu))
    sizes = l2_sweep_sizes(dev)
    assert sizes[0] == 1 << 20 and sizes[-1] <= 4 * dev.l2_bytes < sizes[-1] * 1.5
    assert dram_bytes(dev) >= 8 * dev.l2_bytes and dram_bytes(dev) % 16 == 0
    assert chase_footprint("l2", dev) > 4 * chase_footprint("l1", dev)
    assert chase_footprint("dram", dev) >= 4 * dev.l2_bytes


def test_device_names_map_to_calibration_folders_and_specs():
    assert gpu_dir_name("NVIDIA H100 80GB HBM3")[0] == "h100"
    folder, spec = gpu_dir_name("NVIDIA H200")
    assert folder == "h200" and spec.name == "h200"
    folder, spec = gpu_dir_name("NVIDIA GeForce RTX 9999 Ti")
    assert folder == "rtx-9999-ti" and spec is None


def test_cli_dry_run_json(capsys):
    assert main(["calibrate", "--dry-run", "--suite", "batched,kernels", "--gpu", "h200",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["suites"]) == ["kernels", "batched"]


def test_cli_dry_run_text_names_suites_and_time(capsys):
    assert main(["calibrate", "--dry-run", "--suite", "all"]) == 0
    text = capsys.readouterr().out
    for word in ("micro", "kernels", "template", "batched", "total estimated GPU time"):
        assert word in text


@pytest.mark.parametrize("argv, message", [
    (["--suite", "warp"], "unknown suite warp"),
    (["--suite", "batched", "--only", "nothing"], "--only nothing"),
    (["--budget-s", "0"], "--budget-s must be > 0"),
])
def test_cli_errors_are_one_line_exit_2(capsys, argv, message):
    assert main(["calibrate", "--dry-run"] + argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_cli_without_a_gpu_is_one_line_exit_2(capsys, monkeypatch, tmp_path):
    from gemmmodel import runtime
    from gemmmodel.errors import NoGpu

    def no_gpu(vendor=None):
        raise NoGpu("no GPU runtime found: nvidia: cuInit failed")

    monkeypatch.setattr(runtime, "get_runtime", no_gpu)
    assert main(["calibrate", "--suite", "micro", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no GPU runtime found" in err[0]
    assert not list(tmp_path.iterdir())          # nothing written without a GPU
