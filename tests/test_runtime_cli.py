"""`gemmmodel run`: argument errors, the no-GPU path, and a whole run on the fake runtime."""

import csv
import json

import pytest

import gemmmodel.runtime as runtime_pkg
from gemmmodel import catalogue, cli
from gemmmodel.catalogue import CatalogueEntry, KernelRef
from gemmmodel.errors import KernelNotFound, NoGpu
from gemmmodel.runtime.fake import FakeRuntime, sgemm_reference_kernel
from gemmmodel.runtime.runner import parse_sizes


@pytest.fixture
def main(monkeypatch):
    """cli.main with only the run command registered (other commands may not exist yet)."""
    monkeypatch.setattr(cli, "COMMANDS", ["run"])
    return cli.main


def _one_line_error(capsys, needle):
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize("size", ["64x64", "64xAx64", "0x64x64", "1x2x3x4x5"])
def test_bad_size_exit_2_one_line(main, capsys, size):
    assert main(["run", "--kernel", "cublas", "--size", size]) == 2
    _one_line_error(capsys, "bad size")


def test_bad_budget_exit_2(main, capsys):
    assert main(["run", "--kernel", "cublas", "--size", "8x8x8", "--budget", "0"]) == 2
    _one_line_error(capsys, "--budget")


def test_no_gpu_exit_2_one_line(main, capsys, monkeypatch):
    def none(vendor):
        raise NoGpu(f"{vendor} absent")
    monkeypatch.setattr(runtime_pkg, "_open", none)
    assert main(["run", "--kernel", "cublas", "--size", "64x64x64", "--json"]) == 2
    _one_line_error(capsys, "no GPU runtime found: nvidia: nvidia absent; amd: amd absent")


def test_no_gpu_on_this_machine(main, capsys):
    try:
        runtime_pkg.get_runtime().close()
    except NoGpu:
        pass
    else:
        pytest.skip("a GPU runtime is usable here; the fake no-GPU test covers this path")
    assert main(["run", "--kernel", "cublas", "--size", "64x64x64"]) == 2
    _one_line_error(capsys, "no GPU runtime found")


def test_parse_sizes():
    assert parse_sizes("1024x1024x1024, 64x64x32x30") == [(1024, 1024, 1024), (64, 64, 32, 30)]


def _entry(kid, source, entry_name):
    return CatalogueEntry(id=kid, parent=None, title=kid, technique="test", source=source,
                          entry=entry_name, block=(64, 1, 1),
                          params={"BM": 32, "BN": 32, "BK": 8, "threads": 64},
                          multiple_of={"M": 32, "N": 32, "K": 8})


def _skip_last_row(rt, grid, block, values, shared):
    m, n = values[0], values[1]
    c = rt.view(values[7], (m, n))
    saved = c[-1].copy()
    sgemm_reference_kernel(rt, grid, block, values, shared)
    c[-1] = saved


@pytest.fixture
def fake_world(monkeypatch, tmp_path):
    src = tmp_path / "fake.cu"
    src.write_text("// fake kernels\n")
    entries = {"f.ok": _entry("f.ok", src, "sgemm_f_ok"),
               "f.bad": _entry("f.bad", src, "sgemm_f_bad")}

    def resolve(name):
        if name not in entries:
            raise KernelNotFound(f"unknown kernel '{name}'")
        return KernelRef(name=name, kind="catalogue", entry=entries[name])
    monkeypatch.setattr(catalogue, "resolve", resolve)
    monkeypatch.setattr(catalogue, "load_catalogue", lambda path=None: entries)
    rt = FakeRuntime(kernels={"sgemm_f_ok": sgemm_reference_kernel,
                              "sgemm_f_bad": _skip_last_row},
                     cost_s=lambda entry, grid, block: 2e-3 if entry == "sgemm_f_bad" else 1e-3)
    monkeypatch.setattr(runtime_pkg, "get_runtime", lambda vendor=None: rt)
    return rt


