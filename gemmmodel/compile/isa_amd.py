"""AMD parsers: the AMDGCN assembly of `hipcc -S` and the resource remarks of
`-Rpass-analysis=kernel-resource-usage` (LLVM AMDGPU backend, clang >= 14).

Inline assembly (between `;;#ASMSTART` and `;;#ASMEND`) is ordinary instruction text and is
counted like compiler-generated code.
"""

from __future__ import annotations

import re

from gemmmodel.compile.classify import classify_amd
from gemmmodel.compile.listing import Instr, Label, Listing

_LABEL = re.compile(r"^([.$\w]+):")
_KERNEL = re.compile(r"^\s*\.amdhsa_kernel\s+(\S+)")
_FUNC_END = re.compile(r"^\.Lfunc_end\d+:")
_FUNC_TYPE = re.compile(r"^\s*\.type\s+([.$\w]+)\s*,\s*@function")
_END_FLOW = {"s_endpgm", "s_setpc_b64", "s_trap"}


def amd_kernel_names(asm_text: str) -> list[str]:
    """Names of the kernels (`.amdhsa_kernel` directives) in layout order."""
    return [m.group(1) for m in map(_KERNEL.match, asm_text.splitlines()) if m]


def _instruction(line: str) -> Instr | None:
    code = line.split(";", 1)[0].strip()
    if not code or code.startswith("."):
        return None
    opcode, _, operands = code.partition(" ")
    if not re.match(r"^[a-z][a-z0-9_]*$", opcode):
        return None
    category, packed = classify_amd(opcode)
    target = None
    conditional = False
    if opcode == "s_branch" or opcode.startswith("s_cbranch_"):
        target = operands.strip().split(",")[0].strip() or None
        conditional = opcode.startswith("s_cbranch_")
    ends = opcode in _END_FLOW or opcode == "s_branch"
    return Instr(opcode, category, packed, target, conditional, ends, " ".join(operands.split()))


def parse_amd_asm(asm_text: str) -> dict[str, Listing]:
    """Function name -> Listing for every function body in the assembly text."""
    listings: dict[str, Listing] = {}
    functions: set[str] = set()
    current: Listing | None = None
    for line in asm_text.splitlines():
        if current is None:
            m = _FUNC_TYPE.match(line)
            if m:
                functions.add(m.group(1))
            m = _LABEL.match(line)
            if m and m.group(1) in functions:
                current = Listing(m.group(1))
            continue
        if _FUNC_END.match(line):
            listings[current.name] = current
            current = None
            continue
        m = _LABEL.match(line)
        if m:
            current.items.append(Label(m.group(1)))
            continue
        ins = _instruction(line)
        if ins is not None:
            current.items.append(ins)
    return listings


_REMARK = re.compile(r"remark:\s+(.+?):\s+(\S+)\s+\[-Rpass-analysis=kernel-resource-usage\]")
_REMARK_KEYS = {
    "SGPRs": "sgprs",
    "VGPRs": "vgprs",
    "AGPRs": "agprs",
    "ScratchSize [bytes/lane]": "scratch_bytes",
    "Occupancy [waves/SIMD]": "occupancy_waves_per_simd",
    "SGPRs Spill": "sgpr_spills",
    "VGPRs Spill": "vgpr_spills",
    "LDS Size [bytes/block]": "lds_bytes",
}


def parse_amd_remarks(stderr_text: str) -> dict[str, dict[str, int]]:
    """Function name -> resource dict (KernelFacts field names) from the remarks."""
    out: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for m in map(_REMARK.search, stderr_text.splitlines()):
        if not m:
            continue
        key, value = m.group(1).strip(), m.group(2)
        if key == "Function Name":
            current = out.setdefault(value, {})
        elif current is not None and key in _REMARK_KEYS and re.fullmatch(r"-?\d+", value):
            current[_REMARK_KEYS[key]] = int(value)
    return out
