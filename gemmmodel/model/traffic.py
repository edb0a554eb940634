"""Traffic: bytes moved at each level (DRAM, L2, LDS) and the roofline.

L2 bytes (requested by the CUs, i.e. vL1D / L1 misses):
  tiled:  blocks * iterations * (BM*BK + BK*BN) * 4       (= M*N*K*4*(1/BN + 1/BM))
  no LDS: M*N*K*4*(1/BN + 1/BM) with BM x BN the block's output tile (assumption: the
          L1 keeps the block's A rows and B columns for one k step)
  plus C read and written (2*M*N*4) and spill traffic (compile facts: spilled VMEM ops).
DRAM bytes: the blocks run `slots` (= CUs * blocks per CU) at a time in the kernel's
  raster order: row-major (blockIdx.x along N fastest), or with a swizzle G (the
  template's SWIZZLE) groups of G block-rows walked column by column. Each round of
  `slots` consecutive blocks reads the A panels (BM x K) of the block rows it touches and
  the B panels (K x BN) of the block columns it touches once (concurrent blocks share them
  in L2); panels are not kept across rounds unless the whole operand fits in half the L2.
  C is read and written once.
LDS bytes: the bytes the lanes ask for (every lane's width), reads and writes.
Times: bytes / (bandwidth * mem_efficiency); calibrated bandwidth where measured.
Roofline: attainable FLOP/s = min(peak of the FMA kind the code uses, AI_level * BW_level)
  with the vector, packed (v_pk_fma) or matrix (MFMA) peak from the spec.
"""

from __future__ import annotations

import math

import numpy as np

from gemmmodel.model.access import lds_accesses
from gemmmodel.model.calib import Calib, value
from gemmmodel.model.kernel import KernelDesc
from gemmmodel.model.terms import Term
from gemmmodel.model.work import Mix, iterations

FLOAT_BYTES = 4


def l2_bytes(desc: KernelDesc, shape, blocks: int, mix: Mix) -> Term:
    """Bytes requested from L2 by all CUs (see module docstring)."""
    m, n, k, batch = shape
    iters = iterations(desc, k)
    if desc.uses_lds:
        tiles = float(blocks) * iters * (desc.bm * desc.bk + desc.bk * desc.bn) * FLOAT_BYTES
        formula = "blocks * ceil(K/BK) * (BM*BK + BK*BN) * 4"
    else:
        tiles = float(blocks) * k * (desc.bm + desc.bn) * FLOAT_BYTES
        formula = "blocks * K * (BM + BN) * 4  (L1 reuse inside the block)"
    c_bytes = 2.0 * m * n * batch * FLOAT_BYTES
    spill = float(blocks) * iters * desc.threads * mix.spill_bytes
    total = tiles + c_bytes + spill
    return Term("l2_bytes", total, "B", formula + " + 2*M*N*4 + spill_bytes",
                {"tile_bytes": tiles, "c_bytes": c_bytes, "spill_bytes": spill,
                 "blocks": blocks, "iterations": iters})


def _round_panels(start: int, stop: int, gx: int) -> tuple[int, int]:
    """(block rows, block columns) touched by blocks [start, stop) of a gx-wide raster."""
    count = stop - start
    rows = (stop - 1) // gx - start // gx + 1
    if count >= gx:
        cols = gx
    elif start % gx + count <= gx:
        cols = count
    else:
        cols = min(gx, count)
    return rows, cols


def raster_coords(gx: int, gy: int, swizzle: int = 0):
    """(block rows, block columns) of the launch's blocks in launch order (numpy arrays):
    kernels/template/sgemm_tile.cu block_coords(), row-major when swizzle is 0."""
    ids = np.arange(gx * gy, dtype=np.int64)
    if swizzle <= 0:
        return ids // gx, ids % gx
    per_group = swizzle * gx
    group = ids // per_group
    first = group * swizzle
    rows = np.minimum(gy - first, swizzle)
    in_group = ids - group * per_group
    return first + in_group % rows, in_group // rows


def _raster_panels(gx: int, gy: int, swizzle: int, slots: int) -> tuple[int, int]:
    """Sum over rounds of `slots` consecutive blocks of the distinct (rows, columns) each
    touches, for a swizzled raster (row-major: _round_panels in closed form)."""
    by, bx = raster_coords(gx, gy, swizzle)
    rows = cols = 0
    for start in range(0, gx * gy, slots):
        rows += len(np.unique(by[start:start + slots]))
        cols += len(np.unique(bx[start:start + slots]))
    return rows, cols


def dram_bytes(desc: KernelDesc, spec, shape, slots: int) -> Term:
    """DRAM bytes with L2 reuse among blocks resident at the same time (module docstring)."""
    m, n, k, batch = shape
    gx, gy = math.ceil(n / desc.bn), math.ceil(m / desc.bm)
    blocks = gx * gy
    a_bytes, b_bytes = float(m) * k * FLOAT_BYTES, float(k) * n * FLOAT_BYTES
    c_bytes = 2.0 * m * n * FLOAT_BYTES
    half_l2 = float(spec.l2_bytes) / 2
    a_keep, b_keep = a_bytes <= half_l2, b_bytes <= half_l2
    a_panel, b_panel = float(desc.bm) * k * FLOAT_BYTES, float(desc.bn) * k * FLOAT_BYTES
    total_a = a_bytes if a_keep else 0.0
    total_b = b_bytes if b_keep else 0.0
    slots = max(1, int(slots))
    swizzle = desc.swizzle
    if swizzle > 0 and not (a_keep and b_keep):
        rows, cols = _raster_panels(gx, gy, swizzle, slots)
    else:
        rows = cols = 0
        for start in range(0, blocks, slots):
            r, c = _round_panels(start, min(blocks, start + slots), gx)
            rows, cols = rows + r, cols + c
    if not a_keep:
        total_a += rows * a_panel
    if not b_keep:
        total_b += cols * b_panel
    per_batch = total_a + total_b + c_bytes
    total = per_batch * batch
    compulsory = (a_bytes + b_bytes + c_bytes) * batch
    return Term("dram_bytes", total, "B",
                "sum over rounds of slots blocks in raster order: (rows*BM + cols*BN)*K*4, "
                "+ C; operands fitting in L2/2 read once",
                {"compulsory_bytes": compulsory, "slots": slots, "A_kept_in_l2": a_keep,
                 "B_kept_in_l2": b_keep, "l2_bytes": spec.l2_bytes, "batch": batch,
                 "raster": f"swizzle {swizzle} block-rows" if swizzle else "row-major",
                 "panel_rows_read": rows, "panel_cols_read": cols})


