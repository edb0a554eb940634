"""Combination: pipes, overlap, exposed latency, spawn and launch -> predicted time.

    t = t_launch + t_pipes + t_latency + t_async + t_ramp
    t_pipes = max(t_cu, t_l2, t_dram, t_spawn)
    t_cu = P_top / (1 - q),   q = (1 - f_top) ** s,   s = b + (w - b + a) / overlap_loss
      P = {issue, lds}: the two pipes a wave occupies on the busiest CU; P_top the larger,
      f_top = P_top / (P_issue + P_lds); w = resident waves per SIMD; a = the extra
      streams one wave's own lookahead adds (latency.lookahead_streams: a wave whose FMA
      work of one k step outlasts the LDS latency reads the next step's fragments under it,
      so its own issue and LDS work overlap as if more waves were resident). Each wave spends a
      fraction f_top of its time on the dominant pipe and the rest on the other; the
      dominant pipe idles only when every resident wave is busy on the other, with
      probability q if the waves are independent. s counts the independent streams of a
      SIMD (independent_streams): b = min(w, u) of its waves belong to different blocks
      (u = resident blocks per CU, or resident waves for a kernel without LDS; a block's
      waves are spread over the SIMDs) and count 1 each; the other w - b waves share a block
      with one of them, are released together by its barriers, and count 1 / overlap_loss
      each (fitted; overlap_loss > 1 = correlated), as does the lookahead. With one stream
      per SIMD the two pipes serialise (t_cu = P_issue + P_lds); with many, t_cu -> P_top.
      q <= 0.95.
      L2, DRAM and spawn are throughput limits shared by the whole GPU: loads are
      asynchronous, so they bound the time but do not hold a wave (waiting for their data
      is the latency term).
    t_latency = n_unit_iters * e + fill   (latency.py; lat_g_s already holds r * g * L_g for
      a single buffer and a register-staged double buffer, r = load round trips per tile
      iteration, g = the L2 latency's load factor at the tile bytes in flight per SM)
      e = max(max(0, (C_alone + L)/u - C_cu), C_cu * q_L / (1 - q_L)),
      q_L = (L / (C_alone + L)) ** s_L,   s_L = b + (w - b) / overlap_loss (the waves of one
      block wait for their tiles together)
      C_cu = t_pipes / n_unit_iters; fill = one global latency per block / u (prologue)
    A register-staged double buffer (thirty-fourth change, session 63): q x s, s =
      checked_share. Its prefetch keeps the next tile's loads in flight under the compute, so
      its pipes lose overlap only on the tiles that take the checked loads (they wait before
      the compute). Runs P and AY time its EDGE=1 build at tile multiples (s = 0): the full
      q put it +0.110 and +0.221 log too slow there, q x s -0.028 and +0.037.
      Thirty-fifth change (session 65): s = c + (1 - c) / n (_waiting_share; c =
      checked_share, n = tile iterations per block, Components end_share = 1 / n): the
      prefetch covers neither end of a block's loop. Its first tile is loaded in the
      prologue with nothing to compute under the loads (it waits the whole L_g in the
      latency term below, where the same s replaces c) and its last computes with no loads
      in flight (it loses the overlap): one tile iteration of n between them. At K = BK (n =
      1) the build is a single buffer with extra code and takes the full q. The first round's
      64x64x32x30 sweep had its register-staged builds of 1-4 tiles 0.145 log faster than
      its single buffers against the measurement; 0.073 with the ends.
      Thirty-sixth change (session 67): at one resident block per SM (u = 1), q x (v + (1 -
      v)(1 - phi)), v the share above and phi = Components fragment_cover = min(1, w c_v D /
      L_lds_clk) (latency.fragment_cover; D = the FMAs the loop issues between an LDS read
      and the first FMA that uses its fragment, compile facts). The prefetch's staging
      registers crowd the fragments: some bounds-checked builds read them just before use
      (D 0-16 on the device, run BH), and their warps then wait on the LDS at the FMAs (run
      BG: short_scoreboard 1.9-2.7x the single buffer's), so the covered tiles lose overlap
      too. A block's warps reach those reads together (between the same barriers), so only
      another block's warps can issue under them: with u >= 2 the term is off. phi = 1
      where D is unknown.
    A cp.async double buffer (copy_share c > 0; thirty-first change, device runs AV and
      AW): t_cu = P_top / (1 - q) + t_copies, with P = {issue, (1 - c) * lds}: its copies'
      shared-memory writes and L1 line cycles (the share c of its LDS pipe, assemble.py) run
      in series with everything else, and the issue overlaps only the fragment reads; its
      issue pipe takes no mem_instr_clk stall (the copies are what its warps wait on); and
      t_cu >= the whole LDS pipe. ncu at 4096^3, 8192x256x2048 and 8192x256x8192: the
      cycles an SM does not issue per tile are the copies' wavefronts plus 0-400 wherever
      the LDS pipe is not saturated, and fewer than its copy wavefronts where the copies
      are most of the pipe's work. t_copies = c * (1 - c) ** copy_exposure * lds_s
      (thirty-second change; copy_exposure fitted to those ncu cycles, copy_exposure.py).
      At one resident block per SM, t_cu >= lds + t_chain (chain.py; thirty-seventh
      change, session 72): where its loop reads the fragments just before their FMAs
      (fragment cover < 1), each k step waits the block's LDS burst, the read latency and
      one warp's issue of the step (device run BS).
    t_async = async_wait_clk * n_async_iters / clock_hz: a cp.async double-buffered loop
      (copy the next tile, compute this one, wait for the copies, barrier) costs the SM
      async_wait_clk clocks per block tile iteration on the busiest CU, in series with the
      pipes (fitted: docs/model.md section 10, ninth change; 0 iterations for every other
      loop). The copies' data-pipe time is not charged per instruction: their LDS write
      passes are in P_lds and the copies issue under the FMAs.
    t_edge = scale * (rho_model - 1) * (t_pipes + t_latency + t_async) / rounds * pile:
      the launch ends with its last edge block (the last block row or column), which takes
      the checked loads; rho_model = the launch's time with every block on the checked path
      (a register-staged double buffer: s = 1 as well) over its time as it is (edge_tail.py;
      rounds on the busiest CU); scale = edge_tail_scale for a single buffer and
      edge_tail_scale_db for a register-staged double buffer (thirty-fourth change), each
      fitted to the per-block timestamps of device runs U, AB, AD, AE and AQ, not to the
      kernel timings; pile = the most edge blocks one CU holds at once over a typical edge
      block's CU's (edge_tail.edge_pile_term, thirty-third change: the CU with the most ends
      last; nothing fitted). 0 for a cp.async double buffer (it has no checked path).
    t_ramp, t_launch from spawn.py.
Partial last round: where the busiest CU runs B blocks at b a time and r = B mod b > 0 (B >
b), t_pipes, t_latency and t_async each add two evaluations: the full rounds with the share
1 - r/B of the work and the occupancy's u, w, C_alone, and the last round with the share r/B
and u, w, C_alone of its r blocks (Components tail_*; assemble._tail_round); each group
waits its own prologue latencies (fill).
Efficiency parameters theta (calib.DEFAULT_FIT, fitted by fit.py) scale the pipes:
    issue / issue_efficiency + mem_instr_clk * n_mem_instr / clock_hz, lds / lds_efficiency,
    (l2, dram) / mem_efficiency, L * latency_scale; overlap_loss and async_wait_clk as above.
    n_mem_instr = wave iterations per SIMD on the busiest CU x the non-VALU instructions
    (LDS, global, barrier, wait) of one wave iteration: each holds its SIMD's issue
    mem_instr_clk clocks beyond its own slot (fitted: docs/model.md section 10, eleventh
    change).
The term tree and the bottleneck (the largest contribution: the dominant pipe, the exposed
latency or the launch + ramp) are in combine_tree.py. `Components` holds everything that does not depend on theta, so fit.py can
evaluate thousands of theta values on arrays of components without rebuilding terms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gemmmodel.model.calib import DEFAULT_FIT

PIPES = ("issue", "lds", "l2", "dram", "spawn")
SHARED_PIPES = ("l2", "dram", "spawn")
Q_MAX = 0.95
#: Numeric fields of Components used by evaluate_arrays (all seconds unless noted).
FIELDS = ("issue_s", "lds_s", "l2_s", "dram_s", "spawn_s", "w", "lookahead", "units",
          "n_unit_iters",
          "alone_factor", "lat_g_s", "lat_lds_s", "lat_spill_s", "ilp", "mode_code",
          "fill_blocks", "ramp_s", "launch_s", "async_iters", "clock_hz", "mem_instr_s",
          "edge_extra", "rounds", "tail_share", "tail_units", "tail_w", "tail_alone",
          "tail_issue_factor", "checked_share", "fetch_rate", "tail_fetch_rate",
          "edge_issue_full", "copy_share", "end_share",
          "edge_pile", "fragment_cover", "chain_s", "lat_cold_s")
MODES = {"single": 0, "double": 1, "none": 2}
#: Below this many resident blocks per SM a block is alone on its SM: no other block's warps
#: issue under its waits (the fragment cover's lost share here, chain.py)
ALONE_UNITS = 1.5


@dataclass(frozen=True)
class Components:
    issue_s: float
    lds_s: float
    l2_s: float
    dram_s: float
    spawn_s: float
    w: float               # resident waves per SIMD
    lookahead: float       # extra overlap streams from one wave's own lookahead (>= 0)
    units: float           # latency-hiding units resident per CU (blocks, or waves w/o LDS)
    n_unit_iters: float    # unit-iterations on the busiest CU
    alone_factor: float    # C_alone / C_cu
    lat_g_s: float
    lat_lds_s: float
    lat_spill_s: float
    ilp: float
    mode_code: int         # MODES
    fill_blocks: float     # prologue latencies on the busiest CU (blocks / units)
    ramp_s: float
    launch_s: float
    async_iters: float = 0.0   # block tile iterations of a cp.async loop on the busiest CU
    clock_hz: float = 1.0      # clock that turns async_wait_clk into seconds
    mem_instr_s: float = 0.0   # non-VALU wave instructions per SIMD on the busiest CU / clock
    edge_extra: float = 0.0    # an edge block's extra duration / its round's (work.edge_block_term)
    rounds: float = 1.0        # rounds of blocks (waves.WaveInfo.rounds; = the busiest CU's)
    tail_share: float = 0.0    # share of the busiest CU's blocks in a partial last round
    tail_units: float = 1.0    # latency-hiding units resident in that round
    tail_w: float = 1.0        # waves per SIMD in that round
    tail_alone: float = 1.0    # alone_factor in that round
    tail_issue_factor: float = 1.0  # issue clocks per wave-iteration there / in full rounds
    checked_share: float = 0.0  # register-staged double buffer: share of tile iterations
    #                             that take the checked loads (they wait before the compute)
    fetch_rate: float = 1.0    # eta_fetch: the issue rate the code size allows (fetch.py)
    tail_fetch_rate: float = 1.0  # the same at the partial last round's waves per SIMD
    edge_issue_full: float = 1.0  # a build with edge blocks and a checked path: its issue
    #                               work with every block on it / as it is (r / factor)
    copy_share: float = 0.0    # a cp.async double buffer: the share of its LDS pipe that is
    #                            the copies' shared-memory writes and L1 line cycles, which
    #                            run in series with the issue (thirty-first change, run AV/AW)
    edge_pile: float = 1.0     # t_edge's multiple: the most edge blocks one CU holds at
    #                            once over a typical edge block's CU's (edge_tail.py)
    end_share: float = 0.0     # register-staged double buffer: 1 / its tile iterations per
    #                            block (its first tile waits in full, its last computes with
    #                            no loads in flight; thirty-fifth change)
    fragment_cover: float = 1.0  # register-staged double buffer: the share of a fragment
    #                              read's LDS latency its own FMAs hide (latency.fragment_cover)
    chain_s: float = 0.0       # a cp.async double buffer at one resident block per SM: its
    #                            fragment chain (chain.py; thirty-seventh change)
    lat_cold_s: float = 0.0    # a double buffer in one round at up to three blocks per SM
    #                            or one warp per scheduler: the cold tile load its prefetch
    #                            covers (cold.py; thirty-eighth to fortieth changes); 0 = off
    terms: dict = field(default_factory=dict, compare=False)  # theta-free sub-terms

    def array_row(self) -> list[float]:
        return [float(getattr(self, f)) for f in FIELDS]


#: Fields that count the busiest CU's work; split between full rounds and a partial last one.
SCALED = ("issue_s", "lds_s", "l2_s", "dram_s", "spawn_s", "n_unit_iters", "async_iters",
          "mem_instr_s", "chain_s")


def evaluate_arrays(a: dict, theta: dict) -> dict:
    """Vectorised combination over arrays of component fields; returns every part (s):
    _rounds_total's, plus the launch's last edge block (edge_tail.py): where a build with a
    checked path has edge blocks (edge_issue_full f > 1), rho_model = the launch's time with
    its issue work and issued stalls times f (a register-staged double buffer: and every
    tile checked, checked_share 1) over its time as it is (launch and ramp left out), and
    t_edge = scale * (rho_model - 1) * t_block * edge_pile, scale = edge_tail_scale, or
    edge_tail_scale_db for a register-staged double buffer."""
    th = {**DEFAULT_FIT, **theta}
    out = _rounds_total(a, th)
    register_double = _register_double(a, out["total"])
    f = np.atleast_1d(a.get("edge_issue_full", 1.0)) * np.ones_like(out["total"])
    ratio = np.ones_like(out["total"])
    if np.any(f > 1.0):
        checked = dict(a)
        checked["issue_s"] = np.atleast_1d(a["issue_s"]) * f
        checked["mem_instr_s"] = np.atleast_1d(a["mem_instr_s"]) * f
        # a register-staged double buffer's blocks on the checked path wait every tile
        checked["checked_share"] = np.where(register_double, 1.0,
                                            np.atleast_1d(a.get("checked_share", 0.0)))
        fixed = np.atleast_1d(a["launch_s"]) + np.atleast_1d(a["ramp_s"])
        full = _rounds_total(checked, th)["total"] - fixed
        ratio = np.where(f > 1.0, full / np.maximum(out["total"] - fixed, 1e-300), 1.0)
    pile = np.atleast_1d(a.get("edge_pile", 1.0)) * np.ones_like(out["total"])
    scale = np.where(register_double, th["edge_tail_scale_db"],
                     th["edge_tail_scale"])
    t_edge = scale * np.maximum(ratio - 1.0, 0.0) * out["t_block"] * pile
    return {**out, "total": out["total"] + t_edge, "t_edge": t_edge, "edge_ratio": ratio}


def _register_double(a: dict, like) -> np.ndarray:
    """True where the build is a register-staged double buffer (no cp.async copies)."""
    return ((np.atleast_1d(a["mode_code"]) == MODES["double"])
            & (np.atleast_1d(a.get("copy_share", 0.0)) * np.ones_like(like) <= 0))


def _waiting_share(a: dict) -> np.ndarray:
    """s = c + (1 - c) / n: the share of a register-staged double buffer's tile iterations
    that its prefetch does not cover (c = checked_share, 1 / n = end_share; thirty-fifth
    change). Its checked tiles wait their loads before the compute; of the others, a block's
    first tile is loaded in the prologue with nothing to compute under it and its last
    computes with no loads in flight: the two ends count one tile iteration between them
    (the first's whole wait, the last's overlap loss). 1 where every tile is checked."""
    chk = np.atleast_1d(a.get("checked_share", 0.0))
    return chk + (1.0 - chk) * np.atleast_1d(a.get("end_share", 0.0))


def _rounds_total(a: dict, th: dict) -> dict:
    """The time without the last edge block's t_edge (evaluate_arrays), every part (s).

    Where the busiest CU's blocks end in a partial round (tail_share s > 0: e.g. 3 blocks at
    2 per CU run 2 together, then 1 alone), the full rounds (share 1 - s) and that last
    round (share s, with its own resident units, waves per SIMD and alone factor) are
    combined separately and added: the last round's blocks overlap only each other."""
    one = np.ones_like(np.atleast_1d(a["issue_s"]), dtype=float)
    s = np.atleast_1d(a.get("tail_share", 0.0)) * one
    main = dict(a)
    for f in SCALED:
        main[f] = np.atleast_1d(a[f]) * (1.0 - s)
    main["fill_blocks"] = np.atleast_1d(a["fill_blocks"]) * (1.0 - s)
    tail = dict(a)
    for f in SCALED:
        tail[f] = np.atleast_1d(a[f]) * s
    tail["issue_s"] = tail["issue_s"] * np.atleast_1d(a.get("tail_issue_factor", 1.0))
    tail["w"] = np.atleast_1d(a.get("tail_w", 1.0)) * one
    tail["units"] = np.atleast_1d(a.get("tail_units", 1.0)) * one
    tail["alone_factor"] = np.atleast_1d(a.get("tail_alone", 1.0)) * one
    tail["fetch_rate"] = np.atleast_1d(a.get("tail_fetch_rate", 1.0)) * one
    tail["fill_blocks"] = np.where((s > 0) & (np.atleast_1d(a["fill_blocks"]) > 0), 1.0, 0.0)
    pm, pt = _rounds_part(main, th), _rounds_part(tail, th)
    t_pipes = pm["t_pipes"] + pt["t_pipes"]
    t_lat = pm["t_latency"] + pt["t_latency"]
    t_async = pm["t_async"] + pt["t_async"]
    t_block = (t_pipes + t_lat + t_async) / np.maximum(np.atleast_1d(a["rounds"]), 1.0)
    total = (np.atleast_1d(a["launch_s"]) + t_pipes + t_lat + t_async
             + np.atleast_1d(a["ramp_s"]))
    pipes = _pipes(a, th)
    return {"total": total, "t_block": t_block, "t_pipes": t_pipes,
            "top": pm["top"], "loss": pm["loss"], "q": pm["q"], "t_latency": t_lat,
            "q_latency": pm["q_latency"], "t_async": t_async,
            "latency_per_iter": pm["latency_per_iter"],
            "exposed_per_iter": pm["exposed_per_iter"], "fill": pm["fill"] + pt["fill"],
            "t_copies": pm["t_copies"] + pt["t_copies"],
            "t_tail": pt["t_pipes"] + pt["t_latency"] + pt["t_async"],
            "t_tail_pipes": pt["t_pipes"], "t_tail_latency": pt["t_latency"],
            "tail_exposed_per_iter": pt["exposed_per_iter"],
            **{f"pipe_{p}": np.atleast_1d(v) * np.ones_like(total) for p, v in pipes.items()}}


