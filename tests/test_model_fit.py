"""The fit recovers known efficiency parameters from synthetic timings made by the model
itself, stores them as fit.json with the training set named, and load_calib reads them."""

import json

import numpy as np
import pytest

from gemmmodel.errors import BadArgument
from gemmmodel.model import assemble, load_calib, predict_kernel
from gemmmodel.model.calib import DEFAULT_FIT, FITTED_BY_DEFAULT, Calib
from gemmmodel.model.combine import components_arrays
from gemmmodel.model.fit import fit_theta, predict_times, write_fit
from gemmmodel.spec import load_spec


def _tile(bm, bn, bk, tm, tn, buffering="single", pad=0):
    return {"BM": bm, "BN": bn, "BK": bk, "TM": tm, "TN": tn, "threads": (bm * bn) // (tm * tn),
                "padding": pad, "vector_width": 4 if tm % 4 == 0 and tn % 4 == 0 else 1,
                "buffering": buffering, "a_lds_layout": "transposed", "thread_map": "row"}


KERNELS = {
    "t44": _tile(64, 64, 16, 4, 4), "t88": _tile(128, 128, 8, 8, 8),
    "t84": _tile(128, 64, 8, 8, 4, pad=4), "t22": _tile(32, 32, 8, 2, 2),
    "t88db": _tile(128, 128, 16, 8, 8, "lds-double", pad=4),
    "naive": {"BM": 16, "BN": 16, "BK": 1, "TM": 1, "TN": 1, "threads": 256, "padding": 0, "vector_width": 1,
                  "buffering": "single", "a_lds_layout": "none", "thread_map": "row"},
}
SHAPES = [(4096, 4096, 4096), (1024, 1024, 1024), (4096, 4096, 64), (256, 256, 4096),
          (128, 128, 2048), (8192, 256, 2048), (8192, 8192, 8)]
TRUTH = {"overlap_loss": 1.8, "latency_scale": 1.6, "lds_efficiency": 0.7,
         "issue_efficiency": 0.85, "mem_efficiency": 0.6}
#: Five of DEFAULT_FIT's parameters (fit.py fits at most 5); async_wait_clk needs cp.async
#: loops at shapes with timings, tested in tests/test_model_async_wait.py.
FIVE = tuple(TRUTH)


@pytest.fixture(scope="module")
def synthetic():
    spec = load_spec("h100")
    comps, names = [], []
    for name, params in KERNELS.items():
        for shape in SHAPES:
            comps.append(assemble(params, None, spec, shape))
            names.append(name)
    times = predict_times(components_arrays(comps), TRUTH)
    return spec, comps, names, times


def test_fit_recovers_known_parameters(synthetic):
    _, comps, names, times = synthetic
    res = fit_theta(comps, times, params=FIVE, training=sorted(set(names)))
    assert res.success and res.n == len(times)
    for key, want in TRUTH.items():
        assert res.params[key] == pytest.approx(want, rel=0.02), key
    assert res.rms_log_error < 1e-3
    assert res.training == tuple(sorted(set(names)))


def test_fit_with_noise_stays_close(synthetic):
    _, comps, _, times = synthetic
    rng = np.random.default_rng(7)
    noisy = times * np.exp(rng.normal(0, 0.02, len(times)))
    res = fit_theta(comps, noisy, params=FIVE)
    # the directly-bound efficiencies are recovered; issue_efficiency and overlap_loss
    # trade off against each other under noise, but the times they predict do not move
    for key in ("lds_efficiency", "mem_efficiency", "latency_scale"):
        assert res.params[key] == pytest.approx(TRUTH[key], rel=0.1), key
    assert 0.01 < res.rms_log_error < 0.05
    pred = predict_times(components_arrays(comps), res.params)
    assert np.max(np.abs(pred / times - 1)) < 0.05


def test_fit_subset_keeps_others_at_default(synthetic):
    _, comps, _, times = synthetic
    res = fit_theta(comps, times, params=("lds_efficiency",))
    assert res.fitted == ("lds_efficiency",)
    assert res.params["latency_scale"] == DEFAULT_FIT["latency_scale"]


def test_fit_rejects_bad_input(synthetic):
    _, comps, _, times = synthetic
    with pytest.raises(BadArgument):
        fit_theta(comps[:3], times[:2])
    with pytest.raises(BadArgument):
        fit_theta(comps[:2], [1.0, -1.0])
    with pytest.raises(BadArgument):
        fit_theta(comps[:6], times[:6], params=("not_a_param",))


