"""kernels/catalogue.toml entries of kernels 7 ... 10: complete entries that agree with their sources.

CPU only: reads the TOML and the .cu files. Each entry must carry every catalogue field,
name an existing source that defines its entry point, and state tile sizes, padding and
launch bounds that match the constants written in that source.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
CATALOGUE_B = KERNELS / "catalogue.toml"
IDS = ["7", "7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.8", "8.1", "8.2", "8.3", "8.4",
       "9", "9.1", "10"]
FIELDS = ["id", "parent", "title", "technique", "source", "entry", "block", "BM", "BN", "BK",
          "TM", "TN", "TK", "warp_tile", "threads", "padding", "vector_width", "buffering",
          "a_lds_layout", "thread_map", "launch_bounds", "multiple_of", "aliases", "notes"]
# Aliases of REFERENCE.md §2 that may name these kernels.
ALIAS_POOL = {f"v{i}" for i in range(1, 10)} | {f"kernel{i}" for i in range(1, 8)} | {
    "naive", "tiled", "tiled_1d", "tiled_2d", "vectorize", "warp_tiled", "best_gemm"}

with CATALOGUE_B.open("rb") as _fh:
    KERNEL_TABLE = {k: v for k, v in tomllib.load(_fh)["kernel"].items() if k in IDS}


def _source(kid: str) -> str:
    return (KERNELS / KERNEL_TABLE[kid]["source"]).read_text()


def _constant(text: str, name: str) -> int | None:
    """Value of `constexpr int NAME = <int>` (possibly in a comma list), else None."""
    match = re.search(rf"\bconstexpr int (?:[^;]*,\s*)?{name} = (\d+)\b", text)
    return int(match.group(1)) if match else None


def test_ids_are_exactly_kernels_7_to_10():
    assert list(KERNEL_TABLE) == IDS


@pytest.mark.parametrize("kid", IDS)
def test_entry_is_complete_and_consistent(kid):
    e = KERNEL_TABLE[kid]
    assert [f for f in FIELDS if f not in e] == []
    assert e["id"] == kid
    assert e["entry"] == "sgemm_" + kid.replace(".", "_")
    assert e["block"] == [e["threads"], 1, 1] and e["threads"] == 256
    assert e["multiple_of"] == {"M": e["BM"], "N": e["BN"], "K": e["BK"]}
    assert e["buffering"] in ("single", "lds-double", "reg-double")
    assert e["a_lds_layout"] in ("row", "transposed")
    assert e["thread_map"] in ("row", "warp", "zorder")
    assert e["vector_width"] in (1, 4)
    assert e["launch_bounds"] in (0, 256)
    wm, wn = e["warp_tile"]
    if e["thread_map"] == "row":
        assert (wm, wn) == (0, 0)
    else:
        assert wm * wn == 64, "warp_tile is given in lanes of a 64-lane wavefront"
    # One thread tile per thread covers the block tile.
    assert (e["BM"] // e["TM"]) * (e["BN"] // e["TN"]) == e["threads"]
    assert e["BK"] % e["TK"] == 0
    assert e["parent"] in IDS + ["5", ""]
    assert len(e["technique"]) > 80 and e["notes"]
    assert set(e["aliases"]) <= ALIAS_POOL


@pytest.mark.parametrize("kid", IDS)
def test_source_agrees_with_entry(kid):
    e = KERNEL_TABLE[kid]
    text = _source(kid)
    assert re.search(rf'GM_KERNEL void (?:__launch_bounds__\(\w+\)\s*)?{e["entry"]}\(int M, '
                     r"int N, int K, float alpha, const float\* __restrict__ A,\s*"
                     r"const float\* __restrict__ B, float beta, float\* __restrict__ C\)",
                     text), "entry signature of docs/design.md"
    # Standard headers are out (NVRTC has none); gemm_port.h is the only include.
    assert re.findall(r"^\s*#\s*include\s*(\S+)", text, re.MULTILINE) == ['"gemm_port.h"']
    assert "extern __shared__" not in text, "static shared memory only"
    for key in ("BM", "BN", "BK", "TM", "TN"):
        assert _constant(text, key) == e[key], key
    assert (_constant(text, "TK") or 1) == e["TK"]
    assert (_constant(text, "PAD") or 0) == e["padding"]
    assert ("__launch_bounds__(" in text) == (e["launch_bounds"] > 0)
    if e["thread_map"] != "row":
        wn = _constant(text, "WN_L")
        assert wn == e["warp_tile"][1] and 64 // wn == e["warp_tile"][0]
    if e["thread_map"] == "zorder":
        assert "zorder_lane(" in text


def test_lineage_and_aliases():
    parents = {kid: KERNEL_TABLE[kid]["parent"] for kid in IDS}
    assert parents["7.4"] == "7.3" and parents["9"] == "8.4" and parents["10"] == ""
    for kid in IDS:  # every chain ends at kernel 5 (outside this file) or at the root 10
        seen, node = set(), kid
        while node in parents and node not in seen:
            seen.add(node)
            node = parents[node]
        assert node in ("5", ""), (kid, node)
    aliases = [a for kid in IDS for a in KERNEL_TABLE[kid]["aliases"]]
    assert len(aliases) == len(set(aliases))


def test_project_loader_reads_the_file():
    """The lead's catalogue loader accepts these entries (same format as catalogue.toml)."""
    catalogue = pytest.importorskip("gemmmodel.catalogue")
    entries = catalogue.load_catalogue(CATALOGUE_B)
    assert [kid for kid in entries if kid in IDS] == IDS
    plan = entries["7.4"].plan(4096, 2048, 1024)
    assert plan.grid == (2048 // 64, 4096 // 64, 1) and plan.block == (256, 1, 1)
    assert entries["10"].parent is None and entries["9.1"].params["warp_tile"] == [8, 8]
    assert all(entry.source.exists() for entry in entries.values())
