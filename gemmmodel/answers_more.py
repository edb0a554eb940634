"""Questions 5 to 8 of gemmmodel.answers (same conventions: generated sentences, tables and
data; nothing typed in)."""

from __future__ import annotations

import re

from gemmmodel.compile.table import TEMPLATE_CONFIGS as Q8_CONFIGS
from gemmmodel.errors import GemmModelError


#: The NVIDIA GPU whose calibration the answers, reports and `selection` use by default: the
#: one most measured (REFERENCE.md section 3's H200; the H100 of calibration/h100/ was run in
#: session 53 only). Another calibrated GPU is named with --gpu.
PRIMARY_NVIDIA = "h200"


def default_nvidia() -> str:
    """PRIMARY_NVIDIA where calibration/ holds it, else the first calibrated NVIDIA GPU (a
    calibration/<gpu>/ folder named by a spec name), else the H200 spec."""
    from gemmmodel import CALIBRATION_DIR
    from gemmmodel.spec import list_specs, load_spec

    names = set(list_specs())
    if (CALIBRATION_DIR / PRIMARY_NVIDIA).is_dir():
        return PRIMARY_NVIDIA
    if CALIBRATION_DIR.is_dir():
        for folder in sorted(CALIBRATION_DIR.iterdir()):
            if folder.name in names and load_spec(folder.name).vendor == "nvidia":
                return folder.name
    return "h200"


def _fmt(x, spec=".2f", suffix="") -> str:
    return "-" if x is None else f"{x:{spec}}{suffix}"


def _sentences(text: str, pattern: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=\.)\s+", " ".join(text.split()))
            if re.search(pattern, s, re.IGNORECASE)]


def q5(amd, nv) -> dict:
    """Inline-asm LDS loads: catalogue notes of the assembly kernels, the spec's lane groups
    and the compiled waits."""
    from gemmmodel.model.lds import lane_groups

    spec = amd.spec
    asm = [(kid, r) for kid, r in amd.rows.items()
           if re.search(r"inline[- ]asm|assembly", r["ref"].entry.technique + r["ref"].entry.title,
                        re.IGNORECASE)]
    table = [["kernel", "title", "s_waitcnt in main loop", "LDS reads in main loop",
              "cause / fix from the notes"]]
    cause = []
    for kid, r in asm:
        loop = dict(getattr(r["facts"], "mix_loop", None) or {})
        reads = sum(v for k, v in loop.items() if k.startswith("lds_read"))
        notes = _sentences(r["ref"].entry.notes, r"wrong|stale|wait|\"\+v\"")
        cause.extend(n for n in notes if n not in cause)
        table.append([kid, r["ref"].entry.title, loop.get("waitcnt", "-"), reads or "-",
                      " ".join(notes[:2])])
    groups = lane_groups(spec, 4, "read")
    sizes = sorted({len(g) for g in groups})
    answer = [
        (f"On {spec.name} a ds_read_b32 of one wave is served in {len(groups)} lane group(s) "
        f"of {', '.join(map(str, sizes))} lanes (spec lds_phases): the groups' data return at "
        "different times, and the wave may go on before any arrives. Only an s_waitcnt "
        "lgkmcnt makes the registers valid; lanes whose group has not been served still hold "
        "the old value, which is why only some lanes read wrong data."),
        "From the catalogue notes of the assembly kernels: " + (" ".join(cause[:1]) or
                                                                 "(no notes)"),
    ]
    return {"answer": answer, "table": table,
            "data": {"lane_groups_b32": len(groups), "kernels": [k for k, _ in asm]}}