def _pipes(a: dict, th: dict) -> dict:
    """The pipes' times (s). A cp.async double buffer (copy_share > 0) takes no
    mem_instr_clk stall on its issue pipe: what its warps wait for beyond their own issue is
    the copies' shared-memory writes, in series (_rounds_part)."""
    fetch = a["issue_s"] / np.maximum(a.get("fetch_rate", 1.0), 1e-9)
    copies = np.atleast_1d(a.get("copy_share", 0.0)) > 0
    stall = np.where(copies, 0.0, th["mem_instr_clk"] * np.atleast_1d(a["mem_instr_s"]))
    return {
        "issue": np.maximum(a["issue_s"] / th["issue_efficiency"] + stall, fetch),
        "lds": a["lds_s"] / th["lds_efficiency"],
        "l2": a["l2_s"] / th["mem_efficiency"],
        "dram": a["dram_s"] / th["mem_efficiency"],
        "spawn": a["spawn_s"],
    }


def independent_streams(w, units, overlap_loss: float, lookahead=0.0):
    """s = b + (w - b + a) / overlap_loss, b = min(w, u) (module docstring): the resident
    waves of a SIMD that belong to different blocks count one stream each, the ones that
    share a block with them (released together by its barriers) and the lookahead
    1 / overlap_loss each. Floored at 1e-9."""
    w = np.asarray(w, dtype=float)
    b = np.minimum(w, np.asarray(units, dtype=float))
    return np.maximum(b + (w - b + lookahead) / max(overlap_loss, 1e-9), 1e-9)


