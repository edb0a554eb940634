"""Disk cache keys and files; ToolMissing messages (CPU only: no compiler runs)."""

import pytest

from gemmmodel.compile import cache, tools
from gemmmodel.compile.driver import compile_facts, resolve_target
from gemmmodel.errors import BadArgument, GemmModelError, ToolMissing


def test_cache_dir_follows_env(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMMODEL_CACHE", str(tmp_path))
    assert cache.cache_dir() == tmp_path / "compile"
    monkeypatch.delenv("GEMMMODEL_CACHE")
    assert cache.cache_dir().parts[-3:] == (".cache", "gemmmodel", "compile")


def test_put_get_roundtrip_is_atomic(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMMODEL_CACHE", str(tmp_path))
    assert cache.cache_get("abc") is None
    path = cache.cache_put("abc", [{"kernel": "k", "vgprs": 12}])
    assert cache.cache_get("abc") == [{"kernel": "k", "vgprs": 12}]
    assert [p.name for p in path.parent.iterdir()] == ["abc.json"]  # no temporary left


def test_corrupt_entry_reads_as_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMMODEL_CACHE", str(tmp_path))
    (tmp_path / "compile").mkdir()
    (tmp_path / "compile" / "bad.json").write_text("{not json")
    assert cache.cache_get("bad") is None


def test_key_covers_included_headers_flags_and_versions(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    header = inc / "h.h"
    header.write_text("#define X 1\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "h.h"\n#include <hip/hip_runtime.h>\n__global__ void k() {}\n')
    closure = cache.source_closure(src, [inc])
    assert [name for name, _ in closure] == ["k.cu", "h.h"]
    key = cache.cache_key(closure, ["-O3"], "v1")
    assert key == cache.cache_key(cache.source_closure(src, [inc]), ["-O3"], "v1")
    assert key != cache.cache_key(closure, ["-O2"], "v1")
    assert key != cache.cache_key(closure, ["-O3"], "v2")
    header.write_text("#define X 2\n")
    assert key != cache.cache_key(cache.source_closure(src, [inc]), ["-O3"], "v1")


@pytest.fixture
def no_tools(monkeypatch, tmp_path):
    """Hide every compiler: empty PATH and no NVIDIA wheels."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(tools, "_wheel_file", lambda name: None)


@pytest.mark.parametrize("target,words", [
    ("gfx906", "apt-get install -y hipcc"),
    ("sm_90", "nvcc not found"),
    ("sm_61", "nvcc not found"),
])
def test_tool_missing_names_the_install_command(no_tools, target, words, tmp_path):
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    with pytest.raises(ToolMissing) as err:
        compile_facts(src, target, use_cache=False)
    message = str(err.value)
    assert words in message
    assert "\n" not in message  # one line for the CLI


def test_sm61_without_wheels_asks_for_the_extra(monkeypatch, tmp_path):
    monkeypatch.setattr(tools, "_wheel_file", lambda name: None)
    monkeypatch.setattr(tools, "has_tool", lambda name: name == "nvcc")
    monkeypatch.setattr(tools, "nvcc_targets", lambda: {"sm_80", "sm_90"})
    from gemmmodel.compile.routes import choose_route

    with pytest.raises(ToolMissing, match=r"pip install gemmmodel\[sm61\]"):
        choose_route("sm_61", "nvidia")


class FakeSpec:
    vendor = "nvidia"
    compile_target = "sm_80"


def test_resolve_target():
    assert resolve_target("gfx90a") == ("gfx90a", "amd")
    assert resolve_target("sm_90") == ("sm_90", "nvidia")
    assert resolve_target(FakeSpec()) == ("sm_80", "nvidia")


def test_missing_source_is_a_bad_argument(tmp_path):
    with pytest.raises(BadArgument):
        compile_facts(tmp_path / "nope.cu", "gfx906")


def test_unknown_gpu_name_is_a_typed_error():
    with pytest.raises(GemmModelError):
        resolve_target("no-such-gpu")


def test_resolve_target_from_a_loaded_spec():
    spec_mod = pytest.importorskip("gemmmodel.spec")
    spec = spec_mod.load_spec("mi100")
    assert resolve_target(spec) == (spec.compile_target, "amd")
    assert resolve_target("mi100") == (spec.compile_target, "amd")
