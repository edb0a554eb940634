"""`gemmmodel predict`: ranking, reasons, speed, the register-estimate record and the
selection score against a sweep."""

from __future__ import annotations

import itertools
import json
import math
import time
from itertools import product

import pytest

from gemmmodel.cli import main
from gemmmodel.predict import rank


@pytest.fixture(scope="module")
def ranked():
    return rank("gfx906", "4096x4096x4096", top=5, jobs=1)


def test_rank_is_sorted_and_explained(ranked):
    from gemmmodel.spec import load_spec
    from gemmmodel.template import search_space, validate

    spec = load_spec("gfx906")
    assert ranked["configs"] == len(search_space(spec))
    top = ranked["top"]
    assert len(top) == 5
    times = [t["predicted_s"] for t in top]
    assert times == sorted(times) and len(set(times)) == 5      # ties are grouped
    for item in top:
        assert not validate(__import__("gemmmodel.template", fromlist=["parse_name"])
                            .parse_name(item["name"]), spec)
        assert item["bottleneck"] and item["regs"] > 0
        assert item["flops"] == pytest.approx(2 * 4096**3 / item["predicted_s"])
    for here, nxt in itertools.pairwise(top):
        assert here["versus_next"]["slower"] == nxt["name"]
        assert here["versus_next"]["ratio"] == pytest.approx(nxt["predicted_s"]
                                                             / here["predicted_s"])


def test_rank_agrees_with_predict_kernel(ranked):
    from gemmmodel.model import predict_kernel
    from gemmmodel.spec import load_spec
    from gemmmodel.template import parse_name

    spec = load_spec("gfx906")
    for item in ranked["top"][:3] + [ranked["top"][-1]]:
        cfg = parse_name(item["name"])
        t = predict_kernel(cfg.params(64), None, spec, (4096, 4096, 4096)).time_s
        assert item["predicted_s"] == pytest.approx(t, rel=1e-9)
        for twin in item["equivalent"]:
            t2 = predict_kernel(parse_name(twin).params(64), None, spec,
                                (4096, 4096, 4096)).time_s
            assert t2 == pytest.approx(t, rel=1e-6)


def test_nothing_better_than_the_top(ranked):
    """Exhaustive check: no config of the space is predicted faster than rank 1."""
    from gemmmodel.model import predict_kernel
    from gemmmodel.spec import load_spec
    from gemmmodel.template import search_space

    spec = load_spec("gfx906")
    best = ranked["top"][0]["predicted_s"]
    sample = search_space(spec)[::7]
    times = [predict_kernel(c.params(64), None, spec, (4096, 4096, 4096)).time_s
             for c in sample]
    assert min(times) >= best * (1 - 1e-9)


