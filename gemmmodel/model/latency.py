"""Issue contention and latency hiding.

Issue (per SIMD / scheduler, per wave-iteration, in clocks):
  c_v   = wave_size / lanes_per_simd      clocks a VALU wave instruction holds its SIMD
          (lanes_per_simd = fp32_flop_per_clk_per_cu / 2 / simds_per_cu: AMD 64/16 = 4,
          NVIDIA sm_90 32/32 = 1)
  p     = issue period, m = min(resident waves per SIMD, instructions per turn)
          (data/issue.toml or spec `issue_period_clk` / `issue_max_per_turn`: AMD round-robin
          over 4 SIMDs, <= 1 per wave and per category; NVIDIA 1 per clock per scheduler)
  issue_clk = max(c_v * valu, p * (valu + non_valu) / m)
  so with one wave per SIMD on AMD every LDS/VMEM/wait instruction costs a VALU slot; with
  two or more, other waves co-issue them. On NVIDIA every instruction takes an issue slot.
Latency hiding (Little's law; Volkov: ILP substitutes for occupancy). A block iteration
  needs C_alone of its own execution plus L of latency on its critical path; `u` blocks
  resident per CU overlap each other's latency, so one block-iteration costs
      max(C_cu, (C_alone + L) / u)        (C_cu: CU time per block-iteration, all pipes)
  and the exposed part is max(0, (C_alone + L)/u - C_cu). That bound is the average; the
  waves also all wait at once by chance, as the pipes idle in combine.py's q: a wave waits a
  fraction L / (C_alone + L) of its time, all resident waves of a SIMD with
  q_L = (L / (C_alone + L)) ** s_L, s_L = b + (w - b) / overlap_loss the SIMD's independent
  streams (combine.independent_streams: b = min(w, u) waves of different blocks; the waves
  of one block wait for their tiles together), which adds C_cu * q_L / (1 - q_L):
      exposed = max(max(0, (C_alone + L)/u - C_cu), C_cu * q_L / (1 - q_L))
  (ncu, H200, calibration/h200/ncu_g_3072x3072x3072.txt: 1-warp 32x64 blocks at 3 warps
  per scheduler stall on global loads 0.8-0.9 per issue, 4-warp blocks at 4 per scheduler
  0.2-0.4, where the average bound exposes nothing for either).
  L = r * L_g + 2 L_lds            single buffer (load, store to LDS, barrier, read); r =
                                   load round trips per tile iteration: the global-load
                                   latencies the loop waits in series when the compiler
                                   stages the tile's loads a few at a time
                                   (gemmmodel/compile/trips.py, from the compile facts;
                                   1 without them)
      (1 - s) max(0, r L_g - C_alone) + s r L_g + L_lds
                                   lds-double / reg-double (next tile loaded one
                                   iteration ahead: double buffering removes the global
                                   latency up to one iteration of work). r: as above for a
                                   register-staged double buffer (its trip waits for the
                                   prefetch it issued, in the groups the compiler staged;
                                   trips.py counts them), 1 for a cp.async one (it waits
                                   for its copies: combine.py's t_async). s = c +
                                   (1 - c) / n (combine._waiting_share; thirty-fifth
                                   change): a block's first tile of n waits in full (the
                                   prologue computes nothing under its loads; end_tile_share
                                   = 1 / n), and c (Components checked_share): in a
                                   register-staged double buffer of a
                                   bounds-checked build, the share of tile iterations that
                                   take the checked loads (work.checked_path_term's s). nvcc
                                   zero-fills those loads (FSEL on the loaded registers)
                                   right after issuing them, before the tile's compute
                                   (sm_90 SASS of the template's EDGE=1 /db builds), so they
                                   wait the whole L_g; 0 for cp.async double buffers
                                   (EDGE=0 only) and where no tile crosses M, N or K.
                                   A double buffer alone on its SM in one round of
                                   blocks: max(r L_g, L_cold) in the max(0, . - C_alone),
                                   the cold tile load (cold.py; thirty-eighth change)
      L_g / ilp                    no LDS (naive): u = resident waves, ilp = loads in flight
  plus the spill latency L_s (spill_latency) when the compile facts report spills:
      L_s = n_reload * L_l1        the reloads of one tile iteration, each an L1 hit the
                                   thread waits for in series (L_l1: the 16-KiB pointer
                                   chase; NVIDIA local memory is cached in L1)
          = L_l2                   where no L1 latency was measured (AMD scratch): one L2
                                   latency per iteration, an assumption
  L_g = h * L_l2 + (1 - h) * L_dram with h = 1 - dram_bytes / l2_bytes (L2 hit fraction),
  times g, the latency's load factor, for a kernel with LDS tiles (r L_g above is r g L_g):
      g = L(b) / L(0),  b = bytes per block iteration * resident blocks per CU / r
  the tile loads one SM has in flight at once (each resident block's, in r groups), and L(b)
  the pointer-chase latency beside background warps that keep b bytes of 128-bit loads in
  flight per SM (calibration global_latency_loaded.json, run X; H200: 275 clocks unloaded,
  285 at 14 KiB, 352 at 30 KiB, 664 at 60 KiB, 840 from 62 KiB), a running max over b,
  linear between rows. g = 1 where the table is not measured (AMD: no AMD GPU here).
Lookahead (overlap of one wave's own issue and LDS work, used by combine.py):
  x = d * c_v * TM * TN / L_lds_clk  FMA clocks a wave runs under its outstanding fragment
                                     reads per LDS latency; d = spec wave_lookahead_steps;
                                     L_lds_clk = the LDS latency under load at the kernel's
                                     w (calibration smem_latency_loaded.json, interpolated;
                                     the unloaded latency where not measured)
  a = max(0, x - 1)                  a wave that reads the next k step's fragments while it
                                     runs this step's FMAs hides the LDS latency x times
                                     over; beyond the first it counts as a extra streams
  (no LDS or d = 0: a = 0). d is spec data where measured: sm_90 d = 1 (H200 ncu: one 8x8
  warp per scheduler issues on 61-64 % of cycles, calibration/h200/ncu_template_1024x1024x
  16384.txt, where serialised pipes put such configs at ~1.5x their measured time). Both
  nvcc and hipcc emit the one-step lookahead (the next step's LDS reads before this step's
  FMAs), but on AMD the overlap is not measured (no AMD GPU here), so the gfx9 specs leave
  d at 0: docs/model.md section 10 gives what the model predicts on AMD with d = 1.
Fragment cover (a register-staged double buffer only, combine.py's q; thirty-sixth change):
  phi = min(1, w * c_v * D / L_lds_clk)   D = the FMAs its main loop issues between an LDS
                                     read and the first FMA that uses the fragment (compile
                                     facts: gemmmodel.compile.lookahead; the device's own
                                     build where run BH measured it); a warp's D FMAs span
                                     about w * c_v * D clocks while the w warps of its
                                     scheduler take turns. Its prefetch's staging registers
                                     leave some bounds-checked builds no room to read ahead
                                     (D 0-16 on the H200), and their warps wait on the LDS
                                     at the FMAs on every tile (run BG)
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import numpy as np

from gemmmodel.compile.trips import trips_per_tile
from gemmmodel.model.calib import Calib, value
from gemmmodel.model.terms import Term
from gemmmodel.model.work import Mix

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

ISSUE_FILE = Path(__file__).resolve().parent / "data" / "issue.toml"


@lru_cache(maxsize=1)
def _issue_table() -> dict:
    with ISSUE_FILE.open("rb") as fh:
        return tomllib.load(fh)


def issue_rules(spec) -> tuple[float, int, str]:
    """(issue_period_clk, issue_max_per_turn, source) for this spec."""
    period = getattr(spec, "issue_period_clk", None)
    per_turn = getattr(spec, "issue_max_per_turn", None)
    if period and per_turn:
        return float(period), int(per_turn), "spec"
    row = _issue_table().get(str(spec.vendor), {})
    return (float(row.get("issue_period_clk", 1)), int(row.get("issue_max_per_turn", 1)),
            str(row.get("source", "issue.toml")))


def valu_cycles_per_instr(spec) -> float:
    """c_v: clocks one VALU wave instruction holds a SIMD (wave_size / lanes per SIMD)."""
    lanes = float(spec.fp32_flop_per_clk_per_cu) / 2.0 / float(spec.simds_per_cu)
    return float(spec.wave_size) / lanes


def issue_cycles_per_wave_iter(spec, mix: Mix, waves_per_simd: float) -> Term:
    """Issue clocks of one wave's tile iteration on its SIMD (module docstring)."""
    c_v = valu_cycles_per_instr(spec)
    period, per_turn, source = issue_rules(spec)
    m = max(1.0, min(float(per_turn), math.floor(max(waves_per_simd, 1.0))))
    valu_clk = c_v * mix.valu
    issue_clk = period * (mix.valu + mix.non_valu) / m
    return Term("issue_cycles_per_wave_iteration", max(valu_clk, issue_clk), "clk",
                "max(c_v * valu, p * (valu + non_valu) / m)",
                {"c_v": c_v, "valu": mix.valu, "fma_instructions": mix.fma_instructions,
                 "non_valu": mix.non_valu,
                 "p": period, "m": m, "valu_clk": valu_clk, "issue_clk": issue_clk},
                note=f"issue rules: {source}")


