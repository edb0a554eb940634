"""explain: one kernel (or tile config) on one GPU at one shape, as data.

`explain_kernel(name, gpu, size)` returns a dict: the kernel (technique, parameters), the
resources (registers, LDS, occupancy with its limiter and headroom), the model's prediction
with its full Term tree and bottleneck, every measurement of that kernel and shape
(gemmmodel.measured: ingested profiler data, calibration/<gpu>/ suites, the template sweeps
of tile selection, the shipped MI100 table) with the model's error, the split of the time
at the kernel's own inner-loop rate (template configs, gemmmodel.model.inner), and the step
from the parent kernel (measured and predicted speedup, and which terms moved).
`compare(names, gpu, size)` puts several side by side with the reason for the order.
Text rendering lives in explain_text.py; the CLI is gemmmodel/commands/explain.py.

Resources of a kernel come, in this order, from: the committed compile-facts table
(catalogue kernels); for a template config at a batched shape, the strided-batched entry
(calibration/template_facts_<target>_batched.csv, with the registers the GPU's own
compiler gave it, calibration/<gpu>/build_registers.csv); at a shape that runs its
bounds-checked build (EDGE=1: not a tile multiple), the committed edge table
(calibration/template_facts_<target>_edge.csv) with the registers the GPU's own compiler
gave that build (build_registers.csv, where it has them), or that build compiled here; the registers
the GPU's own compiler reported during calibration (template configs,
calibration/<gpu>/template.csv `occupancy_template`), the committed
template facts table (calibration/template_facts.csv: the configs compare and answers
name by default, compiled offline for every target), the compiler on
this machine (cached on disk; skipped with allow_compile=False or when none is installed),
else the model's register estimate from the tile parameters.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from gemmmodel.errors import BadArgument, GemmModelError
from gemmmodel.explain_diff import KEY_TERMS, key_times, term_diff  # noqa: F401 (re-exported)
from gemmmodel.measured import Measured, measured_for, measured_times, missing, param_text

DEFAULT_GPU = "mi100-1472"          # the seed table's GPU and clock (REFERENCE.md section 3)
DEFAULT_SIZE = (4096, 4096, 4096, 1)
def default_gpu() -> str:
    from gemmmodel.spec import list_specs

    return DEFAULT_GPU if DEFAULT_GPU in list_specs() else "gfx908"


def parse_shape(size) -> tuple[int, int, int, int]:
    """'MxNxK[xB]' or a tuple -> (M, N, K, batch); None gives DEFAULT_SIZE."""
    from gemmmodel.catalogue import parse_size

    if size is None:
        return DEFAULT_SIZE
    if isinstance(size, str):
        return tuple(parse_size(size, dims=4))
    vals = tuple(int(x) for x in size) + (1,) * (4 - len(tuple(size)))
    if len(vals) != 4 or min(vals) < 1:
        raise BadArgument(f"bad size {size!r}: expected MxNxK[xBATCH] >= 1")
    return vals


# ---- resources and prediction -------------------------------------------------------------
@lru_cache(maxsize=16)
def device_registers(gpu: str, root=None) -> dict:
    """{template config name: registers per thread} the GPU's own compiler reported during
    calibration (calibration/<gpu>/template.csv, occupancy_template rows)."""
    from gemmmodel.calibrate.load import load

    try:
        frames = load(gpu, root) if root else load(gpu)
    except (BadArgument, OSError):
        return {}
    df = frames.get("template")
    if df is None or "config" not in df:
        return {}
    sel = df[(df["name"] == "occupancy_template") & (df["quantity"] == "regs_per_thread")
             & (df["status"] == "ok")]
    return {param_text(r, "config"): int(r["value"]) for r in sel.to_dict("records")
            if not missing(r["value"])}


@lru_cache(maxsize=2)
def _facts_table(template: bool = False):
    """A committed compile-facts table, the catalogue's or the template configs' (read once
    per process); BadArgument if absent."""
    from gemmmodel.compile import load_compile_facts
    from gemmmodel.compile.table import TEMPLATE_TABLE_FILE

    return load_compile_facts(TEMPLATE_TABLE_FILE if template else None)


def kernel_facts(ref, spec, allow_compile: bool = True, root=None,
                 shape=None) -> tuple[object, str]:
    """(facts or None, where the resources come from) for a catalogue or template KernelRef
    at `shape` (order in the module docstring)."""
    from gemmmodel.compile import compile_facts

    if ref.kind == "catalogue":
        try:
            from gemmmodel.compile import facts_for

            return (facts_for(ref.name, spec, table=_facts_table()),
                    "compile-facts table (calibration/compile_facts.csv)")
        except GemmModelError:
            pass
        source, entry, defines = ref.entry.source, ref.entry.entry, {}
    elif ref.kind == "template":
        from gemmmodel.compile.table import (
            compile_template_facts,
            template_facts,
            template_table_path,
        )
        from gemmmodel.template import ENTRY, TEMPLATE_SOURCE
        from gemmmodel.template.plan import shape_needs_edge

        regs = device_registers(spec.name, root).get(ref.name)
        if shape is not None and shape_needs_edge(ref.config, shape):
            facts = template_facts(ref.config, spec, regs, shape)
            if facts and facts.get("edge"):
                batched = facts.get("regs_source", "").startswith("batched")
                path = template_table_path(str(spec.compile_target), edge=True, batched=batched)
                where = f"{path.parent.name}/{path.name}"
                if str(facts.get("regs_source", "")).endswith("(device)"):
                    from gemmmodel.model.calib import calibration_name

                    where += (", registers from calibration/"
                              f"{calibration_name(spec.name)}/build_registers.csv")
                what = "strided-batched entry" if batched else "bounds-checked build (EDGE=1)"
                return facts, f"{what}: {where}"
            if allow_compile:
                try:
                    return (compile_template_facts(ref.config, spec, shape),
                            "compiler on this machine (bounds-checked build, EDGE=1)")
                except GemmModelError:
                    pass
        if regs:
            from gemmmodel.model.calib import calibration_name

            return (template_facts(ref.config, spec, regs),
                    f"registers reported on the GPU "
                    f"(calibration/{calibration_name(spec.name)}/template.csv)")
        try:
            from gemmmodel.compile import facts_for

            return (facts_for(ref.name, spec, table=_facts_table(template=True)),
                    "template facts table (calibration/template_facts.csv)")
        except GemmModelError:
            pass
        source, entry, defines = TEMPLATE_SOURCE, ENTRY, ref.config.defines()
    else:
        raise BadArgument(f"{ref.name} is a {ref.kind} kernel: explain and predict take a "
                          "catalogue id or a template config")
    if allow_compile:
        try:
            facts = compile_facts(source, spec, defines=defines, entry=entry)[0]
            return facts, f"compiler on this machine ({facts.compiler.split('|')[0].strip()})"
        except GemmModelError:
            pass
    return None, "estimated from the tile parameters (no compile facts, no compiler)"


def kernel_params(ref, spec) -> dict:
    if ref.kind == "template":
        return ref.config.params(int(spec.wave_size))
    return dict(ref.params)


def predict_ref(ref, spec, shape, calib=None, allow_compile: bool = True, root=None):
    """(Prediction, facts, facts source) of a resolved kernel on `spec` at `shape`."""
    from gemmmodel.model import predict_kernel

    m, n, k, batch = shape
    if batch > 1 and ref.kind == "catalogue":
        raise BadArgument(f"kernel {ref.name} computes one GEMM per launch: give MxNxK, or a "
                          "tile config for MxNxKxBATCH")
    ref.check_shape(m, n, k)
    facts, source = kernel_facts(ref, spec, allow_compile, root, shape)
    return predict_kernel(kernel_params(ref, spec), facts, spec, shape, calib), facts, source


def resources(pred, spec) -> dict:
    """Registers, LDS and occupancy (limiter, headroom) read from a prediction's tree."""
    from gemmmodel.occupancy import occupancy

    res = pred.root.find("resources")
    if res is None:
        return {}
    inp = res.inputs
    occ = occupancy(spec, int(inp["threads"]), int(inp["regs"]), int(inp.get("agprs") or 0),
                    int(inp.get("sgprs") or 0), int(inp.get("lds_bytes") or 0))
    wps = pred.root.find("occupancy_waves_per_simd")
    return {"source": res.formula, "regs": inp["regs"], "agprs": inp.get("agprs"),
            "sgprs": inp.get("sgprs"), "lds_bytes": inp.get("lds_bytes"),
            "threads": inp["threads"], "limiter": occ.limiter, "headroom": occ.headroom,
            "blocks_per_cu": occ.workgroups_per_cu, "waves_per_simd_max": occ.waves_per_simd,
            "waves_per_simd_resident": wps.value if wps else None, "occupancy": occ.to_dict()}


