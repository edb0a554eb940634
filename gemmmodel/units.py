"""The unit table: spec-file values to SI, and SI values back to text for printing.

Inside gemmmodel every number is SI with its unit in the name (`clock_hz`, `l2_bytes`,
`dram_bandwidth_Bps`, `lds_latency_s`). Spec files and command-line options use human
units ("1700 MHz", "64 KiB", "1.6 TB/s"); `to_si` converts them, `format_si` prints them.

Decimal prefixes are powers of 1000 (KB, MB, GB, TB/s), binary prefixes powers of 1024
(KiB, MiB, GiB). Three units are relative to the GPU clock and need its `clock_hz`:
"cycles" (a time), "B/clk" (a bandwidth) and "blocks/s" (a spawn rate kept per clock).
Counts (CUs, lanes, regs, waves, ...) are dimensionless; their unit name is kept for display.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gemmmodel.errors import BadArgument, SpecError


@dataclass(frozen=True)
class Unit:
    """One unit: SI value = given value * factor * clock_hz ** clock_power."""

    name: str
    dimension: str
    factor: float = 1.0
    clock_power: int = 0


_COUNT_UNITS = ("count", "CUs", "SMs", "SIMDs", "lanes", "regs", "VGPRs", "SGPRs", "waves",
                "warps", "threads", "blocks", "workgroups", "banks", "k steps")

UNITS: dict[str, Unit] = {u.name: u for u in (
    Unit("Hz", "frequency"), Unit("kHz", "frequency", 1e3),
    Unit("MHz", "frequency", 1e6), Unit("GHz", "frequency", 1e9),
    Unit("B", "bytes"), Unit("KB", "bytes", 1e3), Unit("MB", "bytes", 1e6),
    Unit("GB", "bytes", 1e9), Unit("KiB", "bytes", 2.0**10), Unit("MiB", "bytes", 2.0**20),
    Unit("GiB", "bytes", 2.0**30),
    Unit("B/s", "bandwidth"), Unit("MB/s", "bandwidth", 1e6), Unit("GB/s", "bandwidth", 1e9),
    Unit("TB/s", "bandwidth", 1e12), Unit("GiB/s", "bandwidth", 2.0**30),
    Unit("B/clk", "bandwidth", 1.0, clock_power=1),
    Unit("s", "time"), Unit("ms", "time", 1e-3), Unit("us", "time", 1e-6),
    Unit("ns", "time", 1e-9), Unit("cycles", "time", 1.0, clock_power=-1),
    Unit("FLOP/clk/CU", "flop_per_clk"), Unit("FLOP/clk/SM", "flop_per_clk"),
    Unit("B/clk/CU", "bytes_per_clk"), Unit("B/clk/SM", "bytes_per_clk"),
    Unit("threads/clk", "threads_per_clk"),
    Unit("blocks/clk", "blocks_per_clk"), Unit("blocks/s", "blocks_per_clk", 1.0, clock_power=-1),
    Unit("mode", "text"),
    Unit("lane groups", "lane_groups"),
    Unit("SGPRs->waves", "table"),
    *(Unit(name, "count") for name in _COUNT_UNITS),
)}

# The unit an SI value of each dimension is reported in (counts keep their given name).
SI_UNITS: dict[str, str] = {
    "frequency": "Hz", "bytes": "B", "bandwidth": "B/s", "time": "s",
    "flop_per_clk": "FLOP/clk/CU", "bytes_per_clk": "B/clk/CU",
    "threads_per_clk": "threads/clk", "blocks_per_clk": "blocks/clk",
    "count": "1", "text": "", "lane_groups": "lane groups", "table": "SGPRs->waves",
}


def units_for(dimension: str) -> list[str]:
    """Names of the units that measure `dimension`, in table order."""
    return [u.name for u in UNITS.values() if u.dimension == dimension]


def to_si(value: float, unit: str, dimension: str, clock_hz: float | None = None,
          key_path: str = "", file: str = "") -> float:
    """Convert `value` given in `unit` to SI; `dimension` is what the caller expects.

    Raises SpecError (naming `key_path`.unit) for an unknown unit, a unit of another
    dimension, or a clock-relative unit without a clock.
    """
    where = f"{key_path}.unit" if key_path else "unit"
    known = UNITS.get(unit)
    if known is None:
        raise SpecError(f"unknown unit {unit!r} (use one of: {', '.join(units_for(dimension))})",
                        key_path=where, file=file)
    if known.dimension != dimension:
        raise SpecError(f"unit {unit!r} measures {known.dimension}, expected {dimension} "
                        f"(use one of: {', '.join(units_for(dimension))})", key_path=where, file=file)
    if known.clock_power and not clock_hz:
        raise SpecError(f"unit {unit!r} is relative to the clock, but clock_hz is not known",
                        key_path=where, file=file)
    return value * known.factor * (clock_hz ** known.clock_power if known.clock_power else 1.0)


_QUANTITY_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z/]*)\s*$")


def parse_quantity(text: str, dimension: str, default_unit: str) -> float:
    """Parse a command-line value such as "48KiB" or "16384" into SI (BadArgument if bad)."""
    match = _QUANTITY_RE.match(str(text))
    if not match:
        raise BadArgument(f"cannot read {text!r} as a number with an optional unit")
    number, unit = float(match.group(1)), match.group(2) or default_unit
    known = UNITS.get(unit)
    if known is None or known.dimension != dimension or known.clock_power:
        raise BadArgument(f"unit {unit!r} in {text!r}: use one of "
                          + ", ".join(u for u in units_for(dimension) if not UNITS[u].clock_power))
    return number * known.factor


def _num(x: float) -> str:
    """A number with at most 6 significant digits and no trailing zeros."""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


def format_bytes(n_bytes: float) -> str:
    """64 KiB, 8 MiB, 1.5 MB or 300 B: binary prefixes when exact, else decimal."""
    for name, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= size and float(n_bytes) % size == 0:
            return f"{_num(n_bytes / size)} {name}"
    for name, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n_bytes >= size:
            return f"{_num(n_bytes / size)} {name}"
    return f"{_num(n_bytes)} B"


def _scaled(value: float, steps: tuple[tuple[str, float], ...]) -> str:
    for name, size in steps:
        if abs(value) >= size:
            return f"{_num(value / size)} {name}"
    name, size = steps[-1]
    return f"{_num(value / size)} {name}"


def format_si(value: float, dimension: str, unit_name: str = "") -> str:
    """Print an SI value in a readable unit: 1.7e9 Hz -> "1700 MHz", 4e-6 s -> "4 us"."""
    if dimension == "frequency":
        return _scaled(value, (("MHz", 1e6), ("kHz", 1e3), ("Hz", 1.0)))
    if dimension == "bytes":
        return format_bytes(value)
    if dimension == "bandwidth":
        return _scaled(value, (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("B/s", 1.0)))
    if dimension == "time":
        return _scaled(value, (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)))
    if dimension == "count":
        shown = "" if unit_name in ("", "count", "1") else f" {unit_name}"
        return f"{_num(value)}{shown}"
    if dimension in ("text", "lane_groups", "table"):
        return str(value)
    return f"{_num(value)} {unit_name or SI_UNITS.get(dimension, '')}".rstrip()


def format_flops(flop_per_s: float) -> str:
    """FLOP/s as "66.9 TFLOP/s" (or GFLOP/s below 1 TFLOP/s)."""
    if flop_per_s >= 1e12:
        return f"{flop_per_s / 1e12:.3g} TFLOP/s"
    return f"{flop_per_s / 1e9:.3g} GFLOP/s"