def loaded_lds_latency_clk(calib: Calib | None, waves_per_simd: float) -> float | None:
    """The LDS latency (clk) under load at `waves_per_simd` warps per scheduler, linearly
    interpolated in the calibration's loaded table (clamped at its ends); None without it."""
    table = getattr(calib, "lds_latency_loaded", ()) if calib is not None else ()
    if not table:
        return None
    warps, clocks = zip(*table)
    return float(np.interp(float(waves_per_simd), warps, clocks))


def lookahead_streams(spec, tm: int, tn: int, uses_lds: bool, lds_latency_s: float,
                      clock_hz: float, loaded_clk: float | None = None) -> Term:
    """a: extra overlap streams from a wave's own lookahead (module docstring);
    `loaded_clk` = the LDS latency under load at the kernel's occupancy where measured."""
    c_v = valu_cycles_per_instr(spec)
    steps = float(spec.wave_lookahead_steps)
    lat_clk = max(loaded_clk if loaded_clk else lds_latency_s * clock_hz, 1e-9)
    x = steps * c_v * tm * tn / lat_clk if uses_lds else 0.0
    note = ("0 without LDS: no fragment reads to run ahead" if not uses_lds else
            ("spec wave_lookahead_steps; L_lds_clk: " + ("LDS latency under load (calibration)"
                                                          if loaded_clk else "unloaded"))
            if steps else
            "0: wave_lookahead_steps not measured for this GPU (its pipes serialise)")
    return Term("lookahead_streams", max(0.0, x - 1.0), "1",
                "max(0, d * c_v * TM * TN / L_lds_clk - 1)",
                {"d": steps, "c_v": c_v, "TM": tm, "TN": tn, "L_lds_clk": lat_clk, "x": x},
                note=note)