# ---- the explanation ------------------------------------------------------------------------
def _errors(pred, rows: list[Measured]) -> list[dict]:
    """Measured rows with the prediction's error and, for profiled counters, the model's
    value of the same quantity."""
    out = []
    for m in rows:
        row = {**m.to_dict(), "predicted_s": pred.time_s,
               "error": (pred.time_s - m.time_s) / m.time_s}
        compared = []
        for name, value, term in m.profile:
            t = pred.root.find(term)
            compared.append({"counter": name, "measured": value, "term": term,
                             "model": None if t is None else (
                                 t.inputs.get("regs", t.value) if term == "resources"
                                 else t.value)})
        row["profile"] = compared
        out.append(row)
    return out


def _inner_loop(ref, spec, calib, pred, rows: list[Measured]) -> dict | None:
    """The kernel's FMAs at its inner loop's measured rate, and what the measured and the
    predicted time spend outside that loop (gemmmodel.model.inner); template configs only."""
    from gemmmodel.model.inner import INNER_LOOP_FILE, inner_loop_time, outside_share

    if ref.kind != "template":
        return None
    source = f"calibration/{calib.gpu}/{INNER_LOOP_FILE}"
    term = inner_loop_time(calib.inner_loop, kernel_params(ref, spec), pred.root, source)
    if term is None:
        return None
    return {"term": term.to_dict(), "t_inner_s": term.value,
            "source": source,
            "predicted": outside_share(term, pred.time_s),
            "measured": outside_share(term, rows[0].time_s) if rows else None,
            "measured_source": rows[0].source if rows else None}