def lds_bytes(desc: KernelDesc, spec, shape, blocks: int) -> Term:
    """Bytes the lanes read from and write to LDS over the launch."""
    iters = iterations(desc, shape[2])
    per_thread = sum(a.width_bytes * a.per_iter
                     for a in lds_accesses(desc, int(spec.wave_size)))
    total = float(blocks) * iters * desc.threads * per_thread
    return Term("lds_bytes", total, "B", "blocks * iterations * threads * sum(width * per_iter)",
                {"bytes_per_thread_per_iter": per_thread, "iterations": iters})


def compute_peak(spec, facts=None) -> Term:
    """FP32 peak of the instructions the code uses: MFMA, packed FMA or vector FMA."""
    loop = dict(getattr(facts, "mix_total", None) or {}) if facts is not None else {}
    per_clk = float(spec.fp32_flop_per_clk_per_cu)
    kind = "vector FMA"
    if loop.get("mfma") and spec.matrix_fp32_flop_per_clk_per_cu:
        per_clk, kind = float(spec.matrix_fp32_flop_per_clk_per_cu), "matrix (MFMA)"
    elif loop.get("fma_packed") and spec.packed_fp32_flop_per_clk_per_cu:
        per_clk, kind = float(spec.packed_fp32_flop_per_clk_per_cu), "packed FMA"
    peak = per_clk * spec.compute_units * spec.clock_hz
    return Term("compute_peak_flops", peak, "FLOP/s", "flop_per_clk_per_cu * CUs * clock_hz",
                {"flop_per_clk_per_cu": per_clk, "CUs": spec.compute_units,
                 "clock_hz": spec.clock_hz, "kind": kind,
                 "vector_peak": spec.fp32_flop_per_clk_per_cu * spec.compute_units * spec.clock_hz,
                 "packed_peak": spec.packed_fp32_flop_per_clk_per_cu * spec.compute_units * spec.clock_hz,
                 "matrix_peak": spec.matrix_fp32_flop_per_clk_per_cu * spec.compute_units * spec.clock_hz},
                note="spec rates")


def traffic_times(spec, calib: Calib | None, l2_t: Term, dram_t: Term, eff_mem: float) -> tuple[Term, Term]:
    """(t_l2_s, t_dram_s): bytes / (bandwidth * mem_efficiency)."""
    l2_bw, l2_src = value(spec, calib, "l2_bandwidth_Bps")
    dr_bw, dr_src = value(spec, calib, "dram_bandwidth_Bps")
    t_l2 = Term("t_l2_s", l2_t.value / (l2_bw * eff_mem), "s",
                "l2_bytes / (l2_Bps * mem_efficiency)",
                {"l2_bytes": l2_t.value, "l2_Bps": l2_bw, "mem_efficiency": eff_mem},
                children=(l2_t,), note=f"bandwidth: {l2_src}")
    t_dram = Term("t_dram_s", dram_t.value / (dr_bw * eff_mem), "s",
                  "dram_bytes / (dram_Bps * mem_efficiency)",
                  {"dram_bytes": dram_t.value, "dram_Bps": dr_bw, "mem_efficiency": eff_mem},
                  children=(dram_t,), note=f"bandwidth: {dr_src}")
    return t_l2, t_dram


def roofline(flop: float, spec, calib: Calib | None, peak_t: Term, l2_t: Term, dram_t: Term,
             lds_t: Term) -> Term:
    """Attainable FLOP/s: min(peak, AI * bandwidth) over DRAM, L2 and LDS."""
    dr_bw, _ = value(spec, calib, "dram_bandwidth_Bps")
    l2_bw, _ = value(spec, calib, "l2_bandwidth_Bps")
    lds_bpc, _ = value(spec, calib, "lds_bytes_per_clk_per_cu")
    lds_bw = lds_bpc * spec.compute_units * spec.clock_hz
    bounds = {"compute": peak_t.value}
    ai = {}
    for name, nbytes, bw in (("dram", dram_t.value, dr_bw), ("l2", l2_t.value, l2_bw),
                             ("lds", lds_t.value, lds_bw)):
        if nbytes > 0 and bw > 0:
            ai[name] = flop / nbytes
            bounds[name] = ai[name] * bw
    limit = min(bounds, key=bounds.get)
    return Term("roofline_flops", bounds[limit], "FLOP/s", "min(peak, AI_level * BW_level)",
                {"limit": limit, **{f"ai_{k}_flop_per_B": v for k, v in ai.items()},
                 **{f"bound_{k}": v for k, v in bounds.items()}},
                children=(peak_t, l2_t, dram_t, lds_t))
