"""Validity rules of the tile template: `validate(cfg, spec) -> list[str]` (empty = valid).

Each rule mirrors a static_assert or a hard limit of kernels/template/sgemm_tile.cu, so a
config that passes compiles, and a config that fails gets one reason per broken rule
(a reason starts with the parameter it is about). GPU limits come from the spec
(docs/design.md GpuSpec attributes); nothing here is specific to one architecture.

Register estimate (registers per thread; an assumption fitted to compiler output):
    TM*TN accumulators + 2*(TM+TN) fragments (the kernel double-buffers them)
    + VEC*(loads of A + loads of B) floats staged from global memory
    + REG_OVERHEAD (+ REG_OVERHEAD_DBUF with an LDS double buffer)
The staged floats count with one LDS buffer too: the compilers issue all of a tile's loads
before its LDS stores. The two overheads (addresses, indices, loop and pipeline state) were
fitted to nvcc 13.0 sm_90 and hipcc 5.2 gfx908 -O3 builds of 50 search-space configs (25
per target, 2026-11): compiler / estimate stayed within 0.84 .. 1.09 (e.g.
128x128x8/8x8/p4/db: 122 estimated, 127 on sm_90, 118 on gfx908). EDGE=1 builds need more
(address arithmetic of the checked loads). tests/test_template_compile.py re-checks a few.
"""

from __future__ import annotations

from gemmmodel.errors import BadArgument, InvalidConfig, SpecError
from gemmmodel.template.config import TileConfig

#: Registers for addresses, indices and loop state (fitted, see the module docstring).
REG_OVERHEAD = 6
#: Extra registers of the double-buffered pipeline (fitted, see the module docstring).
REG_OVERHEAD_DBUF = 12
#: Static __shared__ bytes per block that every CUDA device accepts; more needs dynamic
#: shared memory with an opt-in, which this template does not use. Sources: CCCL docs
#: ("CUDA guarantees that each device has at least 48kB of shared memory per block ... to
#: allocate more ... opt-in"); ptxas 13.0 for sm_90 rejects 50176 B of static shared data
#: with "uses too much shared data (0xc400 bytes, 0xc000 max)" (run here, 2026-11).
#: Used only while the spec has no `lds_static_bytes_per_block` attribute.
PORTABLE_STATIC_LDS_BYTES = 48 * 1024


def estimate_registers(cfg: TileConfig) -> int:
    """Registers per thread the template needs for `cfg` (see the module docstring)."""
    loads_a, loads_b = cfg.loads_per_thread()
    staged = cfg.vec * (loads_a + loads_b)
    overhead = REG_OVERHEAD + (REG_OVERHEAD_DBUF if cfg.dbuf else 0)
    return round(cfg.tm * cfg.tn + 2 * (cfg.tm + cfg.tn) + staged + overhead)


def static_lds_limit(spec) -> int:
    """Bytes of static LDS one block may declare on `spec`."""
    explicit = int(getattr(spec, "lds_static_bytes_per_block", 0) or 0)
    return explicit or min(int(spec.lds_bytes_per_block), PORTABLE_STATIC_LDS_BYTES)


def structural_reasons(cfg: TileConfig) -> list[str]:
    """Rules that do not depend on the GPU (sizes, divisibility, vector width)."""
    sizes = {"BM": cfg.bm, "BN": cfg.bn, "BK": cfg.bk, "TM": cfg.tm, "TN": cfg.tn}
    bad = [f"{k}={v}: must be >= 1" for k, v in sizes.items() if v < 1]
    if bad:
        return bad
    out: list[str] = []
    if cfg.bm % cfg.tm:
        out.append(f"BM={cfg.bm} is not a multiple of TM={cfg.tm}")
    if cfg.bn % cfg.tn:
        out.append(f"BN={cfg.bn} is not a multiple of TN={cfg.tn}")
    if out:
        return out
    derived = cfg.bm * cfg.bn // (cfg.tm * cfg.tn)
    if cfg.threads != derived:
        out.append(f"threads={cfg.threads} but BM*BN/(TM*TN)={derived}")
    if cfg.vec not in (1, 4):
        out.append(f"VEC={cfg.vec}: must be 1 or 4")
    elif cfg.vec == 4:
        for key, val in (("TM", cfg.tm), ("TN", cfg.tn), ("BK", cfg.bk), ("PAD", cfg.pad)):
            if val % 4:
                out.append(f"VEC=4 needs {key} to be a multiple of 4 (got {key}={val})")
    if cfg.pad < 0:
        out.append(f"PAD={cfg.pad}: must be >= 0")
    if cfg.swizzle < 0:
        out.append(f"SWIZZLE={cfg.swizzle}: must be >= 0")
    if (cfg.wm == 0) != (cfg.wn == 0) or cfg.wm < 0 or cfg.wn < 0:
        out.append(f"warp tile {cfg.wm}x{cfg.wn}: give both WM and WN > 0, or 0x0 (automatic)")
    elif not cfg.auto_warp:
        if cfg.wm % cfg.tm:
            out.append(f"WM={cfg.wm} is not a multiple of TM={cfg.tm}")
        if cfg.wn % cfg.tn:
            out.append(f"WN={cfg.wn} is not a multiple of TN={cfg.tn}")
        if cfg.bm % cfg.wm:
            out.append(f"BM={cfg.bm} is not a multiple of WM={cfg.wm} (warp tiles must cover "
                       f"the block)")
        if cfg.bn % cfg.wn:
            out.append(f"BN={cfg.bn} is not a multiple of WN={cfg.wn} (warp tiles must cover "
                       f"the block)")
    if cfg.vec in (1, 4) and cfg.threads > 0:
        per = cfg.threads * cfg.vec
        if (cfg.bm * cfg.bk) % per:
            out.append(f"A tile loads: BM*BK={cfg.bm * cfg.bk} floats do not divide evenly "
                       f"over threads*VEC={per}")
        if (cfg.bk * cfg.bn) % per:
            out.append(f"B tile loads: BK*BN={cfg.bk * cfg.bn} floats do not divide evenly "
                       f"over threads*VEC={per}")
    return out


