"""Occupancy: how many workgroups, waves (AMD) or blocks and warps (NVIDIA) fit on one CU/SM.

    occupancy(spec, threads, vgprs, agprs=0, sgprs=0, lds_bytes=0) -> Occupancy

Each resource alone allows some number of workgroups (blocks) per CU (SM): `limits`.
The smallest is the answer and names the `limiter`. All constants come from the spec.

AMD (gfx9; the spec files cite LLVM AMDGPUBaseInfo.cpp and ARCH-FACTS.md):
  W = ceil(threads / wave_size) waves per workgroup.
  VGPRs per wave: V (agpr_mode none), max(V, A) (separate, gfx908),
    alignTo(V, agpr_alignment) + A (unified, gfx90a, when A > 0); allocated in reg_granule;
    waves/SIMD = min(max_waves_per_simd, regs_per_lane_file // allocated).
  SGPRs: waves/SIMD from the first sgpr_wave_limits row with sgprs <= max_sgprs.
  A per-SIMD limit of R waves admits floor(simds_per_cu * R / W) workgroups: a workgroup's
    waves are spread over the SIMDs (assumption: evenly, as the dispatcher can place them).
  wave slots: max_waves_per_cu // W; barriers: max_blocks_per_cu for W > 1 (none for
    single-wave workgroups); LDS: lds_bytes_per_cu // alignTo(lds, lds_granule_bytes).
  waves/CU = workgroups * W; waves/SIMD = ceil(waves/CU / simds_per_cu).
  hipcc's "Occupancy [waves/SIMD]" remark is the VGPR/SGPR waves/SIMD; it agrees with this
  whenever W divides evenly over the SIMDs (W = 1, 2, 4, or R a multiple of W/4). Its
  LDS/workgroup term in LLVM 15 counts waves per CU, not per SIMD (later LLVM divides by the
  SIMD count, as here); tests/test_occupancy_compiler.py checks both.

NVIDIA (the rules of CUDA 13.0 include/cuda_occupancy.h):
  W = ceil(threads / 32) warps per block; registers per warp alignTo(regs * 32, reg_granule)
    allocated per sub-partition (simds_per_cu of them): blocks =
    floor(simds * floor(regs_per_lane_file / simds / per_warp) / W); 0 when
    per_warp * alignTo(W, simds) exceeds the 64K per-block file (the hardware check).
  warp slots: max_waves_per_cu // W; blocks: max_blocks_per_cu;
  shared: alignTo(lds + lds_reserved_per_block_bytes, lds_granule_bytes) per block against
    lds_bytes_per_cu (the default carveout gives the full size); 0 when above
    lds_bytes_per_block + reserved.
  Checked against cuOccupancyMaxActiveBlocksPerMultiprocessor on an H100
  (tests/fixtures/nvidia_occupancy_h100.json, tests/test_occupancy_nvidia_fixture.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gemmmodel.errors import BadArgument

AMD_ORDER = ("waves", "workgroups", "vgprs", "sgprs", "lds")     # ties go to the first
NVIDIA_ORDER = ("threads", "blocks", "vgprs", "lds")


def _align(x: int, a: int) -> int:
    return -(-x // a) * a


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class _Request:
    threads: int
    vgprs: int
    agprs: int = 0
    sgprs: int = 0
    lds_bytes: int = 0


@dataclass(frozen=True)
class Occupancy:
    """Resident work per CU (AMD) or SM (NVIDIA) for one kernel launch configuration.

    workgroups_per_cu / waves_per_cu are blocks / warps per SM on NVIDIA (also exposed as
    blocks_per_sm / warps_per_sm). waves_per_simd is the most waves on one SIMD (NVIDIA: per
    SM sub-partition). register_waves_per_simd is what the registers alone allow per SIMD
    (AMD: min of VGPR and SGPR waves, the figure hipcc's "Occupancy" remark reports for
    kernels without LDS; NVIDIA: warps per sub-partition). `limits` gives the workgroups
    (blocks) per CU each resource alone allows (None = no limit); `limiter` names the smallest.
    """

    gpu: str
    vendor: str
    threads: int
    waves_per_workgroup: int
    workgroups_per_cu: int
    waves_per_cu: int
    waves_per_simd: int
    max_waves_per_cu: int
    register_waves_per_simd: int
    limiter: str
    limits: dict
    headroom: str
    inputs: dict

    @property
    def blocks_per_sm(self) -> int:
        return self.workgroups_per_cu

    @property
    def warps_per_sm(self) -> int:
        return self.waves_per_cu

    @property
    def fraction(self) -> float:
        """Resident waves over wave slots (0..1), the 'achieved occupancy' upper bound."""
        return self.waves_per_cu / self.max_waves_per_cu

    def to_dict(self) -> dict:
        if self.vendor == "amd":
            counts = {"waves_per_simd": self.waves_per_simd, "waves_per_cu": self.waves_per_cu,
                      "workgroups_per_cu": self.workgroups_per_cu}
        else:
            counts = {"blocks_per_sm": self.blocks_per_sm, "warps_per_sm": self.warps_per_sm,
                      "warps_per_subpartition": self.waves_per_simd}
        return {"gpu": self.gpu, "vendor": self.vendor, "threads": self.threads, **counts,
                "register_waves_per_simd": self.register_waves_per_simd,
                "occupancy": round(self.fraction, 4), "limiter": self.limiter,
                "limits": dict(self.limits), "limits_unit": "workgroups per CU (blocks per SM)",
                "headroom": self.headroom, "inputs": dict(self.inputs)}


def occupancy(spec, threads: int, vgprs: int, agprs: int = 0, sgprs: int = 0,
              lds_bytes: int = 0) -> Occupancy:
    """Occupancy of a kernel with `threads` per block and the given register/LDS use.

    vgprs: vector registers per thread (NVIDIA: registers per thread); agprs: AMD
    accumulation registers; sgprs: AMD scalar registers per wave; lds_bytes: LDS / shared
    memory per block in bytes (NVIDIA: static + dynamic, without the driver's reservation).
    """
    req = _Request(int(threads), int(vgprs), int(agprs), int(sgprs), int(lds_bytes))
    _check(spec, req)
    wg, limits, limiter = _solve(spec, req)
    waves_per_wg = _ceil_div(req.threads, spec.wave_size)
    waves = wg * waves_per_wg
    return Occupancy(
        gpu=spec.name, vendor=spec.vendor, threads=req.threads, waves_per_workgroup=waves_per_wg,
        workgroups_per_cu=wg, waves_per_cu=waves, waves_per_simd=_ceil_div(waves, spec.simds_per_cu),
        max_waves_per_cu=spec.max_waves_per_cu,
        register_waves_per_simd=_register_waves_per_simd(spec, req), limiter=limiter, limits=limits,
        headroom=_headroom(spec, req, wg, limits, limiter),
        inputs={"vgprs": req.vgprs, "agprs": req.agprs, "sgprs": req.sgprs,
                "lds_bytes": req.lds_bytes, "effective_vgprs": _effective_vgprs(spec, req)})


def _check(spec, req: _Request) -> None:
    if not 0 < req.threads <= spec.max_threads_per_block:
        raise BadArgument(f"threads must be 1..{spec.max_threads_per_block} on {spec.name}, "
                          f"got {req.threads}")
    if not 0 <= req.vgprs <= spec.max_regs_per_thread:
        raise BadArgument(f"vgprs must be 0..{spec.max_regs_per_thread} on {spec.name}, "
                          f"got {req.vgprs}")
    if req.lds_bytes < 0:
        raise BadArgument(f"lds bytes must be >= 0, got {req.lds_bytes}")
    if spec.vendor != "amd" and (req.agprs or req.sgprs):
        raise BadArgument(f"{spec.name} is an NVIDIA GPU: AGPRs and SGPRs do not apply")
    if req.agprs and spec.agpr_mode == "none":
        raise BadArgument(f"{spec.name} ({spec.arch}) has no AGPRs")
    if not 0 <= req.agprs <= spec.max_regs_per_thread:
        raise BadArgument(f"agprs must be 0..{spec.max_regs_per_thread}, got {req.agprs}")
    if spec.vendor == "amd" and not 0 <= req.sgprs <= spec.sgpr_wave_limits[-1][0]:
        raise BadArgument(f"sgprs must be 0..{spec.sgpr_wave_limits[-1][0]}, got {req.sgprs}")


def _effective_vgprs(spec, req: _Request) -> int:
    """Vector registers a wave takes from the file before the granule (see module doc)."""
    if spec.agpr_mode == "separate":
        return max(req.vgprs, req.agprs)
    if spec.agpr_mode == "unified" and req.agprs:
        return _align(req.vgprs, spec.agpr_alignment) + req.agprs
    return req.vgprs


def _vgpr_waves_per_simd(spec, req: _Request) -> int:
    allocated = _align(max(_effective_vgprs(spec, req), 1), spec.reg_granule)
    return min(spec.max_waves_per_simd, spec.regs_per_lane_file // allocated)


def _register_waves_per_simd(spec, req: _Request) -> int:
    if spec.vendor == "amd":
        return min(_vgpr_waves_per_simd(spec, req), _sgpr_waves_per_simd(spec, req.sgprs))
    cap = spec.max_waves_per_cu // spec.simds_per_cu
    if req.vgprs == 0:
        return cap
    per_warp = _align(req.vgprs * spec.wave_size, spec.reg_granule)
    return min(cap, spec.regs_per_lane_file // spec.simds_per_cu // per_warp)


def _sgpr_waves_per_simd(spec, sgprs: int) -> int:
    for max_sgprs, waves in spec.sgpr_wave_limits:
        if sgprs <= max_sgprs:
            return min(waves, spec.max_waves_per_simd)
    return 0


def _lds_limit(spec, lds_bytes: int) -> int | None:
    reserved = spec.lds_reserved_per_block_bytes
    allocated = _align(lds_bytes + reserved, spec.lds_granule_bytes)
    if allocated == 0:
        return None
    if allocated > spec.lds_bytes_per_block + reserved:
        return 0
    return spec.lds_bytes_per_cu // allocated


def _nvidia_reg_limit(spec, req: _Request, warps: int) -> int | None:
    if req.vgprs == 0:
        return None
    per_warp = _align(req.vgprs * spec.wave_size, spec.reg_granule)
    if per_warp * _align(warps, spec.simds_per_cu) > spec.regs_per_lane_file:
        return 0
    per_partition = spec.regs_per_lane_file // spec.simds_per_cu // per_warp
    return per_partition * spec.simds_per_cu // warps


def _limits(spec, req: _Request) -> dict:
    waves = _ceil_div(req.threads, spec.wave_size)
    simds = spec.simds_per_cu
    if spec.vendor == "amd":
        return {"waves": spec.max_waves_per_cu // waves,
                "workgroups": spec.max_blocks_per_cu if waves > 1 else None,
                "vgprs": simds * _vgpr_waves_per_simd(spec, req) // waves,
                "sgprs": simds * _sgpr_waves_per_simd(spec, req.sgprs) // waves,
                "lds": _lds_limit(spec, req.lds_bytes)}
    return {"threads": spec.max_waves_per_cu // waves, "blocks": spec.max_blocks_per_cu,
            "vgprs": _nvidia_reg_limit(spec, req, waves), "lds": _lds_limit(spec, req.lds_bytes)}


def _solve(spec, req: _Request) -> tuple[int, dict, str]:
    limits = _limits(spec, req)
    order = AMD_ORDER if spec.vendor == "amd" else NVIDIA_ORDER
    bound = {k: v for k, v in limits.items() if v is not None}
    wg = min(bound.values())
    limiter = next(k for k in order if bound.get(k) == wg)
    return wg, limits, limiter


def _waves(spec, req: _Request) -> int:
    return _solve(spec, req)[0] * _ceil_div(req.threads, spec.wave_size)


def _candidates(spec, req: _Request, limiter: str, limits: dict):
    """(threshold text, relaxed request) pairs, least relaxation first, for one limiter."""
    if limiter == "vgprs" and spec.vendor == "amd":
        current = _vgpr_waves_per_simd(spec, req)
        for target in range(current + 1, spec.max_waves_per_simd + 1):
            budget = spec.regs_per_lane_file // target // spec.reg_granule * spec.reg_granule
            if budget < 1:
                return
            relaxed = replace(req, vgprs=min(_effective_vgprs(spec, req), budget), agprs=0)
            yield f"<= {budget}", relaxed
    elif limiter == "vgprs":
        last = limits["vgprs"]
        for regs in range(req.vgprs - 1, 0, -1):
            relaxed = replace(req, vgprs=regs)
            now = _nvidia_reg_limit(spec, relaxed, _ceil_div(req.threads, spec.wave_size))
            if now is not None and now > last:
                last = now
                yield f"<= {regs}", relaxed
    elif limiter == "sgprs":
        for max_sgprs, waves in reversed(spec.sgpr_wave_limits):
            if waves > _sgpr_waves_per_simd(spec, req.sgprs) and max_sgprs < req.sgprs:
                yield f"<= {max_sgprs}", replace(req, sgprs=max_sgprs)
    elif limiter == "lds":
        reserved, granule = spec.lds_reserved_per_block_bytes, spec.lds_granule_bytes
        for groups in range((limits["lds"] or 0) + 1, spec.max_waves_per_cu + 1):
            budget = (spec.lds_bytes_per_cu // groups) // granule * granule - reserved
            budget = min(budget, spec.lds_bytes_per_block)
            if budget < 1:
                return
            if budget < req.lds_bytes:
                yield f"<= {budget} B", replace(req, lds_bytes=budget)


def _usage(spec, req: _Request, limiter: str) -> str:
    amd = spec.vendor == "amd"
    if limiter == "vgprs":
        if not amd:
            return f"registers ({req.vgprs}/thread)"
        eff = _effective_vgprs(spec, req)
        if spec.agpr_mode == "separate" and req.agprs:
            return f"VGPRs (max(V={req.vgprs}, A={req.agprs}) = {eff})"
        if spec.agpr_mode == "unified" and req.agprs:
            return (f"VGPRs (alignTo(V={req.vgprs}, {spec.agpr_alignment}) + "
                    f"A={req.agprs} = {eff} of {spec.regs_per_lane_file})")
        return f"VGPRs ({req.vgprs})"
    if limiter == "sgprs":
        return f"SGPRs ({req.sgprs})"
    if limiter == "lds":
        name = "LDS" if amd else "shared memory"
        alloc = _align(req.lds_bytes + spec.lds_reserved_per_block_bytes, spec.lds_granule_bytes)
        return f"{name} ({req.lds_bytes} B, {alloc} B allocated of {spec.lds_bytes_per_cu})"
    if limiter == "waves":
        return f"wave slots ({spec.max_waves_per_simd} per SIMD)"
    if limiter == "workgroups":
        return f"workgroups per CU ({spec.max_blocks_per_cu}, barrier limit)"
    if limiter == "threads":
        return f"warp slots ({spec.max_waves_per_cu} per SM)"
    return f"blocks per SM ({spec.max_blocks_per_cu})"


def _describe(spec, waves_per_wg: int, wg: int) -> str:
    waves = wg * waves_per_wg
    if spec.vendor == "amd":
        return f"{_ceil_div(waves, spec.simds_per_cu)} waves/SIMD"
    return f"{wg} blocks/SM ({waves} warps)"


def _headroom(spec, req: _Request, wg: int, limits: dict, limiter: str) -> str:
    """E.g. "3 waves/SIMD, limited by VGPRs (84); <= 64 would give 4"."""
    waves_per_wg = _ceil_div(req.threads, spec.wave_size)
    text = f"{_describe(spec, waves_per_wg, wg)}, limited by {_usage(spec, req, limiter)}"
    if wg == 0:
        text = f"does not fit: {_usage(spec, req, limiter)} exceeds one CU/SM"
    if limiter in ("waves", "threads"):
        return text + "; the hardware maximum"
    if limiter in ("workgroups", "blocks"):
        return text + "; larger blocks would hold more waves per CU/SM"
    current = wg * waves_per_wg
    tried = False
    for threshold, relaxed in _candidates(spec, req, limiter, limits):
        tried = True
        relaxed_wg = _solve(spec, relaxed)[0]
        if relaxed_wg * waves_per_wg > current:
            better = _describe(spec, waves_per_wg, relaxed_wg)
            if spec.vendor == "amd":
                better = better.replace(" waves/SIMD", "")
            return f"{text}; {threshold} would give {better}"
    others = [k for k, v in limits.items() if v == wg and k != limiter]
    if tried and others:
        return f"{text}; reducing it alone does not help ({', '.join(others)} also limit)"
    return text
