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
from functools import lru_cache
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
FLOAT_FIELDS = ("load_round_trips", "fragment_lookahead")
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


def template_sources(configs=TEMPLATE_CONFIGS, edge: bool = False, batched: bool = False,
                     checked: bool = False) -> list[tuple[str, Path, str, dict]]:
    """(config name, template source, entry, -D defines) of tile-template configs; with
    `edge`, their bounds-checked builds (EDGE=1); with `batched`, the strided-batched entry
    of row-major problems (sgemm_tile_batched_nn, GM_BATCHED=1, always bounds-checked);
    with `checked`, the bounds-checked build without its unchecked path (EDGE=2: what an
    edge block executes)."""
    from gemmmodel.template import ENTRY, TEMPLATE_SOURCE, parse_name
    from gemmmodel.template.plan import BATCHED_ENTRIES, tile_defines

    entry = BATCHED_ENTRIES[(False, False)] if batched else ENTRY
    return [(cfg.name, TEMPLATE_SOURCE, entry, tile_defines(cfg, edge, batched, checked))
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


def template_table_path(target: str, edge: bool = False, batched: bool = False,
                        checked: bool = False) -> Path:
    """calibration/template_facts_<target>.csv: compile facts of the whole template search
    space for one target (`gemmmodel facts --search-space GPU` writes it); with `edge`,
    template_facts_<target>_edge.csv: the bounds-checked builds (EDGE=1) that shapes which
    are not a multiple of the block tile run
    (`gemmmodel facts --search-space GPU --edge`); with `batched`,
    template_facts_<target>_batched.csv: the strided-batched entry that batched launches run
    (`gemmmodel facts --search-space GPU --batched`; its batch loop around the tile loop
    takes more registers than the uniform entry's bounds-checked build: ncu, device run V,
    32x32x8/8x4/db 223 against 125); with `checked`, the same build without its unchecked
    path (EDGE=2): template_facts_<target>_checked.csv or ..._batched_checked.csv
    (`gemmmodel facts --search-space GPU --edge|--batched --checked`)."""
    return CALIBRATION_DIR / f"template_facts_{target}{table_suffix(edge, batched, checked)}.csv"


def table_suffix(edge: bool = False, batched: bool = False, checked: bool = False) -> str:
    """The file-name suffix of a template table's build: "", "_edge", "_batched", "_checked"
    or "_batched_checked" (template_table_path; `gemmmodel facts --template`)."""
    if checked:
        return ("_batched" if batched else "") + "_checked"
    return "_batched" if batched else ("_edge" if edge else "")


_TABLE_CACHE: dict = {}


def template_table_facts(target: str, edge: bool = False, batched: bool = False,
                         checked: bool = False) -> dict:
    """{config name: facts per tile iteration} from the target's committed search-space
    table ({} when there is none): `regs` (registers per thread the compiler used),
    `load_round_trips_per_tile` (trips.py) and `spill_ops_per_tile` (thread-local loads and
    stores of the main loop: register spills). Loop counts are scaled to one tile iteration
    (the loop holds (fma + fma_packed) / (TM*TN*BK) of them) where the loop is the tile loop
    (it has a barrier); the other keys are left out where it is not."""
    key = (target, bool(edge), bool(batched), bool(checked))
    if key in _TABLE_CACHE:
        return _TABLE_CACHE[key]
    from gemmmodel.template import parse_name

    path = template_table_path(target, edge, batched, checked)
    out: dict = {}
    if path.is_file():
        df = load_compile_facts(path)
        for row in df.to_dict("records"):
            if row.get("status") == "ok":
                cfg = parse_name(str(row["kernel_id"]))
                out[cfg.name] = tile_facts(cfg, {k: _clean(v) for k, v in row.items()})
    _TABLE_CACHE[key] = out
    return out


def tile_facts(cfg, flat: dict) -> dict:
    """The per-tile facts of template_table_facts from one flat KernelFacts row (a table row
    or KernelFacts.flat() of a build compiled here)."""
    loop = {k: flat.get(f"loop_{k}") for k in ("fma", "fma_packed", "barrier")}
    tile_fma = cfg.tm * cfg.tn * cfg.bk
    facts: dict = {}
    if flat.get("regs"):
        facts["regs"] = int(flat["regs"])
    scale = trips_per_tile(1.0, loop, tile_fma)   # one tile iteration / one loop trip
    if scale is None:
        return facts
    if flat.get("load_round_trips") is not None:
        facts["load_round_trips_per_tile"] = float(flat["load_round_trips"]) * scale
    local = sum(float(flat.get(f"loop_{k}") or 0) for k in ("local_load", "local_store"))
    facts["spill_ops_per_tile"] = local * scale
    if flat.get("fragment_lookahead") is not None:
        facts["fragment_lookahead"] = float(flat["fragment_lookahead"])
    if flat.get("loop_instructions"):
        facts["instructions_per_tile"] = float(flat["loop_instructions"]) * scale
    if flat.get("total_instructions"):
        facts["code_instructions"] = float(flat["total_instructions"])
    if flat.get("loop_instructions"):
        facts["loop_code_instructions"] = float(flat["loop_instructions"])
    return facts


def template_load_trips(target: str, edge: bool = False) -> dict:
    """{config name: load round trips per tile iteration} (template_table_facts)."""
    return {name: f["load_round_trips_per_tile"]
            for name, f in template_table_facts(target, edge).items()
            if "load_round_trips_per_tile" in f}


def template_facts(cfg, spec, regs=None, shape=None, edge: bool | None = None) -> dict | None:
    """The facts the model gets for a template config at a shape: those of the build that
    runs there. The plain build (EDGE=0): the registers the GPU's compiler reported
    (`regs`); the bounds-checked build (EDGE=1, shapes that are not a multiple of the
    block tile, template.plan.shape_needs_edge): the registers the GPU's own compiler gave
    that build (device_build_registers, "edge"), else the edge table's; a batched launch
    (batch > 1) the strided-batched entry's table (the edge table where it has no row for
    the config) with the GPU's registers for that entry where it has them. All: the
    config's LDS bytes and, from the committed table of the spec's compile target, the
    load round trips and spill operations per tile; the
    bounds-checked build also `checked_path_ratio`: the main loop's instructions per tile
    that an edge block executes over the plain build's. The numerator is the build without
    its unchecked path (EDGE=2, the *_checked tables: the checked loads alone); where that
    table has no row, the bounds-checked build's whole loop (both paths' code, an upper
    bound). None when nothing is known (no registers and no table). `edge` = True takes the
    bounds-checked build's facts at any shape (device run P: model.edge_builds)."""
    from gemmmodel.template.plan import is_batched, shape_needs_edge

    target = str(spec.compile_target)
    if edge is None:
        edge = shape is not None and shape_needs_edge(cfg, shape)
    batched = is_batched(shape)
    batched_row = template_table_facts(target, True, True).get(cfg.name) if batched else None
    table = batched_row or template_table_facts(target, edge).get(cfg.name, {})
    # the registers the GPU's own compiler gave the build that runs (NVRTC on the device,
    # run W): the strided-batched entry, or the bounds-checked uniform build
    build = "batched" if batched else "edge" if edge else None
    device = device_build_registers(str(getattr(spec, "name", ""))).get(
        (build, cfg.name)) if build else None
    plain_regs, plain_source = regs, None
    if not edge and not regs and table.get("regs"):
        # a GPU whose own compiler never reported this config (no calibration of its own):
        # the committed table's compiler (nvcc here) for the same target, not the estimate
        plain_regs, plain_source = table["regs"], "plain table"
    out = _model_facts(cfg, table, (device or table.get("regs") or regs) if edge else plain_regs,
                       bool(table) and edge)
    if plain_source:
        out["regs_source"] = plain_source
    if out is not None and out.get("edge"):
        out["regs_source"] = (f"{'batched entry' if batched else 'edge build'} (device)"
                              if device else
                              "batched table" if batched_row else
                              "edge table")
    # the fragment lookahead of the build the GPU's own compiler made (device run BH), where
    # measured: nvcc here schedules some bounds-checked double buffers differently
    device_ahead, ahead_from = device_fragment_lookahead(str(getattr(spec, "name", "")))
    ahead = device_ahead.get((build or "plain", cfg.name))
    if out is not None and ahead is not None:
        out["fragment_lookahead"] = ahead
        out["fragment_lookahead_source"] = f"device SASS ({ahead_from}, run BH)"
    elif out is not None and out.get("fragment_lookahead") is not None:
        out["fragment_lookahead_source"] = ("batched table" if batched_row else
                                            "edge table" if edge else "plain table")
    plain = template_table_facts(target, False).get(cfg.name, {}) if edge else {}
    alone = template_table_facts(target, True, batched, checked=True).get(cfg.name, {}) \
        if edge else {}
    executed = alone.get("instructions_per_tile") or table.get("instructions_per_tile")
    if out is not None and executed and plain.get("instructions_per_tile"):
        out["checked_path_ratio"] = executed / plain["instructions_per_tile"]
    return out


@lru_cache(maxsize=8)
def device_build_registers(gpu: str) -> dict:
    """{(build, config name): registers per thread} that the GPU's own compiler gave the
    strided-batched entry ("batched") and the bounds-checked uniform build ("edge"):
    calibration/<gpu>/build_registers.csv (device run W, tools/device/batched_registers.py,
    cuFuncGetAttribute after NVRTC; the folder found by spec name or alias,
    model.calib.calibration_name); {} where the GPU has none. template_facts takes the
    batched entry's and the bounds-checked build's registers from it (the latter since
    session 55), as the plain build's come from the device's occupancy rows: nvcc here and
    NVRTC there differ by a few registers (run W: the edge builds within 8 for 84 % of the
    configs; 128x128x8/8x8/db 124 on the GPU against nvcc's 129, two blocks per SM
    against one)."""
    if not gpu:
        return {}
    from gemmmodel.model.calib import calibration_name

    path = CALIBRATION_DIR / calibration_name(gpu) / "build_registers.csv"
    if not path.is_file():
        return {}
    out = {}
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            if row.get("regs") and not row.get("error"):
                out[(row["build"], row["config"])] = int(float(row["regs"]))
    return out


@lru_cache(maxsize=8)
def device_fragment_lookahead(gpu: str) -> tuple[dict, str]:
    """({(build, config name): fragment lookahead}, the folder it came from) of the builds
    the device's own compiler made: calibration/<folder>/device_sass_check.csv's
    `device_fragment_lookahead` (device run BH, NVRTC 13.0 for sm_90 on the H200:
    tools/device/device_cubins.py, tools/device_sass_check.py; builds "plain", "edge",
    "batched"). The GPU's own folder, else a calibrated GPU's with the same compile target
    whose runs used the same single NVRTC version as this GPU's (provenance.json): NVRTC's
    output depends on its version, the target and the flags, not on the GPU that runs it
    (the H100's runs and run BH both used NVRTC 13.0). ({}, "") where there is none.
    template_facts prefers it to the local table's: nvcc 13.0 here schedules the fragment
    reads of about half the builds differently (128x64x16/8x8/p4/db's bounds-checked build:
    49.2 here, 15.8 on the device)."""
    if not gpu:
        return {}, ""
    from gemmmodel.model.calib import calibration_name

    own = calibration_name(gpu)
    for folder in (own, *_nvrtc_siblings(gpu, own)):
        path = CALIBRATION_DIR / folder / "device_sass_check.csv"
        if not path.is_file():
            continue
        out = {}
        with path.open(newline="") as fh:
            for row in csv.DictReader(fh):
                if row.get("device_fragment_lookahead"):
                    out[(row["build"], row["config"])] = float(row["device_fragment_lookahead"])
        return out, folder
    return {}, ""


def _nvrtc_versions(folder: str) -> set:
    path = CALIBRATION_DIR / folder / "provenance.json"
    if not path.is_file():
        return set()
    import re

    return set(re.findall(r'"nvrtc_version":\s*"([^"]+)"', path.read_text()))


def _nvrtc_siblings(gpu: str, own: str) -> list[str]:
    """Calibration folders of other GPUs with gpu's compile target and the same single NVRTC
    version in every run (device_fragment_lookahead)."""
    from gemmmodel.errors import GemmModelError
    from gemmmodel.spec import load_spec

    mine = _nvrtc_versions(own)
    try:
        target = str(load_spec(gpu).compile_target)
    except GemmModelError:
        return []
    if len(mine) != 1:
        return []
    out = []
    for folder in sorted(p.name for p in CALIBRATION_DIR.iterdir() if p.is_dir()):
        if folder == own or _nvrtc_versions(folder) != mine:
            continue
        try:
            if str(load_spec(folder).compile_target) == target:
                out.append(folder)
        except GemmModelError:
            continue
    return out


def edge_build_facts(cfg, kernel_facts) -> dict:
    """template_facts' dict for a bounds-checked build (EDGE=1) compiled on this machine."""
    table = tile_facts(cfg, kernel_facts.flat())
    return _model_facts(cfg, table, table.get("regs"), True) or {"edge": True}


def compile_template_facts(cfg, spec, shape=None):
    """The facts of the build that runs at `shape`, compiled on this machine (disk-cached):
    the plain build's KernelFacts, or edge_build_facts of the bounds-checked one (at a
    batched shape, of the strided-batched entry)."""
    from gemmmodel.template import ENTRY, TEMPLATE_SOURCE
    from gemmmodel.template.plan import BATCHED_ENTRIES, is_batched, shape_needs_edge, tile_defines

    edge = shape is not None and shape_needs_edge(cfg, shape)
    batched = is_batched(shape)
    facts = compile_facts(TEMPLATE_SOURCE, spec, defines=tile_defines(cfg, edge, batched),
                          entry=BATCHED_ENTRIES[(False, False)] if batched else ENTRY)[0]
    return edge_build_facts(cfg, facts) if edge else facts


def _model_facts(cfg, table: dict, regs, edge: bool) -> dict | None:
    out: dict = {}
    if regs:
        out.update(regs=int(regs), lds_bytes=cfg.lds_bytes)
    for key in ("load_round_trips_per_tile", "spill_ops_per_tile", "code_instructions",
                "loop_code_instructions", "fragment_lookahead"):
        if table.get(key) is not None and (key != "spill_ops_per_tile" or table[key] > 0):
            out[key] = table[key]
    if edge:
        out["edge"] = True
    return out or None
