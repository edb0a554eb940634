"""compile_facts: compile a kernel source for one target and return its KernelFacts.

Resources come from the compiler's own report (AMD remarks, ptxas -v), the instruction
mixes from the generated code (AMDGCN, SASS, or PTX where no disassembler takes the
target). Results are cached on disk (cache.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from gemmmodel import KERNELS_DIR
from gemmmodel.compile.cache import cache_get, cache_key, cache_put, source_closure
from gemmmodel.compile.facts import KernelFacts, empty_mix
from gemmmodel.compile.isa_amd import amd_kernel_names, parse_amd_asm, parse_amd_remarks
from gemmmodel.compile.listing import Listing, count_mix
from gemmmodel.compile.lookahead import fragment_lookahead
from gemmmodel.compile.loops import find_main_loop, reachable_instructions
from gemmmodel.compile.ptx import parse_ptx
from gemmmodel.compile.routes import Route, choose_route, run_route
from gemmmodel.compile.sass import parse_ptxas_info, parse_sass
from gemmmodel.compile.trips import load_round_trips
from gemmmodel.errors import BadArgument, CompileError, KernelNotFound

_AMD_TARGET = re.compile(r"^gfx[0-9a-f]+$")
_NV_TARGET = re.compile(r"^sm_\d+[a-z]?$")


def resolve_target(spec_or_target) -> tuple[str, str]:
    """(compile target, vendor) from a GpuSpec-like object, a target string ("gfx906",
    "sm_90") or a spec name known to gemmmodel.spec ("mi100", "h100")."""
    if hasattr(spec_or_target, "compile_target") and hasattr(spec_or_target, "vendor"):
        return str(spec_or_target.compile_target), str(spec_or_target.vendor)
    text = str(spec_or_target).strip()
    if _AMD_TARGET.match(text):
        return text, "amd"
    if _NV_TARGET.match(text):
        return text, "nvidia"
    try:
        from gemmmodel.spec import load_spec
    except ImportError as err:
        raise BadArgument(f"unknown GPU or target {text!r} (use gfxNNN or sm_NN)") from err
    spec = load_spec(text)
    return str(spec.compile_target), str(spec.vendor)


def _define_flags(defines: dict) -> list[str]:
    return [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in sorted(defines.items())]


def _mixes(listing: Listing | None, vendor: str) -> dict:
    """KernelFacts keyword arguments: mix_total, mix_loop, mix_outer, main_loop_depth,
    load_round_trips (of the main loop's trip, trips.py) and fragment_lookahead (of the
    same trip, lookahead.py; rounded to 0.01)."""
    if listing is None:
        return {}
    loop = find_main_loop(listing)
    ahead = fragment_lookahead(loop.path or loop.instrs, vendor)[0] if loop else None
    return {"mix_total": count_mix(reachable_instructions(listing)),
            "mix_loop": count_mix(loop.instrs) if loop else empty_mix(),
            "mix_outer": count_mix(loop.outer_instrs) if loop else empty_mix(),
            "main_loop_depth": loop.depth if loop else 0,
            "load_round_trips": (load_round_trips(loop.path or loop.instrs, vendor)
                                 if loop else None),
            "fragment_lookahead": round(ahead, 2) if ahead is not None else None}


def _amd_facts(raw, route: Route, flags: str) -> list[KernelFacts]:
    listings = parse_amd_asm(raw.listing_text)
    remarks = parse_amd_remarks(raw.info_text)
    out = []
    for name in amd_kernel_names(raw.listing_text):
        res = remarks.get(name, {})
        spills = res.get("vgpr_spills", 0) + res.get("sgpr_spills", 0)
        out.append(KernelFacts(
            kernel=name, target=route.target, vendor="amd", vgprs=res.get("vgprs"),
            sgprs=res.get("sgprs"), agprs=res.get("agprs"), lds_bytes=res.get("lds_bytes", 0),
            scratch_bytes=res.get("scratch_bytes", 0), spills=spills,
            vgpr_spills=res.get("vgpr_spills"), sgpr_spills=res.get("sgpr_spills"),
            occupancy_waves_per_simd=res.get("occupancy_waves_per_simd"),
            mix_source=raw.mix_source, compiler=route.versions, flags=flags,
            **_mixes(listings.get(name), "amd")))
    return out


def _nvidia_facts(raw, route: Route, flags: str) -> list[KernelFacts]:
    entries, resources = parse_ptxas_info(raw.info_text)
    if raw.mix_source == "sass":
        listings = parse_sass(raw.listing_text)
    else:
        listings = parse_ptx(raw.listing_text)
    out = []
    for name in entries:
        res = resources.get(name, {})
        spills = res.get("spill_store_bytes", 0) + res.get("spill_load_bytes", 0)
        out.append(KernelFacts(
            kernel=name, target=route.target, vendor="nvidia", regs=res.get("regs"),
            lds_bytes=res.get("lds_bytes", 0), scratch_bytes=res.get("scratch_bytes", 0),
            spills=spills, spill_store_bytes=res.get("spill_store_bytes"),
            spill_load_bytes=res.get("spill_load_bytes"), mix_source=raw.mix_source,
            compiler=route.versions, flags=flags, **_mixes(listings.get(name), "nvidia")))
    return out


def facts_from_output(raw, route: Route, flags: str = "") -> list[KernelFacts]:
    """KernelFacts from a route's raw output (what run_route returned, or saved texts)."""
    build = _amd_facts if route.name == "hipcc" else _nvidia_facts
    return build(raw, route, flags)


def compile_facts(source, spec_or_target, defines: dict | None = None, entry: str | None = None,
                  extra_flags: tuple = (), use_cache: bool = True,
                  route: Route | None = None) -> list[KernelFacts]:
    """KernelFacts of every kernel in `source` (or only `entry`) for one target.

    `spec_or_target`: a GpuSpec (vendor, compile_target), a target ("gfx906", "sm_90") or a
    spec name. `defines`: -D macros. `route`: a Route from choose_route, to reuse its
    version probe over many compiles. Raises ToolMissing, CompileError, KernelNotFound.
    """
    source = Path(source)
    if not source.is_file():
        raise BadArgument(f"source file not found: {source}")
    target, vendor = resolve_target(spec_or_target)
    route = route if route is not None and route.target == target else choose_route(target, vendor)
    include_dirs = [source.resolve().parent, KERNELS_DIR]
    define_flags = _define_flags(dict(defines or {}))
    recorded = " ".join([*route.flags, *define_flags, *map(str, extra_flags)])
    key = cache_key(source_closure(source, include_dirs), [route.name, recorded], route.versions)
    cached = cache_get(key) if use_cache else None
    if cached is not None:
        facts = [KernelFacts.from_dict(d) for d in cached]
    else:
        raw = run_route(route, source, define_flags, include_dirs, tuple(map(str, extra_flags)))
        facts = facts_from_output(raw, route, recorded)
        if not facts:
            raise CompileError(f"no kernel found in {source.name} for {target}")
        if use_cache:
            cache_put(key, [f.to_dict() for f in facts])
    if entry is None:
        return facts
    chosen = [f for f in facts if f.kernel == entry]
    if not chosen:
        names = ", ".join(f.kernel for f in facts)
        raise KernelNotFound(f"no kernel {entry!r} in {source.name} (found: {names})")
    return chosen
