"""The L1 cost of a tile's global accesses: clocks of the SM's L1/shared data pipe per warp
instruction against the 128-byte lines its lanes span.

Run H6 / AR (tools/device/cp_async_rows.py, kernels/micro/smem.cu mb_cp_async_rows and
mb_ldg_rows; calibration/<gpu>/cp_async_rows.json) times one block of 1024 threads per SM
repeating the tile template's own access pattern on an L1-resident source: G lanes on each
row of a row-major matrix, 16-byte chunks, rows far apart. On the H100 and the H200 alike
(within 2 %, but for 16-byte copies at 8 lines: 7.9 against 8.5), every 4-byte cp.async,
16-byte cp.async and ld.global.v4 warp instruction holds the SM for about one clock per
line it touches, with a floor near 4 lines (the H200, median over two row pitches):

    lines per instruction   32     16     8     4
    cp.async 4 B           33.7   17.7   9.4   5.2   clk
    cp.async 16 B          29.4   15.7   8.5   3.5
    ld.global.v4           32.0   16.0   8.0   4.2

So a warp instruction costs its lines, not its bytes.

The template (kernels/template/sgemm_tile.cu) reads the A tile (BM x BK, row-major) in
VEC-wide chunks along k, G_A = BK / VEC lanes per row, and the B tile (BK x BN) along n,
G_B = BN / VEC lanes per row. With VEC = 4, one warp instruction of A spans 32 / G_A rows
(16 at BK 8, 8 at BK 16, 4 at BK 32), one of B four lines at any BN. The register path
loads each chunk with one ld.global.v4 (A: BM lines per tile at any BK); the cp.async path
of an LDS double buffer copies A with VEC 4-byte copies per chunk (four times the
instructions, each spanning the same rows: about 4.4 BM to 5.2 BM clocks per tile) and B
with one 16-byte copy per chunk. This is the cost that session 16 found missing from the
BK 8 /db builds (docs/model.md section 10, ninth change: the copies charged per instruction
at one measured rate grew with BK; charged per line they do not).

The term, per block tile iteration (all waves of the block):

    l1_line_cycles_per_iter = waves * (n_A * c(kind_A, lines_A) + n_B * c(kind_B, lines_B))

n_A, n_B = the thread's instructions per tile (chunks, times VEC for 4-byte copies);
c = the measured clocks per warp instruction at that many lines, interpolated (below the
fewest lines measured: in proportion). For a cp.async the measured time includes its
shared-memory write, which lds_passes_per_iter already charges (one pass per 4-byte copy,
four per 16-byte copy at conflict-free width): that share is subtracted. The clocks go to
the LDS pipe (assemble.py t_lds_s): on NVIDIA the L1 and shared memory are one data pipe
(ncu run M, docs/model.md section 10: the cp.async copies of the transposed A tile add
shared-memory wavefronts). No table (AMD, or a GPU never measured): no term.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from gemmmodel.model.kernel import KernelDesc
from gemmmodel.model.terms import Term

#: Run H6 / AR's result file in calibration/<gpu>/.
LINES_FILE = "cp_async_rows.json"
#: Bytes of one L1 line.
LINE_BYTES = 128
#: Shared-memory write passes that lds_passes_per_iter charges per cp.async warp
#: instruction of this many bytes per lane (conflict-free: 32 lanes x bytes / 128).
COPY_WRITE_PASSES = {4: 1.0, 16: 4.0}


def load_line_costs(folder: Path) -> tuple:
    """((kind, bytes, lines, clk per warp instruction), ...) from folder/LINES_FILE, the
    median over the row pitches measured; () when absent."""
    path = Path(folder) / LINES_FILE
    if not path.is_file():
        return ()
    groups: dict = {}
    for r in json.loads(path.read_text()).get("rows", []):
        key = (str(r["kind"]), int(r["bytes"]), int(r["lines_per_instruction"]))
        groups.setdefault(key, []).append(float(r["cycles_per_warp_instruction"]))
    return tuple(sorted(k + (float(np.median(v)),) for k, v in groups.items()))


def line_cost(table: tuple, kind: str, nbytes: int, lines: float) -> float:
    """Clocks per warp instruction of `kind` ("cp_async" or "ldg") and `nbytes` per lane
    that span `lines` lines: interpolated in the table; below its fewest lines, in
    proportion (4-byte loads of VEC = 1 builds use the 4-byte cp.async curve less its
    write, as no 4-byte load was measured). ValueError where the table lacks the kind."""
    if kind == "ldg" and nbytes == 4:
        pts = [(r[2], r[3] - COPY_WRITE_PASSES[4]) for r in table
               if r[0] == "cp_async" and r[1] == 4]
    else:
        pts = [(r[2], r[3]) for r in table if r[0] == kind and r[1] == nbytes]
    if not pts:
        raise ValueError(f"no measured line cost for {kind} {nbytes} B")
    pts.sort()
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    if lines < xs[0]:
        return ys[0] * lines / xs[0]
    return float(np.interp(lines, xs, ys))


def lines_per_instruction(lanes_per_row: float, bytes_per_lane: int, wave: int = 32) -> float:
    """Lines one warp instruction touches when its `wave` lanes read rows of
    `lanes_per_row` consecutive chunks of `bytes_per_lane` (rows at least a line apart and
    line-aligned)."""
    g = max(1.0, min(float(wave), float(lanes_per_row)))
    return (wave / g) * max(1.0, math.ceil(g * bytes_per_lane / LINE_BYTES))


def global_line_term(desc: KernelDesc, table: tuple, wave: int, cp_async: bool,
                     source: str = "") -> Term | None:
    """l1_line_cycles_per_iter (module docstring) of an LDS tile kernel; None without a
    table, for a kernel without LDS tiles or for a wave size the table was not measured
    at (32 lanes)."""
    if not table or not desc.uses_lds or wave != 32:
        return None
    vec = max(1, int(desc.vec))
    waves = -(-desc.threads // wave)
    chunks_a = desc.bm * desc.bk / vec / desc.threads
    chunks_b = desc.bk * desc.bn / vec / desc.threads
    lines_a = lines_per_instruction(desc.bk / vec, 4 * vec, wave)
    lines_b = lines_per_instruction(desc.bn / vec, 4 * vec, wave)
    if cp_async:
        # A: VEC 4-byte copies per chunk; B: one copy of VEC * 4 bytes per chunk
        n_a, kind_a, bytes_a = chunks_a * vec, "cp_async", 4
        n_b, kind_b, bytes_b = chunks_b, "cp_async", 4 * vec
        c_a = line_cost(table, kind_a, bytes_a, lines_a) - COPY_WRITE_PASSES[bytes_a]
        c_b = line_cost(table, kind_b, bytes_b, lines_b) - COPY_WRITE_PASSES[bytes_b]
    else:
        n_a, kind_a, bytes_a = chunks_a, "ldg", 4 * vec
        n_b, kind_b, bytes_b = chunks_b, "ldg", 4 * vec
        c_a = line_cost(table, kind_a, bytes_a, lines_a)
        c_b = line_cost(table, kind_b, bytes_b, lines_b)
    c_a, c_b = max(0.0, c_a), max(0.0, c_b)
    value = waves * (n_a * c_a + n_b * c_b)
    what = "cp.async (less the shared-memory write passes charged as LDS)" if cp_async \
        else "ld.global (register-staged)"
    return Term("l1_line_cycles_per_iter", value, "clk",
                "waves * (n_A * c(lines_A) + n_B * c(lines_B))",
                {"waves": waves, "n_A": n_a, "lines_A": lines_a, "clk_A": c_a,
                 "n_B": n_b, "lines_B": lines_b, "clk_B": c_b, "access": what},
                note=f"c: measured clocks per warp instruction by lines "
                     f"({source or LINES_FILE}); charged to the LDS pipe")


__all__ = ["COPY_WRITE_PASSES", "LINES_FILE", "LINE_BYTES", "global_line_term",
           "line_cost", "lines_per_instruction", "load_line_costs"]
