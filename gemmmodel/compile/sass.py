"""NVIDIA parsers: SASS as printed by `nvdisasm -c`, and the resource lines of `ptxas -v`.

SASS lines look like `/*0b40*/  @!P0 BRA `(.L_x_6) ;`; labels like `.L_x_6:`; each
function starts at its `.text.<name>` section header.
"""

from __future__ import annotations

import re

from gemmmodel.compile.classify import classify_sass
from gemmmodel.compile.listing import Instr, Label, Listing

_SECTION = re.compile(r"^\s*//-+\s+\.text\.(\S+)\s+-+")
_LABEL = re.compile(r"^([.$\w]+):")
_INSTR = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?P<pred>@!?U?P\w+\s+)?(?P<op>[A-Z][A-Z0-9_.]*)(?P<rest>[^;]*);")
_TARGET = re.compile(r"`\(([^)]+)\)")
_BRANCHES = ("BRA", "JMP", "BRX", "JMX")
_RETURNS = ("EXIT", "RET", "KILL")


def _instruction(m: re.Match) -> Instr:
    opcode = m.group("op")
    base = opcode.split(".")[0]
    pred = (m.group("pred") or "").strip()
    predicated = bool(pred) and pred not in ("@PT", "@UPT")
    category, packed = classify_sass(opcode)
    if pred in ("@!PT", "@!UPT"):  # predicated never-true: occupies a slot, does no work
        category, packed = "other", False
    target = None
    conditional = False
    ends = False
    if base in _BRANCHES:
        t = _TARGET.search(m.group("rest"))
        target = t.group(1) if t else None
        conditional = predicated or ".DIV" in opcode
        ends = not conditional
    elif base in _RETURNS:
        ends = not predicated
    return Instr(opcode, category, packed, target, conditional, ends,
                 " ".join(m.group("rest").split()))


def parse_sass(text: str) -> dict[str, Listing]:
    """Function name -> Listing for every `.text.<name>` section of nvdisasm output."""
    listings: dict[str, Listing] = {}
    current: Listing | None = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            current = listings.setdefault(m.group(1), Listing(m.group(1)))
            continue
        if current is None:
            continue
        m = _INSTR.match(line)
        if m:
            current.items.append(_instruction(m))
            continue
        m = _LABEL.match(line)
        if m:
            current.items.append(Label(m.group(1)))
    return listings


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas_info(stderr_text: str) -> tuple[list[str], dict[str, dict[str, int]]]:
    """Entry names (in order) and name -> resources (KernelFacts field names) from ptxas -v."""
    entries: list[str] = []
    out: dict[str, dict[str, int]] = {}
    entry = props_for = None
    for line in stderr_text.splitlines():
        m = _ENTRY.search(line)
        if m:
            entry = m.group(1)
            entries.append(entry)
            out.setdefault(entry, {})
            continue
        m = _PROPS.search(line)
        if m:
            props_for = m.group(1)
            continue
        m = _FRAME.search(line)
        if m and props_for is not None:
            res = out.setdefault(props_for, {})
            res["scratch_bytes"] = int(m.group(1))
            res["spill_store_bytes"] = int(m.group(2))
            res["spill_load_bytes"] = int(m.group(3))
            props_for = None
            continue
        m = _USED.search(line)
        if m and entry is not None:
            res = out[entry]
            res["regs"] = int(m.group(1))
            s = _SMEM.search(line)
            res["lds_bytes"] = int(s.group(1)) if s else 0
    return entries, out
