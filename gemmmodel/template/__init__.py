"""The parametrised tile template (kernels/template/sgemm_tile.cu).

    TileConfig / parse_name / format_name     config.py: one point and its name
    validate(cfg, spec) -> list[str]          rules.py: reasons a config is invalid
    check_for_runtime(cfg, runtime)           rules.py: InvalidConfig before compiling
    search_space(spec) -> list[TileConfig]    space.py: the one search-space definition
    cfg.defines(), cfg.plan(M, N, K)          plan.py: -D macros and LaunchPlans
"""

from __future__ import annotations

from gemmmodel.errors import InvalidConfig
from gemmmodel.template.config import TileConfig, format_name, looks_like_template_name, parse_name
from gemmmodel.template.plan import BATCHED_ENTRIES, ENTRY, TEMPLATE_SOURCE, tile_defines, tile_plan
from gemmmodel.template.rules import (
    check_for_runtime,
    estimate_registers,
    runtime_spec,
    structural_reasons,
    validate,
)
from gemmmodel.template.space import search_space


def resolve_template_name(name: str) -> TileConfig | None:
    """The TileConfig a kernel name denotes, or None when `name` is not a config name.

    A well-formed name that breaks a GPU-independent rule (e.g. BM not a multiple of TM)
    raises InvalidConfig with the reasons; GPU limits are checked by validate(cfg, spec)."""
    if not looks_like_template_name(name):
        return None
    cfg = parse_name(name)
    reasons = structural_reasons(cfg)
    if reasons:
        raise InvalidConfig(cfg.name, reasons)
    return cfg


__all__ = ["BATCHED_ENTRIES", "ENTRY", "TEMPLATE_SOURCE", "TileConfig", "check_for_runtime",
           "estimate_registers", "format_name", "parse_name", "resolve_template_name",
           "runtime_spec", "search_space", "structural_reasons", "tile_defines", "tile_plan",
           "validate"]
