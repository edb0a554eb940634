"""`gemmmodel gpus`: listing, --show, --check, and one-line errors with exit code 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gemmmodel.cli import main
from gemmmodel.spec import DATA_DIR, FIELDS, list_specs

ROOT = Path(__file__).resolve().parents[1]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_gpus_json_lists_every_spec(capsys):
    code, out, err = _run(capsys, "gpus", "--json")
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert [r["name"] for r in rows] == list_specs()
    by_name = {r["name"]: r for r in rows}
    assert by_name["gfx908"]["compute_units"] == 120
    assert by_name["h200"]["fp32_peak_flops"] == pytest.approx(132 * 256 * 1.98e9)
    assert "mi100" in by_name["gfx908"]["aliases"]


def test_gpus_text_has_one_line_per_spec(capsys):
    code, out, _ = _run(capsys, "gpus")
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) == len(list_specs()) + 1
    assert any(line.startswith("gfx908") and "23.1 TFLOP/s" in line for line in lines)


def test_gpus_show_json_has_every_quantity_with_source(capsys):
    code, out, _ = _run(capsys, "gpus", "--show", "h200", "--json")
    shown = json.loads(out)
    assert code == 0 and shown["name"] == "h200" and shown["inherits"] == "sm_90"
    nvidia_fields = [f.name for f in FIELDS if "nvidia" in f.vendors]
    assert sorted(shown["quantities"]) == sorted(nvidia_fields)
    assert all(q["source"] for q in shown["quantities"].values())
    assert shown["quantities"]["clock_hz"]["value"] == 1.98e9
    assert shown["quantities"]["clock_hz"]["unit"] == "Hz"


def test_gpus_show_text_prints_units_sources_and_assumptions(capsys):
    code, out, _ = _run(capsys, "gpus", "--show", "mi50")
    assert code == 0
    assert "clock_hz" in out and "1725 MHz [assumption]" in out and "1746" in out
    assert "lds_bytes_per_cu                 64 KiB" in out or "64 KiB" in out


def test_gpus_check_ok(capsys, tmp_path):
    good = tmp_path / "mine.toml"
    good.write_text('title = "mine"\ninherits = "gfx906"\n'
                    'clock_hz = { value = 1500, unit = "MHz", source = "my board" }\n')
    code, out, err = _run(capsys, "gpus", "--check", str(good))
    assert (code, out.strip(), err) == (0, "ok", "")
    code, out, _ = _run(capsys, "gpus", "--check", str(DATA_DIR / "gfx90a.toml"), "--json")
    assert code == 0 and json.loads(out)["ok"] is True


BAD_FILES = {
    "missing key": ("vendor = \"amd\"\narch = \"x\"\ncompile_target = \"x\"\n", "clock_hz"),
    "wrong type": ('inherits = "gfx906"\nclock_hz = { value = "fast", unit = "MHz", source = "s" }\n',
                   "clock_hz.value"),
    "negative": ('inherits = "gfx906"\nl2_bytes = { value = -4, unit = "MiB", source = "s" }\n',
                 "l2_bytes.value"),
    "unknown unit": ('inherits = "gfx906"\nclock_hz = { value = 1, unit = "Mhz", source = "s" }\n',
                     "clock_hz.unit"),
    "unknown inherits": ('inherits = "gfx1234"\n', "inherits"),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_gpus_check_bad_file_is_one_line_and_exit_2(capsys, tmp_path, kind):
    body, key = BAD_FILES[kind]
    path = tmp_path / "bad.toml"
    path.write_text('title = "bad"\n' + body)
    code, out, err = _run(capsys, "gpus", "--check", str(path))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert f"{key}:" in lines[0] and "bad.toml" in lines[0]


def test_unknown_gpu_is_one_line(capsys):
    code, _, err = _run(capsys, "gpus", "--show", "gtx9999")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "unknown GPU" in err


def test_python_dash_m_reports_a_bad_spec_without_traceback(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('title = "bad"\ninherits = "gfx906"\n'
                    'compute_units = { value = -1, unit = "CUs", source = "s" }\n')
    proc = subprocess.run([sys.executable, "-m", "gemmmodel", "gpus", "--check", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "compute_units.value" in proc.stderr
