"""GpuSpec and Quantity: a validated GPU spec in SI units, each number with its provenance.

Attribute meanings, units and vendors are listed in gemmmodel/spec/schema.py (FIELDS) and
docs/design.md. Fields that belong to the other vendor (e.g. SGPRs on NVIDIA) hold their
zero default and have no Quantity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gemmmodel.errors import SpecError
from gemmmodel.units import SI_UNITS, format_si


@dataclass(frozen=True)
class Quantity:
    """One spec number: SI `value` in `unit`, as the file gave it (`given`), and its source."""

    name: str
    value: object
    unit: str
    dimension: str
    source: str
    note: str = ""
    assumption: bool = False
    given: str = ""           # the value and unit as written in the file, e.g. "1700 MHz"
    origin: str = ""          # the spec file the quantity came from (after inheritance)

    def formatted(self) -> str:
        """The SI value in a readable unit ("1700 MHz", "64 KiB", "4 us")."""
        if isinstance(self.value, (int, float)) and not isinstance(self.value, bool):
            return format_si(self.value, self.dimension, self.unit)
        return _compact(self.value, self.dimension)

    def to_dict(self) -> dict:
        return {"value": _jsonable(self.value), "unit": self.unit, "given": self.given,
                "source": self.source, "note": self.note, "assumption": self.assumption,
                "origin": self.origin}


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _compact(value, dimension: str) -> str:
    """Tables and lane groups on one line: "<=80:10, <=88:9", "b32: 0-31 | 32-63"."""
    if dimension == "table":
        return ", ".join(f"<={limit}:{waves}" for limit, waves in value)
    if dimension == "lane_groups":
        return "; ".join(f"{width}: " + " | ".join(_ranges(g) for g in groups)
                         for width, groups in value.items())
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def _ranges(lanes) -> str:
    parts, start, prev = [], None, None
    for lane in lanes:
        if start is None:
            start = prev = lane
        elif lane == prev + 1:
            prev = lane
        else:
            parts.append(f"{start}-{prev}" if prev != start else str(start))
            start = prev = lane
    if start is not None:
        parts.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(parts)


@dataclass(frozen=True)
class GpuSpec:
    """A GPU described in SI units (see schema.FIELDS for each attribute's meaning)."""

    name: str
    title: str
    vendor: str
    arch: str
    compile_target: str
    aliases: tuple[str, ...]
    path: str
    inherits: str | None
    wave_size: int
    compute_units: int
    simds_per_cu: int
    clock_hz: float
    fp32_flop_per_clk_per_cu: float
    packed_fp32_flop_per_clk_per_cu: float
    matrix_fp32_flop_per_clk_per_cu: float
    dram_bandwidth_Bps: float
    l2_bytes: int
    l1_bytes: int
    l2_bandwidth_Bps: float
    regs_per_lane_file: int
    reg_granule: int
    max_regs_per_thread: int
    max_waves_per_cu: int
    max_blocks_per_cu: int
    max_threads_per_block: int
    lds_bytes_per_cu: int
    lds_bytes_per_block: int
    lds_granule_bytes: int
    lds_reserved_per_block_bytes: int
    lds_banks: int
    lds_bank_bytes: int
    lds_bytes_per_clk_per_cu: float
    lds_phases: dict = field(hash=False)
    spawn_full_rate_block_sizes: tuple[int, ...] = ()
    launch_overhead_s: float = 0.0
    dram_latency_s: float = 0.0
    l2_latency_s: float = 0.0
    lds_latency_s: float = 0.0
    agpr_mode: str = "none"
    agpr_alignment: int = 0
    sgprs_per_simd: int = 0
    sgpr_granule: int = 0
    sgpr_wave_limits: tuple[tuple[int, int], ...] = ()
    max_waves_per_simd: int = 0
    spawn_threads_per_clk: float = 0.0
    spawn_blocks_per_clk: float = 0.0
    lds_merge_windows: dict = field(default_factory=dict, hash=False)
    wave_lookahead_steps: float = 0.0
    async_copy_b32_s: float = 0.0
    async_copy_b128_s: float = 0.0
    quantities: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def fp32_peak_flops(self) -> float:
        """Vector FP32 peak in FLOP/s: rate per clock per CU x CUs x clock."""
        return self.fp32_flop_per_clk_per_cu * self.compute_units * self.clock_hz

    @property
    def matrix_fp32_peak_flops(self) -> float:
        """Matrix-core FP32 peak in FLOP/s (0 where the GPU has none)."""
        return self.matrix_fp32_flop_per_clk_per_cu * self.compute_units * self.clock_hz

    def quantity(self, attr: str) -> Quantity:
        """The Quantity behind attribute `attr` (SpecError if this spec does not give it)."""
        try:
            return self.quantities[attr]
        except KeyError:
            raise SpecError(f"spec {self.name!r} has no quantity {attr!r}", key_path=attr) from None

    def summary(self) -> dict:
        """Identity and headline numbers, as `gemmmodel gpus` lists them (SI units)."""
        return {"name": self.name, "title": self.title, "vendor": self.vendor, "arch": self.arch,
                "compute_units": self.compute_units, "clock_hz": self.clock_hz,
                "fp32_peak_flops": self.fp32_peak_flops, "aliases": list(self.aliases)}

    def to_dict(self) -> dict:
        """Identity plus every quantity with unit, source, note and assumption flag."""
        return {"name": self.name, "title": self.title, "vendor": self.vendor, "arch": self.arch,
                "compile_target": self.compile_target, "aliases": list(self.aliases),
                "inherits": self.inherits, "path": self.path,
                "quantities": {k: q.to_dict() for k, q in self.quantities.items()}}


def si_unit(dimension: str, given_unit: str) -> str:
    """The unit an SI value is reported in; counts and per-CU/per-SM rates keep their name."""
    if dimension in ("count", "flop_per_clk", "bytes_per_clk"):
        return given_unit
    return SI_UNITS[dimension]