def test_fit_json_round_trip(tmp_path, synthetic):
    spec, comps, names, times = synthetic
    res = fit_theta(comps, times, training=sorted(set(names)))
    path = write_fit(tmp_path / "h100" / "fit.json", res, "h100", "synthetic")
    data = json.loads(path.read_text())
    assert data["training_set"] == sorted(set(names)) and data["gpu"] == "h100"
    calib = load_calib("h100", root=tmp_path)
    assert calib.theta()["lds_efficiency"] == pytest.approx(res.params["lds_efficiency"])
    # the stored fit changes predictions the way the fitted parameters say
    plain = predict_kernel(KERNELS["t44"], None, spec, SHAPES[0])
    fitted = predict_kernel(KERNELS["t44"], None, spec, SHAPES[0], calib)
    assert fitted.time_s > plain.time_s          # efficiencies < 1 slow it down


def test_calibrated_values_replace_spec(tmp_path):
    spec = load_spec("h100")
    folder = tmp_path / "h100"
    folder.mkdir()
    (folder / "summary.json").write_text(json.dumps({"headline": {
        "lds_bytes_per_clk_per_sm": {"measured": 64.0, "unit": "B/clk/SM"},
        "launch_overhead_s": {"measured": 2e-6, "unit": "s"},
        "dram_read_Bps": {"measured": None, "unit": "B/s"}}}))
    calib = load_calib("h100", root=tmp_path)
    assert calib.values == {"lds_bytes_per_clk_per_cu": 64.0, "launch_overhead_s": 2e-6}
    base = predict_kernel(KERNELS["t44"], None, spec, SHAPES[0])
    half = predict_kernel(KERNELS["t44"], None, spec, SHAPES[0], calib)
    lds_b, lds_h = (p.root.child("t_lds_s") for p in (base, half))
    assert lds_h.value == pytest.approx(2 * lds_b.value)
    assert "calibrated" in half.root.child("t_lds_s").children[0].note
    assert half.root.child("t_launch_s").value == 2e-6
    assert Calib().theta() == DEFAULT_FIT


def test_default_fit_keeps_latency_at_its_measured_scale(synthetic):
    """By default latency_scale is not fitted (calib.FITTED_BY_DEFAULT): with data generated
    at latency_scale 1.6 the default fit must leave it at 1 and fit only the four others."""
    _, comps, _, times = synthetic
    res = fit_theta(comps, times)
    assert res.fitted == FITTED_BY_DEFAULT and "latency_scale" not in res.fitted
    assert res.params["latency_scale"] == DEFAULT_FIT["latency_scale"] == 1.0
    assert res.rms_log_error > 1e-3  # the latency it cannot scale leaves a misfit


def test_selection_weights_by_hand():
    from gemmmodel.model.fit import NEAR_BAND, NEAR_WEIGHT, selection_weights

    groups = ["a", "a", "a", "b", "b"]
    times = [1.0, 1.0 * NEAR_BAND, 1.2, 5.0, 2.0]
    # a: best 1.0, 1.15 is inside the band, 1.2 outside; b: best 2.0, 5.0 outside
    assert list(selection_weights(groups, times)) == [NEAR_WEIGHT, NEAR_WEIGHT, 1.0, 1.0,
                                                      NEAR_WEIGHT]
    with pytest.raises(BadArgument):
        selection_weights(["a"], [1.0, 2.0])


def test_weighted_fit_listens_to_the_fastest_of_each_shape(synthetic):
    """Exact timings: both fits recover the truth. Timings whose slow configs carry an extra
    error: the weighted fit (groups = shapes) stays closer to the truth on the fast ones."""
    _, comps, names, times = synthetic
    shapes = [str(s) for _ in KERNELS for s in SHAPES]
    res = fit_theta(comps, times, params=FIVE, groups=shapes)
    assert res.weighting.startswith("x5 within 1.15x")
    assert res.to_dict()["weighting"] == res.weighting
    for key, want in TRUTH.items():
        assert res.params[key] == pytest.approx(want, rel=0.02), key
    best = {}
    for s, t in zip(shapes, times):
        best[s] = min(best.get(s, np.inf), t)
    fast = np.array([t <= 1.15 * best[s] for s, t in zip(shapes, times)])
    skewed = np.where(fast, times, times * 1.3)
    uniform = fit_theta(comps, skewed, params=FIVE)
    weighted = fit_theta(comps, skewed, params=FIVE, groups=shapes)
    arrays = components_arrays(comps)

    def fast_error(theta):
        pred = predict_times(arrays, theta)
        return float(np.mean(np.abs(np.log(pred[fast] / times[fast]))))

    assert fast_error(weighted.params) < fast_error(uniform.params)
    assert uniform.weighting == "uniform"
