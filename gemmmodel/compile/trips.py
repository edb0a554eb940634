"""Load round trips: how many global-load latencies one trip of a loop waits in series.

A single-buffered tile loop loads its A and B slices into registers and stores them to
LDS. When the compiler has registers for all of a thread's loads it issues them together
and the loop waits one global latency; with fewer free registers it issues a few, stores
them, issues the next few, and so on: each group waits a whole latency after the previous
one. nvcc for sm_90 does this for 8x8 thread tiles (calibration/h200/ncu_g_3072x3072x3072
.txt: 1-warp 32x64x32 blocks, 24 loads per thread in groups of 2-4, stall on long
scoreboard ~1960 cycles per iteration, ~320 cycles per group).

`load_round_trips(instrs, vendor)` replays two trips of the loop body in issue order with
a global-load latency L much longer than the loop (L = LONG_LATENCY instruction slots;
every other instruction takes one slot) and returns (cycles of the second trip - its
instructions) / L: the number of latencies the trip waits in series. Loads whose data is
used only in the next trip (register double buffering) count once, when that trip uses it.
  NVIDIA (SASS): a register scoreboard. A global load (LDG) writes its destination
      registers (4 for .128, 2 for .64) L slots after issue; an instruction that reads or
      writes a pending register waits for it. The first register of an instruction is its
      destination, except for stores, atomics, compares and branches (all operands read).
  AMD (AMDGCN): the vmcnt counter. Global/buffer/flat loads complete in issue order;
      `s_waitcnt vmcnt(n)` waits until at most n are outstanding.
Other latencies (LDS, ALU) are not counted here (latency.py has them).
"""

from __future__ import annotations

import re

LONG_LATENCY = 1.0e6
_REG = re.compile(r"\bR(\d+)\b")
_VMCNT = re.compile(r"vmcnt\((\d+)\)")
_NV_READ_ONLY = ("ST", "STS", "STG", "STL", "RED", "ATOM", "ATOMS", "ATOMG", "BRA", "BAR",
                 "ISETP", "FSETP", "DSETP", "HSETP2")
_AMD_LOAD = re.compile(r"^(global|buffer|flat|scratch)_load_")


def _nv_width(opcode: str) -> int:
    return 4 if ".128" in opcode else 2 if ".64" in opcode else 1


def _nvidia_trip(body, ready: dict, t: float) -> float:
    for ins in body:
        base = ins.opcode.split(".")[0]
        regs = [int(r) for r in _REG.findall(ins.operands)]
        reads, writes = (regs, []) if base in _NV_READ_ONLY else (regs[1:], regs[:1])
        t = max([t] + [ready.get(r, 0.0) for r in reads + writes]) + 1.0
        if base == "LDG" and writes:
            for k in range(_nv_width(ins.opcode)):
                ready[writes[0] + k] = t + LONG_LATENCY
        else:
            for r in writes:
                ready[r] = t
    return t


def _amd_trip(body, pending: list, t: float) -> float:
    for ins in body:
        t += 1.0
        if _AMD_LOAD.match(ins.opcode):
            pending.append(t + LONG_LATENCY)
        elif ins.opcode.startswith("s_waitcnt"):
            m = _VMCNT.search(ins.operands)
            if m is None and "vmcnt" not in ins.operands and ins.opcode == "s_waitcnt":
                continue  # lgkmcnt/expcnt only
            keep = int(m.group(1)) if m else 0
            while len(pending) > keep:
                t = max(t, pending.pop(0))
    return t


def load_round_trips(instrs, vendor: str) -> float | None:
    """Global-load latencies one trip of `instrs` (a loop body) waits in series; None when
    the listing has no operand text (PTX) or the vendor is unknown."""
    body = list(instrs)
    if not body or not any(ins.operands for ins in body):
        return None
    if vendor == "nvidia":
        state, step = {}, _nvidia_trip
    elif vendor == "amd":
        state, step = [], _amd_trip
    else:
        return None
    t1 = step(body, state, 0.0)
    t2 = step(body, state, t1)
    return round(max(0.0, (t2 - t1 - len(body)) / LONG_LATENCY), 2)


def trips_per_tile(trips, loop: dict, tile_fma: float) -> float | None:
    """Round trips of one tile iteration from a main loop's: the loop holds
    (fma + fma_packed) / tile_fma tile iterations. None without trips, FMAs or a barrier in
    the loop (then it is not the tile loop and gives no basis to scale)."""
    fma = float(loop.get("fma", 0) or 0) + float(loop.get("fma_packed", 0) or 0)
    if trips is None or fma <= 0 or not loop.get("barrier"):
        return None
    return float(trips) * float(tile_fma) / fma
