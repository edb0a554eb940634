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
  and the exposed part is max(0, (C_alone + L)/u - C_cu).
  L = L_g + 2 L_lds                single buffer (load, store to LDS, barrier, read)
      max(0, L_g - C_alone) + L_lds   lds-double / reg-double (next tile loaded one
                                   iteration ahead: double buffering removes the global
                                   latency up to one iteration of work)
      L_g / ilp                    no LDS (naive): u = resident waves, ilp = loads in flight
  plus one L2 latency per iteration when the compile facts report spills (reloads).
  L_g = h * L_l2 + (1 - h) * L_dram with h = 1 - dram_bytes / l2_bytes (L2 hit fraction).
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

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


def global_latency(spec, calib: Calib | None, l2_bytes: float, dram_bytes: float) -> Term:
    """L_g: mean latency of a tile load, L2 hits and DRAM misses weighted by bytes."""
    l2_lat, l2_src = value(spec, calib, "l2_latency_s")
    dr_lat, dr_src = value(spec, calib, "dram_latency_s")
    hit = 1.0 - min(1.0, dram_bytes / l2_bytes) if l2_bytes > 0 else 0.0
    lat = hit * l2_lat + (1.0 - hit) * dr_lat
    return Term("global_latency_s", lat, "s", "h * L_l2 + (1 - h) * L_dram",
                {"h": hit, "L_l2": l2_lat, "L_dram": dr_lat},
                note=f"L2 latency: {l2_src}; DRAM latency: {dr_src}")


def exposed_per_unit_iter(c_cu: float, c_alone: float, units: float, mode: str,
                          lat_g: float, lat_lds: float, lat_spill: float, ilp: float,
                          scale: float) -> tuple[float, float]:
    """(L, exposed) in seconds per unit-iteration (module docstring)."""
    if mode == "none":
        lat = lat_g / max(ilp, 1.0)
    elif mode == "single":
        lat = lat_g + 2.0 * lat_lds
    else:
        lat = max(0.0, lat_g - c_alone) + lat_lds
    lat = scale * (lat + lat_spill)
    exposed = max(0.0, (c_alone + lat) / max(units, 1e-9) - c_cu)
    return lat, exposed
