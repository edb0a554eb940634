"""predict: rank the tile template's search space for one GPU and shape, without running.

`rank(gpu, size, top)` predicts every valid config of gemmmodel.template.search_space(spec)
with the model (assemble once per config, then one vectorised combination over all of
them), sorts by predicted time and explains the top N: the bottleneck, the resources and
the terms that separate each from the next one.

Resources per config (first that applies): at a batched shape (batch > 1) the
strided-batched entry's registers as the GPU's own compiler built it (calibration/<gpu>/
build_registers.csv, device run W) with the loop facts of its committed table
(calibration/template_facts_<target>_batched.csv); at a shape that runs the bounds-checked
build (EDGE=1: not a tile multiple) the registers the GPU's own compiler gave that build
(build_registers.csv) with the loop facts of the committed edge table
(calibration/template_facts_<target>_edge.csv; its nvcc registers where the GPU has none); the registers the GPU's own compiler
reported during calibration (calibration/<gpu>/template.csv); with `compile_top` > 0 the compiler on
this machine (cached on disk) for the shortlist of the best `compile_top` configs, which
are then predicted again; on a GPU whose own compiler reported none (no calibration of its
own) the committed plain table's registers (calibration/template_facts_<target>.csv, the
compiler here for the same target); else the model's register estimate (gemmmodel.model.waves),
whose error against the compilers is measured over a named sample and stored in
calibration/register_estimate.csv (estimator.py; `estimator_error(spec)` summarises it).

`verify(result)` runs the top configs on this machine's GPU (gemmmodel.runtime) and
returns measured vs predicted. `selection_summary(calibration_dir)` scores the predicted
choice against a committed template sweep (predict_selection.py). `track_record(gpu)` says
how close timing the first k configs of a pre-registered ranking came to the swept best
(gemmmodel.model.shortlist): how long a shortlist `--verify --top k` should time.
"""

from __future__ import annotations

import itertools
import os
import time

import numpy as np

from gemmmodel.errors import BadArgument, GemmModelError

#: Resource-source labels, in order of preference.
SOURCES = ("device", "edge build (device)", "edge table", "batched entry (device)",
           "batched table", "compiler",
           "plain table", "estimate")
#: Predicted times within this relative difference are one rank (the model does not see
#: the parameter they differ in, e.g. the block raster swizzle).
TIE_REL = 1e-9


def _assemble_rows(args) -> list:
    """Worker: (index, field row or None, source) for a chunk of configs (pool-friendly)."""
    from gemmmodel.model import assemble
    from gemmmodel.template import parse_name

    spec, shape, calib, items = args
    out = []
    for idx, name, facts, source in items:
        cfg = parse_name(name)
        try:
            comp = assemble(cfg.params(int(spec.wave_size)), facts, spec, shape, calib)
            out.append((idx, comp.array_row(), source))
        except GemmModelError as err:
            out.append((idx, None, f"rejected: {err}"))
    return out


def _facts_for(cfg, spec, device_regs: dict, compiled: dict, shape) -> tuple[object, str]:
    """Facts of the build that runs at `shape` (compile.table.template_facts) and where
    its registers come from: compiler (here), edge table (EDGE=1 builds), device or
    estimate."""
    from gemmmodel.compile.table import template_facts

    if cfg.name in compiled:
        return compiled[cfg.name], "compiler"
    regs = device_regs.get(cfg.name)
    facts = template_facts(cfg, spec, regs, shape)
    if facts and (facts.get("edge") or facts.get("regs_source")):
        return facts, str(facts.get("regs_source", "edge table"))
    return facts, ("device" if regs else "estimate")


