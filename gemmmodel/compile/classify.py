"""Instruction-mix classifier: opcode -> mix category (see facts.MIX_KEYS).

Three instruction sets: AMDGCN (hipcc -S), SASS (nvdisasm) and PTX (the sm_61 fallback).
Widths are the data moved per lane by one instruction: ds_read2_b32 reads two dwords, so it
counts as 64 bits; sub-dword accesses (u8, u16, …) count in the b32 bucket.
Opcode names: LLVM AMDGPU assembler syntax, the CUDA binary utilities' SASS tables, and the
PTX ISA manual.
"""

from __future__ import annotations

import re

_BITS_TO_BUCKET = {32: "b32", 64: "b64", 96: "b96", 128: "b128"}


def _bucket(bits: int) -> str:
    return _BITS_TO_BUCKET.get(bits, "b32" if bits < 32 else "b128")


# --- AMDGCN -------------------------------------------------------------------------------

_AMD_FMA = re.compile(r"^v_(fma|fmac|mac|mad|fmaak|fmamk|madak|madmk)_(legacy_)?f32(_e32|_e64|_dpp|_sdwa)?$")
_AMD_PK_FMA = re.compile(r"^v_pk_fma_f32(_e64)?$")
_AMD_DS = re.compile(r"^ds_(read|load|write|store)(2st64|2)?_(b32|b64|b96|b128|[ui]8|[ui]16)(_d16(_hi)?)?$")
_AMD_VMEM = re.compile(
    r"^(global|buffer|flat)_(load|store)_(dword|dwordx2|dwordx3|dwordx4|ubyte|sbyte|ushort|sshort|"
    r"short|byte|b32|b64|b96|b128|u8|i8|u16|i16)(_d16(_hi)?)?$")
_AMD_DWORDS = {"dword": 32, "dwordx2": 64, "dwordx3": 96, "dwordx4": 128, "b32": 32, "b64": 64,
               "b96": 96, "b128": 128}


def classify_amd(opcode: str) -> tuple[str, bool]:
    """Category of one AMDGCN opcode and whether it is a packed (two-lane-element) FMA."""
    if _AMD_PK_FMA.match(opcode):
        return "fma", True
    if _AMD_FMA.match(opcode):
        return "fma", False
    if opcode.startswith("v_mfma_"):
        return "mfma", False
    m = _AMD_DS.match(opcode)
    if m:
        bits = int(m.group(3)[1:]) if m.group(3).startswith("b") else 16
        if m.group(2):  # read2 / write2: two elements per lane
            bits *= 2
        kind = "lds_read" if m.group(1) in ("read", "load") else "lds_write"
        return f"{kind}_{_bucket(bits)}", False
    m = _AMD_VMEM.match(opcode)
    if m:
        bits = _AMD_DWORDS.get(m.group(3), 16)
        kind = "global_load" if m.group(2) == "load" else "global_store"
        return f"{kind}_{_bucket(bits)}", False
    if opcode == "s_barrier":
        return "barrier", False
    if opcode.startswith("s_waitcnt"):
        return "waitcnt", False
    return "other", False


# --- SASS ---------------------------------------------------------------------------------

def _sass_bits(modifiers: list[str]) -> int:
    for mod in modifiers:
        if mod in ("64", "128"):
            return int(mod)
    return 32


def classify_sass(opcode: str) -> tuple[str, bool]:
    """Category of one SASS opcode with its modifiers, e.g. 'LDG.E.128.CONSTANT'."""
    base, *mods = opcode.split(".")
    if base in ("FFMA", "FFMA32I"):
        return "fma", False
    if base == "FFMA2":  # two FP32 FMAs per thread (sm_100)
        return "fma", True
    if base == "LDS":
        return f"lds_read_{_bucket(_sass_bits(mods))}", False
    if base == "STS":
        return f"lds_write_{_bucket(_sass_bits(mods))}", False
    if base in ("LDG", "LD"):
        return f"global_load_{_bucket(_sass_bits(mods))}", False
    if base in ("STG", "ST"):
        return f"global_store_{_bucket(_sass_bits(mods))}", False
    if base == "BAR":
        return "barrier", False
    if base in ("LDGDEPBAR", "DEPBAR"):
        return "waitcnt", False
    if base == "LDGSTS":
        return "cp_async", False
    if base == "LDL":  # thread-local memory: register spills (ptxas "spill loads")
        return "local_load", False
    if base == "STL":
        return "local_store", False
    return "other", False


# --- PTX ----------------------------------------------------------------------------------

_PTX_TYPE_BITS = re.compile(r"^[bfsu](8|16|32|64)$")


def classify_ptx(opcode: str) -> tuple[str, bool]:
    """Category of one PTX opcode with its modifiers, e.g. 'ld.shared.v4.f32'."""
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    if base in ("fma", "mad") and "f32" in mods:
        return "fma", False
    if base in ("ld", "st"):
        vec = 1
        elem = 32
        for mod in mods:
            if mod in ("v2", "v4", "v8"):
                vec = int(mod[1:])
            elif _PTX_TYPE_BITS.match(mod):
                elem = int(mod[1:])
        bits = vec * elem
        space = "shared" if any(m.startswith("shared") for m in mods) else (
            "other" if any(m in ("param", "const", "local") for m in mods) else "global")
        if space == "other":
            return "other", False
        if space == "shared":
            kind = "lds_read" if base == "ld" else "lds_write"
        else:
            kind = "global_load" if base == "ld" else "global_store"
        return f"{kind}_{_bucket(bits)}", False
    if base in ("bar", "barrier"):
        return "barrier", False
    if base == "cp" and len(mods) > 1 and mods[0] == "async":
        if mods[1] in ("ca", "cg"):
            return "cp_async", False
        return "waitcnt", False  # commit_group / wait_group / wait_all
    return "other", False
