"""Samples for the fit and the validation: (kernel, parameters, facts, shape, measured time).

Sources: calibration/<gpu>/ via gemmmodel.calibrate.load (suites "kernels": catalogue
kernels by id; "template": template configs by name); the MI100 seed table shipped in
gemmmodel/data/ (validation only: nothing is ever fitted to it). Compile facts come from the
committed table calibration/compile_facts.csv where it has the kernel for the spec's target;
template configs use the analytic counts of their parameters plus the registers per thread
that the GPU's own compiler reported during calibration (template.csv, occupancy_template
rows), as `gemmmodel selection` and `explain` do, so that fit and prediction see the same
occupancy.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from gemmmodel import PACKAGE_DIR
from gemmmodel.errors import BadArgument, GemmModelError

DATA_DIR = PACKAGE_DIR / "data"
#: Shipped validation tables: file -> (spec it was measured on, shape M=N=K, time column).
VALIDATION_TABLES = {
    "mi100_seed_kernels_4096.csv": {"spec": "mi100-1472", "arch": "gfx908", "size": 4096,
                                    "source": "REFERENCE.md section 3 (MI100, SCLK 1472 MHz)"},
}


@dataclass(frozen=True)
class Sample:
    kernel: str            # catalogue id or template config name
    kind: str              # "catalogue" | "template"
    params: dict
    facts: object          # KernelFacts or None
    shape: tuple           # (M, N, K, batch)
    measured_s: float

    @property
    def shape_text(self) -> str:
        m, n, k, b = self.shape
        return f"{m}x{n}x{k}" + (f"x{b}" if b != 1 else "")


def catalogue_facts(spec) -> dict:
    """{catalogue id: KernelFacts} for the spec's target from the committed facts table
    (empty when the table or the target is missing)."""
    try:
        from gemmmodel.compile import facts_for, load_compile_facts

        table = load_compile_facts()
    except (GemmModelError, ImportError, OSError):
        return {}
    out = {}
    target = str(spec.compile_target)
    rows = table[table["target"] == target] if "target" in table else []
    for kid in getattr(rows, "kernel_id", []):
        try:
            out[str(kid)] = facts_for(str(kid), spec, table=table)
        except GemmModelError:
            continue
    return out


def _catalogue_params() -> dict:
    try:
        from gemmmodel.catalogue import load_catalogue

        return {kid: dict(e.params) for kid, e in load_catalogue().items()}
    except GemmModelError:
        return {}


def template_registers(frames) -> dict:
    """{template config name: registers per thread} from the occupancy_template rows of a
    loaded calibration folder (empty when absent)."""
    df = frames.get("template")
    if df is None or "config" not in df or "quantity" not in df:
        return {}
    out = {}
    for row in df.to_dict("records"):
        if (row.get("name") == "occupancy_template" and row.get("status") == "ok"
                and row.get("quantity") == "regs_per_thread"):
            value = _num(row, "value")
            if value:
                out[str(row["config"]).strip()] = int(value)
    return out


def _num(row, key):
    try:
        value = float(row.get(key))
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _kernel_id(value) -> str:
    """A catalogue id as written in the catalogue: the calibration store parses params
    into numbers ("7.4" -> 7.4, "10" -> 10 or 10.0 once pandas has a float column)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def calibration_samples(gpu: str, spec, root=None) -> list[Sample]:
    """Timed kernels of calibration/<gpu>/ (catalogue and template suites; vendor rows and
    failed or unchecked runs are left out)."""
    from gemmmodel.calibrate.load import load

    try:
        frames = load(gpu, root) if root else load(gpu)
    except BadArgument:
        return []
    params_by_id = _catalogue_params()
    facts = catalogue_facts(spec)
    regs = template_registers(frames)
    wave = int(spec.wave_size)
    out: list[Sample] = []
    for suite, key in (("kernels", "kernel"), ("template", "config")):
        df = frames.get(suite)
        if df is None or key not in df:
            continue
        for row in df.to_dict("records"):
            if row.get("status") != "ok" or row.get("name") not in ("kernel", "template"):
                continue
            if row.get("check_passed") is False:
                continue
            t = _num(row, "time_s")
            dims = [_num(row, d) for d in ("M", "N", "K")]
            if t is None or t <= 0 or None in dims:
                continue
            shape = tuple(int(d) for d in dims) + (int(_num(row, "batch") or 1),)
            name = _kernel_id(row[key])
            if suite == "kernels":
                if name not in params_by_id:
                    continue
                out.append(Sample(name, "catalogue", params_by_id[name], facts.get(name),
                                  shape, t))
            else:
                from gemmmodel.compile.table import template_facts
                from gemmmodel.template import parse_name

                try:
                    cfg = parse_name(name)
                except GemmModelError:
                    continue
                cfg_facts = template_facts(cfg, spec, regs.get(cfg.name), shape)
                out.append(Sample(cfg.name, "template", cfg.params(wave), cfg_facts, shape, t))
    return out


def table_samples(table: str, spec) -> list[Sample]:
    """Samples of a shipped validation table (catalogue ids with a time)."""
    info = VALIDATION_TABLES[table]
    path = DATA_DIR / table
    params_by_id = _catalogue_params()
    facts = catalogue_facts(spec)
    size = int(info["size"])
    out = []
    with Path(path).open(newline="") as fh:
        for row in csv.DictReader(fh):
            kid = row["kernel_id"].strip()
            t = _num(row, "time_ms")
            if kid in params_by_id and t:
                out.append(Sample(kid, "catalogue", params_by_id[kid], facts.get(kid),
                                  (size, size, size, 1), t * 1e-3))
    return out


def tables_for(spec) -> list[str]:
    """Shipped validation tables measured on this spec's architecture."""
    return [name for name, info in VALIDATION_TABLES.items() if info["arch"] == str(spec.arch)]
