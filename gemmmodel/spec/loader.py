"""Load GPU spec TOML files: resolve names and aliases, follow `inherits`, validate, build.

Every error is a SpecError whose message names the file and the key path
(e.g. "gfx906.toml: clock_hz.unit: unknown unit 'MHZ' ..."). Parsed files and built specs
are cached with functools.lru_cache keyed by resolved path and modification time, so an
edited file is read again and nothing is cached on disk.
"""

from __future__ import annotations

import difflib
import functools
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from gemmmodel.errors import SpecError
from gemmmodel.spec import checks
from gemmmodel.spec.model import GpuSpec, Quantity, si_unit
from gemmmodel.spec.schema import (
    FIELDS,
    FIELDS_BY_NAME,
    IDENTITY_KEYS,
    INHERITED_IDENTITY,
    QUANTITY_KEYS,
    VENDORS,
)
from gemmmodel.units import UNITS, to_si

DATA_DIR = Path(__file__).resolve().parent / "data"


@functools.lru_cache(maxsize=256)
def _read_toml(path: str, mtime_ns: int) -> dict:
    """Parse one TOML file (cached by path and mtime; callers must not mutate the result)."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise SpecError(f"not valid TOML: {err}", file=path) from None
    except OSError as err:
        raise SpecError(f"cannot read: {err.strerror}", file=path) from None


def _read(path: Path) -> dict:
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        raise SpecError("no such spec file", file=str(path)) from None
    return _read_toml(str(path), mtime)


def _shipped_files() -> tuple[tuple[str, int], ...]:
    return tuple(sorted((str(p), p.stat().st_mtime_ns) for p in DATA_DIR.glob("*.toml")))


@functools.lru_cache(maxsize=8)
def _index(files: tuple[tuple[str, int], ...]) -> dict[str, str]:
    """Map each shipped stem and alias (lower case) to its file; aliases must be unique."""
    index: dict[str, str] = {Path(p).stem.lower(): p for p, _ in files}
    for path, mtime in files:
        aliases = _read_toml(path, mtime).get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise SpecError("must be a list of strings", key_path="aliases", file=path)
        for alias in aliases:
            owner = index.setdefault(alias.lower(), path)
            if owner != path:
                raise SpecError(f"alias {alias!r} is already used by {Path(owner).name}",
                                key_path="aliases", file=path)
    return index


def list_specs() -> list[str]:
    """Names (file stems) of the shipped specs, sorted."""
    return sorted(Path(p).stem for p, _ in _shipped_files())


def aliases() -> dict[str, str]:
    """Every name a user may type (stems and aliases) mapped to its spec name."""
    return {key: Path(path).stem for key, path in _index(_shipped_files()).items()}


def _is_path(name: str) -> bool:
    return name.endswith(".toml") or "/" in name or "\\" in name


def resolve(name_or_path: str | Path) -> Path:
    """The spec file for a shipped name, an alias, or a path to a user's TOML file."""
    if isinstance(name_or_path, Path) or _is_path(str(name_or_path)):
        path = Path(name_or_path).expanduser().resolve()
        if not path.is_file():
            raise SpecError("no such spec file", file=str(name_or_path))
        return path
    index = _index(_shipped_files())
    key = str(name_or_path).strip().lower()
    if key in index:
        return Path(index[key])
    close = difflib.get_close_matches(key, list(index), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(list_specs())}"
    raise SpecError(f"unknown GPU {name_or_path!r}{hint}")


def _parent_path(raw_inherits, child: Path) -> Path:
    if not isinstance(raw_inherits, str) or not raw_inherits.strip():
        raise SpecError("must be a spec name or a path", key_path="inherits", file=str(child))
    if _is_path(raw_inherits):
        candidate = (child.parent / raw_inherits).resolve()
    else:
        candidate = (child.parent / f"{raw_inherits}.toml").resolve()
    if candidate.is_file():
        return candidate
    if not _is_path(raw_inherits):
        key = raw_inherits.strip().lower()
        index = _index(_shipped_files())
        if key in index:
            return Path(index[key])
    raise SpecError(f"unknown spec {raw_inherits!r} to inherit from (not a file next to this "
                    f"one, nor one of: {', '.join(list_specs())})", key_path="inherits",
                    file=str(child))


def _chain(path: Path) -> list[Path]:
    """[root, ..., path] following `inherits`; SpecError on a cycle."""
    chain = [path]
    while True:
        raw = _read(chain[0])
        if "inherits" not in raw:
            return chain
        parent = _parent_path(raw["inherits"], chain[0])
        if parent in chain:
            names = " -> ".join(p.name for p in reversed(chain)) + f" -> {parent.name}"
            raise SpecError(f"inheritance cycle: {names}", key_path="inherits", file=str(chain[0]))
        chain.insert(0, parent)


def load_spec(name_or_path: str | Path) -> GpuSpec:
    """Load and validate a spec by name, alias or path (cached by path and mtime)."""
    chain = _chain(resolve(name_or_path))
    return _build_cached(tuple((str(p), p.stat().st_mtime_ns) for p in chain))


