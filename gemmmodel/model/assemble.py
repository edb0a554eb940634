"""Assemble the theta-independent Components of one (kernel, GPU, shape) prediction.

Reads the kernel parameters, compile facts (optional), spec and calibration (optional) and
computes every term of docs/model.md up to the combination (combine.py), converting clocks
to seconds with the clock the calibration measured (the FMA peak ratio) or the spec clock.
"""

from __future__ import annotations

import math

from gemmmodel.errors import BadArgument
from gemmmodel.model import latency as lat
from gemmmodel.model.calib import Calib, value
from gemmmodel.model.chain import fragment_chain
from gemmmodel.model.cold import cold_tile_latency
from gemmmodel.model.combine import MODES, Components
from gemmmodel.model.edge_tail import edge_pile_term
from gemmmodel.model.fetch import code_kib, fetch_term, loop_code_kib, loop_in_code_rate, stall_rate
from gemmmodel.model.kernel import KernelDesc, describe
from gemmmodel.model.lds import async_copy_cycles_per_iter, lds_passes_per_iter, pass_rate_per_clk
from gemmmodel.model.lines import global_line_term
from gemmmodel.model.pitch import pitch_term
from gemmmodel.model.spawn import spawn_terms
from gemmmodel.model.terms import Term
from gemmmodel.model.traffic import (
    compute_peak,
    dram_bytes,
    l2_bytes,
    lds_bytes,
    roofline,
    traffic_times,
)
from gemmmodel.model.waves import busiest_simd_waves, wave_info
from gemmmodel.model.work import (
    checked_path_term,
    edge_block_term,
    iterations,
    kernel_mix,
    with_estimated_spills,
    with_table_spills,
    work_term,
)


def normalise_shape(shape) -> tuple[int, int, int, int]:
    """(M, N, K) or (M, N, K, batch) -> (M, N, K, batch) of positive ints."""
    vals = tuple(int(x) for x in shape)
    if len(vals) == 3:
        vals = vals + (1,)
    if len(vals) != 4 or min(vals) < 1:
        raise BadArgument(f"bad shape {shape!r}: expected (M, N, K[, batch]) >= 1")
    return vals


def effective_clock(spec, calib: Calib | None) -> Term:
    """Clock that turns clocks into seconds: spec clock x measured / spec FMA peak where the
    FMA peak was measured (it folds in the clock the GPU really ran at), else the measured
    clock, else the spec clock."""
    measured, origin = value(spec, calib, "fp32_flops")
    spec_peak = float(spec.fp32_flop_per_clk_per_cu) * spec.compute_units * spec.clock_hz
    if origin == "calibrated" and spec_peak > 0:
        ratio, how = measured / spec_peak, "calibrated FMA peak"
    else:
        clock, c_origin = value(spec, calib, "clock_hz")
        ratio = clock / spec.clock_hz if c_origin == "calibrated" else 1.0
        how = "calibrated clock" if c_origin == "calibrated" else "spec"
    return Term("clock_hz", spec.clock_hz * ratio, "Hz", "clock_hz * measured / spec",
                {"spec_clock_hz": spec.clock_hz, "ratio": ratio}, note=f"clock: {how}")


def _loop_ilp(desc: KernelDesc, facts) -> float:
    """Loads in flight per wave for a kernel without LDS: k steps per compiled loop trip."""
    loop = dict(getattr(facts, "mix_loop", None) or {}) if facts is not None else {}
    loads = sum(v for k, v in loop.items() if k.startswith("global_load_"))
    per_step = desc.tm + desc.tn
    return max(1.0, loads / per_step) if loads else 1.0