def _rounds_part(a: dict, th: dict) -> dict:
    """Pipes, exposed latency and cp.async waits of one group of rounds (module doc)."""
    pipes = _pipes(a, th)
    # a cp.async double buffer: its copies' share of the LDS pipe runs in series with the
    # rest; the issue overlaps the fragment reads only (run AV/AW, thirty-first change)
    share = np.atleast_1d(a.get("copy_share", 0.0)) * np.ones_like(np.atleast_1d(pipes["lds"]))
    # the share of the copies' pipe time the issue waits for falls as the copies take more
    # of the LDS pipe: c * (1 - c) ** copy_exposure (fitted to runs AV and AW's ncu cycles)
    exposed = share * (1.0 - share) ** th["copy_exposure"]
    copies = exposed * np.atleast_1d(a["lds_s"])
    stack = np.vstack([np.atleast_1d(pipes["issue"]) * np.ones_like(share),
                       np.atleast_1d(pipes["lds"]) * (1.0 - share)])
    top = stack.max(axis=0)
    f_top = top / np.maximum(stack.sum(axis=0), 1e-300)
    w = np.atleast_1d(a["w"])
    streams = independent_streams(w, np.atleast_1d(a["units"]), th["overlap_loss"],
                                  np.atleast_1d(a["lookahead"]))
    q = np.minimum(Q_MAX, (1.0 - f_top) ** streams)
    # a register-staged double buffer loses overlap only on its tiles that take the checked
    # loads (thirty-fourth change; runs P, AY: +0.110 / +0.221 log too slow with the full q)
    # and on its end tiles (thirty-fifth change): the last computes with no loads in flight
    waiting = _waiting_share(a)
    # and, at one resident block per SM, on the other tiles too where its loop reads the
    # fragments too late for its own FMAs to hide the LDS latency (thirty-sixth change,
    # session 67): 1 - fragment_cover of them; a second block's warps issue under the wait
    lost = np.where(np.atleast_1d(a["units"]) * np.ones_like(waiting) < ALONE_UNITS,
                    1.0 - np.clip(np.atleast_1d(a.get("fragment_cover", 1.0)), 0.0, 1.0), 0.0)
    q = np.where(_register_double(a, share), (waiting + (1.0 - waiting) * lost) * q, q)
    loss = top * q / (1.0 - q)
    shared = np.vstack([np.atleast_1d(pipes[p]) for p in SHARED_PIPES]).max(axis=0)
    t_pipes = np.maximum(np.maximum(shared, top + loss + copies), np.atleast_1d(pipes["lds"]))
    # a cp.async double buffer at one block per SM whose loop reads its fragments just
    # before their FMAs: each k step's reads wait the block's LDS burst, then their latency
    # and one warp's issue (chain.py; thirty-seventh change, device run BS)
    t_pipes = np.maximum(t_pipes, np.atleast_1d(pipes["lds"])
                         + np.atleast_1d(a.get("chain_s", 0.0)))
    n = np.maximum(np.atleast_1d(a["n_unit_iters"]), 1e-12)
    c_cu = t_pipes / n
    c_alone = c_cu * np.atleast_1d(a["alone_factor"])
    lat_scale = th["latency_scale"]
    mode = np.atleast_1d(a["mode_code"])
    lat_g = np.atleast_1d(a["lat_g_s"])
    lat_lds = np.atleast_1d(a["lat_lds_s"])
    units = np.maximum(np.atleast_1d(a["units"]), 1e-9)
    chains = independent_streams(w, units, th["overlap_loss"])
    # L per unit iteration (a register-staged double buffer waits the whole L_g only on
    # its checked tiles and its first: the share `waiting`); where a double buffer runs in
    # one round at up to three blocks per SM or one warp per scheduler, its prefetch covers
    # the cold tile load (cold.py)
    covered = np.maximum(lat_g, np.atleast_1d(a.get("lat_cold_s", 0.0)))
    lat = np.where(mode == MODES["none"], lat_g / np.maximum(np.atleast_1d(a["ilp"]), 1.0),
                   np.where(mode == MODES["single"], lat_g + 2.0 * lat_lds,
                            (1.0 - waiting) * np.maximum(0.0, covered - c_alone)
                            + waiting * lat_g
                            + lat_lds))
    lat = lat_scale * (lat + np.atleast_1d(a["lat_spill_s"]))
    # Little's law bound, and the chance that every resident wave of a SIMD waits on its
    # latency at once (latency.py: q_L over the SIMD's independent streams)
    q_lat = np.minimum(Q_MAX, (lat / np.maximum(c_alone + lat, 1e-300)) ** chains)
    exposed = np.maximum(np.maximum(0.0, (c_alone + lat) / units - c_cu),
                         c_cu * q_lat / (1.0 - q_lat))
    fill = lat_scale * lat_g * np.atleast_1d(a["fill_blocks"])
    t_lat = n * exposed + fill
    t_async = th["async_wait_clk"] * np.atleast_1d(a["async_iters"]) / np.maximum(
        np.atleast_1d(a["clock_hz"]), 1e-300)
    return {"t_pipes": t_pipes, "top": top, "loss": loss, "q": q, "t_copies": copies,
            "t_latency": t_lat,
            "q_latency": q_lat, "t_async": t_async, "latency_per_iter": lat,
            "exposed_per_iter": exposed, "fill": fill}


def evaluate(comp: Components, theta: dict) -> dict:
    """Scalar combination of one Components (floats)."""
    parts = evaluate_arrays({f: np.array([getattr(comp, f)], dtype=float) for f in FIELDS},
                            theta)
    return {k: float(v[0]) for k, v in parts.items()}


def components_arrays(comps: list[Components]) -> dict:
    """Stack a list of Components into arrays for evaluate_arrays."""
    rows = np.array([c.array_row() for c in comps], dtype=float)
    return {f: rows[:, i] for i, f in enumerate(FIELDS)}
