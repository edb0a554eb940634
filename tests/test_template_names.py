"""TileConfig names (parse / format round trip), defines, launch plans and params."""

from __future__ import annotations

import numpy as np
import pytest

from gemmmodel.catalogue import CATALOGUE_FILE, PARAM_KEYS, resolve
from gemmmodel.errors import BadArgument, InvalidConfig
from gemmmodel.spec import list_specs, load_spec
from gemmmodel.template import (
    TEMPLATE_SOURCE,
    TileConfig,
    format_name,
    parse_name,
    resolve_template_name,
    search_space,
)


@pytest.mark.parametrize("spec_name", sorted({"sm_90", "gfx908", "gfx90a", "sm_61"} &
                                             set(list_specs())))
def test_round_trip_over_the_whole_search_space(spec_name):
    for cfg in search_space(load_spec(spec_name)):
        assert parse_name(cfg.name) == cfg
        assert format_name(parse_name(cfg.name)) == cfg.name


def test_defaults_are_filled_in():
    cfg = parse_name("128x128x8/8x8")
    assert (cfg.bm, cfg.bn, cfg.bk, cfg.tm, cfg.tn) == (128, 128, 8, 8, 8)
    assert (cfg.wm, cfg.wn, cfg.pad, cfg.vec, cfg.dbuf, cfg.swizzle) == (0, 0, 0, 4, False, 0)
    assert cfg.threads == 256
    assert cfg == TileConfig(128, 128, 8, 8, 8)
    assert parse_name("32x32x8/2x2").vec == 1                   # float4 impossible: v1
    assert parse_name("128x128x8/8x8/v4").name == "128x128x8/8x8"  # default dropped
    assert parse_name("128x128x8/8x8/v1").name == "128x128x8/8x8/v1"


def test_every_part_parses_in_any_order_and_formats_canonically():
    cfg = parse_name("128x64x16/8x4/s8/db/p4/w32x32/v1")
    assert (cfg.wm, cfg.wn, cfg.pad, cfg.vec, cfg.dbuf, cfg.swizzle) == (32, 32, 4, 1, True, 8)
    assert cfg.name == "128x64x16/8x4/w32x32/p4/v1/db/s8"
    assert parse_name(" 128X64X16/8X4/DB ").name == "128x64x16/8x4/db"


@pytest.mark.parametrize("bad", ["128x128/8x8", "128x128x8", "128x128x8/8x8/q3",
                                 "128x128x8/8x8/p4/p8", "128x128x8/8x8/v3", "128x128x8/8x8/w64",
                                 "128x128x8/8x8/w64x0", "axbxc/1x1"])
def test_malformed_names_raise_invalid_config(bad):
    with pytest.raises(InvalidConfig):
        parse_name(bad)


def test_resolve_template_name():
    assert resolve_template_name("7.4") is None
    assert resolve_template_name("kernel3") is None
    assert resolve_template_name("64x64x16/4x4/db") == parse_name("64x64x16/4x4/db")
    with pytest.raises(InvalidConfig, match="BM=100 is not a multiple of TM=8"):
        resolve_template_name("100x128x8/8x8")


@pytest.mark.skipif(not CATALOGUE_FILE.exists(), reason="kernels/catalogue.toml not written yet")
def test_catalogue_resolves_template_names():
    ref = resolve("128x128x8/8x8/p4/db")
    assert ref.kind == "template" and ref.name == "128x128x8/8x8/p4/db"
    plan = ref.plan(4096, 4096, 4096)
    assert plan.entry == "sgemm_tile" and plan.source == TEMPLATE_SOURCE
    assert plan.grid == (32, 32, 1) and plan.block == (256, 1, 1)
    assert set(PARAM_KEYS) <= set(ref.params)