def assemble(params: dict, facts, spec, shape, calib: Calib | None = None) -> Components:
    """All theta-independent parts of a prediction (see docs/model.md)."""
    desc = describe(params)
    shape = normalise_shape(shape)
    wave = int(spec.wave_size)
    wi = wave_info(desc, spec, shape, facts)
    mix = kernel_mix(desc, wave, facts)
    if wi.resources is not None and wi.resources.spilled:
        mix = with_estimated_spills(mix, desc, wi.resources.spilled, spec)
    mix = with_table_spills(mix, facts, spec)
    clock_t = effective_clock(spec, calib)
    clock = clock_t.value
    iters = iterations(desc, shape[2])
    simds = int(spec.simds_per_cu)
    busiest = wi.busiest_cu_blocks

    # issue pipe: waves per SIMD over the launch on the busiest CU x clocks per wave-iteration
    issue_cyc = lat.issue_cycles_per_wave_iter(spec, mix, wi.waves_per_simd)
    # the busiest SIMD of the busiest CU: ceil(its waves over the launch / SIMDs)
    wave_iters_simd = busiest_simd_waves(busiest, wi.waves_per_block, simds) * iters
    fma_s = wave_iters_simd * lat.valu_cycles_per_instr(spec) * mix.fma_instructions / clock
    checked = checked_path_term(desc, shape, facts)
    edge_extra = edge_block_term(desc, shape, facts)
    n_mem_instr = wave_iters_simd * mix.non_valu * checked.value
    t_issue = Term("t_issue_s", wave_iters_simd * issue_cyc.value * checked.value / clock, "s",
                   "wave_iterations_per_simd * issue_cycles_per_wave_iteration "
                   "* checked_path_factor / clock_hz",
                   {"wave_iterations_per_simd": wave_iters_simd, "t_fma_only_s": fma_s,
                    "n_mem_instr": n_mem_instr},
                   children=(issue_cyc, checked, clock_t))

    # LDS pipe
    lds_bpc, lds_src = value(spec, calib, "lds_bytes_per_clk_per_cu")
    rate = lds_bpc / (float(spec.lds_banks) * float(spec.lds_bank_bytes)) if lds_src == \
        "calibrated" else pass_rate_per_clk(spec)
    passes = lds_passes_per_iter(desc, spec, mix) if desc.uses_lds else None
    n_passes = passes.value if passes else 0.0
    copies = async_copy_cycles_per_iter(desc, spec, calib, shape) if desc.uses_lds else None
    lines = global_line_term(desc, calib.l1_lines if calib is not None else (),
                             int(spec.wave_size), copies is not None)
    line_clk = lines.value if lines is not None else 0.0
    pitch = pitch_term(desc, shape, calib.pitch if calib is not None else (),
                       copies is not None)
    pitch_f = pitch.value if pitch is not None else 1.0
    t_lds = Term("t_lds_s", busiest * iters * (n_passes / rate + line_clk) * pitch_f / clock,
                 "s", "busiest_cu_blocks * iterations * (passes_per_iter / passes_per_clk "
                 "+ l1_line_cycles_per_iter) * a_pitch_factor / clock_hz",
                 {"busiest_cu_blocks": busiest, "iterations": iters,
                  "passes_per_clk": rate},
                 children=tuple(t for t in (passes, lines, pitch) if t is not None),
                 note=f"LDS rate: {lds_src}; global accesses' L1 lines: "
                      f"{'measured (lines.py)' if lines is not None else 'none'}; "
                      f"A pitch: {'measured (pitch.py)' if pitch is not None else 'none'}")

    # a cp.async double buffer's copies: their share of the LDS pipe (write passes and L1
    # line cycles), which runs in series with the issue (combine.py, thirty-first change)
    copy_clk = (float(passes.inputs["write_passes"]) / rate + line_clk
                if copies is not None and passes is not None else 0.0)
    pipe_clk = n_passes / rate + line_clk
    copy_share = copy_clk / pipe_clk if pipe_clk > 0 else 0.0

    # traffic
    slots = int(spec.compute_units) * wi.blocks_per_cu
    l2_t = l2_bytes(desc, shape, wi.blocks, mix)
    dram_t = dram_bytes(desc, spec, shape, slots)
    lds_b = lds_bytes(desc, spec, shape, wi.blocks)
    t_l2, t_dram = traffic_times(spec, calib, l2_t, dram_t, 1.0)
    work_t = work_term(desc, shape, wi.blocks, wave, mix)
    roof = roofline(work_t.value, spec, calib, compute_peak(spec, facts), l2_t, dram_t, lds_b)

    # spawn and launch
    t_spawn, t_ramp, t_launch = spawn_terms(spec, calib, desc.threads, wi.blocks, slots)

    # latency
    g_lat = lat.global_latency(spec, calib, l2_t.value, dram_t.value)
    lds_lat, lds_lat_src = value(spec, calib, "lds_latency_s")
    lds_lat_t = Term("lds_latency_s", lds_lat, "s", "spec / calibration",
                     note=f"LDS latency: {lds_lat_src}")
    spill_t = lat.spill_latency(spec, calib, mix.spill_loads, mix.spill_ops)
    spill_lat = spill_t.value
    ahead = lat.lookahead_streams(spec, desc.tm, desc.tn, desc.uses_lds, lds_lat, clock,
                                  lat.loaded_lds_latency_clk(calib, wi.waves_per_simd))
    if desc.uses_lds:
        units = max(wi.resident_blocks, 1e-9)
        n_unit_iters = float(busiest) * iters
        alone = _alone_factor(desc, units, simds, wi.waves_per_block)
        mode = "double" if desc.double_buffered else "single"
        fill_blocks = busiest / units
        # the loads a tile iteration waits in series: a single buffer's, and a register-
        # staged double buffer's (its prefetch is waited for in the same trip); a cp.async
        # double buffer (copies) waits its copies instead (t_async)
        trips = lat.load_trips_per_tile(desc, facts) if copies is None else None
    else:
        units = max(wi.resident_blocks * wi.waves_per_block, 1e-9)
        n_unit_iters = float(busiest) * wi.waves_per_block * shape[2]
        alone = _alone_factor(desc, units, simds, wi.waves_per_block)
        mode = "none"
        fill_blocks = 0.0
        trips = None
    tail = _tail_round(desc, spec, mix, wi, units)
    # instruction fetch: the issue rate the kernel's code size allows at its w (run AC)
    icache = calib.icache if calib is not None else ()
    kib = code_kib(facts, spec)
    # and, at two warps per scheduler, run BL's rate of the main loop inside that code
    # with the blocks out of step, where it is higher (forty-first change)
    loop_kib = loop_code_kib(facts, spec)
    loop_eta = loop_in_code_rate(calib.icache_phase if calib is not None else (), loop_kib,
                                 kib, iters, wi.waves_per_simd)
    fetch = fetch_term(icache, kib, wi.waves_per_simd,
                       str(calib.source) if calib is not None else "", loop_eta,
                       {"loop_KiB": loop_kib, "trips": iters, "eta_BL": loop_eta})
    if fetch is not None and "tail_w" in tail:
        tail["tail_fetch_rate"] = stall_rate(icache, kib, tail["tail_w"])
    # a register-staged double buffer's tiles that take the checked loads wait for them
    # before the compute (its latency and overlap loss, combine.py)
    register_double = mode == "double" and copies is None
    share = float(checked.inputs.get("s", 0.0)) if register_double else 0.0
    # and its two end tiles, which the prefetch does not cover (thirty-fifth change)
    end = lat.end_tile_share(iters) if register_double else None
    # and how far ahead of their FMAs its loop reads the fragments (session 67); a cp.async
    # double buffer's too, for its fragment chain at one block per SM (session 72)
    ahead_fmas = (_fragment_lookahead(facts) if register_double or copies is not None
                  else None)
    cover = (lat.fragment_cover(spec, ahead_fmas[0], wi.waves_per_simd, lds_lat, clock,
                                lat.loaded_lds_latency_clk(calib, wi.waves_per_simd),
                                ahead_fmas[1])
             if ahead_fmas is not None else None)
    chain = (fragment_chain(cover, lds_lat, clock, float(busiest) * iters, desc.bk,
                            lat.valu_cycles_per_instr(spec) * mix.valu + mix.non_valu, units)
             if copies is not None and cover is not None else None)
    # the CU that holds the most edge blocks at once ends the launch (edge_tail.py)
    pile = edge_pile_term(int(edge_extra.inputs.get("edge_blocks", 0)) if
                          edge_extra.value > 0 else 0,
                          int(edge_extra.inputs.get("blocks", 0)),
                          min(int(wi.blocks_per_cu), int(wi.busiest_cu_blocks)),
                          int(spec.compute_units), launch_blocks=int(wi.blocks))
    terms = {"t_issue_s": t_issue, "t_lds_s": t_lds, "t_l2_s": t_l2, "t_dram_s": t_dram,
             "t_spawn_s": t_spawn, "t_ramp_s": t_ramp, "t_launch_s": t_launch,
             "global_latency_s": g_lat, "lds_latency_s": lds_lat_t, "work": work_t,
             "waves": wi.term, "roofline_flops": roof, "lds_bytes": lds_b,
             "lookahead_streams": ahead, "edge_block_extra": edge_extra, "edge_pile": pile}
    if mix.spill_ops > 0:
        terms["spill_latency"] = spill_t
    if fetch is not None:
        terms["instruction_fetch_rate"] = fetch
    if end is not None:  # register-staged double buffer: its end tiles (thirty-fifth change)
        terms["end_tile_share"] = end
    if cover is not None and register_double:
        terms["fragment_cover"] = cover
    if chain is not None and chain.value > 0:
        terms["t_chain_s"] = chain
    if copies is not None:  # cp.async double buffer: a wait per block tile iteration
        terms["async_copies"] = copies
    # a double buffer in one round at up to three blocks per SM, or with one warp per
    # scheduler: the cold tile load (cold.py)
    cold = (cold_tile_latency(spec, calib, trips.value if trips is not None else 1.0,
                              desc.double_buffered, wi.rounds, units, wi.waves_per_simd)
            if desc.uses_lds else None)
    if cold is not None:
        terms["cold_tile_latency_s"] = cold
    lat_g = g_lat.value
    if trips is not None:  # the tile's loads wait r latencies in series
        terms["load_round_trips"] = trips
        lat_g *= trips.value
    if desc.uses_lds:  # the L2 latency at the tile loads in flight per SM (run X)
        per_iter = l2_t.value / max(float(wi.blocks) * iters, 1e-9)
        load = lat.global_latency_load_factor(calib, per_iter, units,
                                              trips.value if trips is not None else 1.0)
        terms["global_latency_load_factor"] = load
        lat_g *= load.value
    return Components(
        issue_s=t_issue.value, lds_s=t_lds.value, l2_s=t_l2.value, dram_s=t_dram.value,
        spawn_s=t_spawn.value, w=wi.waves_per_simd, lookahead=ahead.value,
        units=units, n_unit_iters=n_unit_iters,
        alone_factor=alone, lat_g_s=lat_g, lat_lds_s=lds_lat, lat_spill_s=spill_lat,
        ilp=_loop_ilp(desc, facts), mode_code=MODES[mode], fill_blocks=fill_blocks,
        ramp_s=t_ramp.value, launch_s=t_launch.value,
        async_iters=float(busiest) * iters if copies is not None else 0.0,
        checked_share=share,
        fetch_rate=fetch.value if fetch is not None else 1.0,
        clock_hz=clock, mem_instr_s=n_mem_instr / clock,
        edge_extra=edge_extra.value, rounds=float(wi.rounds), **tail,
        # the launch's last edge block (edge_tail.py): a single buffer or a register-staged
        # double buffer (a cp.async build has no checked path)
        edge_issue_full=(float(checked.inputs.get("r", 1.0)) / checked.value
                         if edge_extra.value > 0 and copies is None else 1.0),
        copy_share=copy_share, edge_pile=pile.value,
        end_share=end.value if end is not None else 0.0,
        fragment_cover=cover.value if register_double and cover is not None else 1.0,
        chain_s=chain.value if chain is not None else 0.0,
        lat_cold_s=cold.value if cold is not None else 0.0,
        terms=terms)


