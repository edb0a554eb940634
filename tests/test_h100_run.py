"""The first runs on an H100 (device runs H1-H3, 2026-11-28): issue 8's selection on a GPU
the project had never run, ranked before the sweep with the spec alone and with the H200's
calibration carried over; its own calibration measured after (calibration/h100/)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from gemmmodel import CALIBRATION_DIR

H100 = Path(CALIBRATION_DIR) / "h100"


@pytest.fixture(scope="module")
def comparison():
    from gemmmodel.model.selection import selection_comparison

    return selection_comparison("h100")


def test_the_sweep_is_complete_and_from_an_h100():
    rows = list(csv.DictReader((H100 / "selection_sweep.csv").open()))
    assert len(rows) == 9 * 372
    assert {r["gpu"] for r in rows} == {"NVIDIA H100 80GB HBM3"}
    assert not [r for r in rows if r["error"]]
    assert len({r["shape"] for r in rows}) == 9
    run = (H100 / "gpu_run_h1.txt").read_text()
    assert "NVIDIA H100 80GB HBM3" in run and "1980 MHz" in run and "580.159.04" in run


def test_both_rankings_were_recorded_without_an_h100_calibration():
    meta = json.loads((H100 / "selection_predictions.json").read_text())
    assert meta["gpu_spec"] == "h100" and meta["fit_json_sha256"] is None
    assert meta["calib_from"] == "h200" and len(meta["calib_from_fit_json_sha256"]) == 64
    assert "a-priori" in meta["note"]
    for name in ("selection_predictions.csv", "selection_predictions_from_h200.csv"):
        rows = list(csv.DictReader((H100 / name).open()))
        assert len(rows) == 9 * 372


def test_preregistered_scores(comparison):
    from gemmmodel.model.selection import POSTHOC_OWN_LABEL

    pre, moved = comparison["preregistered"], comparison["preregistered_from_h200"]
    assert pre["min_top1_pct_of_best"] == pytest.approx(89.1, abs=0.05)
    assert pre["mean_top1_pct_of_best"] == pytest.approx(93.7, abs=0.05)
    assert pre["min_top3_pct_of_best"] == pytest.approx(91.5, abs=0.05)
    assert pre["time_error"]["mape"] == pytest.approx(0.259, abs=0.0005)
    assert moved["min_top1_pct_of_best"] == pytest.approx(89.5, abs=0.05)
    assert moved["mean_top1_pct_of_best"] == pytest.approx(95.1, abs=0.05)
    assert moved["time_error"]["mape"] == pytest.approx(0.114, abs=0.0005)
    assert not pre["meets_targets"] and not moved["meets_targets"]
    assert comparison["posthoc"]["label"] == POSTHOC_OWN_LABEL
    # with the L1 line term (session 54): 90.25 / 96.21 %, MAPE 8.3 % (90.9 / 96.4 %, 9.8 %
    # before it); 8.1 % with session 56's fetch rule; 97.94 % with the thirty-first change
    # (session 59: the cp.async copies in series); MAPE 7.9 % with the thirty-second
    # (session 60: their exposure, copy_exposure); 97.33 %, MAPE 8.7 % with the thirty-fourth
    # (session 63: register-staged double buffers; the refit moves large shapes toward the
    # cp.async builds, as on the H200's nine shapes)
    assert comparison["posthoc"]["mean_top1_pct_of_best"] == pytest.approx(97.33, abs=0.05)
    # MAPE 8.1 % with the thirty-fifth (session 65: a register-staged double buffer's end
    # tiles), 8.0 % with the thirty-sixth (session 67: its fragment cover)
    assert comparison["posthoc"]["time_error"]["mape"] == pytest.approx(0.080, abs=0.001)
    assert comparison["order"][:3] == ["preregistered", "preregistered_from_h200", "posthoc"]


def test_the_h200s_best_configs_are_the_h100s():
    """Same SM, other HBM: at every issue shape the config measured fastest on the H200
    runs within 0.5 % of the H100's best on the H100, and the median config runs within
    3 % of its H200 time."""
    from gemmmodel.model.selection import sweep_measured

    h100, h200 = sweep_measured(H100), sweep_measured(Path(CALIBRATION_DIR) / "h200")
    for shape in {s for _, s in h100}:
        here = {n: t for (n, s), t in h100.items() if s == shape}
        there = {n: t for (n, s), t in h200.items() if s == shape}
        assert min(here.values()) / here[min(there, key=there.get)] > 0.995
        ratios = sorted(here[n] / there[n] for n in here if n in there)
        assert 0.97 < ratios[len(ratios) // 2] < 1.03


def test_question_8_on_the_h100():
    """64x64x16/4x4 loses to 128x128x8/8x8 on the H100 as on the H200 (plain template)."""
    from gemmmodel.model.selection import sweep_measured

    t = sweep_measured(H100)
    shape = (4096, 4096, 4096, 1)
    assert t[("64x64x16/4x4", shape)] / t[("128x128x8/8x8", shape)] == pytest.approx(1.31,
                                                                                     abs=0.02)


def test_h100_summary_matches_its_microbenchmarks(tmp_path):
    from gemmmodel.calibrate.summary import write_summary
    from gemmmodel.spec import load_spec

    for name in ("micro.csv", "kernels.csv", "template.csv", "batched.csv", "provenance.json"):
        (tmp_path / name).write_bytes((H100 / name).read_bytes())
    fresh = json.loads(write_summary(tmp_path, load_spec("h100")).read_text())["headline"]
    committed = json.loads((H100 / "summary.json").read_text())["headline"]
    for key in ("dram_read_Bps", "l2_read_Bps", "lds_bytes_per_clk_per_sm",
                "fma_peak_flop_per_s", "latency_l2_cycles", "launch_overhead_s"):
        assert fresh[key]["measured"] == pytest.approx(committed[key]["measured"])
    assert committed["dram_read_Bps"]["measured"] == pytest.approx(3.0e12, rel=0.01)
    assert committed["latency_l2_cycles"]["measured"] == pytest.approx(281, abs=1)


def test_validate_h100_and_the_h200_fit_carried_over():
    from gemmmodel.model.validate import validate_gpu

    res = validate_gpu("h100")
    assert res["calibration"] == "h100" and res["n"] == 816
    # with the L1 line term (session 54, the H100's own table cp_async_rows.json; before:
    # 8.08 %, 0.8436: 6.18 %, 0.8860), then the edge build's NVRTC registers and the last
    # edge block of a single buffer (session 55: 5.96 %, 0.8877), then no fetch floor from
    # three warps per scheduler (session 56: 5.83 %, 0.8918), then the cp.async copies in
    # series (session 59: 6.03 %, 0.8896), then their exposure (session 60: 5.89 %, 0.8915),
    # then the edge-block pile-up (session 62: 5.77 %, 0.8917), then the register-staged
    # double buffers (session 63: 5.69 %, 0.8946), then their fragment cover (session 67:
    # 5.66 %, 0.8952), then a cp.async double buffer's fragment chain (session 72)
    assert res["mape"] == pytest.approx(0.0562, abs=0.0005) and res["mape"] <= 0.10
    assert res["kendall_tau"] == pytest.approx(0.8978, abs=0.0005)
    assert res["kendall_tau"] < 0.9          # issue 6's tau target is not met here either
    (moved,) = res["fit_transfer"]
    assert moved["from"] == "h200" and moved["n"] == 816
    # 0.0592 before session 62, 0.0582 / 0.8924 before session 63, 0.0578 / 0.8960 before
    # session 67, 0.0578 / 0.8967 before session 72
    assert moved["mape"] == pytest.approx(0.0570, abs=0.0005)
    assert moved["kendall_tau"] == pytest.approx(0.8991, abs=0.0005)
    # the two fits (each on its own GPU's 816 samples) are close: SM properties
    h100 = json.loads((H100 / "fit.json").read_text())["params"]
    h200 = json.loads((Path(CALIBRATION_DIR) / "h200" / "fit.json").read_text())["params"]
    for key in ("lds_efficiency", "issue_efficiency", "mem_instr_clk"):
        assert h100[key] == pytest.approx(h200[key], rel=0.05)
    # the constant cp.async wait sat near its 0.1-clock floor on both from the line term
    # (session 54): 0.10 and 2.2 clocks (session 56) per block tile iteration, against ~1000
    # of a tile; with the copies' exposure (session 60) 10.4 and 9.3: what the exposure
    # takes off the copies comes back in part as a wait per iteration; with the edge-block
    # pile-up (session 62) 11.7 and 10.0; with the register-staged double buffers
    # (session 63) 11.6 and 9.0; with the fragment chain (session 72) 11.6 and 9.3
    assert h100["async_wait_clk"] < 15 and h200["async_wait_clk"] < 15


def test_the_h100_fetch_table_is_the_h200s():
    """Run H5: the straight-line FFMA loop's issue rate per code size and warps per
    scheduler on the H100 is within 1.5 % of the H200's (run AC) at all 114 points."""
    a = json.loads((H100 / "icache.json").read_text())
    b = json.loads((Path(CALIBRATION_DIR) / "h200" / "icache.json").read_text())
    assert a["gpu"] == "NVIDIA H100 80GB HBM3" and len(a["rows"]) == 114
    there = {(r["body_ffma"], r["warps_per_scheduler"]): r["fma_rate_per_scheduler"]
             for r in b["rows"]}
    for r in a["rows"]:
        ref = there[(r["body_ffma"], r["warps_per_scheduler"])]
        assert r["fma_rate_per_scheduler"] == pytest.approx(ref, rel=0.015)
    # past the instruction cache one warp per scheduler issues at ~0.17 (measured 0.170)
    big = [r for r in a["rows"] if r["body_ffma"] == 16384 and r["warps_per_scheduler"] == 1]
    assert big[0]["fma_rate_per_scheduler"] == pytest.approx(0.17, abs=0.01)


