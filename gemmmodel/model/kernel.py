"""KernelDesc: the model's normalised view of a kernel's parameter dict.

The parameter dict is the one of docs/design.md "Kernel parameters" (catalogue field names,
also produced by TileConfig.params()). Sizes are in elements (floats), `pad` in floats.
Optional extra keys understood here (absent keys take the default in brackets):
  fragment   "contiguous" | "strided" [contiguous]: how a thread's TM (TN) values lie in
             the block tile: one run of TM rows, or VEC-wide chunks spaced one warp-row of
             lanes apart (the template's layout, kernels/template/sgemm_tile.cu).
  swizzle    G >= 0 [0]: block raster; 0 = row-major (blockIdx.x along N fastest), G = groups
             of G block-rows walked column by column (the template's SWIZZLE).
A kernel with BK = 0, buffering "none" or a_lds_layout "none" stages nothing in LDS: the
naive kernel (its BM x BN is the block's output tile, one k step per iteration).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gemmmodel.errors import BadArgument

BUFFERINGS = ("single", "lds-double", "reg-double", "none")  # or "+"-joined, e.g. 3.6
A_LAYOUTS = ("row", "transposed", "none")
THREAD_MAPS = ("row", "warp", "zorder")


@dataclass(frozen=True)
class KernelDesc:
    """Tile parameters in elements. lanes_y x lanes_x is the lane grid of one warp/wave
    (warp-tiled maps); for thread_map "row" it is derived from the block tile."""

    bm: int
    bn: int
    bk: int
    tm: int
    tn: int
    tk: int
    threads: int
    pad: int
    vec: int
    buffering: str
    a_layout: str
    thread_map: str
    warp_tile: tuple[int, int]
    fragment: str
    launch_bounds: int
    swizzle: int = 0
    bounds_checked: bool = False  # the bounds-checked build (template EDGE=1) runs even at a
    #                               tile-multiple shape (device run P's forced builds)

    @property
    def uses_lds(self) -> bool:
        return self.bk > 0 and self.buffering != "none" and self.a_layout != "none"

    @property
    def lds_double(self) -> bool:
        """Two LDS stages (the next tile is written while this one is read)."""
        return "lds-double" in self.buffering.split("+")

    @property
    def double_buffered(self) -> bool:
        """The next tile's global loads are issued one iteration ahead (LDS or registers)."""
        return any(p in ("lds-double", "reg-double") for p in self.buffering.split("+"))

    @property
    def threads_x(self) -> int:
        """Threads across the block tile (columns of thread tiles)."""
        return max(1, self.bn // self.tn)

    def lane_grid(self, wave_size: int) -> tuple[int, int]:
        """(lanes_y, lanes_x) of one wave in the thread map.

        warp_tile [WM, WN] is read as lanes when WM*WN is a multiple of or a divisor of the
        wave size (catalogue kernels 7.7-9: "warp tile 8x8" = 64 lanes), else as elements of
        the block tile (WM*WN == wave*TM*TN, the template's meaning). A lane grid written for
        the other wave size keeps its lanes across and adapts its rows."""
        wm, wn = self.warp_tile
        if self.thread_map == "row" or wm <= 0 or wn <= 0:
            lx = min(self.threads_x, wave_size)
            return max(1, wave_size // lx), lx
        if wm * wn == wave_size * self.tm * self.tn and wm % self.tm == 0 and wn % self.tn == 0:
            wm, wn = wm // self.tm, wn // self.tn
        lx = min(wn, wave_size)
        return max(1, wave_size // lx), lx


def _int(params: dict, key: str, default: int | None = None) -> int:
    value = params.get(key, default)
    if value is None:
        raise BadArgument(f"kernel parameters lack {key!r}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BadArgument(f"kernel parameter {key}={value!r} is not an integer") from None


def describe(params: dict[str, Any]) -> KernelDesc:
    """Normalise a parameter dict (docs/design.md) into a KernelDesc; BadArgument if unusable."""
    bm, bn = _int(params, "BM"), _int(params, "BN")
    bk = _int(params, "BK", 0)
    tm, tn = _int(params, "TM", 1) or 1, _int(params, "TN", 1) or 1
    threads = _int(params, "threads", (bm * bn) // (tm * tn))
    buffering = str(params.get("buffering", "single") or "single")
    a_layout = str(params.get("a_lds_layout", "row") or "row")
    thread_map = str(params.get("thread_map", "row") or "row")
    if any(part not in BUFFERINGS for part in buffering.split("+")):
        raise BadArgument(f"buffering {buffering!r}: expected one of {', '.join(BUFFERINGS)}"
                          " or a '+'-joined combination")
    if a_layout not in A_LAYOUTS:
        raise BadArgument(f"a_lds_layout {a_layout!r}: expected one of {', '.join(A_LAYOUTS)}")
    if thread_map not in THREAD_MAPS:
        raise BadArgument(f"thread_map {thread_map!r}: expected one of {', '.join(THREAD_MAPS)}")
    if min(bm, bn, threads) < 1 or bk < 0:
        raise BadArgument(f"bad tile: BM={bm} BN={bn} BK={bk} threads={threads}")
    warp = params.get("warp_tile") or (0, 0)
    if len(warp) != 2:
        raise BadArgument(f"warp_tile {warp!r}: expected [WM, WN]")
    return KernelDesc(
        bm=bm, bn=bn, bk=bk, tm=tm, tn=tn, tk=max(1, _int(params, "TK", 1) or 1),
        threads=threads, pad=_int(params, "padding", 0), vec=max(1, _int(params, "vector_width", 1)),
        buffering=buffering, a_layout=a_layout, thread_map=thread_map,
        warp_tile=(int(warp[0]), int(warp[1])),
        fragment=str(params.get("fragment", "contiguous") or "contiguous"),
        launch_bounds=_int(params, "launch_bounds", 0),
        swizzle=max(0, _int(params, "swizzle", 0) or 0),
        bounds_checked=bool(params.get("bounds_checked", False)),
    )
