"""The kernel catalogue: the seed ladder of REFERENCE.md §2 as data (kernels/catalogue.toml).

Each entry names its source, entry point, tile parameters and parent; the lineage is a
networkx DiGraph (edge parent -> child). `resolve(name)` turns any name a user may type
(catalogue id, alias, template config name, "batched", "cublas", "rocblas") into a KernelRef.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import networkx as nx

from gemmmodel import KERNELS_DIR
from gemmmodel.errors import BadArgument, KernelNotFound
from gemmmodel.launch import LaunchPlan, ceil_div

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CATALOGUE_FILE = KERNELS_DIR / "catalogue.toml"

#: Parameter names shared by catalogue entries and template configs (docs/design.md).
PARAM_KEYS = (
    "BM", "BN", "BK", "TM", "TN", "TK", "warp_tile", "threads", "padding", "vector_width",
    "buffering", "a_lds_layout", "thread_map", "launch_bounds",
)
REQUIRED_KEYS = ("parent", "title", "technique", "source", "entry", "block", "BM", "BN", "BK",
                 "threads", "multiple_of")
VENDOR_NAMES = ("cublas", "rocblas")


@dataclass(frozen=True)
class CatalogueEntry:
    """One catalogue kernel. `params` uses the PARAM_KEYS names; sizes are in elements."""

    id: str
    parent: str | None
    title: str
    technique: str
    source: Path
    entry: str
    block: tuple[int, int, int]
    params: dict[str, Any]
    multiple_of: dict[str, int]
    aliases: tuple[str, ...] = ()
    notes: str = ""

    def check_shape(self, m: int, n: int, k: int) -> None:
        """Raise BadArgument if (m, n, k) is not a shape this kernel supports."""
        for dim, val in (("M", m), ("N", n), ("K", k)):
            if val < 1:
                raise BadArgument(f"{dim}={val}: sizes must be >= 1")
            mult = int(self.multiple_of.get(dim, 1))
            if val % mult:
                raise BadArgument(
                    f"kernel {self.id} supports {dim} multiple of {mult} only; got {dim}={val}")

    def plan(self, m: int, n: int, k: int) -> LaunchPlan:
        self.check_shape(m, n, k)
        grid = (ceil_div(n, int(self.params["BN"])), ceil_div(m, int(self.params["BM"])), 1)
        return LaunchPlan(name=self.id, source=self.source, entry=self.entry, grid=grid,
                          block=self.block)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "parent": self.parent, "title": self.title,
            "technique": self.technique, "source": str(self.source.relative_to(KERNELS_DIR)),
            "entry": self.entry, "block": list(self.block), "params": dict(self.params),
            "multiple_of": dict(self.multiple_of), "aliases": list(self.aliases),
            "notes": self.notes,
        }


@dataclass(frozen=True)
class KernelRef:
    """What a `--kernel NAME` resolves to. kind: catalogue | template | batched | vendor."""

    name: str
    kind: str
    entry: CatalogueEntry | None = None
    config: Any = None  # gemmmodel.template.TileConfig for kind == "template"
    extra: dict = field(default_factory=dict)

    @property
    def params(self) -> dict[str, Any]:
        if self.entry is not None:
            return dict(self.entry.params)
        if self.config is not None:
            return dict(self.config.params())
        raise BadArgument(f"{self.name} ({self.kind}) has no tile parameters")

    def check_shape(self, m: int, n: int, k: int) -> None:
        if self.entry is not None:
            self.entry.check_shape(m, n, k)
        elif self.config is not None:
            self.plan(m, n, k)
        elif min(m, n, k) < 1:
            raise BadArgument(f"sizes must be >= 1, got {m}x{n}x{k}")

    def plan(self, m: int, n: int, k: int) -> LaunchPlan:
        if self.entry is not None:
            return self.entry.plan(m, n, k)
        if self.config is not None:
            return self.config.plan(m, n, k)
        raise BadArgument(f"{self.name} is a {self.kind} kernel: it has no single launch plan")


def _entry_from_table(kid: str, table: dict[str, Any], path: Path) -> CatalogueEntry:
    missing = [key for key in REQUIRED_KEYS if key not in table]
    if missing:
        raise KernelNotFound(f"{path.name}: kernel {kid}: missing keys {', '.join(missing)}")
    params = {key: table[key] for key in PARAM_KEYS if key in table}
    block = tuple(int(x) for x in table["block"]) + (1,) * (3 - len(table["block"]))
    parent = table.get("parent") or None
    return CatalogueEntry(
        id=kid, parent=parent, title=table["title"], technique=table["technique"],
        source=(KERNELS_DIR / table["source"]).resolve(), entry=table["entry"],
        block=block, params=params, multiple_of=dict(table["multiple_of"]),
        aliases=tuple(table.get("aliases", ())), notes=table.get("notes", ""),
    )


@lru_cache(maxsize=4)
def _load(path_str: str, mtime: float) -> dict[str, CatalogueEntry]:
    path = Path(path_str)
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    kernels = data.get("kernel", {})
    return {kid: _entry_from_table(kid, table, path) for kid, table in kernels.items()}


def load_catalogue(path: Path | None = None) -> dict[str, CatalogueEntry]:
    """All catalogue entries by id, in file order."""
    path = Path(path or CATALOGUE_FILE)
    if not path.exists():
        raise KernelNotFound(f"kernel catalogue not found: {path}")
    return _load(str(path.resolve()), path.stat().st_mtime)


def alias_table(entries: dict[str, CatalogueEntry] | None = None) -> dict[str, str]:
    """alias (lower case) -> catalogue id."""
    entries = entries if entries is not None else load_catalogue()
    table: dict[str, str] = {}
    for kid, entry in entries.items():
        for alias in entry.aliases:
            table[alias.lower()] = kid
    return table


def lineage(entries: dict[str, CatalogueEntry] | None = None) -> nx.DiGraph:
    """The lineage DiGraph: one node per id (attributes: title), one edge parent -> child."""
    entries = entries if entries is not None else load_catalogue()
    graph = nx.DiGraph()
    for kid, entry in entries.items():
        graph.add_node(kid, title=entry.title)
    for kid, entry in entries.items():
        if entry.parent:
            graph.add_edge(entry.parent, kid)
    return graph


def _closest(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=5, cutoff=0.3)
    return ", ".join(close) if close else ", ".join(candidates[:8]) + ", …"


def resolve(name: str) -> KernelRef:
    """Resolve a user-typed kernel name; KernelNotFound lists the closest ids."""
    key = str(name).strip()
    low = key.lower()
    if low in VENDOR_NAMES:
        return KernelRef(name=low, kind="vendor")
    if low == "batched":
        return KernelRef(name="batched", kind="batched")
    entries = load_catalogue()
    if key in entries:
        return KernelRef(name=key, kind="catalogue", entry=entries[key])
    aliases = alias_table(entries)
    if low in aliases:
        kid = aliases[low]
        return KernelRef(name=kid, kind="catalogue", entry=entries[kid])
    if "x" in low and "/" in low:
        from gemmmodel.template import resolve_template_name  # local: template is optional here

        config = resolve_template_name(key)
        if config is not None:
            return KernelRef(name=config.name, kind="template", config=config)
    candidates = list(entries) + sorted(aliases) + ["batched", "cublas", "rocblas"]
    raise KernelNotFound(f"unknown kernel '{name}'; closest: {_closest(key, candidates)}")


def parse_size(text: str, dims: int = 3) -> tuple[int, ...]:
    """Parse 'MxNxK' (dims=3) or 'MxNxKxB' (dims=4; batch optional, default 1)."""
    parts = str(text).lower().replace("*", "x").split("x")
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        raise BadArgument(f"bad size '{text}': expected MxNxK with whole numbers") from None
    if dims == 4 and len(values) == 3:
        values = values + (1,)
    if len(values) != dims:
        want = "MxNxK" if dims == 3 else "MxNxK[xBATCH]"
        raise BadArgument(f"bad size '{text}': expected {want}")
    if min(values) < 1:
        raise BadArgument(f"bad size '{text}': every dimension must be >= 1")
    return values