def _fragment_lookahead(facts) -> tuple[float, str] | None:
    """(D, where it comes from): the compile facts' fragment lookahead (a template dict's
    `fragment_lookahead`, with `fragment_lookahead_source`, or KernelFacts'); None without."""
    if facts is None:
        return None
    if isinstance(facts, dict):
        d = facts.get("fragment_lookahead")
        src = str(facts.get("fragment_lookahead_source", "template table"))
    else:
        d, src = getattr(facts, "fragment_lookahead", None), "compile facts"
    return (float(d), src) if d is not None else None


def _tail_round(desc: KernelDesc, spec, mix, wi, units: float) -> dict:
    """The busiest CU's partial last round (Components tail_* fields, combine.py): where it
    runs more blocks than fit at once and their number is not a multiple of what fits
    (e.g. 3 blocks at 2 per CU), the last round's r blocks run together with r's units,
    waves per SIMD and alone factor. Empty where every round is full."""
    b, busiest = int(wi.blocks_per_cu), int(wi.busiest_cu_blocks)
    if b < 1 or busiest <= b or busiest % b == 0:
        return {}
    r = busiest % b
    simds = int(spec.simds_per_cu)
    per_block = units / max(wi.resident_blocks, 1e-9)   # 1 (blocks) or waves per block
    tail_units = r * per_block
    w = float(busiest_simd_waves(r, wi.waves_per_block, simds))
    alone = _alone_factor(desc, tail_units, simds, wi.waves_per_block)
    full = lat.issue_cycles_per_wave_iter(spec, mix, wi.waves_per_simd).value
    part = lat.issue_cycles_per_wave_iter(spec, mix, w).value
    return {"tail_share": r / busiest, "tail_units": tail_units, "tail_w": w,
            "tail_alone": alone, "tail_issue_factor": part / full if full > 0 else 1.0}


def _alone_factor(desc: KernelDesc, units: float, simds: int, waves_per_block: float) -> float:
    """C_alone / C_cu (Components.alone_factor): one unit's iteration alone against the CU's
    time per unit iteration with all `units` resident, i.e. how many units run side by
    side without sharing a SIMD. With LDS the units are blocks (SIMDs / waves per block of
    them, at least 1); without, waves (one per SIMD)."""
    if desc.uses_lds:
        return min(units, max(1.0, simds / waves_per_block))
    return min(units, float(simds))


def flop(shape) -> float:
    m, n, k, b = normalise_shape(shape)
    return 2.0 * m * n * k * b


__all__ = ["assemble", "flop", "math", "normalise_shape"]