def test_git_commit_prefers_the_device_scripts_commit(monkeypatch):
    from gemmmodel.calibrate.provenance import git_commit

    monkeypatch.setenv("GEMMMODEL_COMMIT", "4083994")
    assert git_commit() == "4083994"
    monkeypatch.setenv("GEMMMODEL_COMMIT", "unknown")   # the scripts' placeholder: git's
    assert git_commit() != "4083994" and git_commit()


def test_selection_summary_of_the_h100_claims_no_fit():
    """The ranking was recorded with no fit (fit_json_sha256 null), so the later fit.json's
    template training set does not make it in-sample; the folder is found by the spec name."""
    from gemmmodel.predict import selection_summary

    res = selection_summary("sm_90")
    assert res["folder"].endswith("h100") and res["training_set"] == []
    assert not res["in_sample"] and len(res["shapes"]) >= 4


def test_the_h100_heldout_round(comparison):
    """Run H4: six shapes no GPU had swept, three rankings recorded before the sweep."""
    rows = list(csv.DictReader((H100 / "selection_sweep_heldout.csv").open()))
    assert len(rows) == 6 * 372 and not [r for r in rows if r["error"]]
    assert {r["gpu"] for r in rows} == {"NVIDIA H100 80GB HBM3"}
    meta = json.loads((H100 / "selection_predictions_heldout.json").read_text())
    assert meta["fit_json_sha256"] and meta["neighbours_from"] == "h200"
    own, moved = comparison["heldout"], comparison["heldout_from_h200"]
    nb = comparison["heldout_neighbours"]
    assert own["min_top1_pct_of_best"] == pytest.approx(95.2, abs=0.05)   # >= 95 everywhere
    assert own["mean_top1_pct_of_best"] == pytest.approx(96.8, abs=0.05)
    assert own["min_top3_pct_of_best"] == pytest.approx(95.2, abs=0.05)   # top3 misses 98
    assert not own["meets_targets"]
    assert moved["min_top1_pct_of_best"] == pytest.approx(92.6, abs=0.05)
    assert nb["min_top1_pct_of_best"] == pytest.approx(66.3, abs=0.05)
    assert nb["time_error"]["mape"] == pytest.approx(0.051, abs=0.0005)
    assert own["time_error"]["mape"] == pytest.approx(0.094, abs=0.0005)
    assert "neighbours-from h200" in nb["label"]


