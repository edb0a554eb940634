"""The inner-loop microbenchmark (kernels/micro/inner_loop.cu, run N) and its use in explain
(gemmmodel.model.inner): the table, the interpolation, the t_inner_s term against a hand
computation from the prediction's own tree, the split of a measured time, the loop's SASS
(the fragment reads stay inside the timed rep loop), and explain's lookup of the template
sweeps."""

import json
import re
import subprocess
import sys

import pytest

from gemmmodel import KERNELS_DIR, PROJECT_DIR
from gemmmodel.explain import explain_kernel
from gemmmodel.measured import measured_times
from gemmmodel.model import load_calib
from gemmmodel.model.inner import (
    inner_loop_rate,
    inner_loop_time,
    load_inner_loop,
    outside_share,
)
from gemmmodel.spec import load_spec

TABLE = ((8, 8, 8, 1.0, 0.6), (8, 8, 8, 2.0, 0.8), (8, 8, 8, 4.0, 0.82), (4, 4, 16, 1.0, 0.5))


def test_load_reads_run_n_rows(tmp_path):
    rows = [{"tm": 8, "tn": 4, "bk": 16, "warps_per_scheduler": 2.0,
             "fma_rate_per_scheduler": 0.7},
            {"tm": 8, "tn": 4, "bk": 16, "warps_per_scheduler": 1.0,
             "fma_rate_per_scheduler": 0.55}]
    (tmp_path / "inner_loop.json").write_text(json.dumps({"rows": rows}))
    assert load_inner_loop(tmp_path) == ((8, 4, 16, 1.0, 0.55), (8, 4, 16, 2.0, 0.7))
    assert load_inner_loop(tmp_path / "nowhere") == ()


def test_rate_interpolates_in_w_and_holds_the_ends():
    assert inner_loop_rate(TABLE, 8, 8, 8, 1.5) == pytest.approx(0.7)
    assert inner_loop_rate(TABLE, 8, 8, 8, 3.0) == pytest.approx(0.81)
    assert inner_loop_rate(TABLE, 8, 8, 8, 0.5) == pytest.approx(0.6)
    assert inner_loop_rate(TABLE, 8, 8, 8, 9.0) == pytest.approx(0.82)
    assert inner_loop_rate(TABLE, 8, 8, 16, 1.0) is None      # no such loop measured


def test_committed_h200_table_is_physical():
    """Run N on the H200: every rate below the FP32 pipe's peak, more warps never much
    slower, a lone warp well below the saturated rate (the lone-warp question)."""
    table = load_calib("h200").inner_loop
    assert len(table) >= 80
    assert all(0.2 < r[4] <= 1.0 for r in table)
    for tile in {r[:3] for r in table}:
        rates = [r[4] for r in table if r[:3] == tile]
        assert max(rates) >= 0.6
        assert rates[0] < 0.85 * max(rates) or tile[:2] == (4, 4)


def _find(tree: dict, name: str) -> dict:
    if tree["name"] == name:
        return tree
    for child in tree["children"]:
        found = _find(child, name)
        if found:
            return found
    return {}


def _h200_template(name, size):
    return explain_kernel(name, "h200", size, allow_compile=False)


def test_inner_loop_term_matches_the_tree_by_hand():
    res = _h200_template("64x128x16/8x8/p4", "4096x4096x4096")
    inner = res["inner_loop"]
    i = inner["term"]["inputs"]
    # n_fma = the busiest SIMD's wave iterations x 1024 FMAs (8x8 tile, BK = 16)
    assert i["n_fma"] == pytest.approx(i["wave_iterations"] * 8 * 8 * 16)
    issue = _find(res["prediction"]["tree"], "t_issue_s")["children"][0]
    assert issue["inputs"]["wave_iterations_per_simd"] == i["wave_iterations"]
    table = load_calib("h200").inner_loop
    eta = inner_loop_rate(table, 8, 8, 16, i["w"])
    assert i["eta"] == pytest.approx(eta)
    assert inner["t_inner_s"] == pytest.approx(i["n_fma"] / (eta * i["clock_hz"]))
    # a floor: below the prediction and below the measured time
    assert inner["t_inner_s"] < res["prediction"]["time_s"]
    assert inner["measured"]["outside_s"] > 0


def test_outside_share_arithmetic():
    from gemmmodel.model.terms import Term

    term = Term("t_inner_loop_s", 1e-3, "s", "", {"clock_hz": 2e9, "w": 2.0,
                                                   "wave_iterations": 1000.0})
    part = outside_share(term, 1.5e-3)
    assert part["outside_s"] == pytest.approx(0.5e-3)
    assert part["outside_fraction"] == pytest.approx(1 / 3)
    # 0.5 ms at 2 GHz = 1e6 clk over 1000 / 2 tile iterations of one warp
    assert part["outside_clk_per_tile_iteration"] == pytest.approx(2000.0)