def _what_if(ctx, kid: str) -> list[dict]:
    """Predicted time of single-parameter variants of a catalogue kernel."""
    from gemmmodel.model import load_calib, predict_kernel

    row = ctx.rows[kid]
    base = dict(row["ref"].params)
    calib = load_calib(ctx.spec.name)
    variants = {"padding": (0, 4), "buffering": ("single", "lds-double"), "BK": (8, 16, 32),
                "vector_width": (1, 4)}
    out = []
    for key, values in variants.items():
        for value in values:
            if base.get(key) == value:
                continue
            params = {**base, key: value}
            try:
                t = predict_kernel(params, None, ctx.spec, ctx.shape, calib).time_s
            except GemmModelError:
                continue
            out.append({"change": f"{key}={value}", "predicted_s": t,
                        "gain": row["pred"].time_s / t})
    return sorted(out, key=lambda d: -d["gain"])


def q6(amd, nv) -> dict:
    from gemmmodel.predict import rank

    table = [["GPU", "kernel", "predicted ms", "bottleneck", "occupancy headroom",
              "best single change (predicted gain)", "best template config (predicted gain)"]]
    data = []
    for ctx in (amd, nv):
        timed = [r for r in ctx.rows.values() if r["measured_s"]]
        best = min(timed, key=lambda r: r["measured_s"]) if timed else \
            min(ctx.rows.values(), key=lambda r: r["pred"].time_s)
        kid = best["ref"].name
        ifs = _what_if(ctx, kid)
        top = rank(ctx.spec.name, ctx.shape, top=1, jobs=1)["top"][0]
        gain_tpl = best["pred"].time_s / top["predicted_s"]
        table.append([ctx.spec.name, kid, f"{best['pred'].time_s * 1e3:.3f}",
                      best["pred"].bottleneck, best["resources"].get("headroom", "-"),
                      f"{ifs[0]['change']} ({ifs[0]['gain']:.2f}x)" if ifs else "-",
                      f"{top['name']} ({gain_tpl:.2f}x)"])
        data.append({"gpu": ctx.spec.name, "kernel": kid, "what_if": ifs[:3],
                     "basis": "fastest measured" if timed else "fastest predicted",
                     "template": top["name"], "template_gain": gain_tpl})
    answer = [("Start from the bottleneck the model names and the headroom line of the "
              "occupancy (which resource limits residency and what would lift it), then let "
              "the model try changes before writing code: single-parameter variants of the "
              "best kernel and the ranked tile template (`gemmmodel predict`).")]
    for d in data:
        answer.append(f"{d['gpu']}: from kernel {d['kernel']} ({d['basis']} catalogue "
                      "kernel), "
                      + (f"the best single change is {d['what_if'][0]['change']} "
                         f"({d['what_if'][0]['gain']:.2f}x predicted); " if d["what_if"] else "")
                      + f"the best template config {d['template']} is predicted "
                        f"{d['template_gain']:.2f}x.")
    return {"answer": answer, "table": table, "data": data}