def _step(ref, spec, shape, calib, pred, measured, allow_compile, root) -> dict | None:
    from gemmmodel.catalogue import resolve

    parent = ref.entry.parent if ref.kind == "catalogue" and ref.entry else None
    if not parent:
        return None
    pref = resolve(parent)
    try:
        ppred, _, _ = predict_ref(pref, spec, shape, calib, allow_compile, root)
    except GemmModelError as err:
        return {"parent": parent, "error": str(err)}
    out = {"parent": parent, "parent_title": pref.entry.title,
           "predicted_speedup": ppred.time_s / pred.time_s,
           "parent_predicted_s": ppred.time_s, "measured_speedup": None,
           "measured_source": None, **term_diff(ppred.root, pred.root)}
    mine = measured_for(measured, ref.name, shape)
    theirs = measured_for(measured, parent, shape)
    for m in mine:
        same = [p for p in theirs if p.source == m.source]
        if same:
            out.update(measured_speedup=same[0].time_s / m.time_s, measured_source=m.source,
                       parent_measured_s=same[0].time_s)
            break
    return out


def explain_kernel(name: str, gpu: str | None = None, size=None, allow_compile: bool = True,
                   root=None) -> dict:
    """Everything `gemmmodel explain --kernel NAME` shows (module docstring)."""
    from gemmmodel.catalogue import resolve
    from gemmmodel.model import load_calib
    from gemmmodel.spec import load_spec

    spec = load_spec(gpu or default_gpu())
    shape = parse_shape(size)
    ref = resolve(name)
    calib = load_calib(spec.name, root)
    pred, _, facts_source = predict_ref(ref, spec, shape, calib, allow_compile, root)
    measured = measured_times(spec, root, sweeps=True)
    rows = measured_for(measured, ref.name, shape)
    peak = float(spec.fp32_peak_flops)
    kernel = {"name": ref.name, "kind": ref.kind, "params": kernel_params(ref, spec)}
    if ref.entry is not None:
        kernel.update(title=ref.entry.title, technique=ref.entry.technique,
                      parent=ref.entry.parent, aliases=list(ref.entry.aliases),
                      notes=ref.entry.notes)
    else:
        kernel.update(title=f"tile template config {ref.name}", technique="", parent=None)
    return {
        "kernel": kernel,
        "gpu": {"name": spec.name, "title": spec.title, "arch": spec.arch,
                "vendor": spec.vendor, "clock_hz": spec.clock_hz, "fp32_peak_flops": peak},
        "shape": {"M": shape[0], "N": shape[1], "K": shape[2], "batch": shape[3]},
        "resources": {**resources(pred, spec), "facts_source": facts_source},
        "prediction": {"time_s": pred.time_s, "flops": pred.flops,
                       "fraction_of_fp32_peak": pred.flops / peak if peak else None,
                       "bottleneck": pred.bottleneck, "key_times": key_times(pred.root),
                       "tree": pred.root.to_dict()},
        "calibration": {"folder": calib.source, "measured_values": sorted(calib.values),
                        "fit": calib.theta(), "fitted": bool(calib.fit),
                        "training_set": list(calib.training)},
        "measured": _errors(pred, rows),
        "inner_loop": _inner_loop(ref, spec, calib, pred, rows),
        "step": _step(ref, spec, shape, calib, pred, measured, allow_compile, root),
    }