def check_spec_file(path: str | Path) -> GpuSpec:
    """Validate a user's spec file (always taken as a path); returns the loaded spec."""
    return load_spec(Path(path))


@functools.lru_cache(maxsize=64)
def _build_cached(chain: tuple[tuple[str, int], ...]) -> GpuSpec:
    raws = [(path, _read_toml(path, mtime)) for path, mtime in chain]
    for path, raw in raws:
        _check_file_keys(raw, path)
    return _build(raws)


def _check_file_keys(raw: dict, path: str) -> None:
    """Checks local to one file: known keys, identity types, quantity table shape."""
    for key, value in raw.items():
        if key in IDENTITY_KEYS:
            checks.identity(key, value, path)
        elif key in FIELDS_BY_NAME:
            checks.quantity_table(key, value, path, QUANTITY_KEYS)
        else:
            close = difflib.get_close_matches(key, [*IDENTITY_KEYS, *FIELDS_BY_NAME], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise SpecError(f"unknown key{hint}", key_path=key, file=path)


def _build(raws: list[tuple[str, dict]]) -> GpuSpec:
    child_path, child = raws[-1]
    merged: dict[str, object] = {}
    origins: dict[str, str] = {}
    for path, raw in raws:
        for key, value in raw.items():
            if key in INHERITED_IDENTITY or key in FIELDS_BY_NAME:
                merged[key], origins[key] = value, path
    for key in ("title", *INHERITED_IDENTITY):
        source = child if key == "title" else merged
        if key not in source:
            raise SpecError("missing required key", key_path=key, file=child_path)
    vendor = merged["vendor"]
    if vendor not in VENDORS:
        raise SpecError(f"must be one of {', '.join(VENDORS)}", key_path="vendor",
                        file=origins["vendor"])

    values, quantities = {}, {}
    clock_hz = None
    ordered = sorted(FIELDS, key=lambda f: f.name != "clock_hz")   # the clock converts others
    for fld in ordered:
        if fld.name not in merged:
            if vendor in fld.vendors and fld.required:
                raise SpecError(f"missing required quantity ({vendor} specs need it)",
                                key_path=fld.name, file=child_path)
            continue
        origin = origins[fld.name]
        if vendor not in fld.vendors:
            raise SpecError(f"applies to {'/'.join(fld.vendors)} specs only, not {vendor}",
                            key_path=fld.name, file=origin)
        table = merged[fld.name]
        value = _convert(fld, table, clock_hz, merged, origin)
        if fld.name == "clock_hz":
            clock_hz = value
        values[fld.name] = value
        quantities[fld.name] = Quantity(
            name=fld.name, value=value, unit=si_unit(fld.dimension, table["unit"]),
            dimension=fld.dimension, source=table["source"], note=table.get("note", ""),
            assumption=bool(table.get("assumption", False)), given=_given(table), origin=origin)

    spec = GpuSpec(
        name=Path(child_path).stem, title=child["title"], vendor=vendor, arch=merged["arch"],
        compile_target=merged["compile_target"], aliases=tuple(child.get("aliases", [])),
        path=child_path, inherits=child.get("inherits"),
        quantities={f.name: quantities[f.name] for f in FIELDS if f.name in quantities},
        **values)
    checks.cross_fields(spec, origins, child_path)
    return spec


def _given(table: dict) -> str:
    value = table["value"]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value} {table['unit']}"
    return f"({table['unit']})"


def _convert(fld, table: dict, clock_hz, merged: dict, origin: str):
    """The SI value of one quantity table, checked for kind, unit and range."""
    key = fld.name
    raw, unit = table["value"], table["unit"]
    if unit not in UNITS or UNITS[unit].dimension != fld.dimension:
        to_si(0.0, unit, fld.dimension, clock_hz, key_path=key, file=origin)   # raises
    if fld.kind in ("int", "float"):
        number = checks.number(raw, key, origin, positive=fld.positive)
        value = to_si(number, unit, fld.dimension, clock_hz, key_path=key, file=origin)
        if fld.kind == "int":
            if abs(value - round(value)) > 1e-9 * max(1.0, abs(value)):
                raise SpecError(f"must be a whole number of {si_unit(fld.dimension, unit)} "
                                f"(got {value:g})", key_path=f"{key}.value", file=origin)
            return round(value)
        return float(value)
    if fld.kind == "text":
        if not isinstance(raw, str) or raw not in fld.choices:
            raise SpecError(f"must be one of {', '.join(fld.choices)}", key_path=f"{key}.value",
                            file=origin)
        return raw
    if fld.kind == "int_list":
        return checks.int_list(raw, key, origin)
    if fld.kind == "sgpr_table":
        return checks.sgpr_table(raw, key, origin)
    wave_table = merged.get("wave_size")
    wave_size = wave_table.get("value") if isinstance(wave_table, dict) else None
    return checks.lane_groups(raw, key, origin, wave_size)
