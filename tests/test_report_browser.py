"""`gemmmodel report`: the page is self-contained, and a headless Chromium loads it with every
image decoded and no console error. Without Chromium the browser test skips, except under
CI=true, where it fails (CI installs chromium)."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from gemmmodel.cli import main


@pytest.fixture(scope="module")
def report_path(tmp_path_factory):
    from gemmmodel.report import build_report

    return build_report(["mi100-1472"], tmp_path_factory.mktemp("report"))


def test_page_is_self_contained(report_path):
    text = report_path.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r'(src|href)="(https?:|//|file:)', text)
    images = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([^"]+)"', text)
    alts = [a for a, _ in images]
    for wanted in ("roofline", "predicted vs measured", "term stacks", "lineage",
                   "occupancy curves", "bank conflicts"):
        assert wanted in alts
    for _, data in images:
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    # every catalogue kernel has a row in the table
    from gemmmodel.catalogue import load_catalogue

    for kid in load_catalogue():
        assert f"<td class=\"l\">{kid}</td>" in text


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def test_report_loads_in_headless_chromium(report_path):
    exe = _chromium()
    if exe is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true and chromium is missing: apt-get install -y chromium")
        pytest.skip("chromium not installed (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [exe, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", f"--user-data-dir={profile}", "--enable-logging=stderr",
             "--v=0", "--virtual-time-budget=5000", "--dump-dom",
             report_path.resolve().as_uri()],
            capture_output=True, text=True, timeout=120, check=False)
    dom, log = proc.stdout, proc.stderr
    total = re.search(r'data-images-total="(\d+)"', dom)
    loaded = re.search(r'data-images-loaded="(\d+)"', dom)
    assert total and loaded, f"the page's load script did not run; stderr: {log[-2000:]}"
    assert int(total.group(1)) >= 6
    assert loaded.group(1) == total.group(1)
    console = [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, "\n".join(console)


def test_report_cli_writes_the_file(tmp_path, capsys):
    assert main(["report", "--gpu", "gfx906", "-o", str(tmp_path), "--json"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "report-gfx906.html").is_file() and "report-gfx906.html" in out


def test_report_to_a_file_is_a_one_line_error(tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("")
    assert main(["report", "--gpu", "gfx906", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a folder" in err


def test_report_data_reads_calibration_sweeps(tmp_path):
    """Calibration rows (catalogue kernels, template configs, vendor BLAS) become measured
    points, measured times in the kernel table and measured speedups on lineage edges."""
    from gemmmodel.calibrate.store import ResultStore, params_text
    from gemmmodel.report.data import gpu_data

    rows = []
    for name, params, t in (("kernel", {"kernel": "7", "M": 4096, "N": 4096, "K": 4096}, 6e-3),
                            ("kernel", {"kernel": "7.3", "M": 4096, "N": 4096, "K": 4096}, 4e-3),
                            ("kernel", {"kernel": "7.4", "M": 4096, "N": 4096, "K": 4096}, 3e-3),
                            ("template", {"config": "128x128x8/8x8", "M": 4096, "N": 4096,
                                          "K": 4096}, 5e-3),
                            ("cublas", {"M": 4096, "N": 4096, "K": 4096}, 2.7e-3)):
        suite = "template" if name == "template" else "kernels"
        rows.append({"provenance_id": "t", "suite": suite, "name": name,
                     "params": params_text(params), "status": "ok", "time_s": t,
                     "quantity": "flop_per_s", "value": 1.0, "check_passed": True})
    ResultStore(tmp_path / "h200").append(rows)
    data = gpu_data("h200", root=tmp_path)
    assert data["kernels"]["7.4"]["measured_s"] == 3e-3
    assert data["kernels"]["7"]["measured_s"] == 6e-3      # "7" must not become "7.0"
    edge = next(e for e in data["edges"] if (e["parent"], e["child"]) == ("7.3", "7.4"))
    assert edge["measured_speedup"] == pytest.approx(4 / 3)
    kinds = sorted(p["kind"] for p in data["points"])     # vendor rows are not plotted
    assert kinds == ["catalogue", "catalogue", "catalogue", "template"]