def wave_reasons(cfg: TileConfig, wave_size: int) -> list[str]:
    """Rules that depend on the wave (warp) size: thread count and warp tile shape."""
    out: list[str] = []
    if cfg.threads % wave_size:
        out.append(f"threads={cfg.threads} is not a multiple of the wave size {wave_size}")
    ly, lx = cfg.warp_lanes(wave_size)
    what = "automatic warp tile" if cfg.auto_warp else f"warp tile {cfg.wm}x{cfg.wn}"
    if lx < 1 or ly < 1 or ly * lx != wave_size:
        out.append(f"{what}: {ly}x{lx} lanes of {cfg.tm}x{cfg.tn} thread tiles is not one "
                   f"wave of {wave_size}")
    elif cfg.auto_warp:
        wm, wn = cfg.warp_tile(wave_size)
        if cfg.bm % wm or cfg.bn % wn:
            out.append(f"{what} {wm}x{wn} (wave {wave_size}) does not tile "
                       f"{cfg.bm}x{cfg.bn}")
    return out


def resource_reasons(cfg: TileConfig, spec) -> list[str]:
    """Rules against the GPU's limits: threads, LDS, registers, one block per CU."""
    from gemmmodel.occupancy import occupancy

    out: list[str] = []
    if cfg.threads > spec.max_threads_per_block:
        out.append(f"threads={cfg.threads} exceeds {spec.max_threads_per_block} per block "
                   f"on {spec.name}")
    lds_limit = static_lds_limit(spec)
    if cfg.lds_bytes > lds_limit:
        out.append(f"LDS {cfg.lds_bytes} B (BK={cfg.bk}, PAD={cfg.pad}, "
                   f"{cfg.stages} stage(s)) exceeds {lds_limit} B of static LDS per block "
                   f"on {spec.name}")
    regs = estimate_registers(cfg)
    if regs > spec.max_regs_per_thread:
        out.append(f"registers: about {regs} per thread needed (TM*TN={cfg.tm * cfg.tn} "
                   f"accumulators), more than {spec.max_regs_per_thread} on {spec.name}")
    if not out:
        try:
            occ = occupancy(spec, cfg.threads, regs, lds_bytes=cfg.lds_bytes)
        except BadArgument as err:
            return [f"occupancy: {err}"]
        if occ.workgroups_per_cu < 1:
            out.append(f"registers: {cfg.threads} threads x about {regs} registers do not fit "
                       f"one CU of {spec.name} (limited by {occ.limiter})")
    return out


def validate(cfg: TileConfig, spec) -> list[str]:
    """Every reason `cfg` cannot run on `spec` (empty list: valid)."""
    out = structural_reasons(cfg)
    if out:
        return out
    out = wave_reasons(cfg, int(spec.wave_size))
    return out + resource_reasons(cfg, spec)


def check(cfg: TileConfig, spec) -> TileConfig:
    """`cfg` if valid on `spec`, else InvalidConfig with the reasons."""
    reasons = validate(cfg, spec)
    if reasons:
        raise InvalidConfig(cfg.name, reasons)
    return cfg


def runtime_spec(runtime):
    """The GpuSpec of the runtime's device, looked up by its arch (sm_90, gfx908, ...), or
    None when no shipped spec has that name."""
    from gemmmodel.spec import load_spec

    arch = str((runtime.device_info() or {}).get("arch") or "")
    try:
        return load_spec(arch) if arch else None
    except (SpecError, BadArgument):
        return None


def check_for_runtime(cfg: TileConfig, runtime) -> TileConfig:
    """`cfg` if it can run on the runtime's device, else InvalidConfig with the reasons, before
    anything is compiled: every rule where the device's spec is known, else the GPU-independent
    rules (the compiler then reports what they cannot)."""
    spec = runtime_spec(runtime)
    if spec is not None:
        return check(cfg, spec)
    reasons = structural_reasons(cfg)
    if reasons:
        raise InvalidConfig(cfg.name, reasons)
    return cfg