def compare(names: list[str], gpu: str | None = None, size=None, allow_compile: bool = True,
            root=None) -> dict:
    """Several kernels / configs side by side, fastest predicted first, with the terms that
    separate each from the next faster one and, for template configs, the inner-loop split
    (what the measured and the predicted time spend outside the inner loop)."""
    from gemmmodel.catalogue import resolve
    from gemmmodel.model import load_calib
    from gemmmodel.spec import load_spec

    if len(names) < 2:
        raise BadArgument("--compare needs at least two kernels or configs")
    spec = load_spec(gpu or default_gpu())
    shape = parse_shape(size)
    calib = load_calib(spec.name, root)
    measured = measured_times(spec, root, sweeps=True)
    items = []
    for name in names:
        ref = resolve(name)
        pred, _, source = predict_ref(ref, spec, shape, calib, allow_compile, root)
        rows = measured_for(measured, ref.name, shape)
        items.append({"name": ref.name, "kind": ref.kind, "pred": pred,
                      "predicted_s": pred.time_s, "flops": pred.flops,
                      "bottleneck": pred.bottleneck, "facts_source": source,
                      "resources": resources(pred, spec), "key_times": key_times(pred.root),
                      "measured_s": rows[0].time_s if rows else None,
                      "measured_source": rows[0].source if rows else None,
                      "inner_loop": _inner_loop(ref, spec, calib, pred, rows)})
    items.sort(key=lambda it: it["predicted_s"])
    for faster, slower in itertools.pairwise(items):
        slower["versus"] = {"faster": faster["name"],
                            "predicted_ratio": slower["predicted_s"] / faster["predicted_s"],
                            **term_diff(faster["pred"].root, slower["pred"].root)}
        if slower["measured_s"] and faster["measured_s"]:
            slower["versus"]["measured_ratio"] = slower["measured_s"] / faster["measured_s"]
    measured_order = [it["name"] for it in sorted(
        (it for it in items if it["measured_s"]), key=lambda it: it["measured_s"])]
    for it in items:
        it.pop("pred")
    return {"gpu": {"name": spec.name, "title": spec.title, "arch": spec.arch},
            "shape": {"M": shape[0], "N": shape[1], "K": shape[2], "batch": shape[3]},
            "items": items, "predicted_order": [it["name"] for it in items],
            "measured_order": measured_order if len(measured_order) == len(items) else None}