def _wide_space(spec):
    """>= 1000 valid configs: the search space grid widened by explicit warp tiles, a
    third padding and 16-wide thread tiles (all valid names of the template)."""
    from gemmmodel.template import TileConfig, validate

    out = []
    for bm, bn, bk, (tm, tn), pad, db in product(
            (32, 64, 128, 256), (32, 64, 128, 256), (8, 16, 32),
            ((4, 4), (4, 8), (8, 4), (8, 8), (8, 16), (16, 8)), (0, 4, 8), (False, True)):
        for wn_lanes in (0, 4, 8, 16):
            wave = int(spec.wave_size)
            wm, wn = (0, 0) if not wn_lanes else ((wave // wn_lanes) * tm, wn_lanes * tn)
            cfg = TileConfig(bm, bn, bk, tm, tn, wm=wm, wn=wn, pad=pad, dbuf=db)
            if not validate(cfg, spec):
                out.append(cfg)
    return out


def test_speed_benchmark_prints_configs_per_second(capsys):
    """Benchmark (prints the figure; not a timing assert): configs ranked per second on the
    estimator path, cold (fresh caches are not guaranteed between tests)."""
    from gemmmodel.predict import _evaluate
    from gemmmodel.spec import load_spec

    spec = load_spec("h200")
    configs = _wide_space(spec)
    assert len(configs) >= 1000
    t0 = time.perf_counter()
    times, sources = _evaluate(configs, spec, (4096, 4096, 4096, 1), None, {}, {}, 1)
    elapsed = time.perf_counter() - t0
    assert sum(1 for t in times if not math.isnan(t)) >= 1000
    assert set(sources) <= {"estimate", "plain table"} | {
        s for s in sources if s.startswith("rejected")}
    with capsys.disabled():
        print(f"\n[predict benchmark] {len(configs)} configs on h200 in {elapsed:.2f} s "
              f"({len(configs) / elapsed:.0f} configs/s, 1 process; target: 1000 in < 2 s)")


def test_estimator_summary_reads_the_named_sample(tmp_path):
    from gemmmodel.predict_estimator import COLUMNS, summary, write

    rows = [{"target": "gfx906", "spec": "gfx906", "seed": 7, "sample_size": 2,
             "config": name, "compiler": "hipcc x", "compiler_regs": comp, "spills": 0,
             "model_estimate": est, "rules_estimate": rule, "date_utc": "2026-11-21"}
            for name, comp, est, rule in (("64x64x16/4x4", 40, 44, 50),
                                          ("128x128x8/8x8", 100, 90, 120))]
    path = write(rows, "gfx906", tmp_path / "est.csv")
    assert path.read_text().splitlines()[0] == ",".join(COLUMNS)
    s = summary("gfx906", path)
    assert s["n"] == 2 and s["sample"] == ["64x64x16/4x4", "128x128x8/8x8"]
    assert s["model"]["mean_abs_error"] == pytest.approx((0.1 + 0.1) / 2)
    assert s["model"]["bias"] == pytest.approx(0.0)
    assert s["rules"]["max_error"] == pytest.approx(0.25)
    assert summary("sm_90", path) is None


def test_estimator_check_against_the_compiler(require_tool, tmp_path):
    require_tool("hipcc")
    from gemmmodel.predict_estimator import check, summary
    from gemmmodel.spec import load_spec

    rows = check(load_spec("gfx906"), n=2, seed=11, path=tmp_path / "e.csv")
    assert len(rows) == 2 and all(int(r["compiler_regs"]) > 0 for r in rows)
    assert summary("gfx906", tmp_path / "e.csv")["n"] == 2


def _fake_sweep(folder, spec, configs, shapes, time_of):
    from gemmmodel.calibrate.store import ResultStore, params_text

    rows = []
    for cfg in configs:
        for m, n, k in shapes:
            rows.append({"provenance_id": "test", "suite": "template", "name": "template",
                         "params": params_text({"config": cfg.name, "M": m, "N": n, "K": k}),
                         "status": "ok", "time_s": time_of(cfg, (m, n, k)),
                         "quantity": "flop_per_s", "value": 1.0, "check_passed": True})
    ResultStore(folder).append(rows)


def test_selection_summary_scores_the_choice(tmp_path):
    from gemmmodel.model import predict_kernel
    from gemmmodel.predict import record_predictions, selection_summary
    from gemmmodel.spec import load_spec
    from gemmmodel.template import search_space

    spec = load_spec("h200")
    configs = search_space(spec)[::25]
    shapes = [(4096, 4096, 4096), (1024, 1024, 1024)]

    def model(cfg, shape):
        return predict_kernel(cfg.params(32), None, spec, shape + (1,)).time_s

    folder = tmp_path / "h200"
    _fake_sweep(folder, spec, configs, shapes, model)          # measured == predicted
    res = selection_summary(folder)
    assert res["predictions"].startswith("computed now")
    assert {r["shape"] for r in res["shapes"]} == {"4096x4096x4096", "1024x1024x1024"}
    assert all(r["top1_pct_of_best"] == pytest.approx(100.0) for r in res["shapes"])
    # reverse the measured order: the predicted choice is now the measured worst
    other = tmp_path / "rev" / "h200"
    _fake_sweep(other, spec, configs, shapes, lambda c, s: 1.0 / model(c, s))
    res2 = selection_summary(other)
    for row in res2["shapes"]:
        t = {c.name: 1.0 / model(c, tuple(map(int, row["shape"].split("x"))) ) for c in configs}
        assert row["top1_pct_of_best"] == pytest.approx(100 * min(t.values()) / max(t.values()))
        assert row["top1_pct_of_best"] <= row["top3_pct_of_best"] <= 100
    from gemmmodel.commands.selection import render

    text = render(res2)
    assert "top1 % of best" in text and "1024x1024x1024" in text
    path = record_predictions(other)
    assert path.name == "selection_predictions.csv" and path.with_suffix(".json").is_file()
    res3 = selection_summary(other)
    assert res3["predictions"].startswith("recorded")
    by_name = {c.name: c for c in configs}
    for a, b in zip(res2["shapes"], res3["shapes"]):
        assert a["shape"] == b["shape"]
        if a["top1_config"] == b["top1_config"]:
            assert b["top1_pct_of_best"] == pytest.approx(a["top1_pct_of_best"])
        else:   # a near-tie (4096^3: 64x128x16/8x4 and 128x256x16/8x8/db/s8 within 0.2 %)
            shape = tuple(map(int, a["shape"].split("x")))
            ta, tb = (model(by_name[r["top1_config"]], shape) for r in (a, b))
            assert abs(ta / tb - 1) < 0.005


def test_selection_summary_in_sample_follows_the_fit_that_ranked(tmp_path):
    """A recorded ranking is in-sample only if the fit it was recorded with trained on
    template configs; today's fit.json says nothing about a ranking made with another."""
    import hashlib

    from gemmmodel.model import predict_kernel
    from gemmmodel.predict import record_predictions, selection_summary
    from gemmmodel.spec import load_spec
    from gemmmodel.template import search_space

    spec = load_spec("h200")
    configs = search_space(spec)[::60]
    shapes = [(2048, 2048, 2048)]
    folder = tmp_path / "h200"
    _fake_sweep(folder, spec, configs, shapes,
                lambda c, s: predict_kernel(c.params(32), None, spec, s + (1,)).time_s)
    fit = folder / "fit.json"
    fit.write_text(json.dumps({"training_set": ["64x64x16/8x8/p4 @ 4096x4096x4096"]}))
    assert selection_summary(folder)["in_sample"] is True          # computed now: this fit
    record_predictions(folder)
    meta = json.loads((folder / "selection_predictions.json").read_text())
    assert meta["fit_json_sha256"] == hashlib.sha256(fit.read_bytes()).hexdigest()
    assert selection_summary(folder)["in_sample"] is True          # recorded with this fit
    # the fit changes after the recording: the ranking was not made with it
    fit.write_text(json.dumps({"training_set": ["64x64x16/8x8/p4 @ 1024x1024x1024",
                                                "8 @ 1024x1024x1024"]}))
    res = selection_summary(folder)
    assert res["predictions"].startswith("recorded")
    assert res["in_sample"] is False and res["training_set"] == []


def test_predict_cli_json(capsys):
    assert main(["predict", "--gpu", "h200", "--size", "1024x1024x1024", "--top", "2",
                 "--jobs", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["top"]) == 2 and data["gpu"]["name"] == "h200"
    assert main(["predict", "--gpu", "h200", "--size", "1024x1024x1024", "--top", "2",
                 "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "wins over" in out and "register estimate" in out


def test_verify_without_gpu_is_one_line(capsys):
    from gemmmodel.errors import NoGpu
    from gemmmodel.runtime import get_runtime

    try:
        get_runtime()
        pytest.skip("a GPU runtime is present: --verify would run")
    except NoGpu:
        pass
    rc = main(["predict", "--gpu", "h200", "--size", "256x256x256", "--top", "1", "--jobs",
               "1", "--verify"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1


def test_verify_on_a_fake_runtime():
    """--verify's bookkeeping on the CPU stand-in runtime: every top config is compiled,
    checked against float64 and timed; errors and the measured order follow."""
    from gemmmodel.predict import verify
    from gemmmodel.runtime.fake import FakeRuntime, sgemm_reference_kernel

    def cost(entry, grid, block):          # a made-up cost: more blocks, more time
        return 1e-6 * grid[0] * grid[1]

    res = rank("h200", "256x256x256", top=3, jobs=1)
    rt = FakeRuntime(kernels={"sgemm_tile": sgemm_reference_kernel}, cost_s=cost)
    out = verify(res, budget_s=0.01, runtime=rt)
    for item in out["top"]:
        assert item["verify_status"] == "ok", item["verify_reason"]
        assert item["error"] == pytest.approx((item["predicted_s"] - item["measured_s"])
                                              / item["measured_s"])
    meas = [i["measured_s"] for i in out["top"]]
    by_time = [i["name"] for _, i in sorted(zip(meas, out["top"]), key=lambda p: p[0])]
    assert out["verify"]["measured_order"] == by_time


def test_validate_selection_without_sweep_is_one_line(capsys):
    assert main(["validate", "--selection", "--gpu", "gfx906"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gfx906" in err
    assert main(["validate"]) == 2
    assert "--gpu" in capsys.readouterr().err