def fragment_cover(spec, lookahead_fmas: float, waves_per_simd: float, lds_latency_s: float,
                   clock_hz: float, loaded_clk: float | None = None, source: str = "") -> Term:
    """phi = min(1, w * c_v * D / L_lds_clk): the share of a fragment read's LDS latency that
    a register-staged double buffer's warp hides under its own FMAs (combine.py's q).
    D = the FMAs its main loop issues between an LDS read and the first FMA that uses the
    fragment (compile facts, gemmmodel.compile.lookahead); the w warps of a scheduler take
    turns, so those D FMAs span about w * c_v * D clocks; L_lds_clk = the LDS latency under
    load at that w where measured (calibration smem_latency_loaded.json), else unloaded."""
    c_v = valu_cycles_per_instr(spec)
    w = max(float(waves_per_simd), 1.0)
    lat_clk = max(loaded_clk if loaded_clk else lds_latency_s * clock_hz, 1e-9)
    phi = min(1.0, w * c_v * max(float(lookahead_fmas), 0.0) / lat_clk)
    return Term("fragment_cover", phi, "1", "min(1, w * c_v * D / L_lds_clk)",
                {"w": w, "c_v": c_v, "D": float(lookahead_fmas), "L_lds_clk": lat_clk},
                note="D: " + (source or "compile facts") + "; L_lds_clk: "
                     + ("LDS latency under load at w (calibration)" if loaded_clk
                        else "unloaded"))


def end_tile_share(iters: int) -> Term:
    """1 / n: the share of a register-staged double buffer's n tile iterations per block at
    its two ends, which its prefetch does not cover (combine._waiting_share, thirty-fifth
    change): the first tile is loaded in the prologue with no compute under its loads, and
    the last computes with no loads in flight."""
    n = max(int(iters), 1)
    return Term("end_tile_share", 1.0 / n, "1", "1 / n, n = ceil(K / BK)", {"n": float(n)},
                note="a register-staged double buffer: its first tile waits its loads in "
                     "full and its last loses the overlap, one tile iteration between them")


