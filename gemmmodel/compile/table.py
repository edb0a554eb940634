"""The compile-facts tables: build one (every kernel x every target), write it as CSV, and
load the committed copy without compilers. calibration/compile_facts.csv holds the
catalogue; calibration/template_facts.csv holds the tile-template configs that explain,
compare and answers name by default (TEMPLATE_CONFIGS), so those run on shipped data too.

One row per (kernel_id, target): `kernel_id` is the catalogue id or the template config
name, then KernelFacts.flat()
columns (mixes flattened to total_<key> / loop_<key>), then `status` ("ok" or the error the
compiler gave, with the other columns empty).
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gemmmodel import CALIBRATION_DIR, KERNELS_DIR
from gemmmodel.compile.driver import compile_facts, resolve_target
from gemmmodel.compile.facts import KernelFacts
from gemmmodel.compile.routes import choose_route
from gemmmodel.compile.trips import trips_per_tile
from gemmmodel.errors import BadArgument, GemmModelError, KernelNotFound, ToolMissing

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_TARGETS = ("gfx900", "gfx906", "gfx908", "gfx90a", "sm_61", "sm_80", "sm_90")
TABLE_FILE = CALIBRATION_DIR / "compile_facts.csv"
TEMPLATE_TABLE_FILE = CALIBRATION_DIR / "template_facts.csv"
#: Template configs with shipped facts: the pair of REFERENCE.md question 8 (the tile that
#: wins on gfx906 / MI100 and the Tensile / CUDA-tutorial tile), so answers_more.Q8_CONFIGS
#: and explain --compare need no compiler.
TEMPLATE_CONFIGS = ("64x64x16/4x4", "128x128x8/8x8")
#: Non-integer numeric columns (the others are nullable integers).
FLOAT_FIELDS = ("load_round_trips",)
TEXT_FIELDS = ("kernel_id", "kernel", "target", "vendor", "mix_source", "compiler", "flags",
               "status")
FIELDS = ["kernel_id", *KernelFacts(kernel="", target="", vendor="").flat().keys(), "status"]


def catalogue_sources(catalogue: Path | None = None) -> list[tuple[str, Path, str]]:
    """(id, source path, entry) of every catalogue kernel, in file order (design.md format)."""
    path = Path(catalogue) if catalogue else KERNELS_DIR / "catalogue.toml"
    if not path.is_file():
        raise BadArgument(f"catalogue not found: {path}")
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    out = []
    for kid, entry in data.get("kernel", {}).items():
        if "source" not in entry or "entry" not in entry:
            raise BadArgument(f"{path}: kernel {kid!r} lacks source or entry")
        out.append((kid, path.parent / entry["source"], entry["entry"]))
    return out


def template_sources(configs=TEMPLATE_CONFIGS) -> list[tuple[str, Path, str, dict]]:
    """(config name, template source, entry, -D defines) of tile-template configs."""
    from gemmmodel.template import ENTRY, TEMPLATE_SOURCE, parse_name

    return [(cfg.name, TEMPLATE_SOURCE, ENTRY, cfg.defines())
            for cfg in (parse_name(name) for name in configs)]


def build_facts_table(targets=DEFAULT_TARGETS, catalogue: Path | None = None, jobs: int = 0,
                      progress: Callable[[str], None] | None = None,
                      items: list | None = None) -> list[dict]:
    """Compile every catalogue kernel (or the given (id, source, entry[, defines]) items)
    for every target; rows in (target, item) order. A kernel that fails to compile gets a
    row whose `status` is the error message; a missing toolchain (ToolMissing) stops the
    build."""
    kernels = items if items is not None else catalogue_sources(catalogue)
    jobs = jobs or os.cpu_count() or 1
    rows: list[dict] = []
    for target_name in targets:
        target, vendor = resolve_target(target_name)
        route = choose_route(target, vendor)

        def one(item, target=target, vendor=vendor, route=route):
            kid, source, entry, *rest = item
            defines = rest[0] if rest else None
            try:
                facts = compile_facts(source, target, defines=defines, entry=entry,
                                      route=route)[0]
                return {"kernel_id": kid, **facts.flat(), "status": "ok"}
            except ToolMissing:
                raise
            except GemmModelError as err:
                first = " ".join(str(err).split())[:300]
                return {"kernel_id": kid, "kernel": entry, "target": target, "vendor": vendor,
                        "status": f"error: {first}"}

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for row in pool.map(one, kernels):
                rows.append(row)
                if progress:
                    progress(f"{target} {row['kernel_id']}: {row['status']}")
    return rows


def write_facts_table(rows: list[dict], path: Path = TABLE_FILE) -> Path:
    """Write rows as CSV with the FIELDS columns (missing values empty)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in FIELDS})
    os.replace(tmp, path)
    return path


