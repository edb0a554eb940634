"""The eight user questions of REFERENCE.md section 1, answered from the model and the data.

`answer_all(amd, nvidia, size)` returns one dict per question: `question`, `answer`
(sentences generated from the numbers below them; no number is typed in), `table`
(header + rows) and `data`. Sources: the catalogue (techniques, notes), the specs, the
compile-facts table, the shipped MI100 table, calibration/<gpu>/ and the model's
predictions (gemmmodel.explain). answers_page.py writes the HTML page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from scipy import stats

from gemmmodel.errors import GemmModelError
from gemmmodel.explain import DEFAULT_SIZE, compare, predict_ref, resources
from gemmmodel.measured import measured_for, measured_times
from gemmmodel.explain_diff import BAND, direction, term_diff

QUESTIONS = (
    "How can the measured speedup of each step be explained by theory?",
    "How to find the bottleneck (what a profiler such as rocprof / Nsight Compute would show)?",
    "Why did some classic CUDA optimisations do nothing, or hurt, under HIP on AMD?",
    "Is hipcc's code generation the problem (vendor GEMMs are hand-written assembly)?",
    "Why does a hand-written LDS load in inline assembly read wrong data in some lanes?",
    "Performance is below expectation: what next?",
    ("Why does rocBLAS report more TFLOP/s on MI100 than the FP32 vector peak, and what peak "
    "should each kernel be judged against?"),
    ("Nothing beats 64x64x16 on gfx906/MI100, yet 128x128x8 wins on NVIDIA: implementation or "
    "hardware?"),
)
#: Model term -> the profiler counters that measure the same thing (names as documented by
#: Nsight Compute's metrics reference and `rocprof --list-derived`).
PROFILER_COUNTERS = {
    "t_issue_s": ("smsp__inst_executed.sum, sm__inst_executed.avg.per_cycle_active",
                  "VALUBusy, VALUUtilization, SALUBusy"),
    "t_lds_s": (("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum, "
                 "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"),
                "LDSBankConflict, ALUStalledByLDS"),
    "t_l2_s": ("lts__t_bytes.sum, lts__t_sector_hit_rate.pct", "L2CacheHit, TCC_HIT, TCC_MISS"),
    "t_dram_s": ("dram__bytes.sum, dram__throughput.avg.pct_of_peak_sustained_elapsed",
                 "FETCH_SIZE, WRITE_SIZE"),
    "occupancy": ("sm__warps_active.avg.pct_of_peak_sustained_active", "Wavefronts, GPUBusy"),
    "t_latency_s": ("smsp__average_warp_latency_issue_stalled_long_scoreboard (stall reasons)",
                    "MemUnitStalled, ALUStalledByLDS"),
}



@dataclass
class Ctx:
    """Predictions and measurements of every catalogue kernel on one GPU at one shape."""

    spec: object
    shape: tuple
    allow_compile: bool
    rows: dict = field(default_factory=dict)       # id -> {pred, measured, resources, …}
    measured: list = field(default_factory=list)


def context(gpu: str, shape=DEFAULT_SIZE, allow_compile: bool = True) -> Ctx:
    from gemmmodel.catalogue import load_catalogue, resolve
    from gemmmodel.model import load_calib
    from gemmmodel.spec import load_spec

    spec = load_spec(gpu)
    calib = load_calib(spec.name)
    ctx = Ctx(spec, tuple(shape), allow_compile, measured=measured_times(spec))
    for kid in load_catalogue():
        ref = resolve(kid)
        try:
            pred, facts, source = predict_ref(ref, spec, shape, calib, allow_compile)
        except GemmModelError:
            continue
        hits = measured_for(ctx.measured, kid, shape)
        ctx.rows[kid] = {"ref": ref, "pred": pred, "facts": facts, "source": source,
                         "measured_s": hits[0].time_s if hits else None,
                         "measured_source": hits[0].source if hits else None,
                         "resources": resources(pred, spec)}
    return ctx


def _steps(ctx: Ctx) -> list[dict]:
    out = []
    for kid, row in ctx.rows.items():
        parent = row["ref"].entry.parent
        if not parent or parent not in ctx.rows:
            continue
        prow = ctx.rows[parent]
        diff = term_diff(prow["pred"].root, row["pred"].root)
        meas = (prow["measured_s"] / row["measured_s"]
                if prow["measured_s"] and row["measured_s"] else None)
        out.append({"step": f"{parent} -> {kid}", "parent": parent, "kernel": kid,
                    "measured": meas,
                    "predicted": prow["pred"].time_s / row["pred"].time_s,
                    "lead": diff["lead"]["term"] if diff["lead"] else "-", "diff": diff})
    return out


def _fmt(x, spec=".2f", suffix="x") -> str:
    return "-" if x is None else f"{x:{spec}}{suffix}"


def _step_stats(steps: list[dict]) -> dict:
    both = [s for s in steps if s["measured"]]
    agree = [s for s in both if direction(s["measured"]) == direction(s["predicted"])]
    rho = stats.spearmanr([s["measured"] for s in both],
                          [s["predicted"] for s in both]).statistic if len(both) > 2 else None
    worst = sorted(both, key=lambda s: -abs(math.log(s["measured"] / s["predicted"])))[:3]
    return {"measured_steps": len(both), "direction_agree": len(agree), "rho": rho,
            "worst": worst}


def q1(amd: Ctx, nv: Ctx) -> dict:
    table = [["step", f"measured {amd.spec.name}", f"predicted {amd.spec.name}",
              "term that moved", f"measured {nv.spec.name}", f"predicted {nv.spec.name}",
              f"term ({nv.spec.name})"]]
    steps, nv_list = _steps(amd), _steps(nv)
    nv_steps = {s["step"]: s for s in nv_list}
    for s in steps:
        n = nv_steps.get(s["step"], {})
        table.append([s["step"], _fmt(s["measured"]), _fmt(s["predicted"]), s["lead"],
                      _fmt(n.get("measured")), _fmt(n.get("predicted")), n.get("lead", "-")])
    answer = [("Each step's speedup is the ratio of two predicted times, and the model names "
              "the term that changed (the Term tree of `gemmmodel explain --kernel ID`).")]
    data = {}
    for ctx, lst in ((amd, steps), (nv, nv_list)):
        st = _step_stats(lst)
        data[ctx.spec.name] = {k: v for k, v in st.items() if k != "worst"}
        if not st["measured_steps"]:
            answer.append(f"{ctx.spec.name}: no measured steps at this shape.")
            continue
        answer.append(
            f"{ctx.spec.name}: {st['measured_steps']} steps have a measured speedup; the "
            f"model gets the direction (faster / same within {BAND:.0%} / slower) of "
            f"{st['direction_agree']} right, Spearman rho of measured vs predicted speedups "
            f"{_fmt(st['rho'], '.2f', '')}. Largest misses: " + "; ".join(
                f"{s['step']} measured {_fmt(s['measured'])} vs predicted "
                f"{_fmt(s['predicted'])} (term: {s['lead']})" for s in st["worst"]) + ".")
    return {"answer": answer, "table": table,
            "data": {"steps": [{k: v for k, v in s.items() if k != "diff"} for s in steps],
                     **data[amd.spec.name], "per_gpu": data}}


def _share(pred) -> dict:
    root = pred.root
    pipes = root.find("t_pipes_s")
    out = {c.name: c.value / pred.time_s for c in pipes.children} if pipes else {}
    lat = root.find("t_latency_s")
    out["t_latency_s"] = lat.value / pred.time_s if lat else 0.0
    return out


def q2(amd: Ctx, nv: Ctx) -> dict:
    table = [["GPU", "kernel", "bottleneck", "largest term (share of time)", "Nsight Compute",
              "rocprof"]]
    counts = {}
    for ctx in (amd, nv):
        for row in ctx.rows.values():
            counts.setdefault(ctx.spec.name, {}).setdefault(row["pred"].bottleneck, 0)
            counts[ctx.spec.name][row["pred"].bottleneck] += 1
        best = min((r for r in ctx.rows.values() if r["measured_s"]),
                   key=lambda r: r["measured_s"], default=None) or \
            min(ctx.rows.values(), key=lambda r: r["pred"].time_s)
        share = _share(best["pred"])
        top = max(share, key=share.get)
        ncu, rp = PROFILER_COUNTERS.get(top, ("", ""))
        table.append([ctx.spec.name, best["ref"].name, best["pred"].bottleneck,
                      f"{top} ({100 * share[top]:.0f}%)", ncu, rp])
    answer = [
        ("The bottleneck is the largest contribution to the predicted time: one of the pipes "
        "(issue, LDS, L2, DRAM, block spawn), the exposed latency, or launch. Each has a "
        "profiler counter that measures the same quantity (table), so a profile confirms or "
        "refutes the model term by term; `gemmmodel ingest --ncu/--rocprof` stores a profile "
        "and `explain` shows it next to the prediction."),
        "Bottlenecks over the catalogue: " + "; ".join(
            f"{g}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())) for g, c in
            counts.items()) + ".",
    ]
    return {"answer": answer, "table": table, "data": {"bottlenecks": counts,
                                                        "counters": PROFILER_COUNTERS}}


def q3(amd: Ctx, nv: Ctx) -> dict:
    nv_steps = {s["step"]: s for s in _steps(nv)}
    table = [["step", f"measured {amd.spec.name}", f"predicted {amd.spec.name}",
              "term that moved (AMD)", f"predicted {nv.spec.name}", "term (NVIDIA)",
              "registers AMD (parent -> kernel)"]]
    flat = []
    for s in _steps(amd):
        if s["measured"] is None or direction(s["measured"]) == "faster":
            continue
        n = nv_steps.get(s["step"], {})
        ra, rb = amd.rows[s["parent"]]["resources"], amd.rows[s["kernel"]]["resources"]
        table.append([s["step"], _fmt(s["measured"]), _fmt(s["predicted"]), s["lead"],
                      _fmt(n.get("predicted")), n.get("lead", "-"),
                      f"{ra.get('regs')} -> {rb.get('regs')}"])
        flat.append({**{k: v for k, v in s.items() if k != "diff"},
                     "nvidia_predicted": n.get("predicted")})
    helped_nv = [f for f in flat if direction(f["nvidia_predicted"] or 1.0) == "faster"]
    answer = [
        (f"{len(flat)} steps did nothing or hurt on {amd.spec.name} (measured speedup <= "
         f"{1 + BAND:.2f}). For {len(helped_nv)} of them the model predicts a gain on "
         f"{nv.spec.name}: ")
        + ", ".join(f"{f['step']} ({_fmt(f['nvidia_predicted'])} there)" for f in helped_nv)
        + ". The terms column names what differs. " + _machine_contrast(amd.spec, nv.spec),
    ]
    return {"answer": answer, "table": table, "data": {"steps": flat}}


def _machine_contrast(amd, nv) -> str:
    """The spec facts behind different terms: VALU clocks per wave instruction, LDS lane
    groups, and the block size the compiler plans registers for without launch bounds."""
    from gemmmodel.model.kernel import describe
    from gemmmodel.model.latency import valu_cycles_per_instr
    from gemmmodel.model.lds import lane_groups
    from gemmmodel.model.waves import assumed_block_threads, register_cap

    parts = []
    for s in (amd, nv):
        lanes = s.fp32_flop_per_clk_per_cu / 2 / s.simds_per_cu
        groups = len(lane_groups(s, 4, "read"))
        desc = describe({"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "threads": 256})
        planned, _ = assumed_block_threads(s, desc)
        cap = (f"without __launch_bounds__ the compiler plans for {planned}-thread blocks, "
               f"capping registers at {register_cap(s, planned)}" if planned else
               "the compiler plans registers for the launched block")
        parts.append(f"{s.name}: a wave of {s.wave_size} on {lanes:.0f}-lane SIMDs holds "
                     f"its SIMD {valu_cycles_per_instr(s):.0f} clock(s) per VALU "
                     f"instruction, a 4-byte LDS read is served in {groups} lane group(s), "
                     f"{cap}")
    return "; ".join(parts) + " (spec and compiler data)."


def _loop_ratio(facts) -> float | None:
    loop = dict(getattr(facts, "mix_loop", None) or {})
    if not loop.get("fma"):
        return None
    return (loop.get("instructions", 0) - loop["fma"]) / loop["fma"]


def q4(amd: Ctx, nv: Ctx) -> dict:
    table = [["kernel", f"non-FMA instr. per FMA, main loop ({amd.spec.compile_target})",
              f"same ({nv.spec.compile_target})", "AMD regs / spills / scratch B",
              "issue time FMA-only / all (AMD)"]]
    ratios = []
    for kid, row in amd.rows.items():
        f_amd, f_nv = row["facts"], nv.rows.get(kid, {}).get("facts")
        ra, rn = _loop_ratio(f_amd), _loop_ratio(f_nv)
        issue = row["pred"].root.find("t_issue_s")
        base = issue.children[0] if issue and issue.children else None
        fma_only = base.inputs.get("t_fma_only_s") if base else None
        share = fma_only / base.value if fma_only and base and base.value else None
        spills = (f"{getattr(f_amd, 'vgprs', '-')} / {getattr(f_amd, 'spills', '-')} / "
                  f"{getattr(f_amd, 'scratch_bytes', '-')}") if f_amd is not None else "-"
        table.append([kid, _fmt(ra, ".2f", ""), _fmt(rn, ".2f", ""), spills,
                      _fmt(share, ".0%", "")])
        if ra is not None and rn is not None:
            ratios.append((kid, ra, rn))
    spilled = [k for k, r in amd.rows.items() if getattr(r["facts"], "spills", 0)]
    best = min((r for r in amd.rows.values() if r["measured_s"]), key=lambda r: r["measured_s"],
               default=None)
    answer = [f"Compile facts: {len(ratios)} kernels compiled for both targets. hipcc's main "
              "loops carry " + (f"{sum(a for _, a, _ in ratios) / len(ratios):.2f} non-FMA "
                                f"instructions per FMA on average, nvcc's "
                                f"{sum(b for *_, b in ratios) / len(ratios):.2f}"
                                if ratios else "an unknown overhead (no compile facts)") + ". "
              f"Kernels where hipcc spilled registers: {', '.join(spilled) or 'none'} (their "
              "notes in the catalogue give the cause: the VGPR cap without __launch_bounds__)."]
    if best is not None:
        answer.append(f"The fastest measured catalogue kernel on {amd.spec.name}, "
                      f"{best['ref'].name}, is predicted to be bound by "
                      f"{best['pred'].bottleneck}: code generation matters where the issue "
                      "term binds; where LDS or latency binds, fewer instructions do not help. "
                      "Vendor GEMMs also use other instructions (question 7).")
    return {"answer": answer, "table": table, "data": {"loop_overhead": ratios,
                                                        "spilled": spilled}}


def answer_all(amd: str | None = None, nvidia: str | None = None, size=None,
               allow_compile: bool = True) -> list[dict]:
    """All eight answers (see the module docstring)."""
    from gemmmodel.answers_more import default_nvidia, q5, q6, q7, q8
    from gemmmodel.explain import default_gpu, parse_shape

    shape = parse_shape(size)
    a = context(amd or default_gpu(), shape, allow_compile)
    n = context(nvidia or default_nvidia(), shape, allow_compile)
    parts = [q1(a, n), q2(a, n), q3(a, n), q4(a, n), q5(a, n), q6(a, n), q7(a, n),
             q8(a, n, compare)]
    return [{"id": i + 1, "question": QUESTIONS[i], **p} for i, p in enumerate(parts)]