def test_defines_name_every_macro_of_the_source():
    cfg = parse_name("128x64x16/8x4/w32x32/p4/db/s8")
    defines = cfg.defines()
    assert defines == {"BM": 128, "BN": 64, "BK": 16, "TM": 8, "TN": 4, "WM": 32, "WN": 32,
                       "THREADS": 256, "VEC": 4, "PAD": 4, "DBUF": 1, "SWIZZLE": 8, "EDGE": 0}
    source = TEMPLATE_SOURCE.read_text()
    for macro in defines:
        assert f"#ifndef {macro}\n" in source, macro
    assert cfg.defines(edge=True)["EDGE"] == 1


def test_plan_picks_edge_only_when_needed():
    cfg = parse_name("64x64x16/4x4")
    assert cfg.plan(128, 192, 64).defines["EDGE"] == 0
    ragged = cfg.plan(100, 130, 17)
    assert ragged.defines["EDGE"] == 1 and ragged.grid == (3, 2, 1)
    assert cfg.plan(128, 128, 64, edge=True).defines["EDGE"] == 1
    with pytest.raises(BadArgument, match="use edge=True"):
        cfg.plan(100, 128, 64, edge=False)
    with pytest.raises(BadArgument, match="K=0"):
        cfg.plan(64, 64, 0)


def _kernel_rows_cols(cfg: TileConfig, wave: int):
    """The (row, col) of every accumulator of every thread, written from the kernel source's
    formulas (sgemm_tile.cu: row_t, col_t, epilogue) independently of gemmmodel.model."""
    ly, lx = cfg.warp_lanes(wave)
    wm, wn = cfg.warp_tile(wave)
    warps_n = cfg.bn // wn
    t = np.arange(cfg.threads)
    warp, lane = t // wave, t % wave
    row_t = (warp // warps_n) * wm + (lane // lx) * cfg.vec
    col_t = (warp % warps_n) * wn + (lane % lx) * cfg.vec
    i, j = np.arange(cfg.tm), np.arange(cfg.tn)
    rows = row_t[:, None] + (i // cfg.vec) * (ly * cfg.vec) + i % cfg.vec
    cols = col_t[:, None] + (j // cfg.vec) * (lx * cfg.vec) + j % cfg.vec
    return rows, cols


@pytest.mark.parametrize("name", ["128x128x8/8x8", "128x128x8/8x8/w32x64", "64x64x16/4x4",
                                  "128x64x16/8x4/w16x32", "32x32x8/2x2", "64x32x16/8x4"])
@pytest.mark.parametrize("wave", [32, 64])
def test_thread_tiles_cover_block_once_and_match_the_model(name, wave):
    cfg = parse_name(name)
    spec = load_spec("sm_90" if wave == 32 else "gfx908")
    from gemmmodel.template import validate

    if validate(cfg, spec):
        pytest.skip(f"{name} is not valid for wave {wave}")
    rows, cols = _kernel_rows_cols(cfg, wave)
    cells = rows[:, :, None] * cfg.bn + cols[:, None, :]
    assert np.array_equal(np.sort(cells.ravel()), np.arange(cfg.bm * cfg.bn))
    from gemmmodel.model.access import thread_tiles
    from gemmmodel.model.kernel import describe

    if cfg.vec == 1:
        # gemmmodel.model.access reads VEC=1 thread tiles as contiguous runs; the kernel
        # interleaves them LY rows apart (reported to the model's owner).
        return
    for params in (cfg.params(), cfg.params(wave)):
        m_rows, m_cols = thread_tiles(describe(params), wave)
        assert np.array_equal(m_rows, rows) and np.array_equal(m_cols, cols)


def test_params_use_catalogue_field_names():
    params = parse_name("128x128x8/8x8/p4/db").params()
    assert params["BM"] == 128 and params["threads"] == 256 and params["padding"] == 4
    assert params["buffering"] == "lds-double" and params["a_lds_layout"] == "transposed"
    assert params["vector_width"] == 4 and params["thread_map"] == "warp"
    assert params["warp_tile"] == [4, 8]          # automatic: lanes of a 32-lane grid
    assert parse_name("128x128x8/8x8").params(64)["warp_tile"] == [64, 64]
    assert parse_name("128x128x8/8x8/w32x64").params()["warp_tile"] == [32, 64]
