"""The cold tile load of a double buffer in one round of blocks (thirty-eighth change,
session 73; extended to three blocks per SM in the thirty-ninth, session 74, and to one warp
per scheduler at any block count in the fortieth, session 75; device runs BF, BQ, BR, BU, BV
and BW).

A double buffer loads tile i + 1 while it computes tile i, so its prefetch hides a tile
load only as far as one tile of work lasts: (1 - s) * max(0, L - C_alone) per tile
iteration (latency.py). The model takes L as the tile loads' byte-weighted latency L_g
(L2 hits and DRAM misses). In a launch whose blocks all start at once (one round), a tile
of data that is not yet in the L2 waits far longer:

- run BF (cold_touch.json): a later tile round of fresh data waits 720 clk more than the
  same round warm in the L2 (1205 against 485), a block alone on its SM; blocks that read
  the same tile at the same time save little (they wait on the first reader's miss);
- runs BQ, BR and BU: at one block per SM every tile pays it, in batched and 2-D launches,
  at any K; a BK 32 double buffer's tile work covers it, a BK 8 or BK 16 one's does not
  (run BU: 180-250 ns a tile);
- runs BU and BV: two and three 32x32 blocks per SM pay it too (1024x256x4096: 180 ns a
  tile; 768x512x4096: 125 ns for 32x32x8/4x4/db), and eight 2-D blocks per SM do not
  (2048x512x2048, 1024x1024x2048: under 35 ns).

So there the prefetch covers the cold line wait, not L_g:

    L_cold = L_l2 + E              E = 720 clk at run BF's 1980 MHz = 363 ns
    L      = max(r g L_g, L_cold)  in the prefetch's cover term only (combine.py)

      L_l2 the L2 latency (the warm round's line wait; calibration summary)
      r    the load round trips of a tile (latency.load_trips_per_tile), which L_cold does
           not take: a register-staged BK 8 build of r = 2 waits one cold round a tile
           (round 77, 32x32x8/4x4/p4/db at 64x64x4096x16: 559 ns a tile; with r * L_cold
           the model puts it 0.62 log too slow). That form was chosen after round 77's
           sweep; round 78 is its pre-registered test (docs/selection.md).

A second and a third block on the SM do not hide the wait: each block still waits L_cold
a tile, and combine.py's Little's-law bound, (C_alone + L) / u per block iteration,
overlaps the u blocks' waits. On only for a double buffer with LDS tiles in one round of
blocks at fewer than COLD_UNITS (3.5) resident blocks per SM. The bound is run BV's: each
of the 14 of runs BU and BV's 80 launches that it moves is nearer its cold time, while at
four 32x64 blocks per SM in 2-D (2048x512x2048, 1024x1024x2048) the term would put
32x64x8/8x4/p4/db 0.16 log too slow, where its cold and warm times agree. The
thirty-eighth change had 1.5 (one block per SM). Round 79 is the extension's
pre-registered test (docs/selection.md).

Run BW (fortieth change): a block whose warps each have a scheduler to themselves waits its
cold load at four blocks per SM too. The batched one-warp 32x32x8/8x4/p4/db takes 594-607 ns
a tile per block at one to three blocks per SM (run BV) and 579-667 ns at four (runs BV and
BW: 667, 618 and 579 ns where 1, 2 and 4 blocks share each tile), and the 2-D 768x704x4096
(four per SM, 22-24 sharers) pays 115 ns a tile cold over warm (cp.async) and 209 ns (its
register-staged build), while its two-warp 32x32x8/4x4/db pays 49 and 109 ns, and four two-
warp 32x64 blocks per SM in 2-D pay under 35 ns (runs BU and BV). So the term is on at any
block count where the busiest scheduler holds at most ONE_WARP resident warp (w of waves.py:
one-warp blocks at four per SM; fewer blocks are on already). It moves 6 of runs BU, BV and
BW's 100 launches, each nearer its cold time (the batched one-warp BK 8 builds at four per
SM from -0.42..-0.61 log to -0.11..-0.25). LOKO does not move (no training launch is like
that); held-out shapes of rounds 1-79 post hoc: no pick changes, the neighbours' mean 97.46
-> 97.51 %. Round 80 is its pre-registered test. Only where run BF was measured (the H200; the
H100 and the AMD specs have no cold_touch.json, and a transferred calibration does not
carry it). Nothing fitted. Not for single buffers: they pay the cold round too (run BU:
290-305 ns a tile), but the fit has it in their efficiencies, and adding it takes LOKO to
6.02 % / tau 0.8897.
"""

from __future__ import annotations

from gemmmodel.model.calib import Calib, value
from gemmmodel.model.terms import Term

#: fewer resident blocks per SM than this, in one round of blocks: each block waits the cold
#: tile load (module docstring; runs BU and BV)
COLD_UNITS = 3.5
#: or at most this many resident warps on the busiest scheduler, at any block count: no
#: other warp on a block's scheduler issues under its wait (module docstring; run BW)
ONE_WARP = 1.0


def cold_tile_latency(spec, calib: Calib | None, trips: float, double_buffered: bool,
                      rounds: float, units: float, w: float) -> Term | None:
    """L_cold (module docstring), or None where it is off: not a double buffer, more than
    one round of blocks, COLD_UNITS or more resident blocks per SM with more than
    ONE_WARP resident warps on the busiest scheduler (w), or no cold round measured.
    `trips` (r) is reported, not applied."""
    extra = float(getattr(calib, "cold_round_extra_s", 0.0) or 0.0)
    crowded = units >= COLD_UNITS and w > ONE_WARP
    if not double_buffered or rounds > 1 or crowded or extra <= 0:
        return None
    l2_lat, l2_src = value(spec, calib, "l2_latency_s")
    r = max(float(trips), 1.0)
    return Term("cold_tile_latency_s", l2_lat + extra, "s", "L_l2 + E",
                {"r": r, "L_l2": l2_lat, "E": extra, "rounds": float(rounds),
                 "u": float(units), "w": float(w)},
                note=f"a double buffer at {units:g} blocks per SM ({w:g} warps on the busiest "
                     f"scheduler) in one round of blocks: "
                     f"its prefetch covers the cold tile load, not L_g (cold.py; E: "
                     f"calibration cold_touch.json, run BF; L2 latency: {l2_src})")
