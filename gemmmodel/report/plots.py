"""The report's figures (matplotlib, Agg backend), each returned as base64 PNG text.

Every figure is drawn from data (report/data.py, the spec, the model's LDS simulator and
the occupancy rules); nothing is typed in. Times are plotted in ms, rates in TFLOP/s.
"""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

PIPE_COLOURS = {"t_issue_s": "#4c72b0", "t_lds_s": "#dd8452", "t_l2_s": "#55a868",
                "t_dram_s": "#c44e52", "t_spawn_s": "#8172b3"}
DPI = 90


def to_png(fig) -> str:
    """Base64 PNG of a figure (the figure is closed)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def roofline(data: dict) -> str:
    """Hierarchical roofline: DRAM / L2 / LDS roofs and compute peaks; each kernel at its
    arithmetic intensity per level with its predicted FLOP/s (and measured, where timed)."""
    spec, kernels = data["spec"], data["kernels"]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    ai = np.logspace(-1, 4, 200)
    peaks = {"vector FP32": float(spec.fp32_peak_flops),
             "matrix FP32": float(spec.matrix_fp32_flop_per_clk_per_cu) * spec.compute_units
             * spec.clock_hz}
    for label, peak in peaks.items():
        if peak > 0:
            ax.axhline(peak / 1e12, ls="--", lw=1, color="k" if "vector" in label else "grey")
            ax.text(ai[0], peak / 1e12 * 1.05, f"{label} peak {peak / 1e12:.1f}", fontsize=8)
    levels = {"dram": ("o", "#c44e52"), "l2": ("s", "#55a868"), "lds": ("^", "#dd8452")}
    for level, (marker, colour) in levels.items():
        rows = [r for r in kernels.values() if f"ai_{level}_flop_per_B" in r["roofline"]]
        if not rows:
            continue
        r0 = rows[0]["roofline"]
        bw = r0[f"bound_{level}"] / r0[f"ai_{level}_flop_per_B"]
        ax.plot(ai, np.minimum(ai * bw, peaks["vector FP32"]) / 1e12, color=colour, lw=1,
                label=f"{level.upper()} roof {bw / 1e9:.0f} GB/s")
        ax.scatter([r["roofline"][f"ai_{level}_flop_per_B"] for r in rows],
                   [r["flops"] / 1e12 for r in rows], marker=marker, color=colour, s=22,
                   label=f"predicted, AI vs {level.upper()} bytes")
    timed = [r for r in kernels.values() if r.get("measured_s") and "ai_dram_flop_per_B" in
             r["roofline"]]
    if timed:
        ax.scatter([r["roofline"]["ai_dram_flop_per_B"] for r in timed],
                   [r["flops"] * r["predicted_s"] / r["measured_s"] / 1e12 for r in timed],
                   marker="*", color="k", s=40, label="measured (at DRAM AI)")
    for kid, r in kernels.items():
        if "ai_dram_flop_per_B" in r["roofline"]:
            ax.annotate(kid, (r["roofline"]["ai_dram_flop_per_B"], r["flops"] / 1e12),
                        fontsize=6, alpha=0.7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/B)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"{spec.name}: roofline, catalogue kernels at "
                 f"{'x'.join(map(str, data['shape'][:3]))}")
    ax.legend(fontsize=7, loc="lower right")
    return to_png(fig)


def scatter(data: dict) -> str | None:
    """Predicted vs measured time of every measured (kernel, shape), log-log, with y = x."""
    pts = data["points"]
    if not pts:
        return None
    fig, ax = plt.subplots(figsize=(6, 6))
    for kind, colour in (("catalogue", "#4c72b0"), ("template", "#dd8452")):
        sel = [p for p in pts if p["kind"] == kind]
        if sel:
            ax.scatter([p["measured_s"] * 1e3 for p in sel], [p["predicted_s"] * 1e3 for p in sel],
                       s=12, color=colour, alpha=0.7, label=f"{kind} ({len(sel)})")
    lo = min(min(p["measured_s"], p["predicted_s"]) for p in pts) * 1e3 / 1.5
    hi = max(max(p["measured_s"], p["predicted_s"]) for p in pts) * 1e3 * 1.5
    ax.plot([lo, hi], [lo, hi], "k-", lw=1, label="predicted = measured")
    for f, ls in ((1.2, ":"), (1 / 1.2, ":")):
        ax.plot([lo, hi], [lo * f, hi * f], "k", ls=ls, lw=0.7)
    err = np.array([abs(p["predicted_s"] / p["measured_s"] - 1) for p in pts])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured time (ms)")
    ax.set_ylabel("predicted time (ms)")
    ax.set_title(f"{data['spec'].name}: {len(pts)} points, mean |error| "
                 f"{100 * err.mean():.0f}% (dotted: +-20%)")
    ax.legend(fontsize=8)
    return to_png(fig)


def term_stacks(data: dict) -> str:
    """Per kernel: dominant pipe, the part of the other pipe not overlapped, exposed latency,
    launch + ramp (stacked, ms); a black tick at the measured time."""
    kernels = data["kernels"]
    names = list(kernels)
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(names) + 1.2))
    limit = 1.15e3 * max(r["predicted_s"] for r in kernels.values())
    for i, kid in enumerate(names):
        r = kernels[kid]
        kt = r["key_times"]
        pipe = max((p for p in PIPE_COLOURS if p in kt), key=kt.get)
        parts = [(r["max_pipe_s"], PIPE_COLOURS[pipe]), (r["not_overlapped_s"], "#bbbbbb"),
                 (kt.get("t_latency_s", 0.0), "#937860"),
                 (kt.get("t_launch_s", 0.0) + kt.get("t_ramp_s", 0.0), "#da8bc3")]
        left = 0.0
        for value, colour in parts:
            ax.barh(i, value * 1e3, left=left, color=colour, height=0.7)
            left += value * 1e3
        meas = r.get("measured_s")
        if meas and meas * 1e3 <= limit:
            ax.plot([meas * 1e3] * 2, [i - 0.4, i + 0.4], "k-", lw=2)
        elif meas:
            ax.annotate(f"measured {meas * 1e3:.4g} ms ->", (limit, i), fontsize=7,
                        ha="right", va="center")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in PIPE_COLOURS.values()]
    handles += [plt.Rectangle((0, 0), 1, 1, color=c) for c in ("#bbbbbb", "#937860", "#da8bc3")]
    labels = [f"{p} (dominant)" for p in PIPE_COLOURS] + ["not overlapped", "t_latency_s",
                                                           "launch + ramp"]
    ax.legend(handles, labels, fontsize=7, loc="upper center", ncol=4,
              bbox_to_anchor=(0.5, -0.06 - 1.0 / (0.28 * len(names) + 1.2)))
    ax.set_yticks(np.arange(len(names)), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, limit)
    ax.set_xlabel("time (ms); black tick = measured")
    ax.set_title(f"{data['spec'].name}: predicted time by term")
    return to_png(fig)


def lineage_graph(data: dict) -> str:
    """The catalogue lineage (networkx), edges labelled measured / predicted speedup."""
    import networkx as nx

    from gemmmodel.catalogue import lineage

    graph = lineage()
    pos = {}
    for depth, gen in enumerate(nx.topological_generations(graph)):
        gen = sorted(gen, key=lambda n: [float(x) for x in n.split(".")])
        for j, node in enumerate(gen):
            pos[node] = (1.6 * (j - (len(gen) - 1) / 2), -depth)
    fig, ax = plt.subplots(figsize=(13, 9))
    nx.draw_networkx_nodes(graph, pos, ax=ax, node_size=420, node_color="#dce6f2")
    nx.draw_networkx_labels(graph, pos, ax=ax, font_size=8)
    good = [(e["parent"], e["child"]) for e in data["edges"]
            if e["measured_speedup"] is None or
            (e["measured_speedup"] > 1) == (e["predicted_speedup"] > 1)]
    bad = [(p, c) for p, c in graph.edges if (p, c) not in good]
    nx.draw_networkx_edges(graph, pos, edgelist=good, ax=ax, edge_color="#4c72b0", arrows=True)
    nx.draw_networkx_edges(graph, pos, edgelist=bad, ax=ax, edge_color="#c44e52", arrows=True)
    labels = {}
    for e in data["edges"]:
        meas = f"m {e['measured_speedup']:.2f}x\n" if e["measured_speedup"] else ""
        labels[(e["parent"], e["child"])] = f"{meas}p {e['predicted_speedup']:.2f}x"
    nx.draw_networkx_edge_labels(graph, pos, edge_labels=labels, ax=ax, font_size=6)
    ax.set_title(f"{data['spec'].name}: lineage, speedup child vs parent (m = measured, "
                 "p = predicted; red = predicted direction wrong)")
    ax.axis("off")
    return to_png(fig)


def occupancy_curves(data: dict, threads: int = 256) -> str:
    """Occupancy (resident waves / wave slots) vs registers per thread for one spec per
    architecture, a block of `threads`; the report GPU's kernels marked on its curve."""
    from gemmmodel.occupancy import occupancy
    from gemmmodel.spec import list_specs, load_spec

    specs, archs = [], set()
    for name in list_specs():
        s = load_spec(name)
        if s.arch not in archs:
            archs.add(s.arch)
            specs.append(s)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, vendor in zip(axes, ("amd", "nvidia")):
        for s in [s for s in specs if s.vendor == vendor]:
            regs = np.arange(1, int(s.max_regs_per_thread) + 1)
            occ = [occupancy(s, threads, int(r)).fraction for r in regs]
            ax.step(regs, occ, where="post", label=f"{s.arch} ({s.name})")
        ax.set_title(f"{vendor.upper()}: {threads} threads per block")
        ax.set_xlabel("registers per thread (AMD: VGPRs)")
        ax.legend(fontsize=7)
    spec = data["spec"]
    ax = axes[0 if spec.vendor == "amd" else 1]
    for kid, r in data["kernels"].items():
        res = r["resources"]
        if res and res.get("threads") == threads:
            frac = res["occupancy"]["occupancy"]
            ax.plot(res["regs"], frac, "k.", ms=5)
            ax.annotate(kid, (res["regs"], frac), fontsize=6)
    axes[0].set_ylabel("occupancy (resident waves / wave slots)")
    return to_png(fig)


