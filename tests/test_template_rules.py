"""Validity rules and the search space of the tile template (gemmmodel.template)."""

from __future__ import annotations

import pytest

from gemmmodel.errors import InvalidConfig
from gemmmodel.spec import list_specs, load_spec
from gemmmodel.template import TileConfig, estimate_registers, parse_name, search_space, validate
from gemmmodel.template.rules import check, static_lds_limit

SM90 = load_spec("sm_90")     # wave 32
GFX908 = load_spec("gfx908")  # wave 64


def reasons(name_or_cfg, spec=SM90) -> list[str]:
    cfg = parse_name(name_or_cfg) if isinstance(name_or_cfg, str) else name_or_cfg
    return validate(cfg, spec)


@pytest.mark.parametrize("name", ["128x128x8/8x8", "64x64x16/4x4/p4/db", "128x128x8/8x8/p4/db/s8",
                                  "32x32x16/4x4/p4/db", "64x64x16/4x4/v1"])
@pytest.mark.parametrize("spec", [SM90, GFX908], ids=["sm_90", "gfx908"])
def test_known_good_configs_are_valid(name, spec):
    assert reasons(name, spec) == []


REJECTED = [
    # (config, spec, the start of the reason it must get)
    ("100x128x8/8x8", SM90, "BM=100 is not a multiple of TM=8"),
    ("128x100x8/8x8", SM90, "BN=100 is not a multiple of TN=8"),
    (TileConfig(128, 128, 8, 8, 8, threads=128), SM90, "threads=128 but BM*BN/(TM*TN)=256"),
    ("32x32x8/2x2/v4", SM90, "VEC=4 needs TM to be a multiple of 4"),
    ("128x128x8/8x8/p2", SM90, "VEC=4 needs PAD to be a multiple of 4"),
    ("64x64x6/4x4/v1", SM90, "A tile loads"),
    ("64x32x8/4x4", SM90, "B tile loads"),
    ("16x16x8/4x4", SM90, "threads=16 is not a multiple of the wave size 32"),
    ("64x64x8/4x4/v1/w64x64", SM90, "warp tile 64x64: 16x16 lanes"),
    ("128x128x8/8x8/w64x32", GFX908, "warp tile 64x32: 8x4 lanes"),
    ("64x96x8/4x4/v1/w32x64", SM90, "BN=96 is not a multiple of WN=64"),
    ("64x24x24/4x8/v1", SM90, "automatic warp tile: 10x3 lanes"),
    ("256x256x32/4x8", SM90, "threads=2048 exceeds 1024 per block on sm_90"),
    ("128x256x32/8x8/db", SM90, "LDS 98304 B"),
    ("128x128x8/16x16", SM90, "registers: about 358 per thread"),
    ("256x256x16/8x8", SM90, "registers: 1024 threads x about 110 registers do not fit"),
    ("256x256x16/8x8", GFX908, "registers: 1024 threads x about 110 registers do not fit"),
]


@pytest.mark.parametrize("cfg,spec,start", REJECTED)
def test_each_rejected_config_gets_its_reason(cfg, spec, start):
    got = reasons(cfg, spec)
    if start is None:
        assert got == []
        return
    assert any(r.startswith(start) for r in got), got


def test_1024_thread_block_is_not_rejected_for_size_alone():
    """1024 threads is the limit itself, not above it: only the register rule rejects it."""
    got = reasons("256x256x16/8x8", SM90)
    assert not any("exceeds 1024" in r for r in got)
    assert reasons("256x256x16/8x8/v1", SM90) != []


def test_one_reason_per_broken_rule():
    got = reasons("64x24x24/4x8/v1", SM90)
    assert len(got) == 2
    assert got[0].startswith("threads=48 is not a multiple of the wave size 32")


def test_wave_size_decides_the_same_explicit_warp_tile():
    name = "128x128x8/8x8/w32x64"  # 4 x 8 lanes: one warp of 32, half a wave of 64
    assert reasons(name, SM90) == []
    assert any("is not one wave of 64" in r for r in reasons(name, GFX908))


def test_check_raises_invalid_config_with_reasons():
    with pytest.raises(InvalidConfig) as info:
        check(parse_name("100x128x8/8x8"), SM90)
    assert info.value.reasons == ["BM=100 is not a multiple of TM=8"]
    assert "invalid tile config 100x128x8/8x8" in str(info.value)


def test_register_estimate_hand_worked():
    # 64 accumulators + 2*(8+8) fragments + (1 + 1) float4 loads * 4 + 6 + 12 (double buffer)
    assert estimate_registers(parse_name("128x128x8/8x8/db")) == 64 + 32 + 8 + 6 + 12
    # 16 + 16 + (2 + 2) * 4 + 6 for 32x32x16/4x4 (64 threads, 2 float4 loads per tile each)
    assert estimate_registers(parse_name("32x32x16/4x4")) == 16 + 16 + 16 + 6


def test_lds_bytes_hand_worked():
    # 2 stages x 8 x (132 + 132) floats x 4 B = 16896 B (nvcc -Xptxas -v printed the same)
    assert parse_name("128x128x8/8x8/p4/db").lds_bytes == 16896
    assert parse_name("64x64x16/4x4").lds_bytes == 16 * 128 * 4


def test_static_lds_limit_comes_from_the_spec():
    assert static_lds_limit(SM90) == 48 * 1024          # 227 KiB needs opt-in: not static
    assert static_lds_limit(load_spec("sm_61")) == 48 * 1024
    assert static_lds_limit(GFX908) == 48 * 1024        # min(64 KiB, portable 48 KiB)


@pytest.mark.parametrize("spec_name", list_specs())
def test_search_space_is_valid_and_sized(spec_name):
    spec = load_spec(spec_name)
    space = search_space(spec)
    assert 200 <= len(space) <= 500, len(space)  # sized for a one-run exhaustive sweep
    names = [cfg.name for cfg in space]
    assert len(set(names)) == len(names)
    assert names == sorted(names)
    for cfg in space[:: max(1, len(space) // 60)]:
        assert validate(cfg, spec) == []
    assert all(cfg.threads % spec.wave_size == 0 for cfg in space)


def test_search_space_contains_the_reference_tiles():
    """REFERENCE.md §1 q.8: 128x128x8/8x8 and 64x64x16/4x4 are both in the space."""
    for spec in (SM90, GFX908):
        names = {cfg.name for cfg in search_space(spec)}
        assert {"128x128x8/8x8", "64x64x16/4x4", "128x128x8/8x8/p4/db"} <= names
