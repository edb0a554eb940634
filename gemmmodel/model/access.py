"""Lane -> LDS byte address of every LDS read and write a kernel's tile loop performs.

From the kernel parameters alone (kernel.KernelDesc) this writes, for each distinct LDS
instruction of one tile iteration, the byte address every lane of every wave of the block
touches. lds.py turns those addresses into bank-conflict passes.

Layouts (docs/design.md catalogue fields; sizes in floats):
  A tile "row":        As[m][k], row length BK + padding
  A tile "transposed": As[k][m], row length BM + padding
  B tile:              Bs[k][n], row length BN + padding
Reads: at each k a thread reads its TM A values and TN B values (VEC-wide where the layout
keeps them contiguous; for the row layout of A, min(TK, 4)-wide reads along k). The pattern is
the same at every k up to a constant shift, which leaves bank conflicts unchanged, so k = 0
is simulated and the instruction counted BK (or BK/TK) times per iteration.
Writes: the block's threads store the global tile they loaded; global loads are VEC floats
wide along the stored matrix's contiguous dimension (k for A, n for B); a transposed A
store scatters one VEC load into VEC scalar writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from gemmmodel.model.kernel import KernelDesc

FLOAT_BYTES = 4


@dataclass(frozen=True)
class LdsAccess:
    """One LDS instruction pattern. addr: (waves, wave_size) byte addresses, -1 = lane idle.
    per_iter: executions per thread per tile iteration."""

    name: str
    kind: str  # "read" | "write"
    width_bytes: int
    addr: np.ndarray
    per_iter: float

    @property
    def width_key(self) -> str:
        return f"b{8 * self.width_bytes}"


def _morton(lane: np.ndarray, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Z-order (Morton) placement of lanes on a rows x cols lane grid (powers of two):
    the lane id's bits go alternately to the column and the row index, column first,
    and once one index has all its bits the rest go to the other (maxas-style)."""
    col_bits, row_bits = int(np.log2(cols)), int(np.log2(rows))
    x = np.zeros_like(lane)
    y = np.zeros_like(lane)
    nx = ny = 0
    for b in range(col_bits + row_bits):
        bit = (lane >> b) & 1
        if nx < col_bits and (ny >= row_bits or nx <= ny):
            x |= bit << nx
            nx += 1
        else:
            y |= bit << ny
            ny += 1
    return y, x