def load_trips_per_tile(desc, facts) -> Term:
    """r: global-load latencies one tile iteration waits in series (module docstring).
    Facts: a KernelFacts (its main loop's `load_round_trips`, scaled from the loop's FMAs
    to one tile iteration when the loop is the tile loop) or a dict with
    `load_round_trips_per_tile`; without them r = 1."""
    tile_fma = float(desc.tm * desc.tn * desc.bk)
    per_tile = facts.get("load_round_trips_per_tile") if isinstance(facts, dict) else None
    note = "compile facts (template table)"
    if per_tile is None and facts is not None and not isinstance(facts, dict):
        per_tile = trips_per_tile(getattr(facts, "load_round_trips", None),
                                  dict(getattr(facts, "mix_loop", None) or {}), tile_fma)
        note = "compile facts (main loop, scaled to one tile iteration)"
    if per_tile is None:
        return Term("load_round_trips", 1.0, "1", "assumption without compile facts",
                    note="1: all of a tile's loads in flight at once (no facts)")
    return Term("load_round_trips", max(1.0, float(per_tile)), "1",
                "max(1, round trips of the loop trip * tile FMAs / loop FMAs)",
                {"per_tile": float(per_tile)}, note=note)


def global_latency(spec, calib: Calib | None, l2_bytes: float, dram_bytes: float) -> Term:
    """L_g: mean latency of a tile load, L2 hits and DRAM misses weighted by bytes."""
    l2_lat, l2_src = value(spec, calib, "l2_latency_s")
    dr_lat, dr_src = value(spec, calib, "dram_latency_s")
    hit = 1.0 - min(1.0, dram_bytes / l2_bytes) if l2_bytes > 0 else 0.0
    lat = hit * l2_lat + (1.0 - hit) * dr_lat
    return Term("global_latency_s", lat, "s", "h * L_l2 + (1 - h) * L_dram",
                {"h": hit, "L_l2": l2_lat, "L_dram": dr_lat},
                note=f"L2 latency: {l2_src}; DRAM latency: {dr_src}")


def global_latency_load_factor(calib: Calib | None, bytes_per_block_iter: float,
                               resident_blocks: float, trips: float) -> Term:
    """g: the loaded L2 latency over the unloaded one at the kernel's bytes in flight per SM
    (module docstring), from the calibration's loaded table; 1 where none was measured."""
    table = getattr(calib, "global_latency_loaded", ()) if calib is not None else ()
    b = float(bytes_per_block_iter) * float(resident_blocks) / max(float(trips), 1.0)
    inputs = {"bytes_per_block_iteration": float(bytes_per_block_iter),
              "resident_blocks": float(resident_blocks), "r": float(trips),
              "bytes_in_flight": b}
    if not table:
        return Term("global_latency_load_factor", 1.0, "1", "1 (no loaded table measured)",
                    inputs, note="global_latency_loaded.json not measured for this GPU")
    xs = np.array([t[0] for t in table])
    ys = np.maximum.accumulate(np.array([t[1] for t in table]))
    unloaded = float(ys[0])
    loaded = float(np.interp(b, xs, ys))
    return Term("global_latency_load_factor", loaded / unloaded, "1",
                "L(b) / L(0), b = bytes per block iteration * resident blocks / r",
                {**inputs, "L_b_clk": loaded, "L_0_clk": unloaded},
                note="L(b): calibration global_latency_loaded.json (running max over b, "
                     "linear between rows, clamped at the ends)")


def spill_latency(spec, calib: Calib | None, spill_loads: float, spill_ops: float) -> Term:
    """L_s: the latency a tile iteration's spill code adds to its critical path (module doc)."""
    if spill_ops <= 0:
        return Term("spill_latency_s", 0.0, "s", "0 (no spills)")
    l1_lat, _ = value(spec, calib, "l1_latency_s")
    if l1_lat > 0:
        return Term("spill_latency_s", spill_loads * l1_lat, "s", "n_reload * L_l1",
                    {"n_reload": spill_loads, "L_l1": l1_lat},
                    note="L1 latency: calibrated (pointer chase, 16 KiB)")
    l2_lat, src = value(spec, calib, "l2_latency_s")
    return Term("spill_latency_s", l2_lat, "s", "L_l2 (one per iteration; no L1 latency measured)",
                {"L_l2": l2_lat}, note=f"L2 latency: {src}; an assumption")


def exposed_per_unit_iter(c_cu: float, c_alone: float, units: float, mode: str,
                          lat_g: float, lat_lds: float, lat_spill: float, ilp: float,
                          scale: float) -> tuple[float, float]:
    """(L, exposed) in seconds per unit-iteration: Little's-law bound only (module docstring);
    combine.evaluate_arrays also takes the chance term C_cu * q_L / (1 - q_L)."""
    if mode == "none":
        lat = lat_g / max(ilp, 1.0)
    elif mode == "single":
        lat = lat_g + 2.0 * lat_lds
    else:
        lat = max(0.0, lat_g - c_alone) + lat_lds
    lat = scale * (lat + lat_spill)
    exposed = max(0.0, (c_alone + lat) / max(units, 1e-9) - c_cu)
    return lat, exposed
