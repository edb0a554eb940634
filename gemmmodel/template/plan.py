"""Code generation for the tile template: -D macros and launch plans.

The kernel source is kernels/template/sgemm_tile.cu; a TileConfig only chooses its macros.
Entry points (docs/design.md signatures):
  sgemm_tile                    uniform entry, row-major, lda = K, ldb = N, ldc = N
  sgemm_tile_batched_{nn,nt,tn,tt}  (GM_BATCHED=1) strided batched, row-major problem,
                                suffix = A / B stored transposed; used by gemmmodel.batched
Grid: (ceil(N/BN), ceil(M/BM), 1) [batched: z = min(batch, MAX_GRID_Z)]; block (threads,1,1).
"""

from __future__ import annotations

from gemmmodel import KERNELS_DIR
from gemmmodel.errors import BadArgument
from gemmmodel.launch import LaunchPlan, ceil_div

TEMPLATE_SOURCE = KERNELS_DIR / "template" / "sgemm_tile.cu"
ENTRY = "sgemm_tile"
#: Batched entry per (A stored transposed, B stored transposed) of the row-major problem.
BATCHED_ENTRIES = {(False, False): "sgemm_tile_batched_nn", (False, True): "sgemm_tile_batched_nt",
                   (True, False): "sgemm_tile_batched_tn", (True, True): "sgemm_tile_batched_tt"}
#: Largest gridDim.z used; the batched kernel loops over batches beyond it. Source: the
#: usual CUDA device limit (maxGridSize = 2^31-1, 65535, 65535, e.g. the rustacuda GridSize
#: docs and deviceQuery output); HIP devices report at least this much. A portable bound,
#: not a spec value, since the kernel does not depend on it beyond the loop.
MAX_GRID_Z = 65535


def tile_defines(cfg, edge: bool = False, batched: bool = False,
                 checked: bool = False) -> dict[str, int]:
    """The macros of sgemm_tile.cu for `cfg` (names as in the source's header comment);
    `checked`: the bounds-checked build with its unchecked path compiled out (EDGE=2, for
    compile facts only: the code an edge block executes)."""
    out = {"BM": cfg.bm, "BN": cfg.bn, "BK": cfg.bk, "TM": cfg.tm, "TN": cfg.tn,
           "WM": cfg.wm, "WN": cfg.wn, "THREADS": cfg.threads, "VEC": cfg.vec, "PAD": cfg.pad,
           "DBUF": int(cfg.dbuf), "SWIZZLE": cfg.swizzle, "EDGE": int(bool(edge))}
    if batched:
        out["GM_BATCHED"] = 1
        out["EDGE"] = 1
    if checked:
        out["EDGE"] = 2
    return out


def needs_edge(cfg, m: int, n: int, k: int) -> bool:
    """True when M, N or K is not a multiple of the block tile (EDGE=1 needed), or when the
    kernel description asks for the bounds-checked build anyway (KernelDesc.bounds_checked:
    device run P timed it at tile-multiple shapes)."""
    return bool(getattr(cfg, "bounds_checked", False) or m % cfg.bm or n % cfg.bn
                or k % cfg.bk)


def is_batched(shape) -> bool:
    """True for an (M, N, K, batch) shape with batch > 1: the strided-batched entry runs."""
    return shape is not None and len(tuple(shape)) > 3 and int(tuple(shape)[3]) > 1


def shape_needs_edge(cfg, shape) -> bool:
    """True when a launch at `shape` ((M, N, K) or (M, N, K, batch)) runs the EDGE=1 build:
    a batched launch (batch > 1, always bounds-checked) or a shape that is not a tile
    multiple."""
    m, n, k = (int(x) for x in tuple(shape)[:3])
    return is_batched(shape) or needs_edge(cfg, m, n, k)


def tile_plan(cfg, m: int, n: int, k: int, edge: bool | None = None) -> LaunchPlan:
    """LaunchPlan of the uniform entry for an M x N x K problem.

    edge=None picks EDGE=1 only where the shape needs it; edge=False with a shape that is not
    a tile multiple raises BadArgument (the unchecked kernel would read out of bounds)."""
    for dim, val in (("M", m), ("N", n), ("K", k)):
        if int(val) < 1:
            raise BadArgument(f"{dim}={val}: sizes must be >= 1")
    need = needs_edge(cfg, m, n, k)
    if edge is None:
        edge = need
    elif not edge and need:
        raise BadArgument(
            f"{cfg.name} without edge checks needs M % {cfg.bm} == N % {cfg.bn} == "
            f"K % {cfg.bk} == 0; got {m}x{n}x{k} (use edge=True)")
    grid = (ceil_div(n, cfg.bn), ceil_div(m, cfg.bm), 1)
    return LaunchPlan(name=cfg.name, source=TEMPLATE_SOURCE, entry=ENTRY, grid=grid,
                      block=(cfg.threads, 1, 1), defines=tile_defines(cfg, edge))


def batched_grid(cfg, m: int, n: int, batch: int) -> tuple[int, int, int]:
    """Grid of a batched launch of the row-major M x N problem."""
    return (ceil_div(n, cfg.bn), ceil_div(m, cfg.bm), min(int(batch), MAX_GRID_Z))
