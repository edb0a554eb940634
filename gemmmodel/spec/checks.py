"""Validation helpers for spec files: types, ranges, tables, lane groups, cross-field rules.

Each helper raises SpecError with the file and the key path of the offending value.
"""

from __future__ import annotations

import math
import re

from gemmmodel.errors import SpecError

_REQUIRED_WIDTHS = ("b32", "b64", "b128")
_RANGE_RE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


def identity(key: str, value, path: str) -> None:
    """title / vendor / arch / compile_target / inherits are strings; aliases a list of them."""
    if key == "aliases":
        if not isinstance(value, list) or not all(isinstance(a, str) and a for a in value):
            raise SpecError("must be a list of non-empty strings", key_path=key, file=path)
    elif not isinstance(value, str) or not value.strip():
        raise SpecError("must be a non-empty string", key_path=key, file=path)


def quantity_table(key: str, table, path: str, allowed: tuple[str, ...]) -> None:
    """A quantity is a table {value, unit, source[, note][, assumption]}."""
    if not isinstance(table, dict):
        raise SpecError("must be a table { value = ..., unit = \"...\", source = \"...\" }",
                        key_path=key, file=path)
    for sub in table:
        if sub not in allowed:
            raise SpecError(f"unknown field (allowed: {', '.join(allowed)})",
                            key_path=f"{key}.{sub}", file=path)
    for sub in ("value", "unit", "source"):
        if sub not in table:
            raise SpecError("missing required field", key_path=f"{key}.{sub}", file=path)
    for sub in ("unit", "source"):
        if not isinstance(table[sub], str) or not table[sub].strip():
            raise SpecError("must be a non-empty string", key_path=f"{key}.{sub}", file=path)
    if "note" in table and not isinstance(table["note"], str):
        raise SpecError("must be a string", key_path=f"{key}.note", file=path)
    if "assumption" in table and not isinstance(table["assumption"], bool):
        raise SpecError("must be true or false", key_path=f"{key}.assumption", file=path)


def number(raw, key: str, path: str, positive: bool) -> float:
    """A TOML int or float (not a bool, not a string), > 0 or >= 0."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise SpecError(f"must be a number, got {type(raw).__name__} {raw!r}",
                        key_path=f"{key}.value", file=path)
    if not math.isfinite(raw):
        raise SpecError("must be finite", key_path=f"{key}.value", file=path)
    if raw < 0 or (positive and raw == 0):
        raise SpecError(f"must be {'> 0' if positive else '>= 0'}, got {raw}",
                        key_path=f"{key}.value", file=path)
    return float(raw)


def _positive_int(raw, where: str, path: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise SpecError(f"must be an integer, got {raw!r}", key_path=where, file=path)
    if raw <= 0:
        raise SpecError(f"must be > 0, got {raw}", key_path=where, file=path)
    return raw


def int_list(raw, key: str, path: str) -> tuple[int, ...]:
    """A non-empty list of positive integers."""
    where = f"{key}.value"
    if not isinstance(raw, list) or not raw:
        raise SpecError("must be a non-empty list of integers", key_path=where, file=path)
    return tuple(_positive_int(v, f"{where}[{i}]", path) for i, v in enumerate(raw))


def sgpr_table(raw, key: str, path: str) -> tuple[tuple[int, int], ...]:
    """Rows [max_sgprs, waves]: max_sgprs rising, waves falling."""
    where = f"{key}.value"
    if not isinstance(raw, list) or not raw:
        raise SpecError("must be a non-empty list of [max_sgprs, waves] pairs",
                        key_path=where, file=path)
    rows = []
    for i, row in enumerate(raw):
        if not isinstance(row, list) or len(row) != 2:
            raise SpecError("must be a [max_sgprs, waves] pair", key_path=f"{where}[{i}]",
                            file=path)
        rows.append((_positive_int(row[0], f"{where}[{i}][0]", path),
                     _positive_int(row[1], f"{where}[{i}][1]", path)))
    for i in range(1, len(rows)):
        if rows[i][0] <= rows[i - 1][0] or rows[i][1] >= rows[i - 1][1]:
            raise SpecError("rows must have rising max_sgprs and falling waves",
                            key_path=f"{where}[{i}]", file=path)
    return tuple(rows)


def _lanes(group, where: str, path: str) -> tuple[int, ...]:
    """A group is a list of lane numbers or a string of ranges such as "0-3,20-23"."""
    if isinstance(group, str):
        lanes: list[int] = []
        for part in group.split(","):
            match = _RANGE_RE.match(part)
            if not match:
                raise SpecError(f"bad lane range {part!r}", key_path=where, file=path)
            lo, hi = int(match.group(1)), int(match.group(2) or match.group(1))
            if hi < lo:
                raise SpecError(f"empty lane range {part!r}", key_path=where, file=path)
            lanes.extend(range(lo, hi + 1))
        return tuple(lanes)
    if isinstance(group, list) and group and all(
            isinstance(v, int) and not isinstance(v, bool) for v in group):
        return tuple(group)
    raise SpecError("a lane group is a list of lanes or a string like \"0-3,20-23\"",
                    key_path=where, file=path)


def lane_groups(raw, key: str, path: str, wave_size) -> dict[str, tuple[tuple[int, ...], ...]]:
    """{width: [group, ...]}: every lane 0..wave_size-1 appears exactly once per width."""
    where = f"{key}.value"
    if not isinstance(raw, dict):
        raise SpecError("must be a table of access width -> list of lane groups",
                        key_path=where, file=path)
    for width in _REQUIRED_WIDTHS:
        if width not in raw:
            raise SpecError("missing access width", key_path=f"{where}.{width}", file=path)
    result = {}
    for width, groups in raw.items():
        at = f"{where}.{width}"
        if not isinstance(groups, list) or not groups:
            raise SpecError("must be a non-empty list of lane groups", key_path=at, file=path)
        parsed = tuple(_lanes(g, f"{at}[{i}]", path) for i, g in enumerate(groups))
        seen = sorted(lane for group in parsed for lane in group)
        if isinstance(wave_size, (int, float)) and seen != list(range(int(wave_size))):
            raise SpecError(f"groups must cover lanes 0..{int(wave_size) - 1} exactly once",
                            key_path=at, file=path)
        result[width] = parsed
    return result


def cross_fields(spec, origins: dict[str, str], path: str) -> None:
    """Rules that tie quantities together (each names the later of the two keys)."""
    def fail(key: str, message: str) -> None:
        raise SpecError(message, key_path=key, file=origins.get(key, path))

    if spec.lds_bytes_per_block > spec.lds_bytes_per_cu:
        fail("lds_bytes_per_block", "larger than lds_bytes_per_cu")
    if spec.reg_granule > spec.regs_per_lane_file:
        fail("reg_granule", "larger than regs_per_lane_file")
    if spec.max_threads_per_block % spec.wave_size:
        fail("max_threads_per_block", "not a multiple of wave_size")
    if spec.vendor == "amd" and spec.max_waves_per_simd * spec.simds_per_cu != spec.max_waves_per_cu:
        fail("max_waves_per_cu", "must equal max_waves_per_simd x simds_per_cu")
    if spec.max_waves_per_cu * spec.wave_size < spec.max_threads_per_block:
        fail("max_waves_per_cu", "fewer wave slots than one largest block needs")
