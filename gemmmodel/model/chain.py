"""The fragment chain of a cp.async double buffer at one resident block per SM
(thirty-seventh change, session 72; device run BS, calibration/h200/ncu_bs_*).

Where a cp.async double buffer's loop reads its fragments just before the FMAs that use
them (fragment cover phi = min(1, w * c_v * D / L_lds) < 1, latency.fragment_cover; the
device SASS of 128x128x16/4x8/db and /8x4/db has D = 0.08 FMAs, run BH), its warps wait on
each k step's reads: ncu puts 43-48 % of their warp samples on FFMAs stalled on the short
scoreboard. With one block per SM all its warps reach those reads together (between the
same barriers), so a k step takes the LDS pipe's whole burst for the block, then the read
latency, then one warp's issue of the step, and no other block's warps issue under it:

    t_chain = n_iter * BK * (L_lds_clk + I_k) * (1 - phi) / clock_hz
    t_pipes >= t_lds + t_chain          (combine.py)

      n_iter  tile iterations of the busiest SM (its blocks, one at a time, x ceil(K / BK))
      L_lds_clk  the unloaded LDS latency (the pipe's queue is t_lds itself)
      I_k     one warp's issue clocks of one k step: (c_v * VALU + other instructions of a
              tile iteration) / BK
Off (0) at two or more resident blocks per SM (another block's warps issue under the wait,
as combine.py's fragment cover of register-staged double buffers), for every other
buffering, and where D is unknown. Nothing fitted. Run BS at 8192x256x2048 (one block per
SM): the measured cycles minus the LDS pipe's wavefronts (per SM with a block) are 79 clk
per k step for /4x8/db and 100 for /8x4/db; this term charges L_lds + I_k = 23 + 36 = 59.
"""

from __future__ import annotations

from gemmmodel.model.combine import ALONE_UNITS
from gemmmodel.model.terms import Term


def fragment_chain(cover: Term, lds_latency_s: float, clock_hz: float, iterations: float,
                   bk: int, issue_clk_per_iter: float, units: float) -> Term:
    """t_chain (module docstring): cover the fragment cover Term at the kernel's w
    (latency.fragment_cover), iterations the busiest SM's tile iterations,
    issue_clk_per_iter one warp's issue clocks of a tile iteration (c_v * VALU + other),
    units the resident blocks per SM."""
    phi = cover.value
    l_clk = lds_latency_s * clock_hz
    i_k = issue_clk_per_iter / max(int(bk), 1)
    exposed = max(0.0, 1.0 - float(phi)) if units < ALONE_UNITS else 0.0
    value = float(iterations) * max(int(bk), 1) * (l_clk + i_k) * exposed / clock_hz
    return Term("t_chain_s", value, "s",
                "n_iter * BK * (L_lds_clk + I_k) * (1 - fragment_cover) / clock_hz at one "
                "resident block per SM, else 0",
                {"n_iter": float(iterations), "BK": float(bk), "L_lds_clk": l_clk,
                 "I_k": i_k, "fragment_cover": float(phi), "u": float(units)},
                note="cp.async double buffer whose loop reads the fragments just before "
                     "their FMAs: each k step waits the block's LDS burst, the read latency "
                     "and one warp's issue (device run BS; chain.py)",
                children=(cover,))
