"""Occupancy (resident workgroups per CU) and wave quantisation of the grid.

Resources come from the compile facts (VGPRs/AGPRs/SGPRs or NVIDIA registers, LDS bytes)
or, for configs never compiled, from the estimate below; occupancy itself is
gemmmodel.occupancy.occupancy (the spec's allocation rules).
Register estimate (assumption, used only without compile facts):
    regs = TM*TN (accumulators) + TM + TN (fragments) + staged global floats per thread
           (x2 when double buffered) + 6 (addresses, loop counter)
  hipcc -O3 gfx906 gave 36 and 93 VGPRs for plain 64x64x16/4x4 and 128x128x8/8x8 kernels
  where this gives 38 and 94; nvcc sm_90 gave 64 and 128 registers (the estimate is low
  there: NVIDIA occupancy without facts is optimistic).
Quantisation: blocks = ceil(M/BM) * ceil(N/BN) * batch run `b` at a time on each of the
`compute_units` CUs: slots = CUs * b, rounds = ceil(blocks / slots), efficiency =
blocks / (rounds * slots); the busiest CU runs ceil(blocks / CUs) blocks, min(b, that) of
them at once (the resident blocks that hide each other's latency there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gemmmodel.model.access import lds_tile_bytes
from gemmmodel.model.kernel import KernelDesc
from gemmmodel.model.terms import Term

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

REG_OVERHEAD = 6  # registers for addresses and the loop counter (assumption, see above)
COMPILER_FILE = Path(__file__).resolve().parent / "data" / "compiler.toml"


def _get(facts, key: str, default=None):
    if facts is None:
        return default
    if isinstance(facts, dict):
        value = facts.get(key, default)
    else:
        value = getattr(facts, key, default)
    return default if value is None else value


def estimate_registers(desc: KernelDesc) -> int:
    """Registers per thread from the tile parameters (see the module docstring)."""
    if not desc.uses_lds:
        return 2 * (desc.tm * desc.tn) + desc.tm + desc.tn + REG_OVERHEAD + 8
    staged = (desc.bm * desc.bk + desc.bk * desc.bn) / desc.threads
    if desc.double_buffered:
        staged *= 2
    return math.ceil(desc.tm * desc.tn + desc.tm + desc.tn + staged + REG_OVERHEAD)


@dataclass(frozen=True)
class Resources:
    regs: int          # VGPRs (AMD) or registers (NVIDIA) per thread
    agprs: int
    sgprs: int
    lds_bytes: int
    source: str        # "compile facts" | "params"
    spilled: int = 0   # estimated registers over the compiler's cap (params only)
    cap: int = 0       # that cap (0 = none)


@lru_cache(maxsize=1)
def _compiler_table() -> dict:
    with COMPILER_FILE.open("rb") as fh:
        return tomllib.load(fh)


def assumed_block_threads(spec, desc: KernelDesc) -> tuple[int, str]:
    """Block size the compiler plans registers for: the launch bounds when the kernel has
    them, else the vendor compiler's default (data/compiler.toml; 0 = no assumption)."""
    if desc.launch_bounds:
        return int(desc.launch_bounds), "launch bounds"
    row = _compiler_table().get(str(spec.vendor), {})
    return int(row.get("default_max_block_threads", 0)), str(row.get("source", ""))


def register_cap(spec, threads: int) -> int:
    """Most registers per thread with which one block of `threads` still fits a CU
    (gemmmodel.occupancy rules, searched); max_regs_per_thread when threads is 0."""
    from gemmmodel.occupancy import occupancy

    hi = int(spec.max_regs_per_thread)
    if threads <= 0 or blocks_per_cu(occupancy(spec, threads, hi)) >= 1:
        return hi
    lo = 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if blocks_per_cu(occupancy(spec, threads, mid)) >= 1:
            lo = mid
        else:
            hi = mid - 1
    return lo


def resources(desc: KernelDesc, spec, facts=None) -> Resources:
    """Registers and LDS bytes per block, from the compile facts where given; else the
    estimate, capped where the compiler plans for a larger block than the kernel's."""
    regs = _get(facts, "vgprs") or _get(facts, "regs")
    lds = _get(facts, "lds_bytes")
    if regs:
        return Resources(int(regs), int(_get(facts, "agprs", 0) or 0),
                         int(_get(facts, "sgprs", 0) or 0),
                         int(lds if lds is not None else lds_tile_bytes(desc)), "compile facts")
    est = estimate_registers(desc)
    assumed, _ = assumed_block_threads(spec, desc)
    cap = register_cap(spec, assumed) if assumed > desc.threads else 0
    if cap and est > cap:
        return Resources(cap, 0, 0, lds_tile_bytes(desc), "params", spilled=est - cap, cap=cap)
    return Resources(est, 0, 0, lds_tile_bytes(desc), "params", cap=cap)