@pytest.mark.parametrize(("round_", "run", "commit", "own", "own_mape", "moved", "moved_mape",
                          "nb", "nb_mape"), [
    # run H7: ranked at 44ab95a (session 54's L1 line term). The model's picks: 76.9 % at
    # 192x96x1024x28, 80.8 % at 2304x2304x9216 (the cp.async 64x128x16/8x8/p4/db over the
    # measured best, the single 128x64x16/8x8/p4); the H200's neighbours on the H100 model,
    # now that both read the same inputs, 93.5 / 96.8 %
    ("heldout2", "h7", "44ab95a", (76.95, 89.26, 93.17, 95.30), 0.0881,
     (76.95, 89.26, 93.17, 95.30), 0.0844, (93.48, 96.82, 93.48, 97.30), 0.0581),
    # run H11: the twenty-eighth change (session 55). The H200's neighbours on the H100
    # model meet issue 8's targets at all six shapes (top1 >= 95, top3 >= 98); the model
    # alone picks the cp.async 64x64x32/8x4/p4/db at 5120x2560x2048 (83.9 %; best the
    # single 128x64x16/8x8/p4, the neighbours' pick)
    ("heldout3", "h11", "c26af8b", (83.94, 93.60, 88.47, 95.21), 0.0852,
     (83.94, 93.60, 88.47, 95.21), 0.0815, (96.14, 98.98, 100.0, 100.0), 0.0507),
    # run H12: the same model (recorded at e36df44); 5000x5000x1200 the worst for both
    ("heldout4", "h12", "e36df44", (91.58, 96.52, 94.25, 98.19), 0.0849,
     (91.58, 96.52, 94.25, 98.54), 0.0802, (92.88, 97.21, 97.38, 99.08), 0.0602),
])
def test_the_h100_later_heldout_rounds(comparison, round_, run, commit, own, own_mape, moved,
                                       moved_mape, nb, nb_mape):
    """Runs H7, H11, H12: six shapes no GPU had swept per round, three rankings recorded
    before the sweep: the H100's own fit, the H200's carried over, the H200's neighbours
    on the H100 model. Only round 3's neighbours meet both targets."""
    rows = list(csv.DictReader((H100 / f"selection_sweep_{round_}.csv").open()))
    assert len(rows) == 6 * 372 and not [r for r in rows if r["error"]]
    assert {r["gpu"] for r in rows} == {"NVIDIA H100 80GB HBM3"}
    assert "1980 MHz" in (H100 / f"gpu_run_{run}.txt").read_text()
    meta = json.loads((H100 / f"selection_predictions_{round_}.json").read_text())
    assert meta["commit_before_recording"].startswith(commit)
    assert meta["neighbours_from"] == "h200" and meta["calib_from"] == "h200"
    keys = ("min_top1_pct_of_best", "mean_top1_pct_of_best", "min_top3_pct_of_best",
            "mean_top3_pct_of_best")
    for suffix, want, mape in (("", own, own_mape), ("_from_h200", moved, moved_mape),
                               ("_neighbours", nb, nb_mape)):
        part = comparison[round_ + suffix]
        assert [part[k] for k in keys] == pytest.approx(want, abs=0.05)
        assert part["time_error"]["mape"] == pytest.approx(mape, abs=0.0005)
        assert part["meets_targets"] == (round_ + suffix == "heldout3_neighbours")