def test_lone_warp_miss_is_outside_the_inner_loop():
    """1000^3, 64x128x8/8x8/p4/db (bounds-checked, one warp per scheduler): explain finds
    the held-out sweep's time and shows that most of it is spent outside the inner loop;
    the model missed that part (256 clk per tile iteration against 1432) until instruction
    fetch and the critical edge blocks (twenty-third and twenty-fourth changes)."""
    res = _h200_template("64x128x8/8x8/p4/db", "1000x1000x1000")
    assert [m["source"] for m in res["measured"]] == [
        "calibration/h200/selection_sweep_heldout9.csv"]
    assert res["measured"][0]["time_s"] == pytest.approx(1.442e-4, rel=0.01)
    inner = res["inner_loop"]
    assert inner["term"]["inputs"]["w"] == pytest.approx(1.0)
    meas, pred = inner["measured"], inner["predicted"]
    # the model allowed 256 clk per tile iteration outside the inner loop before the
    # twenty-third change (instruction fetch: the edge build's 58 KiB of code at one warp per
    # scheduler issues at 0.41, run AC), 922 with it, 1747 with the twenty-fourth (the last
    # round lasts as long as its edge blocks, run AB), 1807 after the thirty-first change's
    # refit (session 59; issue_efficiency 0.84 -> 0.92, mem_instr_clk 2.9 -> 3.6); measured 1432
    assert pred["outside_clk_per_tile_iteration"] == pytest.approx(
        meas["outside_clk_per_tile_iteration"], rel=0.30)
    assert meas["outside_fraction"] > 0.5


def test_no_inner_loop_split_for_catalogue_kernels_or_without_a_table():
    from gemmmodel.model.terms import Term

    # a catalogue kernel's loop is not the template's compute(); gfx908 has no run N table
    assert explain_kernel("7.4", "h200", None, allow_compile=False)["inner_loop"] is None
    assert explain_kernel("64x128x16/8x8/p4", "gfx908", None,
                          allow_compile=False)["inner_loop"] is None
    params = {"TM": 8, "TN": 8, "BK": 16, "vector_width": 4}
    assert inner_loop_time((), params, Term("x", 0, "s", "")) is None
    assert inner_loop_time(TABLE, {**params, "vector_width": 1}, Term("x", 0, "s", "")) is None
    assert _h200_template("64x128x16/8x8/p4", "4096x4096x4096")["inner_loop"] is not None


def test_report_measurements_leave_the_sweeps_out():
    spec = load_spec("h200")
    plain = measured_times(spec)
    full = measured_times(spec, sweeps=True)
    assert not any("selection_sweep" in m.source for m in plain)
    assert len(full) > len(plain) + 20000


def test_explain_text_shows_the_split():
    out = subprocess.run([sys.executable, "-m", "gemmmodel", "explain", "--kernel",
                          "64x128x8/8x8/p4/db", "--gpu", "h200", "--size", "1000x1000x1000",
                          "--no-compile"], capture_output=True, text=True, cwd=PROJECT_DIR,
                         timeout=300, check=True).stdout
    assert "selection_sweep_heldout9.csv" in out
    assert re.search(r"inner loop alone .* 0\.6\d\d warp FMA/clk\)", out)
    assert re.search(r"measured 0\.144\d ms: .* outside the inner loop, \d+ clk", out)


def _defines(name):
    from gemmmodel.template import parse_name

    return parse_name(name).defines()


@pytest.mark.compiler
@pytest.mark.parametrize("name", ["64x128x16/8x8/p4", "64x64x8/8x4/p4", "32x32x8/4x4/p4"])
def test_rep_loop_keeps_its_fragment_reads(require_tool, tmp_path, name):
    """The timed loop re-reads the fragments every rep (the memory clobber): one BK-deep
    compute() worth of LDS.128 and FFMA in the program, no global or local memory."""
    from gemmmodel.compile import tools

    require_tool("nvcc")
    if not tools.has_tool("nvdisasm"):
        pytest.skip(tools.INSTALL_HINTS["nvdisasm"])
    cubin = tmp_path / "inner.cubin"
    cmd = ["nvcc", "-arch=sm_90", "-cubin", "-o", str(cubin), "-I", str(KERNELS_DIR),
           str(KERNELS_DIR / "micro" / "inner_loop.cu")]
    cmd += [f"-D{k}={v}" for k, v in _defines(name).items()]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    sass = subprocess.run([str(tools.find_tool("nvdisasm")), "-c", str(cubin)],
                          capture_output=True, text=True, timeout=120, check=True).stdout
    body = sass.split("\n.text.mb_inner_loop:")[1].split("\n.text.")[0]
    d = _defines(name)
    per_rep_lds = (d["TM"] // 4 + d["TN"] // 4) * d["BK"]
    assert len(re.findall(r"\bLDS\.128\b", body)) == per_rep_lds
    assert len(re.findall(r"\bFFMA\b", body)) >= d["TM"] * d["TN"] * d["BK"]
    assert not re.search(r"\b(LDG|LDL|STL)\b", body)


def test_compare_shows_each_configs_split():
    """compare: the same split per template config; at 4096^3 the 8x8/BK16 configs share
    one inner loop (within 1 %: 3 or 4 warps per scheduler) and the measured outside time
    orders them (64x256/db has the least)."""
    from gemmmodel.explain import compare
    from gemmmodel.explain_text import render_compare

    names = ["64x256x16/8x8/p4", "64x256x16/8x8/p4/db", "128x64x16/8x8/p4/db"]
    res = compare(names, "h200", "4096x4096x4096", allow_compile=False)
    inner = {it["name"]: it["inner_loop"] for it in res["items"]}
    times = [v["t_inner_s"] for v in inner.values()]
    assert max(times) < 1.01 * min(times)
    outside = {n: v["measured"]["outside_clk_per_tile_iteration"] for n, v in inner.items()}
    assert min(outside, key=outside.get) == "64x256x16/8x8/p4/db"
    assert max(outside, key=outside.get) == "128x64x16/8x8/p4/db"
    text = render_compare(res)
    assert "outside the inner loop (clk per tile iteration" in text
    assert re.search(r"64x256x16/8x8/p4/db +inner loop [\d.]+ ms; outside: measured \d+", text)
