"""Text rendering of gemmmodel.explain results (the CLI prints these; JSON carries the data).

Only formatting lives here: values arrive in SI units and are converted for printing with
gemmmodel.units.
"""

from __future__ import annotations

from gemmmodel.explain_diff import direction
from gemmmodel.units import format_bytes, format_flops, format_si

_PARAM_ORDER = ("BM", "BN", "BK", "TM", "TN", "TK", "warp_tile", "threads", "padding",
                "vector_width", "buffering", "a_lds_layout", "thread_map")


def value_text(value, unit: str) -> str:
    """A term's value in a readable unit (s -> ms/us, B -> KiB/MB, FLOP/s -> TFLOP/s)."""
    if value is None:
        return "-"
    if unit == "s":
        return format_si(float(value), "time")
    if unit == "B":
        return format_bytes(float(value))
    if unit == "FLOP/s":
        return format_flops(float(value))
    if unit == "FLOP":
        return f"{float(value):.4g} FLOP"
    unit = "" if unit == "1" else unit
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.4g} {unit}".rstrip()
    return f"{int(value)} {unit}".rstrip() if isinstance(value, (int, float)) else str(value)


def ms(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.4g} ms"


def ratio(x) -> str:
    return "-" if x is None else f"{x:.3f}x"


def pct(x) -> str:
    return "-" if x is None else f"{100 * x:+.1f}%"


def shape_text(shape: dict) -> str:
    text = f"{shape['M']}x{shape['N']}x{shape['K']}"
    return text + (f"x{shape['batch']}" if shape.get("batch", 1) != 1 else "")


def tree_lines(term: dict, depth: int, indent: int = 1) -> list[str]:
    """The Term tree as indented lines `name  value  = formula` down to `depth` levels."""
    pad = "  " * indent
    formula = term["formula"]
    if len(formula) > 70:
        formula = formula[:67] + "..."
    value = value_text(term["value"], term["unit"])
    line = f"{pad}{term['name']:<{max(1, 40 - 2 * indent)}} {value:>14}"
    line += f"  = {formula}" if formula else ""
    if term.get("note"):
        line += f"  [{term['note']}]"
    out = [line]
    if depth > 1:
        for sub in term["children"]:
            out.extend(tree_lines(sub, depth - 1, indent + 1))
    return out


def moved_text(diff: dict) -> str:
    """'t_lds_s moved from 7.7 ms to 6.9 ms (lds_passes_per_iter 64 -> 48)'."""
    moved = [m for m in diff.get("moved", []) if m["delta_s"]]
    lead = diff.get("lead") or (moved[0] if moved else None)
    if not lead:
        return "no time term moved"
    text = f"{lead['term']} moved from {ms(lead['from'])} to {ms(lead['to'])}"
    drivers = diff.get("drivers", [])[:2]
    if drivers:
        parts = [f"{d['term']} {value_text(d['from'], d['unit'])} -> "
                 f"{value_text(d['to'], d['unit'])}" for d in drivers]
        text += " (" + "; ".join(parts) + ")"
    others = [m for m in moved if m["term"] != lead["term"]][:2]
    if others:
        text += "; also " + ", ".join(f"{m['term']} {ms(m['from'])} -> {ms(m['to'])}"
                                      for m in others)
    return text


def step_line(name: str, step: dict) -> str:
    if step.get("error"):
        return f"{name} vs {step['parent']}: parent not predicted ({step['error']})"
    meas = ratio(step.get("measured_speedup"))
    where = f" ({step['measured_source']})" if step.get("measured_source") else \
        " (no measurement of both)"
    miss = ""
    if step.get("measured_speedup") and step.get("predicted_speedup"):
        m, p = direction(step["measured_speedup"]), direction(step["predicted_speedup"])
        if m != p:
            miss = f" (wrong direction: measured {m}, predicted {p})"
    return (f"{name} vs {step['parent']}: measured {meas}{where}, predicted "
            f"{ratio(step['predicted_speedup'])}{miss}, because {moved_text(step)}")


def inner_loop_lines(inner: dict) -> list[str]:
    """The inner-loop split of explain (gemmmodel.model.inner)."""
    i = inner["term"]["inputs"]
    lines = [f"inner loop alone ({inner['source']}: "
             f"{i['TM']}x{i['TN']} tile, BK={i['BK']}, at w = {i['w']:.2f} warps per scheduler "
             f"{i['eta']:.3f} warp FMA/clk): {ms(inner['t_inner_s'])} for the kernel's FMAs"]
    for label in ("measured", "predicted"):
        part = inner.get(label)
        if part:
            lines.append(f"  {label} {ms(part['time_s'])}: {ms(part['outside_s'])} "
                         f"({100 * (part['outside_fraction'] or 0):.0f}%) outside the inner "
                         f"loop, {part['outside_clk_per_tile_iteration']:.0f} clk per tile "
                         "iteration")
    return lines


