"""TileConfig: one point of the tile template's parameter space, and its name.

The template is kernels/template/sgemm_tile.cu; a config becomes its -D macros
(`defines()`), a LaunchPlan for a problem shape (`plan()`), and the model's parameter dict
(`params()`, catalogue field names of docs/design.md). Sizes are in elements (floats).

Name grammar: ``BMxBNxBK/TMxTN[/wWMxWN][/pP][/v4|/v1][/db][/sS]``, e.g. ``128x128x8/8x8``.
A part left out takes its default, and `format_name` writes a part only where it differs
from the default, so ``parse_name(format_name(c)) == c`` for every config:

=========  =======================================================================
part       default when absent
=========  =======================================================================
/wWMxWN    0x0: automatic warp tile, chosen by the kernel for the GPU's wave size:
           LX = min(8, BN/TN) lanes across, LY = wave/LX lanes down, WM = LY*TM,
           WN = LX*TN (so the same name works on wave64 and warp32 GPUs)
/pP        0 floats of LDS row padding
/v4 | /v1  4 (float4 loads/stores) when TM, TN and BK are multiples of 4, else 1
/db        absent: one LDS buffer; /db: LDS double buffer (cp.async on NVIDIA sm_80+)
/sS        0: row-major block raster; S > 0: groups of S block-rows (L2 reuse)
=========  =======================================================================

The thread count is derived, not named: threads = BM*BN / (TM*TN).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gemmmodel.errors import InvalidConfig

#: Lanes across a wave in the automatic warp tile (kernels/template/sgemm_tile.cu kLX).
AUTO_LANES_X = 8

_HEAD = re.compile(r"^(\d+)x(\d+)x(\d+)/(\d+)x(\d+)$")
_PARTS = {
    "w": re.compile(r"^w(\d+)x(\d+)$"),
    "p": re.compile(r"^p(\d+)$"),
    "v": re.compile(r"^v(\d+)$"),
    "db": re.compile(r"^db$"),
    "s": re.compile(r"^s(\d+)$"),
}


def default_vec(tm: int, tn: int, bk: int) -> int:
    """The /v default: 4 where the thread tile and BK allow float4 access, else 1."""
    return 4 if tm % 4 == 0 and tn % 4 == 0 and bk % 4 == 0 else 1


@dataclass(frozen=True)
class TileConfig:
    """Tile template parameters (elements). threads = 0 / vec = 0 mean "derive" (see the
    module docstring); wm = wn = 0 is the automatic warp tile. A config may be invalid:
    `gemmmodel.template.validate(cfg, spec)` gives the reasons."""

    bm: int
    bn: int
    bk: int
    tm: int
    tn: int
    wm: int = 0
    wn: int = 0
    threads: int = 0
    vec: int = 0
    pad: int = 0
    dbuf: bool = False
    swizzle: int = 0

    def __post_init__(self) -> None:
        if self.threads == 0 and self.tm > 0 and self.tn > 0:
            object.__setattr__(self, "threads", (self.bm * self.bn) // (self.tm * self.tn))
        if self.vec == 0:
            object.__setattr__(self, "vec", default_vec(self.tm, self.tn, self.bk))
        object.__setattr__(self, "dbuf", bool(self.dbuf))

    # ---- names -------------------------------------------------------------------
    @property
    def name(self) -> str:
        return format_name(self)

    def __str__(self) -> str:
        return self.name

    @property
    def auto_warp(self) -> bool:
        return self.wm == 0 and self.wn == 0

    # ---- geometry ----------------------------------------------------------------
    def warp_lanes(self, wave_size: int) -> tuple[int, int]:
        """(lanes down LY, lanes across LX) of one wave's lane grid (may be invalid: 0s)."""
        if self.auto_warp:
            lx = min(AUTO_LANES_X, self.bn // self.tn) if self.tn else 0
            return (wave_size // lx if lx else 0), lx
        ly = self.wm // self.tm if self.tm else 0
        lx = self.wn // self.tn if self.tn else 0
        return ly, lx

    def warp_tile(self, wave_size: int) -> tuple[int, int]:
        """(WM, WN) in elements of the block tile for a GPU with this wave size."""
        ly, lx = self.warp_lanes(wave_size)
        return ly * self.tm, lx * self.tn

    @property
    def stages(self) -> int:
        return 2 if self.dbuf else 1

    @property
    def lds_bytes(self) -> int:
        """Static LDS bytes per block: stages x BK x ((BM + pad) + (BN + pad)) floats."""
        return 4 * self.stages * self.bk * (self.bm + self.pad + self.bn + self.pad)

    def loads_per_thread(self) -> tuple[float, float]:
        """VEC-wide global loads per thread per k-tile for the A and the B tile."""
        per = self.threads * self.vec
        return self.bm * self.bk / per, self.bk * self.bn / per

    # ---- what other stages consume -------------------------------------------------
    def defines(self, edge: bool = False) -> dict[str, int]:
        """-D macros of kernels/template/sgemm_tile.cu (EDGE: bounds-checked variant)."""
        from gemmmodel.template.plan import tile_defines

        return tile_defines(self, edge)

    def plan(self, m: int, n: int, k: int, edge: bool | None = None):
        """gemmmodel.launch.LaunchPlan of the uniform entry `sgemm_tile` for M x N x K."""
        from gemmmodel.template.plan import tile_plan

        return tile_plan(self, m, n, k, edge)

    def params(self, wave_size: int | None = None) -> dict[str, Any]:
        """The model's parameter dict (docs/design.md "Kernel parameters").

        warp_tile is [WM, WN] in elements when explicit or when `wave_size` is given; an
        automatic warp tile without a wave size is given in lanes of a 32-lane grid,
        [32 / LX, LX], which gemmmodel.model.kernel.KernelDesc.lane_grid widens to the
        GPU's wave size keeping LX, as the kernel does."""
        if not self.auto_warp or wave_size:
            warp = list(self.warp_tile(wave_size or 0)) if self.auto_warp else [self.wm, self.wn]
        else:
            lx = self.warp_lanes(32)[1]
            warp = [32 // lx if lx else 0, lx]
        return {
            "BM": self.bm, "BN": self.bn, "BK": self.bk, "TM": self.tm, "TN": self.tn, "TK": 1,
            "warp_tile": warp, "threads": self.threads, "padding": self.pad,
            "vector_width": self.vec, "buffering": "lds-double" if self.dbuf else "single",
            "a_lds_layout": "transposed", "thread_map": "warp", "fragment": "strided",
            "launch_bounds": self.threads, "swizzle": self.swizzle,
        }

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "bm": self.bm, "bn": self.bn, "bk": self.bk, "tm": self.tm,
                "tn": self.tn, "wm": self.wm, "wn": self.wn, "threads": self.threads,
                "vec": self.vec, "pad": self.pad, "dbuf": self.dbuf, "swizzle": self.swizzle}


def format_name(cfg: TileConfig) -> str:
    """The canonical name; parts equal to their default are left out."""
    parts = [f"{cfg.bm}x{cfg.bn}x{cfg.bk}/{cfg.tm}x{cfg.tn}"]
    if not cfg.auto_warp:
        parts.append(f"w{cfg.wm}x{cfg.wn}")
    if cfg.pad:
        parts.append(f"p{cfg.pad}")
    if cfg.vec != default_vec(cfg.tm, cfg.tn, cfg.bk):
        parts.append(f"v{cfg.vec}")
    if cfg.dbuf:
        parts.append("db")
    if cfg.swizzle:
        parts.append(f"s{cfg.swizzle}")
    return "/".join(parts)


def parse_name(name: str) -> TileConfig:
    """Parse a config name (grammar in the module docstring); InvalidConfig if malformed."""
    text = str(name).strip().lower()
    pieces = text.split("/")
    head = _HEAD.match("/".join(pieces[:2]))
    if head is None:
        raise InvalidConfig(text, ["expected BMxBNxBK/TMxTN[/wWMxWN][/pP][/v4|v1][/db][/sS]"])
    bm, bn, bk, tm, tn = (int(g) for g in head.groups())
    values: dict[str, Any] = {}
    for piece in pieces[2:]:
        for key, rx in _PARTS.items():
            hit = rx.match(piece)
            if hit:
                break
        else:
            known = "/wWMxWN /pP /v4 /v1 /db /sS"
            raise InvalidConfig(text, [f"unknown part '/{piece}' (known: {known})"])
        if key in values:
            raise InvalidConfig(text, [f"part '/{key}…' given twice"])
        values[key] = hit.groups()
    wm, wn = (int(x) for x in values.get("w", (0, 0)))
    vec = int(values["v"][0]) if "v" in values else 0
    if "v" in values and vec not in (1, 4):
        raise InvalidConfig(text, [f"/v{vec}: vector width must be 1 or 4"])
    if (wm == 0) != (wn == 0):
        raise InvalidConfig(text, ["/w: give both WM and WN, or leave the part out"])
    return TileConfig(bm, bn, bk, tm, tn, wm=wm, wn=wn, vec=vec,
                      pad=int(values.get("p", (0,))[0]), dbuf="db" in values,
                      swizzle=int(values.get("s", (0,))[0]))


def looks_like_template_name(name: str) -> bool:
    """True when `name` starts like a config name (BMxBNxBK/TMxTN…)."""
    return _HEAD.match("/".join(str(name).strip().lower().split("/")[:2])) is not None