def test_the_h100_reads_its_own_nvrtc_registers_for_batched_builds():
    """Run H6: NVRTC's registers of every batched and bounds-checked build on the H100,
    equal to the H200's run W. Before it the H100 model took nvcc's table for batched
    launches (32x32x32/4x4/p4/db: 168 registers, six blocks per SM, against NVRTC's 245 and
    four), which broke the H200's neighbour correction at 96x160x512x40 (session 53)."""
    from gemmmodel.compile.table import device_build_registers, template_facts
    from gemmmodel.spec import load_spec
    from gemmmodel.template import parse_name

    h100 = device_build_registers("sm_90")
    assert len(h100) == 744 and h100 == device_build_registers("h200")
    facts = template_facts(parse_name("32x32x32/4x4/p4/db"), load_spec("h100"), None,
                           (96, 160, 512, 40))
    assert facts["regs"] == 245 and facts["regs_source"] == "batched entry (device)"


def test_the_h100_inner_loop_is_the_h200s():
    """Run N on the H100 (session 55): the template's compute() loop alone at the same 92
    (config, warps per scheduler) points as the H200's run N, within 0.2 % of it."""
    a = json.loads((H100 / "inner_loop.json").read_text())
    b = json.loads((Path(CALIBRATION_DIR) / "h200" / "inner_loop.json").read_text())
    assert a["gpu"] == "NVIDIA H100 80GB HBM3" and a["clocks"]["sm_clock_hz"] == 1.98e9
    rate = {(r["config"], r["warps_per_scheduler"]): r["fma_rate_per_scheduler"]
            for r in b["rows"]}
    assert len(a["rows"]) == len(rate) == 92
    for r in a["rows"]:
        assert r["fma_rate_per_scheduler"] == pytest.approx(
            rate[(r["config"], r["warps_per_scheduler"])], rel=0.005)