def busiest_simd_waves(blocks: float, waves_per_block: int, simds: int) -> int:
    """Waves the busiest SIMD of a CU holds when the CU deals the waves of `blocks` blocks
    to its `simds` SIMDs: ceil(blocks * waves_per_block / simds), at least 1."""
    return max(math.ceil(blocks * waves_per_block / simds - 1e-9), 1)


def blocks_per_cu(occ) -> int:
    """Resident workgroups (AMD) / blocks (NVIDIA) per CU from an Occupancy result."""
    for key in ("workgroups_per_cu", "blocks_per_sm", "blocks_per_cu"):
        value = getattr(occ, key, None)
        if value:
            return int(value)
    return 0


@dataclass(frozen=True)
class WaveInfo:
    blocks: int
    blocks_per_cu: int          # occupancy limit
    resident_blocks: float      # blocks resident per CU in practice (<= limit)
    waves_per_simd: float       # resident waves per SIMD / warps per scheduler
    waves_per_block: int
    rounds: int
    efficiency: float
    busiest_cu_blocks: int
    limiter: str
    term: Term
    resources: Resources | None = None


def wave_info(desc: KernelDesc, spec, shape, facts=None) -> WaveInfo:
    """Occupancy and wave quantisation for one launch of `shape` = (M, N, K, batch)."""
    from gemmmodel.errors import InvalidConfig
    from gemmmodel.occupancy import occupancy

    m, n, _, batch = shape
    res = resources(desc, spec, facts)
    occ = occupancy(spec, desc.threads, res.regs, res.agprs, res.sgprs, res.lds_bytes)
    b = blocks_per_cu(occ)
    if b < 1:
        raise InvalidConfig(f"{desc.bm}x{desc.bn}x{desc.bk}",
                            [f"no block fits on a CU (limited by {getattr(occ, 'limiter', '?')})"])
    cus = int(spec.compute_units)
    blocks = math.ceil(m / desc.bm) * math.ceil(n / desc.bn) * int(batch)
    slots = cus * b
    rounds = math.ceil(blocks / slots)
    eff = blocks / (rounds * slots)
    busiest = math.ceil(blocks / cus)
    # the busiest CU's own blocks: a launch of fewer blocks than slots still puts
    # ceil(blocks / CUs) of them together on one CU (not the GPU-wide average blocks / CUs)
    resident = float(min(b, busiest))
    wpb = math.ceil(desc.threads / int(spec.wave_size))
    # the busiest SIMD's waves: a CU deals its resident waves to its SIMDs, so one SIMD
    # holds ceil(waves / SIMDs) of them (ncu run K: 5 one-warp blocks per SM leave 2 warps on
    # one scheduler, smsp__warps_launched.max = 2)
    wps = float(busiest_simd_waves(resident, wpb, int(spec.simds_per_cu)))
    limiter = str(getattr(occ, "limiter", ""))
    res_t = Term("resources", float(res.regs), "regs/thread", res.source,
                 {"regs": res.regs, "agprs": res.agprs, "sgprs": res.sgprs,
                  "lds_bytes": res.lds_bytes, "threads": desc.threads,
                  "estimated_spilled_regs": res.spilled, "register_cap": res.cap},
                 note="registers and LDS per block from " + res.source)
    occ_t = Term("occupancy_blocks_per_cu", float(b), "blocks/CU", "gemmmodel.occupancy rules",
                 {"limiter": limiter, "waves_per_block": wpb}, children=(res_t,),
                 note=str(getattr(occ, "headroom", "")))
    wps_t = Term("occupancy_waves_per_simd", wps, "waves/SIMD",
                 "ceil(min(blocks_per_cu, busiest_cu_blocks) * waves_per_block / simds_per_cu)",
                 {"resident_blocks": resident, "waves_per_block": wpb,
                  "simds_per_cu": int(spec.simds_per_cu)})
    q_t = Term("wave_efficiency", eff, "1", "blocks / (ceil(blocks / slots) * slots)",
               {"blocks": blocks, "slots": slots, "rounds": rounds,
                "busiest_cu_blocks": busiest, "compute_units": cus})
    term = Term("waves", float(rounds), "rounds", "ceil(blocks / (CUs * blocks_per_cu))",
                {"blocks": blocks, "slots": slots}, children=(occ_t, wps_t, q_t))
    return WaveInfo(blocks, b, resident, wps, wpb, rounds, eff, busiest, limiter, term, res)
