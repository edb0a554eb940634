"""Spawn and launch: the fixed cost of a launch and the rate at which blocks start.

Per-block dispatch cost in clocks (spec data; calibration replaces the NVIDIA rate):
  threads rate (AMD, spec.spawn_threads_per_clk): threads_eff / spawn_threads_per_clk,
      threads_eff = the block size if it is one of spec.spawn_full_rate_block_sizes, else
      the next larger full-rate size (assumption: the seed measured the peak only at
      blockDim 256/512/1024 on gfx906 (REFERENCE section 3); a smaller or odd block is
      charged as the full-rate size above it)
  blocks rate (NVIDIA, spec.spawn_blocks_per_clk or calibrated blocks/s): 1 / rate
  both given: the larger cost.
t_spawn_s = blocks * cycles_per_block / clock_hz is a pipe (it overlaps execution);
t_ramp_s = 0.5 * min(blocks, slots) * cycles_per_block / clock_hz is the part of filling the
GPU once that is not overlapped (assumption: on average half the first round waits).
t_launch_s = launch_overhead_s (calibrated intercept where measured, else the spec).
"""

from __future__ import annotations

from gemmmodel.model.calib import Calib, value
from gemmmodel.model.terms import Term


def cycles_per_block(spec, calib: Calib | None, threads: int) -> Term:
    """Dispatch clocks per block (see module docstring)."""
    costs = {}
    rate_t = float(getattr(spec, "spawn_threads_per_clk", 0.0) or 0.0)
    if rate_t > 0:
        sizes = sorted(int(s) for s in (getattr(spec, "spawn_full_rate_block_sizes", ()) or ()))
        eff = threads
        if sizes and threads not in sizes:
            larger = [s for s in sizes if s >= threads]
            eff = larger[0] if larger else threads
        costs["threads"] = eff / rate_t
    blocks_per_s, origin = value(spec, calib, "spawn_blocks_per_s")
    rate_b = blocks_per_s / spec.clock_hz if blocks_per_s > 0 else float(
        getattr(spec, "spawn_blocks_per_clk", 0.0) or 0.0)
    if blocks_per_s <= 0:
        origin = "spec"
    if rate_b > 0:
        costs["blocks"] = 1.0 / rate_b
    cyc = max(costs.values()) if costs else 0.0
    return Term("spawn_cycles_per_block", cyc, "clk", "max(threads_eff / threads_per_clk, "
                "1 / blocks_per_clk)", {"threads": threads, "threads_per_clk": rate_t,
                                        "blocks_per_clk": rate_b, **costs},
                note=f"spawn rate: {origin}")


def spawn_terms(spec, calib: Calib | None, threads: int, blocks: int, slots: int) -> tuple[Term, Term, Term]:
    """(t_spawn_s pipe, t_ramp_s exposed, t_launch_s fixed)."""
    cyc = cycles_per_block(spec, calib, threads)
    t_spawn = Term("t_spawn_s", blocks * cyc.value / spec.clock_hz, "s",
                   "blocks * spawn_cycles_per_block / clock_hz",
                   {"blocks": blocks, "clock_hz": spec.clock_hz}, children=(cyc,))
    first = min(blocks, slots)
    t_ramp = Term("t_ramp_s", 0.5 * first * cyc.value / spec.clock_hz, "s",
                  "0.5 * min(blocks, slots) * spawn_cycles_per_block / clock_hz",
                  {"blocks": blocks, "slots": slots}, note="assumption: half the fill is exposed")
    launch, origin = value(spec, calib, "launch_overhead_s")
    t_launch = Term("t_launch_s", launch, "s", "launch_overhead_s", {"launch_overhead_s": launch},
                    note=f"launch overhead: {origin}")
    return t_spawn, t_ramp, t_launch
