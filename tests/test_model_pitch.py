"""gemmmodel.model.pitch: the A pitch factor on a cp.async build's LDS pipe (run AU)."""

import dataclasses
import math

import pandas as pd
import pytest

from gemmmodel import CALIBRATION_DIR
from gemmmodel.compile.table import template_facts
from gemmmodel.model import assemble, load_calib
from gemmmodel.model.kernel import describe
from gemmmodel.model.pitch import is_power_of_two, load_pitch_table, pitch_term
from gemmmodel.spec import load_spec
from gemmmodel.template import parse_name

CP = "64x64x16/8x8/db"        # cp.async double buffer at tile multiples (unpadded)
REG = "64x64x16/8x8"          # the single-buffered (register-staged) build of the same tile


def _write(tmp_path, rows):
    pd.DataFrame(rows, columns=["gpu", "shape", "config", "median_s", "error"]).to_csv(
        tmp_path / "kpitch_sweep.csv", index=False)
    return tmp_path


def test_hand_made_sweep_gives_the_measured_slowdown(tmp_path):
    # per unit of K, the register build gets 2 % faster from 2048 to 2304 and the cp.async
    # one 8 % slower: c = ln(1.08) - ln(0.98); at 4096 both keep their 2048 rate
    k2, k3 = 2048, 2304
    rows = [("g", f"2048x2048x{k2}", CP, 1.0, None), ("g", f"2048x2048x{k2}", REG, 2.0, None),
            ("g", f"2048x2048x{k3}", CP, 1.08 * k3 / k2, None),
            ("g", f"2048x2048x{k3}", REG, 2.0 * 0.98 * k3 / k2, None),
            ("g", "2048x2048x4096", CP, 2.0, None), ("g", "2048x2048x4096", REG, 4.0, None)]
    table = load_pitch_table(_write(tmp_path, rows))
    assert len(table) == 1
    bk, padded, c = table[0]
    assert (bk, padded) == (16, False)
    assert c == pytest.approx(math.log(1.08) - math.log(0.98))


def test_no_file_or_no_off_power_k_gives_no_table(tmp_path):
    assert load_pitch_table(tmp_path) == ()
    rows = [("g", "2048x2048x2048", CP, 1.0, None), ("g", "2048x2048x2048", REG, 2.0, None),
            ("g", "2048x2048x4096", CP, 2.0, None), ("g", "2048x2048x4096", REG, 4.0, None)]
    assert load_pitch_table(_write(tmp_path, rows)) == ()


def test_committed_run_au_table():
    table = {(bk, p): c for bk, p, c in load_pitch_table(CALIBRATION_DIR / "h200")}
    assert set(table) == {(8, False), (8, True), (16, False), (16, True), (32, False), (32, True)}
    # larger depth, larger cost; padding lowers it at every depth
    assert table[(32, False)] > table[(16, False)] > 0 and table[(32, True)] > table[(16, True)]
    assert all(table[(bk, True)] < table[(bk, False)] for bk in (8, 16, 32))
    assert 0.12 < table[(32, False)] < 0.22 and 0.05 < table[(16, False)] < 0.11
    assert all(abs(c) < 0.25 for c in table.values())
    assert load_calib("h200").pitch == tuple(sorted((bk, p, c) for (bk, p), c in table.items()))


def test_term_applies_to_cp_async_builds_off_a_power_of_two():
    table = ((16, False, 0.1), (16, True, 0.03))
    desc = describe(parse_name(CP).params(32))
    t = pitch_term(desc, (2048, 2048, 2304, 1), table, cp_async=True)
    assert t.value == pytest.approx(math.exp(0.1)) and t.inputs["K"] == 2304
    padded = describe(parse_name("64x64x16/8x8/p4/db").params(32))
    assert pitch_term(padded, (2048, 2048, 2304), table, True).value == pytest.approx(
        math.exp(0.03))
    assert pitch_term(desc, (2048, 2048, 4096), table, True) is None      # power of two
    assert pitch_term(desc, (2048, 2048, 2304), table, False) is None     # register-staged
    assert pitch_term(desc, (2048, 2048, 2304), (), True) is None         # no table
    bk8 = describe(parse_name("64x64x8/8x8/db").params(32))
    assert pitch_term(bk8, (2048, 2048, 2304), table, True) is None       # depth not measured
    assert is_power_of_two(4096) and not is_power_of_two(12288)


@pytest.mark.parametrize("name,k,applies", [("128x64x32/8x4/db", 2304, True),
                                            ("128x64x32/8x4/db", 4096, False),
                                            ("128x64x32/8x4", 2304, False)])
def test_assembled_lds_pipe_is_scaled(name, k, applies):
    spec, calib = load_spec("h200"), load_calib("h200")
    shape = (2048, 2048, k, 1)
    cfg = parse_name(name)
    facts = template_facts(cfg, spec, None, shape)
    with_ = assemble(cfg.params(32), facts, spec, shape, calib)
    without = assemble(cfg.params(32), facts, spec, shape, dataclasses.replace(calib, pitch=()))
    factor = with_.lds_s / without.lds_s
    table = {(bk, p): c for bk, p, c in calib.pitch}
    expected = math.exp(table[(32, False)]) if applies else 1.0
    assert factor == pytest.approx(expected)
    assert with_.issue_s == pytest.approx(without.issue_s)
    assert ("a_pitch_factor" in {t.name for t in with_.terms["t_lds_s"].children}) == applies


def test_the_factor_holds_at_another_m_and_n(tmp_path):
    # run AU MODE=check (at b2e53ab): the same sweep at 4096x1024xK, K = 2048, 2304, 2816,
    # 4096; pitch.py never reads it. The factor read from it matches the model's table
    # (2048x2048xK) within 0.015 log for every depth and padding.
    check = (CALIBRATION_DIR / "h200" / "kpitch_check_4096x1024.csv").read_text()
    (tmp_path / "kpitch_sweep.csv").write_text(check)
    there = {(bk, p): c for bk, p, c in load_pitch_table(tmp_path)}
    here = {(bk, p): c for bk, p, c in load_pitch_table(CALIBRATION_DIR / "h200")}
    assert set(there) == set(here)
    assert all(abs(there[k] - here[k]) < 0.015 for k in here), (there, here)
    assert "commit b2e53ab mode check" in (CALIBRATION_DIR / "h200" / "gpu_au.txt").read_text()
