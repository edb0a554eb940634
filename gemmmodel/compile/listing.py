"""A parsed assembly listing of one function: labels and instructions in layout order.

The three parsers (isa_amd, sass, ptx) all produce a `Listing`; the mix counter and the
main-loop finder (loops.py) work on it without knowing the instruction set.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gemmmodel.compile.facts import empty_mix


@dataclass(frozen=True)
class Instr:
    """One instruction. `target` is the label a branch jumps to (None if not a branch);
    `conditional` is True for predicated/conditional branches; `ends_flow` is True when
    control never falls through (unconditional branch, end of program, return).
    `operands` is the operand text as printed (registers, addresses), for the load
    round-trip count of trips.py; parsers that do not keep it leave it empty."""

    opcode: str
    category: str
    packed: bool = False
    target: str | None = None
    conditional: bool = False
    ends_flow: bool = False
    operands: str = ""


@dataclass(frozen=True)
class Label:
    name: str


@dataclass
class Listing:
    """Labels and instructions of one function (kernel) in layout order."""

    name: str
    items: list = field(default_factory=list)

    def instructions(self) -> list[Instr]:
        return [item for item in self.items if isinstance(item, Instr)]


def count_mix(instrs) -> dict[str, int]:
    """Static counts per mix category (facts.MIX_KEYS) of an iterable of Instr."""
    mix = empty_mix()
    for ins in instrs:
        mix[ins.category] += 1
        mix["instructions"] += 1
        if ins.packed:
            mix["fma_packed"] += 1
    return mix
