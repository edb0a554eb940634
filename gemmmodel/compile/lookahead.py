"""Fragment lookahead: how far ahead of its use a loop issues each shared-memory read (SASS).

A GEMM inner loop reads its A and B fragments from shared memory (LDS) and multiplies them
(FFMA). An LDS takes the loaded LDS latency (about 30 clocks on the H200) to return; a warp
hides it under its own work only if FFMAs that do not need the fragment come between the
LDS and the first FFMA that does. nvcc normally reads the next k step's fragments before
this step's FFMAs (the one-step lookahead of latency.lookahead_streams, TM x TN FMAs).

`fragment_lookahead(instrs, vendor)` replays one trip of a loop body in issue order and
returns the mean, over its LDS instructions, of the FFMAs issued between each LDS and the
first FFMA that reads one of its destination registers (searched to the end of the trip; an
LDS whose fragment is not used within the trip is left out), with the number of LDS
counted.
  NVIDIA (SASS): LDS / LDS.64 / LDS.128 (not LDSM); the destination is the first register
      operand, 4 registers for .128, 2 for .64; FMAs are FFMA.
  AMD (AMDGCN): ds_read* (ds_read_b128 v[35:38], ds_read2_b32 v[4:5], ...); the
      destination is the first operand (vN or a range v[a:b]); FMAs are v_fma_f32,
      v_fmac_f32, v_mac_f32 and v_pk_fma_f32 (one instruction each).
The compile facts carry it as KernelFacts.fragment_lookahead (driver.py, the main loop's
trip); the model uses it for register-staged double buffers (combine.py).

Device run BH (session 66, docs/model.md "Session 66") measured it on the device NVRTC's
builds: bounds-checked register-staged double buffers keep 0-16 FFMAs (32x128x32/4x4/p4/db
0, 64x256x16/8x8/p4/db 4.5, 128x64x16/8x8/p4/db 15.8), their single buffers and batched
twins 27-62.
"""

from __future__ import annotations

import re

from gemmmodel.compile.trips import _REG, _nv_width

#: An AMD vector register operand: vN or a range v[a:b] (not s / a registers).
_AMD_VREG = re.compile(r"\bv(?:(\d+)\b|\[(\d+):(\d+)\])")
_AMD_FMA = ("v_fma_f32", "v_fmac_f32", "v_mac_f32", "v_pk_fma_f32")


def _amd_regs(text: str) -> set[int]:
    out: set[int] = set()
    for one, lo, hi in _AMD_VREG.findall(text):
        out.update([int(one)] if one else range(int(lo), int(hi) + 1))
    return out


def _nv_destination(instr) -> set[int]:
    m = _REG.search(instr.operands.split(",")[0]) if instr.operands else None
    return {int(m.group(1)) + i for i in range(_nv_width(instr.opcode))} if m else set()


def _nv_sources(instr) -> set[int]:
    parts = instr.operands.split(",")
    return {int(r) for r in _REG.findall(",".join(parts[1:]))}


def _amd_destination(instr) -> set[int]:
    return _amd_regs(instr.operands.split(",")[0]) if instr.operands else set()


def _amd_sources(instr) -> set[int]:
    return _amd_regs(",".join(instr.operands.split(",")[1:])) if instr.operands else set()


def _roles(instrs, vendor: str):
    """Per instruction: "lds", "fma" or None, and the destination / source readers."""
    if vendor == "amd":
        kinds = ["lds" if i.opcode.startswith("ds_read") else
                 "fma" if i.opcode.startswith(_AMD_FMA) else None for i in instrs]
        return kinds, _amd_destination, _amd_sources
    if vendor != "nvidia":
        raise ValueError(f"fragment_lookahead: unknown vendor {vendor!r}")
    base = [i.opcode.split(".")[0] for i in instrs]
    kinds = ["lds" if b == "LDS" else "fma" if b == "FFMA" else None for b in base]
    return kinds, _nv_destination, _nv_sources


def fragment_lookahead(instrs, vendor: str = "nvidia") -> tuple[float | None, int]:
    """(mean FMAs between an LDS read and its fragment's first FMA, LDS reads counted) over
    one trip of `instrs` (module docstring); (None, 0) where no LDS read feeds an FMA in the
    trip or the listing has no operand text (PTX)."""
    instrs = list(instrs)
    kinds, destination, sources = _roles(instrs, vendor)
    gaps = []
    for k, instr in enumerate(instrs):
        if kinds[k] != "lds":
            continue
        dst = destination(instr)
        if not dst:
            continue
        between = 0
        for j in range(k + 1, len(instrs)):
            if kinds[j] != "fma":
                continue
            if sources(instrs[j]) & dst:
                gaps.append(between)
                break
            between += 1
    return (sum(gaps) / len(gaps) if gaps else None), len(gaps)


__all__ = ["fragment_lookahead"]
