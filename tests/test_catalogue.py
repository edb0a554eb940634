"""The kernel catalogue: every id of REFERENCE.md §2, aliases, lineage, errors."""

import networkx as nx
import pytest

from gemmmodel import catalogue
from gemmmodel.cli import main
from gemmmodel.errors import BadArgument, KernelNotFound

IDS = ["1", "2", "3", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "4", "5", "6", "7", "7.1",
       "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.8", "8.1", "8.2", "8.3", "8.4", "9", "9.1",
       "10"]
# The alias families of REFERENCE.md §2.
ALIASES = ([f"v{i}" for i in (1, 3, 4, 5, 6, 7, 8, 9)] + [f"kernel{i}" for i in range(1, 8)]
           + ["naive", "tiled", "tiled_1d", "tiled_2d", "vectorize", "warp_tiled", "best_gemm"])


def test_every_id_present_and_sources_exist():
    entries = catalogue.load_catalogue()
    assert sorted(entries) == sorted(IDS)
    for entry in entries.values():
        assert entry.source.exists(), entry.source
        assert f"sgemm_{entry.id.replace('.', '_')}" == entry.entry
        for key in ("BM", "BN", "BK", "threads", "buffering", "padding", "vector_width"):
            assert key in entry.params, (entry.id, key)


def test_lineage_is_a_dag_rooted_at_1_and_10():
    graph = catalogue.lineage()
    assert nx.is_directed_acyclic_graph(graph)
    roots = sorted(n for n in graph.nodes if graph.in_degree(n) == 0)
    assert roots == ["1", "10"]
    assert set(graph.nodes) == set(IDS)
    assert graph.has_edge("7.3", "7.4") and graph.has_edge("8.4", "9")


@pytest.mark.parametrize("alias", ALIASES)
def test_every_alias_resolves(alias):
    ref = catalogue.resolve(alias)
    assert ref.kind == "catalogue" and ref.name in IDS


def test_no_alias_points_to_two_kernels():
    seen = {}
    for entry in catalogue.load_catalogue().values():
        for alias in entry.aliases:
            assert alias.lower() not in seen, (alias, seen.get(alias.lower()), entry.id)
            seen[alias.lower()] = entry.id


def test_unknown_id_lists_closest():
    with pytest.raises(KernelNotFound) as err:
        catalogue.resolve("7.9")
    assert "closest" in str(err.value) and "7." in str(err.value)


def test_bad_sizes():
    with pytest.raises(BadArgument):
        catalogue.parse_size("4096x4096")
    with pytest.raises(BadArgument):
        catalogue.parse_size("4096xAx4096")
    with pytest.raises(BadArgument):
        catalogue.parse_size("0x4096x4096")
    assert catalogue.parse_size("64x64x32x30", dims=4) == (64, 64, 32, 30)
    ref = catalogue.resolve("7.4")
    with pytest.raises(BadArgument, match="multiple of"):
        ref.check_shape(4095, 4096, 4096)


def test_plan_grid():
    plan = catalogue.resolve("7.4").plan(4096, 2048, 1024)
    bm, bn = plan_tile = (catalogue.resolve("7.4").params["BM"], catalogue.resolve("7.4").params["BN"])
    assert plan_tile and plan.grid == (2048 // bn, 4096 // bm, 1)


def test_kernels_command(capsys):
    assert main(["kernels", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"lineage"' in out and '"7.4"' in out
    assert main(["kernels", "--kernel", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown kernel" in err and "Traceback" not in err