def render_explain(res: dict, depth: int = 3) -> str:
    k, g, r, p = res["kernel"], res["gpu"], res["resources"], res["prediction"]
    lines = [f"kernel {k['name']} ({k['kind']}): {k.get('title', '')}"
             + (f"   [parent {k['parent']}]" if k.get("parent") else "")]
    if k.get("technique"):
        lines.append(f"  technique: {' '.join(k['technique'].split())}")
    params = k["params"]
    lines.append("  parameters: " + " ".join(f"{key}={params[key]}" for key in _PARAM_ORDER
                                              if key in params))
    lines.append(f"GPU {g['name']} ({g['title']}; {g['arch']}, "
                 f"{format_si(g['clock_hz'], 'frequency')}), shape {shape_text(res['shape'])}")
    if r:
        regs = f"{r['regs']} registers/thread"
        if r.get("agprs"):
            regs += f", {r['agprs']} AGPRs"
        if r.get("sgprs"):
            regs += f", {r['sgprs']} SGPRs"
        lines.append(f"resources ({r['facts_source']}): {regs}, LDS "
                     f"{format_bytes(r['lds_bytes'] or 0)}/block, {r['threads']} threads/block")
        lines.append(f"  occupancy: {r['blocks_per_cu']} blocks per CU/SM; {r['headroom']}")
    peak = g["fp32_peak_flops"]
    lines.append(f"prediction: {ms(p['time_s'])} ({format_flops(p['flops'])}, "
                 f"{100 * (p['fraction_of_fp32_peak'] or 0):.0f}% of the "
                 f"{format_flops(peak)} FP32 vector peak); bottleneck: {p['bottleneck']}")
    cal = res["calibration"]
    lines.append("  calibration: " + (
        f"measured rates {', '.join(cal['measured_values'])}" if cal["measured_values"]
        else "none (spec values)") + ("; fitted efficiencies" if cal["fitted"]
                                      else "; a-priori efficiencies (nothing fitted)"))
    lines.append("term tree:")
    lines.extend(tree_lines(p["tree"], depth))
    lines.append("measured vs predicted:")
    if res["measured"]:
        for m in res["measured"]:
            note = f" ({m['note']})" if m.get("note") else ""
            lines.append(f"  {m['source']}{note}: measured {ms(m['time_s'])}, predicted "
                         f"{ms(m['predicted_s'])}, error {pct(m['error'])}")
            for p in m.get("profile", []):
                unit = "B" if p["term"].endswith("bytes") else ""
                lines.append(f"    profiler {p['counter']} = {value_text(p['measured'], unit)}"
                             f"; model {p['term']} = {value_text(p['model'], unit)}")
    else:
        lines.append("  no measurement of this kernel at this shape on this GPU")
    if res.get("inner_loop"):
        lines.extend(inner_loop_lines(res["inner_loop"]))
    if res.get("step"):
        lines.append("step from the parent:")
        lines.append("  " + step_line(k["name"], res["step"]))
    return "\n".join(lines)


def render_compare(res: dict) -> str:
    g = res["gpu"]
    lines = [(f"compare on {g['name']} ({g['title']}), shape {shape_text(res['shape'])}; "
              "fastest predicted first")]
    head = f"  {'kernel':<22} {'predicted':>11} {'TFLOP/s':>8} {'measured':>11} " \
           f"{'bottleneck':<10} {'regs':>5} {'occupancy'}"
    lines.append(head)
    for it in res["items"]:
        r = it["resources"]
        lines.append(f"  {it['name']:<22} {ms(it['predicted_s']):>11} "
                     f"{it['flops'] / 1e12:>8.2f} {ms(it['measured_s']):>11} "
                     f"{it['bottleneck']:<10} {r.get('regs', '-'):>5} "
                     f"{r.get('headroom', '')}")
    lines.append("why this order:")
    for it in res["items"][1:]:
        v = it["versus"]
        meas = f", measured {ratio(v['measured_ratio'])}" if v.get("measured_ratio") else ""
        lines.append(f"  {it['name']} is predicted {ratio(v['predicted_ratio'])} the time of "
                     f"{v['faster']}{meas}: {moved_text(v)}")
    if res.get("measured_order"):
        same = res["measured_order"] == res["predicted_order"]
        lines.append(f"measured order: {' < '.join(res['measured_order'])} "
                     f"({'same as' if same else 'differs from'} the predicted order)")
    split = [it for it in res["items"] if it.get("inner_loop")]
    if split:
        lines.append("outside the inner loop (clk per tile iteration; the inner loop at its "
                     "measured rate, gemmmodel.model.inner):")
        for it in split:
            inner = it["inner_loop"]
            meas = inner.get("measured")
            lines.append(f"  {it['name']:<22} inner loop {ms(inner['t_inner_s'])}; outside: "
                         + (f"measured {meas['outside_clk_per_tile_iteration']:.0f}, "
                            if meas else "")
                         + f"predicted {inner['predicted']['outside_clk_per_tile_iteration']:.0f}")
    sources = {it["facts_source"] for it in res["items"]}
    lines.append("resources from: " + "; ".join(sorted(sources)))
    return "\n".join(lines)