def conflict_heatmaps(data: dict, spec=None) -> tuple[str, str] | None:
    """Bank-conflict heat maps (lane group x bank: distinct words) of the worst LDS
    instruction of the parent and the child of the lineage step whose predicted LDS passes
    changed most; returns (png, caption)."""
    from gemmmodel.catalogue import load_catalogue
    from gemmmodel.model.access import lds_accesses
    from gemmmodel.model.kernel import describe
    from gemmmodel.model.lds import access_passes, ideal_passes, lane_groups

    spec = spec or data["spec"]
    cat = load_catalogue()

    def worst(kid):
        desc = describe(cat[kid].params)
        acc = [a for a in lds_accesses(desc, int(spec.wave_size))]
        if not acc:
            return None
        return max(acc, key=lambda a: access_passes(a, spec) / max(ideal_passes(a, spec), 1))

    best_edge, best_change = None, 0.0
    for e in data["edges"]:
        a, b = worst(e["parent"]), worst(e["child"])
        if a is None or b is None:
            continue
        change = abs(np.log(access_passes(a, spec) / access_passes(b, spec)))
        if change > best_change:
            best_edge, best_change = (e["parent"], e["child"], a, b), change
    if best_edge is None:
        return None
    banks, bank_bytes = int(spec.lds_banks), int(spec.lds_bank_bytes)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    for ax, kid, acc in zip(axes, best_edge[:2], best_edge[2:]):
        groups = lane_groups(spec, acc.width_bytes, acc.kind)
        addr = acc.addr[0]
        grid = np.zeros((len(groups), banks))
        for gi, group in enumerate(groups):
            words = set()
            for lane in group:
                if lane < len(addr) and addr[lane] >= 0:
                    for w in range(max(1, acc.width_bytes // bank_bytes)):
                        words.add(int(addr[lane]) // bank_bytes + w)
            for w in words:
                grid[gi, w % banks] += 1
        im = ax.imshow(grid, aspect="auto", cmap="viridis", interpolation="nearest")
        ax.set_yticks(range(len(groups)))
        ax.set_title(f"kernel {kid}: {acc.kind} '{acc.name}' ({acc.width_key}), "
                     f"{access_passes(acc, spec):.0f} passes", fontsize=8)
        ax.set_xlabel("bank")
        ax.set_ylabel("lane group")
        fig.colorbar(im, ax=ax, label="distinct words")
    caption = (f"Step {best_edge[0]} -> {best_edge[1]}: the LDS instruction with the worst "
               f"conflict factor of each kernel, wave 0, lane groups of {spec.name}'s "
               f"lds_phases; a cell > 1 is a bank conflict (the group takes that many passes).")
    return to_png(fig), caption
