"""The one definition of the tile template's search space (the predictor ranks it).

`search_space(spec)` enumerates the grid below and keeps the configs that
`validate(cfg, spec)` accepts, in a fixed order (sorted by name):

  BM, BN   32, 64, 128, 256
  BK       8, 16, 32
  TM, TN   4, 8 (and 16 x 8 / 8 x 16)
  warp     automatic, plus every other lane grid LY x LX = wave size with
           LX in 2 .. 16 (a config equal to the automatic one is not repeated)
  VEC      4 (every thread tile here allows float4)
  PAD      0, 4 floats
  DBUF     single, double LDS buffer
  SWIZZLE  0, and 8 block-rows for grids of 128-wide or larger tiles

That gives a few hundred to about two thousand valid configs per GPU (tests check the
range for every shipped spec).
"""

from __future__ import annotations

from itertools import product

from gemmmodel.template.config import TileConfig
from gemmmodel.template.rules import validate

BLOCK_SIZES = (32, 64, 128, 256)
BK_SIZES = (8, 16, 32)
THREAD_TILES = ((4, 4), (4, 8), (8, 4), (8, 8), (8, 16), (16, 8))
LANES_X = (2, 4, 8, 16)
PADS = (0, 4)
SWIZZLES = (0, 8)
SWIZZLE_MIN_TILE = 128


def _warp_choices(bm: int, bn: int, tm: int, tn: int, wave: int) -> list[tuple[int, int]]:
    """(WM, WN) options: (0, 0) = automatic, then explicit grids unlike the automatic one."""
    auto = TileConfig(bm, bn, 8, tm, tn).warp_tile(wave)
    out = [(0, 0)]
    for lx in LANES_X:
        if wave % lx:
            continue
        wm, wn = (wave // lx) * tm, lx * tn
        if (wm, wn) != auto and bm % wm == 0 and bn % wn == 0:
            out.append((wm, wn))
    return out


def candidates(wave_size: int) -> list[TileConfig]:
    """Every grid point for a wave size, before the GPU's resource limits."""
    out = []
    for bm, bn, bk, (tm, tn) in product(BLOCK_SIZES, BLOCK_SIZES, BK_SIZES, THREAD_TILES):
        if bm % tm or bn % tn:
            continue
        for (wm, wn), pad, dbuf, swz in product(_warp_choices(bm, bn, tm, tn, wave_size), PADS,
                                                 (False, True), SWIZZLES):
            if swz and min(bm, bn) < SWIZZLE_MIN_TILE:
                continue
            out.append(TileConfig(bm, bn, bk, tm, tn, wm=wm, wn=wn, pad=pad, dbuf=dbuf,
                                  swizzle=swz))
    return out


def search_space(spec) -> list[TileConfig]:
    """The valid configs of the template on `spec`, sorted by name."""
    valid = [cfg for cfg in candidates(int(spec.wave_size)) if not validate(cfg, spec)]
    return sorted(valid, key=lambda c: c.name)
