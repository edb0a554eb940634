"""PTX parser: the instruction mix of the virtual ISA, used where no SASS disassembler
accepts the target (sm_61 with CUDA 13 tools). PTX counts are before ptxas scheduling and
register allocation: FMAs and memory instructions match SASS closely, `other` does not.
"""

from __future__ import annotations

import re

from gemmmodel.compile.classify import classify_ptx
from gemmmodel.compile.listing import Instr, Label, Listing

_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)")
_LABEL = re.compile(r"^\s*(\$?[\w$]+):")
_INSTR = re.compile(r"^\s*(?P<pred>@!?%\w+\s+)?(?P<op>[a-z][\w.:]*)(?P<rest>[^;]*);")


def parse_ptx(text: str) -> dict[str, Listing]:
    """Entry name -> Listing for every `.entry` body of a PTX module."""
    listings: dict[str, Listing] = {}
    current: Listing | None = None
    depth = 0
    for line in text.splitlines():
        code = line.split("//", 1)[0]
        if current is None:
            m = _ENTRY.match(code)
            if m:
                current = Listing(m.group(1))
                depth = 0
                seen_body = False
            continue
        if "{" in code:
            seen_body = True
        depth += code.count("{") - code.count("}")
        if seen_body and depth <= 0:
            listings[current.name] = current
            current = None
            continue
        if not seen_body or code.lstrip().startswith("."):
            continue
        m = _LABEL.match(code)
        if m:
            current.items.append(Label(m.group(1)))
            continue
        m = _INSTR.match(code.strip("{} \t"))
        if not m:
            continue
        opcode = m.group("op")
        base = opcode.split(".")[0]
        category, packed = classify_ptx(opcode)
        predicated = bool(m.group("pred"))
        target = m.group("rest").strip().rstrip(",") if base == "bra" else None
        ends = (base == "bra" and not predicated) or (base in ("ret", "exit") and not predicated)
        current.items.append(Instr(opcode, category, packed, target, predicated and base == "bra",
                                   ends))
    return listings
