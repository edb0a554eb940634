"""Fragment lookahead: how far ahead of its use a loop issues each shared-memory read (SASS).

A GEMM inner loop reads its A and B fragments from shared memory (LDS) and multiplies them
(FFMA). An LDS takes the loaded LDS latency (about 30 clocks on the H200) to return; a warp
hides it under its own work only if FFMAs that do not need the fragment come between the
LDS and the first FFMA that does. nvcc normally reads the next k step's fragments before
this step's FFMAs (the one-step lookahead of latency.lookahead_streams, TM x TN FMAs).

`fragment_lookahead(instrs)` replays one trip of a loop body in issue order and returns the
mean, over its LDS instructions, of the FFMAs issued between each LDS and the first FFMA
that reads one of its destination registers (searched to the end of the trip; an LDS whose
fragment is not used within the trip is left out), with the number of LDS counted. NVIDIA
SASS only: the destination is the first register operand, 4 registers for .128, 2 for .64.

Device run BH (session 66, docs/model.md "Session 66") measured it on the device NVRTC's
builds: bounds-checked register-staged double buffers keep 0-16 FFMAs (32x128x32/4x4/p4/db
0, 64x256x16/8x8/p4/db 4.5, 128x64x16/8x8/p4/db 15.8), their single buffers and batched
twins 27-62.
"""

from __future__ import annotations

from gemmmodel.compile.trips import _REG, _nv_width


def _destination(instr) -> set[int]:
    m = _REG.search(instr.operands.split(",")[0]) if instr.operands else None
    return {int(m.group(1)) + i for i in range(_nv_width(instr.opcode))} if m else set()


def _sources(instr) -> set[int]:
    parts = instr.operands.split(",")
    return {int(r) for r in _REG.findall(",".join(parts[1:]))}


def fragment_lookahead(instrs) -> tuple[float | None, int]:
    """(mean FFMAs between an LDS and its fragment's first FFMA, LDS counted) over one trip
    of `instrs` (module docstring); (None, 0) where no LDS feeds an FFMA in the trip."""
    base = [i.opcode.split(".")[0] for i in instrs]
    gaps = []
    for k, instr in enumerate(instrs):
        if base[k] != "LDS":
            continue
        dst = _destination(instr)
        if not dst:
            continue
        between = 0
        for j in range(k + 1, len(instrs)):
            if base[j] != "FFMA":
                continue
            if _sources(instrs[j]) & dst:
                gaps.append(between)
                break
            between += 1
    return (sum(gaps) / len(gaps) if gaps else None), len(gaps)


__all__ = ["fragment_lookahead"]
