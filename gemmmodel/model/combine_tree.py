"""The term tree of a prediction: combine.py's parts (evaluate) and the Components behind
them as a tree of named Terms rooted at t_total_s, with the formula of each combination step
(its notation is combine.py's docstring), and the bottleneck, the largest contribution."""

from __future__ import annotations

from gemmmodel.model.calib import DEFAULT_FIT
from gemmmodel.model.combine import MODES, PIPES, Components, independent_streams
from gemmmodel.model.terms import Term


def bottleneck(parts: dict, comp: Components) -> str:
    """Name of the largest contribution to the time."""
    pipes = {p: parts[f"pipe_{p}"] for p in PIPES}
    top = max(pipes, key=pipes.get)
    contrib = {top: parts["t_pipes"], "latency": parts["t_latency"],
               "async_wait": parts.get("t_async", 0.0), "launch": comp.launch_s + comp.ramp_s}
    return max(contrib, key=contrib.get)


def _mode_name(code: int) -> str:
    return {v: k for k, v in MODES.items()}[int(code)]


def build_tree(comp: Components, theta: dict, parts: dict) -> Term:
    """The Term tree of a prediction (root: t_total_s)."""
    th = {**DEFAULT_FIT, **theta}
    t = comp.terms
    pipe_terms = []
    for p, eff_key in (("issue", "issue_efficiency"), ("lds", "lds_efficiency"),
                       ("l2", "mem_efficiency"), ("dram", "mem_efficiency"), ("spawn", None)):
        base = t.get(f"t_{p}_s")
        eff = th[eff_key] if eff_key else 1.0
        formula = f"base / {eff_key}" if eff_key else "base"
        inputs = {"base_s": base.value if base else 0.0, **({eff_key: eff} if eff_key else {})}
        kids = (base,) if base else ()
        if p == "issue":
            if comp.copy_share > 0:
                formula += " (cp.async: no mem_instr stall; its warps wait on the copies, " \
                           "t_copies_s)"
            else:
                formula += " + mem_instr_clk * n_mem_instr / clock_hz"
                inputs.update(mem_instr_clk=th["mem_instr_clk"],
                              mem_instr_stall_s=th["mem_instr_clk"] * comp.mem_instr_s)
            # _pipes applies the fetch floor to every build, cp.async ones included
            fetch = t.get("instruction_fetch_rate")
            if fetch is not None:   # fetch.py: the code size's floor on the issue pipe
                formula = f"max({formula}, base / eta_fetch)"
                inputs.update(eta_fetch=comp.fetch_rate,
                              t_fetch_s=inputs["base_s"] / max(comp.fetch_rate, 1e-9))
                kids = kids + (fetch,)
        pipe_terms.append(Term(f"t_{p}_s", parts[f"pipe_{p}"], "s", formula, inputs,
                               children=kids))
    copies_t = None
    if comp.copy_share > 0:
        copies_t = Term("t_copies_s", parts["t_copies"], "s",
                        "copy_share * (1 - copy_share) ** copy_exposure * t_lds_s (base)",
                        {"copy_share": comp.copy_share, "copy_exposure": th["copy_exposure"],
                         "lds_base_s": t["t_lds_s"].value if t.get("t_lds_s") else 0.0},
                        note="cp.async double buffer: the copies' shared-memory writes and L1 "
                             "line cycles, in series with the issue; the less so, the more of "
                             "the LDS pipe they take (device runs AV, AW; copy_exposure.py)")
    pipes_t = Term("t_pipes_s", parts["t_pipes"], "s",
                   ("max(t_l2, t_dram, t_spawn, t_lds, P_top / (1 - q) + t_copies), P = "
                    "{issue, (1 - copy_share) * lds}"
                    + (", >= t_lds + t_chain" if comp.chain_s > 0 else "") + ", "
                    if copies_t is not None else
                    "max(t_l2, t_dram, t_spawn, P_top / (1 - q)), ") +
                   "q = (1 - P_top / (P_issue + P_lds)) ** s, "
                   "s = b + (w - b + a) / overlap_loss, b = min(w, u); a register-staged "
                   "double buffer: q x (v + (1 - v) * lost), v = checked_share + (1 - "
                   "checked_share) * end_share, lost = 1 - fragment_cover at u = 1, else 0; "
                   "full rounds and a partial last round each (t_last_round_s)",
                   {"max_pipe_s": parts["top"], "overlap_loss": th["overlap_loss"],
                    "w": comp.w, "a": comp.lookahead, "u": comp.units,
                    "b": min(comp.w, comp.units),
                    "s": float(independent_streams(comp.w, comp.units, th["overlap_loss"],
                                                   comp.lookahead)), "q": parts["q"],
                    "not_overlapped_s": parts["loss"]},
                   children=tuple(pipe_terms) + tuple(
                       x for x in (copies_t, t.get("lookahead_streams"),
                                   t.get("fragment_cover"), t.get("t_chain_s")) if x))
    lat_children = tuple(x for x in (t.get("global_latency_s"), t.get("load_round_trips"),
                                     t.get("global_latency_load_factor"),
                                     t.get("lds_latency_s"), t.get("cold_tile_latency_s"))
                         if x)
    lat_t = Term("t_latency_s", parts["t_latency"], "s",
                 "n_unit_iters * max(max(0, (C_alone + L)/u - C_cu), C_cu * q_L / (1 - q_L))"
                 " + fill, q_L = (L / (C_alone + L)) ** s_L, s_L = b + (w - b) / overlap_loss"
                 "; L = r g L_g + 2 L_lds (single), (1 - s) * max(0, L_g - C_alone) + s * L_g"
                 " + L_lds (register double buffer, s = checked_share + (1 - checked_share)"
                 " * end_share; L_g there = r g L_g; max(L_g, L_cold) in the max where a"
                 " double buffer runs in one round at up to three blocks per SM or one"
                 " warp per scheduler)",
                 {"n_unit_iters": comp.n_unit_iters, "u": comp.units,
                  "alone_factor": comp.alone_factor, "L_s": parts["latency_per_iter"],
                  "exposed_per_iter_s": parts["exposed_per_iter"], "fill_s": parts["fill"],
                  "q_L": parts["q_latency"],
                  "buffering": _mode_name(comp.mode_code), "ilp": comp.ilp,
                  "latency_scale": th["latency_scale"], "spill_latency_s": comp.lat_spill_s,
                  "checked_share": comp.checked_share, "end_share": comp.end_share},
                 children=lat_children + tuple(x for x in (t.get("end_tile_share"),) if x))
    extra = tuple(x for x in (t.get("t_ramp_s"), t.get("t_launch_s")) if x)
    if comp.async_iters > 0:
        extra = (Term("t_async_wait_s", parts["t_async"], "s",
                      "async_wait_clk * n_async_iters / clock_hz",
                      {"async_wait_clk": th["async_wait_clk"], "n_async_iters": comp.async_iters,
                       "clock_hz": comp.clock_hz},
                      children=tuple(x for x in (t.get("async_copies"),) if x),
                      note="cp.async double buffer: wait for the copies and barrier per block "
                           "tile iteration (fitted)"),) + extra
    if comp.edge_extra > 0:
        checked = comp.edge_issue_full > 1.0
        double = comp.mode_code == MODES["double"] and comp.copy_share <= 0
        name = "edge_tail_scale_db" if double else "edge_tail_scale"
        extra = (Term("t_edge_s", parts["t_edge"], "s",
                      f"{name} * (rho_model - 1) * (t_pipes + t_latency + t_async) "
                      "/ rounds * pile, rho_model = the time with every block on the checked "
                      "path (issue x f" + (", checked_share 1" if double else "") + ") / as it is",
                      {name: th[name], "rho_model": parts["edge_ratio"],
                       "f": comp.edge_issue_full, "t_block_s": parts["t_block"],
                       "rounds": comp.rounds, "pile": comp.edge_pile},
                      children=tuple(x for x in (t.get("edge_block_extra"), t.get("edge_pile"))
                                     if x),
                      note=(f"the launch's last block is an edge block: it ends this much after "
                            f"its round's interior blocks (edge_tail.py; {name} fitted "
                            "to device runs U, AB, AD, AE, AQ)" if checked else
                            "0: this build has no checked path")),
                 ) + extra
    if comp.tail_share > 0:
        extra = (Term("t_last_round_s", parts["t_tail"], "s",
                      "t_pipes + t_latency + t_async of the busiest CU's partial last round "
                      "(share s of its blocks; u, w, alone factor of that round)",
                      {"s": comp.tail_share, "u": comp.tail_units, "w": comp.tail_w,
                       "alone_factor": comp.tail_alone, "t_pipes_s": parts["t_tail_pipes"],
                       "t_latency_s": parts["t_tail_latency"],
                       "exposed_per_iter_s": parts["tail_exposed_per_iter"]},
                      note="included in t_pipes and t_latency: the last round's blocks run "
                           "without the others' overlap"),) + extra
    info = tuple(x for x in (t.get("work"), t.get("waves"), t.get("roofline_flops"),
                             t.get("lds_bytes")) if x)
    return Term("t_total_s", parts["total"], "s",
                "t_launch + t_pipes + t_latency + t_async_wait + t_edge + t_ramp",
                {"theta": dict(th)}, children=(pipes_t, lat_t) + extra + info)