def _evaluate(configs, spec, shape, calib, device_regs, compiled, jobs: int):
    """Predicted seconds per config (nan where the model rejects it) and the sources."""
    from gemmmodel.model.combine import FIELDS, evaluate_arrays

    items = []
    for i, cfg in enumerate(configs):
        facts, source = _facts_for(cfg, spec, device_regs, compiled, shape)
        items.append((i, cfg.name, facts, source))
    jobs = max(1, min(jobs, len(items) // 200 or 1))
    chunks = [items[j::jobs] for j in range(jobs)]
    if jobs > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(jobs) as pool:
            parts = pool.map(_assemble_rows, [(spec, shape, calib, c) for c in chunks])
    else:
        parts = [_assemble_rows((spec, shape, calib, chunks[0]))]
    rows = [r for part in parts for r in part]
    rows.sort(key=lambda r: r[0])
    sources = [r[2] for r in rows]
    good = [r for r in rows if r[1] is not None]
    times = np.full(len(configs), np.nan)
    if good:
        arr = np.array([r[1] for r in good], dtype=float)
        theta = calib.theta() if calib is not None else {}
        total = evaluate_arrays({f: arr[:, i] for i, f in enumerate(FIELDS)}, theta)["total"]
        times[[r[0] for r in good]] = total
    return times, sources


def _compile_configs(configs, spec, shape) -> tuple[dict, list[str]]:
    """{name: facts} of the builds that run at `shape`, compiled on this machine
    (disk-cached): KernelFacts, or for bounds-checked builds (EDGE=1) their per-tile facts
    (compile.table.edge_build_facts); errors as text."""
    from gemmmodel.compile.table import compile_template_facts

    out, errors = {}, []
    for cfg in configs:
        try:
            out[cfg.name] = compile_template_facts(cfg, spec, shape)
        except GemmModelError as err:
            errors.append(f"{cfg.name}: {str(err).splitlines()[0]}")
            if type(err).__name__ == "ToolMissing":
                break
    return out, errors


def _describe(cfg, spec, shape, calib, facts, source: str) -> dict:
    from gemmmodel.explain import key_times, resources
    from gemmmodel.model import predict_kernel

    pred = predict_kernel(cfg.params(int(spec.wave_size)), facts, spec, shape, calib)
    res = resources(pred, spec)
    return {"name": cfg.name, "predicted_s": pred.time_s, "flops": pred.flops,
            "bottleneck": pred.bottleneck, "regs": res.get("regs"), "regs_source": source,
            "lds_bytes": res.get("lds_bytes"), "blocks_per_cu": res.get("blocks_per_cu"),
            "headroom": res.get("headroom"), "key_times": key_times(pred.root),
            "_root": pred.root}


def _neighbour_factors(spec, shape, configs, calib, device_regs, jobs: int, root=None,
                       progress=None) -> tuple[np.ndarray, dict]:
    """Per config the factor exp(-corr) of gemmmodel.model.neighbours (1 where a config was
    never swept) and what it rests on: the model is evaluated at the swept shapes nearest
    to `shape` (the same resources as the ranking) and compared with their sweeps.
    BadArgument where `spec` has no committed sweep."""
    from gemmmodel.model.calib import calibration_name, fit_path
    from gemmmodel.model.neighbours import (NEIGHBOURS, SHRINK, correction, residuals,
                                            same_build, shape_distance)
    from gemmmodel.model.selection import all_sweeps, shape_text, sweep_file

    folder = fit_path(calibration_name(spec.name, root), root).parent
    parts = all_sweeps(folder)
    measured = {key: t for part in parts.values() for key, t in part.items()}
    if not measured:
        raise BadArgument(f"--neighbours needs committed template sweeps of {spec.name} "
                          f"(none under {folder}); without them predict ranks with the "
                          "model alone")
    names = {c.name for c in configs}
    by_cfg: dict[str, list] = {}
    for (name, s), _ in measured.items():
        if name in names and tuple(s) != tuple(shape) and same_build(name, s, shape):
            by_cfg.setdefault(name, []).append(s)
    needed = set()
    for name, shapes in by_cfg.items():
        shapes.sort(key=lambda s: (shape_distance(shape, s), s))
        needed.update(shapes[:NEIGHBOURS])
    needed = sorted(needed, key=lambda s: (shape_distance(shape, s), s))
    predicted = {}
    for i, s in enumerate(needed, 1):
        if progress:
            progress(f"neighbours: model at swept shape {shape_text(s)} ({i}/{len(needed)})")
        t_s, _ = _evaluate(configs, spec, s, calib, device_regs, {}, jobs)
        predicted.update({(c.name, s): t for c, t in zip(configs, t_s) if np.isfinite(t)})
    resid = residuals(measured, predicted)   # only at the shapes evaluated above
    factors = np.array([np.exp(-correction(resid.get(c.name, []), shape, name=c.name)[0])
                        for c in configs])
    info = {"folder": str(folder), "sweeps": [sweep_file(p) for p in parts],
            "neighbours": NEIGHBOURS, "shrink": SHRINK, "same_build": True,
            "shapes_used": [shape_text(s) for s in needed],
            "swept_here": any(tuple(s) == tuple(shape) for _, s in measured)}
    return factors, info


def rank(gpu, size, top: int = 10, compile_top: int = 0, root=None,
         jobs: int | None = None, neighbours: bool = False, progress=None,
         calib_from: str | None = None, neighbours_from: str | None = None) -> dict:
    """Rank the search space of `gpu` (spec name or file) at `size` (module docstring).
    `jobs` > 1 assembles in that many forked processes (helps on an idle multi-core
    machine; one process by default). `neighbours`: rank by the model's time times the
    measured-neighbour factor (gemmmodel.model.neighbours; needs committed sweeps of
    `gpu`); each item then also has `model_s` and `neighbour_factor`. `calib_from`: rank
    with another GPU's calibration of the same architecture in place of `gpu`'s own
    (gemmmodel.model.calib.transfer_calib: its DRAM and clocks stay `gpu`'s spec).
    `neighbours_from`: the measured-neighbour factors of another GPU of the same
    architecture (its model, calibration and registers against its own sweeps) applied to
    `gpu`'s model: for a GPU with no sweeps of its own (implies `neighbours`)."""
    from gemmmodel.explain import device_registers, parse_shape, term_diff
    from gemmmodel.model import load_calib
    from gemmmodel.spec import load_spec
    from gemmmodel.template import search_space

    if top < 1:
        raise BadArgument("--top must be >= 1")
    spec = load_spec(gpu)
    shape = parse_shape(size)
    t0 = time.perf_counter()
    if calib_from:
        from gemmmodel.model.calib import transfer_calib

        if neighbours and not neighbours_from:
            raise BadArgument("--calib-from and --neighbours do not combine: the neighbours "
                              "are the sweeps of the GPU ranked for (--neighbours-from G "
                              "takes another GPU's)")
        calib = transfer_calib(calib_from, spec, root)
    else:
        calib = load_calib(spec.name, root)
    configs = search_space(spec)
    t_space = time.perf_counter() - t0
    if not configs:
        raise BadArgument(f"the tile template has no valid config on {spec.name}")
    device_regs = device_registers(spec.name, root)
    jobs = max(1, min(jobs or 1, os.cpu_count() or 1))
    times, sources = _evaluate(configs, spec, shape, calib, device_regs, {}, jobs)
    t_rank = time.perf_counter() - t0 - t_space
    compiled, compile_errors = {}, []
    tried: set = set(device_regs)
    while compile_top > 0 and len(tried) < len(device_regs) + 3 * compile_top:
        # compile the shortlist until the best `compile_top` all have compiler resources
        order = np.argsort(np.where(np.isnan(times), np.inf, times), kind="stable")
        short = [configs[i] for i in order[:compile_top] if configs[i].name not in tried]
        if not short:
            break
        tried.update(c.name for c in short)
        new, errors = _compile_configs(short, spec, shape)
        compile_errors += errors
        if not new:
            break
        compiled.update(new)
        idx = [i for i, c in enumerate(configs) if c.name in new]
        sub_t, sub_s = _evaluate([configs[i] for i in idx], spec, shape, calib, {}, compiled, 1)
        for j, i in enumerate(idx):
            times[i], sources[i] = sub_t[j], sub_s[j]
    factors, neighbour_info = np.ones(len(configs)), None
    if neighbours_from:
        from gemmmodel.model.calib import sibling_spec

        src = sibling_spec(neighbours_from, spec, "--neighbours-from")
        factors, neighbour_info = _neighbour_factors(
            src, shape, configs, load_calib(src.name, root), device_registers(src.name, root),
            jobs, root, progress)
        neighbour_info["from"] = src.name
        times = times * factors
    elif neighbours:
        factors, neighbour_info = _neighbour_factors(spec, shape, configs, calib, device_regs,
                                                     jobs, root, progress)
        times = times * factors
    order = [i for i in np.argsort(np.where(np.isnan(times), np.inf, times), kind="stable")
             if not np.isnan(times[i])]
    groups: list[list[int]] = []          # configs the model cannot tell apart, together
    for i in order:
        if groups and abs(times[i] / times[groups[-1][0]] - 1.0) < TIE_REL:
            groups[-1].append(i)
        elif len(groups) > top:
            break
        else:
            groups.append([i])
    best = []
    for g in groups[:top + 1]:
        facts, source = _facts_for(configs[g[0]], spec, device_regs, compiled, shape)
        item = _describe(configs[g[0]], spec, shape, calib, facts, source)
        item["equivalent"] = [configs[i].name for i in g[1:]]
        if neighbour_info is not None:
            item["model_s"] = item["predicted_s"]
            item["neighbour_factor"] = float(factors[g[0]])
            item["predicted_s"] = item["model_s"] * item["neighbour_factor"]
            item["flops"] /= item["neighbour_factor"]
        best.append(item)
    for here, nxt in itertools.pairwise(best):
        here["versus_next"] = {"slower": nxt["name"],
                               "ratio": nxt["predicted_s"] / here["predicted_s"],
                               **term_diff(here["_root"], nxt["_root"])}
        if "model_s" in here:
            here["versus_next"]["model_ratio"] = nxt["model_s"] / here["model_s"]
    best = best[:top]
    for b in best:
        b.pop("_root")
    counts = {s: sources.count(s) for s in SOURCES}
    rejected = [f"{configs[i].name}: {s}" for i, s in enumerate(sources)
                if s.startswith("rejected")]
    return {"gpu": {"name": spec.name, "title": spec.title, "arch": spec.arch,
                    "fp32_peak_flops": float(spec.fp32_peak_flops)},
            "shape": {"M": shape[0], "N": shape[1], "K": shape[2], "batch": shape[3]},
            "configs": len(configs), "ranked": len(order), "rejected": rejected,
            "resources": counts, "compile_errors": compile_errors,
            "calibration": {"folder": calib.source, "fitted": bool(calib.fit),
                            "measured_values": sorted(calib.values)},
            "estimator": estimator_error(spec),
            "track_record": track_record(spec.name, root),
            "neighbours": neighbour_info,
            "timing_s": {"search_space": t_space, "rank": t_rank,
                         "total": time.perf_counter() - t0, "jobs": jobs},
            "top": best}


def track_record(gpu: str, root=None) -> dict | None:
    """How far the first k configs of a pre-registered ranking landed from the swept best
    (gemmmodel.model.shortlist) on `gpu`, else on the calibrated NVIDIA GPU (`same_gpu`
    False: another GPU's record, the only one there is); None without any round."""
    from gemmmodel.answers_more import default_nvidia
    from gemmmodel.model.calib import calibration_name, fit_path
    from gemmmodel.model.shortlist import shortlist_record

    for name in dict.fromkeys((gpu, default_nvidia())):
        rec = shortlist_record(fit_path(calibration_name(name, root), root).parent)
        if rec is not None:
            rec.pop("rows")
            return {"gpu": name, "same_gpu": name == gpu, **rec}
    return None


def verify(result: dict, budget_s: float = 0.5, runtime=None) -> dict:
    """Compile, check and time the ranked top configs on this machine's GPU; adds
    measured_s / error per config and the measured order. Raises NoGpu without a GPU and
    BadArgument for a batched shape (it would time another shape)."""
    from gemmmodel.catalogue import resolve
    from gemmmodel.runtime import get_runtime
    from gemmmodel.runtime.runner import run_refs

    shape = result["shape"]
    if shape["batch"] != 1:
        raise BadArgument("--verify times the tile kernel at MxNxK only; a batched shape's "
                          "configs are timed by tools/device/acceptance.py sweep --shapes "
                          "MxNxKxB on the GPU machine")
    rt = runtime or get_runtime()
    size = (shape["M"], shape["N"], shape["K"])
    refs = [resolve(item["name"]) for item in result["top"]]
    rows = run_refs(rt, refs, [size], check=True, budget_s=budget_s)
    by_name = {row.kernel: row for row in rows}
    for item in result["top"]:
        row = by_name.get(item["name"])
        item["measured_s"] = row.median_s if row and row.status == "ok" else None
        item["verify_status"] = row.status if row else "missing"
        item["verify_reason"] = row.reason if row else ""
        if item["measured_s"]:
            item["error"] = (item["predicted_s"] - item["measured_s"]) / item["measured_s"]
    timed = [i for i in result["top"] if i.get("measured_s")]
    result["verify"] = {"device": rt.device_info(),
                        "measured_order": [i["name"] for i in sorted(
                            timed, key=lambda i: i["measured_s"])],
                        "predicted_order": [i["name"] for i in timed]}
    return result


def estimator_error(spec) -> dict | None:
    """Summary of the stored register-estimate check for this spec's compile target (None
    when no sample was compiled for it); see gemmmodel.predict_estimator."""
    from gemmmodel.predict_estimator import summary

    return summary(str(spec.compile_target))


from gemmmodel.predict_selection import record_predictions, selection_summary

__all__ = ["estimator_error", "rank", "record_predictions", "selection_summary", "verify"]