def _vendor_rate(ctx) -> tuple[float | None, str]:
    """Vendor BLAS FLOP/s at the context's shape: calibration rows, else the shipped table's
    vendor_ratio column (time ratio vendor / kernel)."""
    import csv

    from gemmmodel.model.samples import DATA_DIR, VALIDATION_TABLES

    flop = 2.0 * ctx.shape[0] * ctx.shape[1] * ctx.shape[2] * ctx.shape[3]
    for m in ctx.measured:
        if m.kernel in ("cublas", "rocblas") and tuple(m.shape) == ctx.shape:
            return flop / m.time_s, m.source
    for table, info in VALIDATION_TABLES.items():
        if info["arch"] != str(ctx.spec.arch) or (info["size"],) * 3 != ctx.shape[:3]:
            continue
        with (DATA_DIR / table).open(newline="") as fh:
            rows = [r for r in csv.DictReader(fh) if r.get("vendor_ratio")]
        times = [float(r["time_ms"]) * float(r["vendor_ratio"]) * 1e-3 for r in rows]
        if times:
            times.sort()
            return flop / times[len(times) // 2], f"{info['source']} (time x vendor_ratio)"
    return None, ""


def q7(amd, nv) -> dict:
    table = [["GPU", "vector FP32 peak", "packed FP32 peak", "matrix FP32 peak",
              "vendor BLAS measured", "vendor / vector peak", "kernels' peak (from their code)"]]
    data = []
    for ctx in (amd, nv):
        s = ctx.spec
        per = s.compute_units * s.clock_hz / 1e12
        vec, pk = s.fp32_flop_per_clk_per_cu * per, s.packed_fp32_flop_per_clk_per_cu * per
        mat = s.matrix_fp32_flop_per_clk_per_cu * per
        rate, src = _vendor_rate(ctx)
        kinds = sorted({r["pred"].root.find("compute_peak_flops").inputs["kind"]
                        for r in ctx.rows.values() if r["pred"].root.find("compute_peak_flops")})
        ratio = rate / 1e12 / vec if rate else None
        table.append([s.name, f"{vec:.1f}", f"{pk:.1f}", f"{mat:.1f}",
                      f"{rate / 1e12:.1f}" if rate else "-", _fmt(ratio, ".2f", "x"),
                      ", ".join(kinds)])
        data.append({"gpu": s.name, "vector_tflops": vec, "packed_tflops": pk,
                     "matrix_tflops": mat, "vendor_tflops": rate / 1e12 if rate else None,
                     "vendor_source": src, "kernel_peak_kinds": kinds})
    a = data[0]
    answer = [(f"{a['gpu']}: the vendor BLAS ran at "
              f"{_fmt(a['vendor_tflops'], '.1f', ' TFLOP/s')} ({a['vendor_source'] or 'no data'}) "
              f"against a vector FP32 peak of {a['vector_tflops']:.1f} and a matrix (MFMA) FP32 "
              f"peak of {a['matrix_tflops']:.1f} TFLOP/s at the spec clock: a rate above the "
              "vector peak is only reachable with the matrix instructions."),
              "Judge each kernel against the peak of the instructions its compiled code uses "
              "(the model's compute_peak_flops term reads the compile facts: "
              + "; ".join(f"{d['gpu']}: {', '.join(d['kernel_peak_kinds'])}" for d in data)
              + "), and the vendor library against the matrix peak where it uses MFMA."]
    return {"answer": answer, "table": table, "data": data}


def q8(amd, nv, compare) -> dict:
    from gemmmodel.explain_text import value_text
    from gemmmodel.spec import list_specs

    gpus = [amd.spec.name, nv.spec.name] + [g for g in ("gfx906",) if g in list_specs()]
    table = [["GPU", "faster (predicted)", "predicted ratio", "measured ratio", "why (terms)"]]
    data = []
    for gpu in dict.fromkeys(gpus):
        res = compare(list(Q8_CONFIGS), gpu, amd.shape, allow_compile=amd.allow_compile)
        slow = res["items"][1]
        v = slow["versus"]
        lead = v["lead"]["term"] if v.get("lead") else "-"
        drivers = ", ".join(f"{d['term']} {value_text(d['from'], d.get('unit', ''))} -> "
                            f"{value_text(d['to'], d.get('unit', ''))}"
                            for d in v["drivers"][:2])
        table.append([gpu, res["items"][0]["name"], f"{v['predicted_ratio']:.2f}x",
                      _fmt(v.get("measured_ratio"), ".2f", "x"), f"{lead}: {drivers}"])
        data.append({"gpu": gpu, "faster": res["items"][0]["name"],
                     "predicted_ratio": v["predicted_ratio"],
                     "measured_ratio": v.get("measured_ratio"),
                     "measured_order": res["measured_order"], "lead": lead})
    answer = ["Both tiles are the same template kernel, so the difference is the hardware: "
              + "; ".join(f"on {d['gpu']} the model predicts {d['faster']} faster by "
                          f"{d['predicted_ratio']:.2f}x (term: {d['lead']}"
                          + (f"; measured {d['measured_ratio']:.2f}x" if d["measured_ratio"]
                             else "") + ")" for d in data) + "."]
    return {"answer": answer, "table": table, "data": data}
