"""`gemmmodel report`: one self-contained HTML page per call (images inlined as base64 PNG).

Per GPU: the catalogue table (predicted, measured, error, bottleneck, resources), a
hierarchical roofline, predicted vs measured for every measured (kernel, shape), term
stacks, the lineage graph with measured and predicted speedups, occupancy vs registers per
architecture and bank-conflict heat maps from the model's LDS simulator.
data.py gathers the numbers, plots.py draws, html.py writes the page.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from gemmmodel import PROJECT_DIR
from gemmmodel.errors import BadArgument


def _commit() -> str:
    try:
        proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT_DIR,
                              capture_output=True, text=True, timeout=10, check=False)
        return proc.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _stats(points: list[dict]) -> str:
    from scipy import stats

    if len(points) < 2:
        return f"{len(points)} measured point(s)."
    pred = [p["predicted_s"] for p in points]
    meas = [p["measured_s"] for p in points]
    err = [abs(a / b - 1) for a, b in zip(pred, meas)]
    rho = stats.spearmanr(pred, meas).statistic
    return (f"{len(points)} measured (kernel, shape) points: mean |error| "
            f"{100 * sum(err) / len(err):.1f}%, largest {100 * max(err):.0f}%, Spearman rho "
            f"{rho:.3f} (no parameter of the model is fitted to the shipped MI100 table).")


def selection_section(gpu: str) -> str:
    """The predictor's choice against the GPU's committed selection sweep (if any)."""
    from gemmmodel.errors import GemmModelError
    from gemmmodel.predict import selection_summary
    from gemmmodel.report import html as h

    try:
        res = selection_summary(gpu)
    except GemmModelError:
        return ""
    rows = [[r["shape"], r["configs"], f"{r['top1_pct_of_best']:.1f}",
             f"{r['top3_pct_of_best']:.1f}", r["best_predicted_rank"], r["best_config"],
             r["top1_config"]] for r in res["shapes"]]
    return (f"<h3>Tile selection: predicted choice vs measured best</h3><p class=\"note\">"
            f"Predictions {h.esc(res['predictions'])}; mean top-1 "
            f"{res['mean_top1_pct_of_best']:.1f}%, top-3 {res['mean_top3_pct_of_best']:.1f}% "
            f"of the measured best{' (in-sample fit)' if res['in_sample'] else ''}.</p>"
            + h.table(["shape", "configs", "top1 % of best", "top3 % of best",
                       "predicted rank of best", "measured best", "predicted choice"], rows)
            + _selection_rounds(gpu))


def _selection_rounds(gpu: str) -> str:
    """The issue-8 rounds of calibration/<gpu>/selection_*.csv: pre-registered, post hoc
    (labelled as hindsight) and the held-out pre-registered round; "" without a sweep."""
    from gemmmodel.errors import GemmModelError
    from gemmmodel.model.selection import selection_comparison
    from gemmmodel.report import html as h

    try:
        res = selection_comparison(gpu)
    except (GemmModelError, OSError):
        return ""
    out = []
    for key in res.get("order", ()):
        part = res.get(key)
        if not part or not part["shapes"]:
            continue
        rows = [[r["shape"], r["configs"], f"{r['top1_pct_of_best']:.1f}",
                 f"{r['top3_pct_of_best']:.1f}", r["best_predicted_rank"], r["best_config"],
                 r["top1_config"]] for r in part["shapes"]]
        out.append(f"<h4>{h.esc(part['label'])}</h4><p class=\"note\">min top-1 "
                   f"{part['min_top1_pct_of_best']:.1f}%, mean {part['mean_top1_pct_of_best']:.1f}%;"
                   f" min top-3 {part['min_top3_pct_of_best']:.1f}%, mean "
                   f"{part['mean_top3_pct_of_best']:.1f}% (targets: 95% and 98% on every "
                   f"shape)</p>" + h.table(["shape", "configs", "top1 % of best",
                                             "top3 % of best", "rank of best", "measured best",
                                             "chosen"], rows))
    return "".join(out)


def gpu_section(data: dict) -> str:
    from gemmmodel.report import html as h
    from gemmmodel.report import plots

    spec, calib = data["spec"], data["calib"]
    shape = "x".join(map(str, data["shape"][:3]))
    rows = []
    for kid, r in data["kernels"].items():
        res = r["resources"]
        err = (f"{100 * (r['predicted_s'] / r['measured_s'] - 1):+.1f}%"
               if r.get("measured_s") else "")
        rows.append([kid, f"{r['predicted_s'] * 1e3:.3f}",
                     f"{r['measured_s'] * 1e3:.3f}" if r.get("measured_s") else "", err,
                     f"{r['flops'] / 1e12:.2f}", r["bottleneck"], res.get("regs", ""),
                     res.get("headroom", ""), r["facts_source"].split(" (")[0]])
    fitted = f"fitted on {len(calib.training)} kernels" if calib.fit else "a priori"
    cal = (f"calibration: {calib.source} (measured {', '.join(sorted(calib.values)) or 'none'}"
           f"; efficiencies {fitted})")
    parts = [f"<h2>{h.esc(spec.name)}: {h.esc(spec.title)}</h2>",
             (f"<p class=\"note\">{h.esc(spec.arch)}, {spec.compute_units} CUs/SMs, "
              f"{spec.clock_hz / 1e6:.0f} MHz, FP32 vector peak "
              f"{spec.fp32_peak_flops / 1e12:.1f} TFLOP/s; {h.esc(cal)}.</p>"),
             f"<p>{h.esc(_stats(data['points']))}</p>",
             f"<h3>Catalogue at {shape}</h3>",
             h.table(["kernel", "predicted ms", "measured ms", "error", "pred. TFLOP/s",
                      "bottleneck", "regs", "occupancy", "resources from"], rows, left=1),
             h.figure(plots.roofline(data), "Roofline: roofs from the spec (or calibration); "
                      "each kernel at its arithmetic intensity against DRAM, L2 and LDS bytes "
                      "(model traffic terms), at its predicted rate; stars: measured rate.",
                      "roofline"),
             h.figure(plots.scatter(data), "Predicted vs measured time for every measured "
                      "(kernel, shape) on this GPU.", "predicted vs measured"),
             h.figure(plots.term_stacks(data), "Where the predicted time goes: the dominant "
                      "pipe, the other pipe's time not overlapped with it, exposed latency, "
                      "launch and ramp.", "term stacks"),
             h.figure(plots.lineage_graph(data), "Lineage of the catalogue with the speedup "
                      "of each step, measured (m) and predicted (p).", "lineage"),
             h.figure(plots.occupancy_curves(data), "Occupancy vs registers per thread for "
                      "one spec per architecture (gemmmodel.occupancy rules); dots: this "
                      "GPU's catalogue kernels.", "occupancy curves")]
    parts.append(selection_section(spec.name))
    heat = plots.conflict_heatmaps(data)
    parts.append(h.figure(heat[0], heat[1], "bank conflicts") if heat else
                 '<p class="note">No LDS step to show.</p>')
    return "\n".join(parts)


def build_report(gpus: list[str], out_dir, size=None, root=None) -> Path:
    """Write out_dir/report-<gpu>[-<gpu>…].html and return its path."""
    from gemmmodel.report import html as h
    from gemmmodel.report.data import gpu_data
    from gemmmodel.spec import load_spec

    if not gpus:
        raise BadArgument("report needs at least one --gpu")
    names = [load_spec(g).name for g in gpus]
    sections = [gpu_section(gpu_data(g, size, root)) for g in gpus]
    path = Path(out_dir) / f"report-{'-'.join(names)}.html"
    title = "gemmmodel report: " + ", ".join(names)
    return write_page(path, h.page(title, sections, _commit()))


def write_page(path: Path, text: str) -> Path:
    """Write a generated page, creating its folder; BadArgument (one line) if it cannot."""
    if path.parent.exists() and not path.parent.is_dir():
        raise BadArgument(f"cannot write {path}: {path.parent} is a file, not a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as err:
        raise BadArgument(f"cannot write {path}: {err.strerror or err}") from None
    return path
