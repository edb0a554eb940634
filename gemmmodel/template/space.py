"""The one definition of the tile template's search space (the predictor ranks it).

`search_space(spec)` enumerates the grid below and keeps the configs that
`validate(cfg, spec)` accepts, in a fixed order (sorted by name):

  BM, BN   32, 64, 128, 256, with max(BM, BN) / min(BM, BN) <= 4
  BK       8, 16, 32
  TM, TN   4x4, 4x8, 8x4, 8x8
  warp     automatic (the kernel's wave-size-aware default; explicit /w tiles stay
           valid names for `--kernel` but are not searched)
  VEC      4 (every thread tile here allows float4)
  PAD      0, 4 floats
  DBUF     single, double LDS buffer
  SWIZZLE  0, and 8 block-rows for grids of 128-wide or larger tiles

That gives about 200 to 400 valid configs per GPU (tests check the range for every shipped
spec). The grid is sized so that an exhaustive sweep of every config at the nine selection
shapes fits one ten-minute run on the GPU machine (issue 8); the pieces left out (16-wide
thread tiles, explicit warp grids) can be named with --kernel and measured one by one.
"""

from __future__ import annotations

from itertools import product

from gemmmodel.template.config import TileConfig
from gemmmodel.template.rules import validate

BLOCK_SIZES = (32, 64, 128, 256)
BK_SIZES = (8, 16, 32)
THREAD_TILES = ((4, 4), (4, 8), (8, 4), (8, 8))
MAX_ASPECT = 4
PADS = (0, 4)
SWIZZLES = (0, 8)
SWIZZLE_MIN_TILE = 128


def candidates(wave_size: int) -> list[TileConfig]:
    """Every grid point for a wave size, before the GPU's resource limits."""
    out = []
    for bm, bn, bk, (tm, tn) in product(BLOCK_SIZES, BLOCK_SIZES, BK_SIZES, THREAD_TILES):
        if bm % tm or bn % tn or max(bm, bn) > MAX_ASPECT * min(bm, bn):
            continue
        for pad, dbuf, swz in product(PADS, (False, True), SWIZZLES):
            if swz and min(bm, bn) < SWIZZLE_MIN_TILE:
                continue
            out.append(TileConfig(bm, bn, bk, tm, tn, pad=pad, dbuf=dbuf, swizzle=swz))
    return out


def search_space(spec) -> list[TileConfig]:
    """The valid configs of the template on `spec`, sorted by name."""
    valid = [cfg for cfg in candidates(int(spec.wave_size)) if not validate(cfg, spec)]
    return sorted(valid, key=lambda c: c.name)