def load_compile_facts(path: Path | None = None):
    """The committed table as a pandas DataFrame (one row per kernel_id x target); count
    columns are nullable integers (pandas Int64: empty where the field does not apply)."""
    import pandas as pd

    path = Path(path) if path else TABLE_FILE
    if not path.is_file():
        raise BadArgument(f"compile facts table not found: {path} (run `gemmmodel facts`)")
    df = pd.read_csv(path, dtype={name: str for name in TEXT_FIELDS})
    for col in df.columns:
        if col in FLOAT_FIELDS:
            df[col] = df[col].astype("float64")
        elif col not in TEXT_FIELDS:
            df[col] = df[col].astype("Int64")
    return df


def _clean(value):
    if value is None or value is _pd_na():
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def _pd_na():
    import pandas as pd

    return pd.NA


def facts_for(kernel_id: str, spec_or_target, table=None) -> KernelFacts:
    """KernelFacts of one kernel on one target, from a committed table (default: the
    catalogue's)."""
    target, _ = resolve_target(spec_or_target)
    df = table if table is not None else load_compile_facts()
    match = df[(df["kernel_id"] == str(kernel_id)) & (df["target"] == target)]
    if match.empty:
        raise KernelNotFound(f"no compile facts for kernel {kernel_id!r} on {target}")
    row = {k: _clean(v) for k, v in match.iloc[0].to_dict().items()}
    if row.get("status") != "ok":
        raise KernelNotFound(f"kernel {kernel_id!r} did not compile for {target}: {row['status']}")
    for text_field in TEXT_FIELDS:
        row[text_field] = "" if row.get(text_field) is None else str(row[text_field])
    return KernelFacts.from_flat(row)


def template_table_path(target: str) -> Path:
    """calibration/template_facts_<target>.csv: compile facts of the whole template search
    space for one target (`gemmmodel facts --search-space GPU` writes it)."""
    return CALIBRATION_DIR / f"template_facts_{target}.csv"


_TRIPS_CACHE: dict = {}


def template_load_trips(target: str) -> dict:
    """{config name: load round trips per tile iteration} from the target's committed
    search-space table ({} when there is none). The main loop's round trips (trips.py) are
    scaled to one tile iteration (loop FMAs vs TM*TN*BK) where the loop is the tile loop."""
    if target in _TRIPS_CACHE:
        return _TRIPS_CACHE[target]
    from gemmmodel.template import parse_name

    path = template_table_path(target)
    out: dict = {}
    if path.is_file():
        df = load_compile_facts(path)
        for row in df.to_dict("records"):
            if row.get("status") != "ok":
                continue
            cfg = parse_name(str(row["kernel_id"]))
            loop = {k: _clean(row.get(f"loop_{k}")) for k in ("fma", "fma_packed", "barrier")}
            per_tile = trips_per_tile(_clean(row.get("load_round_trips")), loop,
                                      cfg.tm * cfg.tn * cfg.bk)
            if per_tile is not None:
                out[cfg.name] = per_tile
    _TRIPS_CACHE[target] = out
    return out


def template_facts(cfg, spec, regs=None) -> dict | None:
    """The facts the model gets for a template config: the registers the GPU's compiler
    reported (`regs`, with the config's LDS bytes) and the load round trips per tile from
    the committed table of the spec's compile target; None when neither is known."""
    out: dict = {}
    if regs:
        out.update(regs=int(regs), lds_bytes=cfg.lds_bytes)
    trips = template_load_trips(str(spec.compile_target)).get(cfg.name)
    if trips is not None:
        out["load_round_trips_per_tile"] = trips
    return out or None