def test_run_all_on_fake_runtime_json_and_csv(main, capsys, fake_world, tmp_path):
    out_csv = tmp_path / "rows.csv"
    rc = main(["run", "--kernel", "all", "--size", "64x64x64,48x64x64", "--check", "--json",
               "--budget", "0.05", "--out", str(out_csv)])
    assert rc == 1  # f.bad fails its check
    out, err = capsys.readouterr()
    payload = json.loads(out)
    rows = {(r["kernel"], r["size"]): r for r in payload["rows"]}
    ok = rows[("f.ok", "64x64x64")]
    assert ok["status"] == "ok" and ok["passed"] is True and ok["rel_err"] < 1e-6
    assert ok["median_s"] == pytest.approx(1e-3)
    assert ok["flop_per_s"] == pytest.approx(2 * 64**3 / 1e-3)
    assert ok["noisy"] is False and len(ok["checks"]) == 2
    # 64^3 uses 48 KiB per set; rotation past 2 x 1 MiB of fake L2 needs 44 sets
    assert ok["extra"]["n_rotations"] == 44
    skipped = rows[("f.ok", "48x64x64")]
    assert skipped["status"] == "skipped" and "multiple of 32" in skipped["reason"]
    bad = rows[("f.bad", "64x64x64")]
    assert bad["status"] == "failed" and bad["passed"] is False and bad["nan_count"] == 64
    assert bad["median_s"] == pytest.approx(2e-3)
    assert "[1/4] f.ok 64x64x64" in err  # progress on stderr
    with out_csv.open() as fh:
        csv_rows = list(csv.DictReader(fh))
    assert len(csv_rows) == 4 and csv_rows[0]["kernel"] == "f.ok"
    # every launch used the catalogue grid: ceil(N/BN) x ceil(M/BM)
    assert {launch["grid"] for launch in fake_world.launches} == {(2, 2, 1)}


def test_run_text_table(main, capsys, fake_world):
    assert main(["run", "--kernel", "f.ok", "--size", "64x64x64", "--budget", "0.05"]) == 0
    out, _ = capsys.readouterr()
    lines = out.strip().splitlines()
    assert lines[0].startswith("Fake GPU")
    assert lines[1].split()[:4] == ["kernel", "size", "median", "ms"]
    assert lines[2].split()[:3] == ["f.ok", "64x64x64", "1"]


def test_unknown_kernel_fails_before_the_gpu(main, capsys, fake_world):
    assert main(["run", "--kernel", "f.ok,nope", "--size", "64x64x64"]) == 2
    _one_line_error(capsys, "unknown kernel 'nope'")
    assert fake_world.launches == []


def test_batched_size_rejected_for_a_plain_kernel(main, capsys, fake_world):
    assert main(["run", "--kernel", "f.ok", "--size", "64x64x32x2", "--json"]) == 1
    row = json.loads(capsys.readouterr()[0])["rows"][0]
    assert row["status"] == "failed" and "takes MxNxK sizes" in row["reason"]


def test_batched_dispatch_passes_size_trans_and_maps_the_row(main, capsys, fake_world,
                                                             monkeypatch):
    import sys
    import types

    seen = {}

    def run_cli_case(size_str, trans="NN", *, runtime=None, check=True, budget_s=1.0):
        seen.update(size=size_str, trans=trans, runtime=runtime, check=check, budget=budget_s)
        return {"median_s": 2e-5, "p20_s": 1.9e-5, "p80_s": 2.1e-5, "spread": 0.1,
                "reps": 50, "noisy": False, "passed": True, "rel_err": 3e-7, "nan_count": 0,
                "status": "ok", "config": "32x32x8/2x2"}
    fake_mod = types.ModuleType("gemmmodel.batched")
    fake_mod.run_cli_case = run_cli_case
    monkeypatch.setitem(sys.modules, "gemmmodel.batched", fake_mod)
    monkeypatch.setattr(catalogue, "resolve", lambda name: KernelRef(name=name, kind="batched"))
    assert main(["run", "--kernel", "batched", "--size", "64x64x32x30", "--trans", "nt",
                 "--check", "--budget", "0.5", "--json"]) == 0
    row = json.loads(capsys.readouterr()[0])["rows"][0]
    assert seen == {"size": "64x64x32x30", "trans": "NT", "runtime": fake_world,
                    "check": True, "budget": 0.5}
    assert row["batch"] == 30 and row["passed"] is True
    assert row["flop_per_s"] == pytest.approx(2 * 64 * 64 * 32 * 30 / 2e-5)
    assert row["extra"]["config"] == "32x32x8/2x2"


def test_template_over_device_limits_is_rejected_before_compiling():
    """A template config whose double-buffered LDS (2 x 64 x 512 floats = 256 KiB) exceeds
    the sm_90 spec's shared memory per block fails with the reason, and nothing is compiled
    or launched."""
    from gemmmodel.catalogue import resolve
    from gemmmodel.runtime.fake import FakeRuntime
    from gemmmodel.runtime.runner import run_refs

    rt = FakeRuntime(info={"arch": "sm_90"})
    rows = run_refs(rt, [resolve("256x256x64/8x8/db")], [(512, 512, 512)])
    assert rows[0].status == "failed"
    assert "InvalidConfig" in rows[0].reason and "LDS" in rows[0].reason
    assert rt.compiled == [] and rt.launches == []