def _chunk_offsets(count: int, vec: int, spacing: int, strided: bool) -> np.ndarray:
    """Offsets (floats) of a thread's `count` values: contiguous, or `vec`-wide chunks
    spaced `spacing` chunks of lanes apart (the template's conflict-free layout)."""
    idx = np.arange(count)
    if not strided or vec <= 1 or count % vec:
        return idx
    return (idx // vec) * spacing * vec + idx % vec


def thread_tiles(desc: KernelDesc, wave_size: int) -> tuple[np.ndarray, np.ndarray]:
    """rows (threads, TM) and cols (threads, TN): the C elements (block-tile coordinates)
    each thread of the block accumulates."""
    t = np.arange(desc.threads)
    strided = desc.fragment == "strided"
    tiles_x = desc.threads_x
    if desc.thread_map == "row":
        tiles_y = max(1, desc.bm // desc.tm)
        gx, gy = t % tiles_x, (t // tiles_x) % tiles_y
        if strided:
            v = desc.vec
            base_r, base_c = gy * v, gx * v
            rows = base_r[:, None] + _chunk_offsets(desc.tm, v, tiles_y, True)[None, :]
            cols = base_c[:, None] + _chunk_offsets(desc.tn, v, tiles_x, True)[None, :]
            return rows, cols
        return gy[:, None] * desc.tm + np.arange(desc.tm), gx[:, None] * desc.tn + np.arange(desc.tn)
    ly_n, lx_n = desc.lane_grid(wave_size)
    warp, lane = t // wave_size, t % wave_size
    if desc.thread_map == "zorder":
        if desc.warp_tile == (0, 0):  # no lane grid given: as square as the wave allows
            bits = int(np.log2(wave_size))
            lx_n, ly_n = 1 << ((bits + 1) // 2), 1 << (bits // 2)
        ly, lx = _morton(lane, ly_n, lx_n)
    else:
        ly, lx = lane // lx_n, lane % lx_n
    warps_n = max(1, tiles_x // lx_n)
    wr, wc = warp // warps_n, warp % warps_n
    if strided:
        v = desc.vec
        r0 = wr * ly_n * desc.tm + ly * v
        c0 = wc * lx_n * desc.tn + lx * v
        rows = r0[:, None] + _chunk_offsets(desc.tm, v, ly_n, True)[None, :]
        cols = c0[:, None] + _chunk_offsets(desc.tn, v, lx_n, True)[None, :]
        return rows, cols
    rows = (wr * ly_n + ly)[:, None] * desc.tm + np.arange(desc.tm)
    cols = (wc * lx_n + lx)[:, None] * desc.tn + np.arange(desc.tn)
    return rows, cols


def _by_wave(values: np.ndarray, threads: int, wave_size: int) -> np.ndarray:
    """(threads,) -> (waves, wave_size) with -1 for lanes past the last thread."""
    waves = -(-threads // wave_size)
    out = np.full(waves * wave_size, -1, dtype=np.int64)
    out[:threads] = values
    return out.reshape(waves, wave_size)


def _run_width(count: int, vec: int) -> int:
    return vec if vec > 1 and count % vec == 0 else 1


def lds_reads(desc: KernelDesc, wave_size: int) -> list[LdsAccess]:
    """The LDS read instructions of one k step (k = 0), with their count per iteration."""
    if not desc.uses_lds:
        return []
    rows, cols = thread_tiles(desc, wave_size)
    out: list[LdsAccess] = []
    if desc.a_layout == "transposed":
        wa = _run_width(desc.tm, desc.vec)
        for j in range(desc.tm // wa):
            addr = rows[:, j * wa] * FLOAT_BYTES
            out.append(LdsAccess(f"read A[k][m] chunk {j}", "read", wa * FLOAT_BYTES,
                                 _by_wave(addr, desc.threads, wave_size), desc.bk))
    else:
        ld = desc.bk + desc.pad
        wa = min(desc.tk, 4) if desc.tk >= 2 and desc.bk % min(desc.tk, 4) == 0 else 1
        wa = 2 if wa == 3 else wa
        for i in range(desc.tm):
            addr = rows[:, i] * ld * FLOAT_BYTES
            out.append(LdsAccess(f"read A[m][k] row {i}", "read", wa * FLOAT_BYTES,
                                 _by_wave(addr, desc.threads, wave_size), desc.bk / wa))
    wb = _run_width(desc.tn, desc.vec)
    for j in range(desc.tn // wb):
        addr = cols[:, j * wb] * FLOAT_BYTES
        out.append(LdsAccess(f"read B[k][n] chunk {j}", "read", wb * FLOAT_BYTES,
                             _by_wave(addr, desc.threads, wave_size), desc.bk))
    return out


def global_load_width(desc: KernelDesc, contiguous: int) -> int:
    """Floats per global load along a tile's contiguous dimension of length `contiguous`."""
    return _run_width(contiguous, desc.vec)


def lds_writes(desc: KernelDesc, wave_size: int) -> list[LdsAccess]:
    """The LDS store instructions of one tile iteration (A then B)."""
    if not desc.uses_lds:
        return []
    t = np.arange(desc.threads)
    out: list[LdsAccess] = []
    va = global_load_width(desc, desc.bk)
    chunks_a = desc.bm * desc.bk // va
    for i in range(-(-chunks_a // desc.threads)):
        c = t + i * desc.threads
        live = c < chunks_a
        m, k = c // (desc.bk // va), (c % (desc.bk // va)) * va
        if desc.a_layout == "row":
            addr = np.where(live, (m * (desc.bk + desc.pad) + k) * FLOAT_BYTES, -1)
            out.append(LdsAccess(f"write A[m][k] load {i}", "write", va * FLOAT_BYTES,
                                 _by_wave(addr, desc.threads, wave_size), 1))
        else:
            for e in range(va):
                addr = np.where(live, ((k + e) * (desc.bm + desc.pad) + m) * FLOAT_BYTES, -1)
                out.append(LdsAccess(f"write A[k][m] load {i}.{e}", "write", FLOAT_BYTES,
                                     _by_wave(addr, desc.threads, wave_size), 1))
    vb = global_load_width(desc, desc.bn)
    chunks_b = desc.bk * desc.bn // vb
    for i in range(-(-chunks_b // desc.threads)):
        c = t + i * desc.threads
        live = c < chunks_b
        k, n = c // (desc.bn // vb), (c % (desc.bn // vb)) * vb
        addr = np.where(live, (k * (desc.bn + desc.pad) + n) * FLOAT_BYTES, -1)
        out.append(LdsAccess(f"write B[k][n] load {i}", "write", vb * FLOAT_BYTES,
                             _by_wave(addr, desc.threads, wave_size), 1))
    return out


@lru_cache(maxsize=4096)
def lds_accesses(desc: KernelDesc, wave_size: int) -> tuple[LdsAccess, ...]:
    """Reads then writes of one tile iteration (cached: KernelDesc is frozen)."""
    return tuple(lds_reads(desc, wave_size) + lds_writes(desc, wave_size))


def lds_tile_bytes(desc: KernelDesc) -> int:
    """Static LDS bytes of the A and B tiles with padding (x2 stages for lds-double)."""
    if not desc.uses_lds:
        return 0
    if desc.a_layout == "transposed":
        a = desc.bk * (desc.bm + desc.pad)
    else:
        a = desc.bm * (desc.bk + desc.pad)
    b = desc.bk * (desc.bn + desc.pad)
    stages = 2 if desc.lds_double else 1
    return (a + b) * FLOAT_BYTES * stages
