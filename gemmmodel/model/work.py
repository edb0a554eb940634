"""Work: FLOP and the instruction counts of one tile iteration and of the whole kernel.

Counts are per thread (= per wave instruction: every lane of a wave executes it) per tile
iteration (one BK slice of K; one k step for a kernel without LDS). Two sources:
  "compile facts": the main-loop mix of calibration/compile_facts.csv (gemmmodel.compile),
      scaled so that its FMA count equals TM*TN*BK (the loop the compiler kept may hold
      part of an iteration or several); global loads/stores, LDS writes and barriers are
      taken from the loop only when the loop holds the barrier (it is the tile loop);
  "params": the analytic count below, for template configs never compiled.
Analytic count per thread per iteration:
  fma          = TM * TN * BK  (FMA operations; a packed v_pk_fma_f32 instruction does 2,
                 so the facts' fma + fma_packed operations scale the loop)
  lds reads    = from access.lds_reads (VEC-wide where contiguous)
  lds writes   = from access.lds_writes
  global loads = (BM*BK + BK*BN) / (threads * VEC)          (tiled)
               = TM + TN per k step                          (no LDS: naive)
  barriers     = 2 (single, reg-double), 1 (lds-double), 0 (no LDS)
  other        = global loads + 4   (address increments, loop counter, branch:
                 assumption, checked against hipcc -O3 loops of 14-15 "other" per
                 64x64x16 / 128x128x8 iteration on gfx906)
  waitcnt      = barriers + 1 (assumption)
`other` (integer/address VALU, SALU, branch) is charged as VALU in the issue term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from gemmmodel.model.access import global_load_width, lds_accesses
from gemmmodel.model.kernel import KernelDesc
from gemmmodel.model.terms import Term

WIDTHS = ("b32", "b64", "b96", "b128")
_WIDTH_BYTES = {"b32": 4, "b64": 8, "b96": 12, "b128": 16}


@dataclass(frozen=True)
class Mix:
    """Instruction counts per thread per tile iteration, with the source of the counts."""

    fma: float
    lds_read: dict = field(default_factory=dict)    # width -> count
    lds_write: dict = field(default_factory=dict)
    global_load: dict = field(default_factory=dict)
    global_store: dict = field(default_factory=dict)
    barrier: float = 0.0
    waitcnt: float = 0.0
    other: float = 0.0
    spill_ops: float = 0.0       # scratch loads + stores beyond the tile's own (per thread)
    spill_bytes: float = 0.0     # bytes per thread per iteration moved by spill_ops
    spill_loads: float = 0.0     # of spill_ops, the reloads (loads) per thread per iteration
    source: str = "params"
    fma_instr: float | None = None  # FMA instructions (packed FMA does 2 FMAs); None = fma

    @property
    def fma_instructions(self) -> float:
        return self.fma if self.fma_instr is None else self.fma_instr

    @property
    def lds_instr(self) -> float:
        return sum(self.lds_read.values()) + sum(self.lds_write.values())

    @property
    def vmem_instr(self) -> float:
        return sum(self.global_load.values()) + sum(self.global_store.values())

    @property
    def valu(self) -> float:
        """VALU-pipe instructions (FMA instructions + other)."""
        return self.fma_instructions + self.other

    @property
    def non_valu(self) -> float:
        """Instructions that take an issue slot but not the VALU: LDS, VMEM, waits, barriers."""
        return self.lds_instr + self.vmem_instr + self.waitcnt + self.barrier

    def to_inputs(self) -> dict:
        return {"fma": self.fma, "fma_instructions": self.fma_instructions,
                "lds_read": dict(self.lds_read),
                "lds_write": dict(self.lds_write), "global_load": dict(self.global_load),
                "global_store": dict(self.global_store), "barrier": self.barrier,
                "waitcnt": self.waitcnt, "other": self.other, "spill_ops": self.spill_ops,
                "spill_loads": self.spill_loads, "source": self.source}


def iterations(desc: KernelDesc, k: int) -> int:
    """Tile iterations per block: ceil(K / BK), or K k-steps for a kernel without LDS."""
    return math.ceil(k / desc.bk) if desc.uses_lds else int(k)


def _width(nbytes: int) -> str:
    return f"b{8 * nbytes}"


def analytic_mix(desc: KernelDesc, wave_size: int) -> Mix:
    """Instruction counts per thread per iteration from the parameters alone."""
    if not desc.uses_lds:
        loads = float(desc.tm + desc.tn)
        return Mix(fma=float(desc.tm * desc.tn), global_load={"b32": loads}, other=loads + 4,
                   waitcnt=1.0, source="params")
    reads: dict[str, float] = {}
    writes: dict[str, float] = {}
    for acc in lds_accesses(desc, wave_size):
        bucket = reads if acc.kind == "read" else writes
        bucket[acc.width_key] = bucket.get(acc.width_key, 0.0) + acc.per_iter
    va, vb = global_load_width(desc, desc.bk), global_load_width(desc, desc.bn)
    gl: dict[str, float] = {}
    gl[_width(4 * va)] = gl.get(_width(4 * va), 0.0) + desc.bm * desc.bk / (desc.threads * va)
    gl[_width(4 * vb)] = gl.get(_width(4 * vb), 0.0) + desc.bk * desc.bn / (desc.threads * vb)
    barriers = 1.0 if desc.lds_double else 2.0
    n_gl = sum(gl.values())
    return Mix(fma=float(desc.tm * desc.tn * desc.bk), lds_read=reads, lds_write=writes,
               global_load=gl, barrier=barriers, waitcnt=barriers + 1, other=n_gl + 4,
               source="params")


def _bucket(mix: dict, prefix: str, scale: float) -> dict:
    return {w: float(mix.get(f"{prefix}_{w}", 0)) * scale
            for w in WIDTHS if mix.get(f"{prefix}_{w}", 0)}


def mix_from_facts(desc: KernelDesc, wave_size: int, facts) -> Mix | None:
    """Counts from the compile facts' main loop, scaled to one tile iteration; None when the
    facts carry no loop with FMAs."""
    loop = dict(getattr(facts, "mix_loop", None) or {})
    if not loop or not loop.get("fma"):
        return None
    base = analytic_mix(desc, wave_size)
    packed = float(loop.get("fma_packed", 0) or 0)   # v_pk_fma_f32: 2 FMAs per instruction
    scale = base.fma / (float(loop["fma"]) + packed)
    tile_loop = bool(loop.get("barrier")) or not desc.uses_lds
    reads = _bucket(loop, "lds_read", scale)
    other = float(loop.get("other", 0)) * scale
    waitcnt = float(loop.get("waitcnt", 0)) * scale
    if tile_loop:
        loads = _bucket(loop, "global_load", scale)
        stores = _bucket(loop, "global_store", scale)
        writes = _bucket(loop, "lds_write", scale)
        cp_async = float(loop.get("cp_async", 0)) * scale
        barrier = float(loop.get("barrier", 0)) * scale
        if cp_async:  # cp.async is a global load and an LDS write in one instruction
            loads["b128"] = loads.get("b128", 0.0) + cp_async
    else:
        loads, stores, writes, barrier = (dict(base.global_load), {}, dict(base.lds_write),
                                          base.barrier)
    # thread-local memory (NVIDIA LDL / STL: spills) is VMEM, like AMD scratch
    for key, bucket in (("local_load", loads), ("local_store", stores)):
        if loop.get(key):
            bucket["b32"] = bucket.get("b32", 0.0) + float(loop[key]) * scale
    own = sum(base.global_load.values())
    spilled = bool(getattr(facts, "scratch_bytes", 0) or getattr(facts, "spills", 0))
    # VMEM beyond the tile's own loads counts as spill traffic only when the compiler
    # reported scratch or spills (otherwise it is loop structure, e.g. unrolled prologue).
    extra_loads = max(0.0, sum(loads.values()) - own) if spilled else 0.0
    extra_stores = sum(stores.values()) if spilled else 0.0
    spill_ops = extra_loads + extra_stores
    spill_bytes = sum(c * _WIDTH_BYTES[w] for w, c in stores.items()) if spilled else 0.0
    if extra_loads:
        mean_w = sum(c * _WIDTH_BYTES[w] for w, c in loads.items()) / sum(loads.values())
        spill_bytes += extra_loads * mean_w
    return Mix(fma=base.fma, fma_instr=float(loop["fma"]) * scale,
               lds_read=reads or base.lds_read, lds_write=writes,
               global_load=loads, global_store=stores, barrier=barrier, waitcnt=waitcnt,
               other=other, spill_ops=spill_ops, spill_bytes=spill_bytes,
               spill_loads=extra_loads, source="compile facts")


def with_spill_code(mix: Mix, ops: float, spec, source: str) -> Mix:
    """Add `ops` spill instructions per thread per tile iteration (half loads, half stores).
    Where the GPU has separate AGPRs (spec.agpr_mode "separate", gfx908) they hold the
    spills: the code is VALU moves; else scratch / thread-local memory: loads and stores of
    4 B per lane (VMEM issue slots, L2 traffic, one L2 latency per iteration)."""
    if ops <= 0:
        return mix
    if str(getattr(spec, "agpr_mode", "none")) == "separate":
        return replace(mix, other=mix.other + ops, source=f"{mix.source} + AGPR spills")
    loads = dict(mix.global_load)
    loads["b32"] = loads.get("b32", 0.0) + ops / 2
    stores = dict(mix.global_store)
    stores["b32"] = stores.get("b32", 0.0) + ops / 2
    return replace(mix, global_load=loads, global_store=stores, spill_ops=mix.spill_ops + ops,
                   spill_bytes=mix.spill_bytes + 4.0 * ops, spill_loads=mix.spill_loads + ops / 2,
                   waitcnt=mix.waitcnt + ops / 2, source=source)


def with_estimated_spills(mix: Mix, desc: KernelDesc, spilled_regs: int, spec) -> Mix:
    """Add the spill code of `spilled_regs` registers over the compiler's cap (params only).

    Assumption: each spilled register (an accumulator of the thread tile) is reloaded or
    stored once per k step, BK per iteration; hipcc's kernel 10 (gfx906: 261 scratch
    loads+stores, gfx908: ~280 AGPR moves per 8-k iteration, ~30 registers over the
    64-VGPR cap) has that size."""
    if spilled_regs <= 0 or mix.source != "params":
        return mix
    ops = float(spilled_regs) * (desc.bk if desc.uses_lds else 1)
    return with_spill_code(mix, ops, spec, "params + scratch spills")


def with_table_spills(mix: Mix, facts, spec) -> Mix:
    """Add the spill operations per tile iteration that a template table reported (facts
    dict key `spill_ops_per_tile`: the main loop's thread-local loads and stores,
    compile.table.template_table_facts) to an analytic mix."""
    ops = facts.get("spill_ops_per_tile") if isinstance(facts, dict) else None
    if not ops or mix.source != "params":
        return mix
    return with_spill_code(mix, float(ops), spec, "params + spills (compile facts)")


def kernel_mix(desc: KernelDesc, wave_size: int, facts=None) -> Mix:
    """Compile-fact counts where available, else the analytic counts."""
    if facts is not None:
        mix = mix_from_facts(desc, wave_size, facts)
        if mix is not None:
            return mix
    return analytic_mix(desc, wave_size)


def edge_block_count(desc: KernelDesc, m: int, n: int) -> tuple[int, int]:
    """(blocks whose BM x BN tile crosses M or N, blocks) of one M x N launch."""
    gx, gy = math.ceil(n / desc.bn), math.ceil(m / desc.bm)
    return gx * gy - (n // desc.bn) * (m // desc.bm), gx * gy


def checked_path_term(desc: KernelDesc, shape, facts) -> Term:
    """Factor on the issue work of a bounds-checked build (facts `checked_path_ratio` r: its
    loop's instructions per tile over the plain build's, compile.table.template_facts):
    edge tiles (blocks with rows or columns past M or N, and every block's last k tile when
    K % BK != 0) run the checked loads, share s of the block tile iterations; the rest the
    unchecked path that the instruction mix counts. Assumption: the checked path costs the
    edge build's whole static loop (both paths' code, r times the plain loop), and the
    busiest CU holds the launch's share of edge tiles. Every tile takes the checked loads
    (s = 1) where a float4 build's rows are not 16-byte aligned (unaligned_rows). 1 without
    the ratio (plain builds, catalogue kernels)."""
    m, n, k = (int(x) for x in tuple(shape)[:3])
    ratio = facts.get("checked_path_ratio") if isinstance(facts, dict) else None
    if not ratio or not desc.uses_lds:
        return Term("checked_path_factor", 1.0, "1", "1 (no bounds-checked build)")
    edge_blocks, blocks = edge_block_count(desc, m, n)
    f_edge = edge_blocks / blocks
    iters = iterations(desc, k)
    k_tail = 1.0 / iters if k % desc.bk else 0.0
    unaligned = unaligned_rows(desc, n, k)
    share = 1.0 if unaligned else f_edge + (1.0 - f_edge) * k_tail
    note = ("float4 loads need K and N multiples of 4 (leading dimensions of A and B): every "
            "tile runs the checked loads" if unaligned else
            "edge tiles run the checked loads (compile facts: edge / plain loop)")
    return Term("checked_path_factor", 1.0 + share * (float(ratio) - 1.0), "1",
                "1 + s * (r - 1), s = edge_blocks / blocks + (1 - that) * [K % BK] / iterations"
                " (s = 1 where rows are not 16-B aligned)",
                {"s": share, "r": float(ratio), "edge_blocks": edge_blocks,
                 "blocks": blocks, "k_tail_share": k_tail}, note=note)


def edge_block_term(desc: KernelDesc, shape, facts) -> Term:
    """How much longer an edge block runs than the other blocks of its round, as a fraction
    of their duration: r - 1 (facts `checked_path_ratio` r, as checked_path_term), where
    some blocks take the checked loads and others do not (blocks crossing M or N); 0 where
    none do, or where every block does (rows not 16-byte aligned; a K % BK tail alone checks
    every block's last tile). The launch's last block is an edge block (the grid runs
    row-major and the last block row and column are the edge ones), so the launch ends
    that much after its last round's interior blocks (combine.py, t_edge). Device run U
    (calibration/h200/tail_stamps_u.json): at 3000x1000x1024 the edge blocks ran 1.17-1.48x
    as long as the interior blocks beside them; with EDGE=1 forced at 3072x1024x1024, where
    no block crosses M or N, the same builds' last column ran as the others."""
    m, n, k = (int(x) for x in tuple(shape)[:3])
    ratio = facts.get("checked_path_ratio") if isinstance(facts, dict) else None
    if not ratio or not desc.uses_lds:
        return Term("edge_block_extra", 0.0, "1", "0 (no bounds-checked build)")
    edge_blocks, blocks = edge_block_count(desc, m, n)
    if edge_blocks == 0 or unaligned_rows(desc, n, k):
        why = "every block checks" if edge_blocks else "no block crosses M or N"
        return Term("edge_block_extra", 0.0, "1", f"0 ({why})",
                    {"edge_blocks": edge_blocks, "blocks": blocks})
    return Term("edge_block_extra", max(0.0, float(ratio) - 1.0), "1",
                "r - 1 (r: the edge build's loop instructions per tile over the plain build's)",
                {"r": float(ratio), "edge_blocks": edge_blocks, "blocks": blocks},
                note="an edge block's extra duration over its round's interior blocks")


def unaligned_rows(desc: KernelDesc, n: int, k: int) -> bool:
    """True when a float4 build cannot take its unchecked path anywhere: the template's
    fast path needs 16-byte aligned rows of A (leading dimension K) and B (N)
    (kernels/template/sgemm_tile.cu, `vec_ab`); batched launches swap the operands, the
    same two leading dimensions."""
    return desc.vec == 4 and (k % 4 != 0 or n % 4 != 0)


def work_term(desc: KernelDesc, shape: tuple[int, int, int, int], blocks: int,
              wave_size: int, mix: Mix) -> Term:
    """FLOP and instruction totals of the launch (wave instructions = thread counts x waves)."""
    m, n, k, batch = shape
    flop = 2.0 * m * n * k * batch
    iters = iterations(desc, k)
    waves_per_block = math.ceil(desc.threads / wave_size)
    wave_iters = float(blocks) * waves_per_block * iters
    flop_t = Term("flop", flop, "FLOP", "2 * M * N * K * batch",
                  {"M": m, "N": n, "K": k, "batch": batch})
    iter_t = Term("iterations_per_block", float(iters), "1",
                  "ceil(K / BK)" if desc.uses_lds else "K (k steps, no LDS tile)",
                  {"K": k, "BK": desc.bk})
    mix_t = Term("instructions_per_thread_per_iteration", mix.valu + mix.non_valu,
                 "instr", "fma + other + lds + vmem + waitcnt + barrier", mix.to_inputs(),
                 note=f"counts from {mix.source}")
    fma_t = Term("fma_wave_instructions", mix.fma_instructions * wave_iters, "instr",
                 "fma_instr_per_iter * iterations * waves_per_block * blocks",
                 {"fma_instr_per_iter": mix.fma_instructions, "iterations": iters,
                  "waves_per_block": waves_per_block, "blocks": blocks})
    lds_t = Term("lds_wave_instructions", mix.lds_instr * wave_iters, "instr",
                 "lds_per_iter * iterations * waves_per_block * blocks",
                 {"lds_per_iter": mix.lds_instr})
    vmem_t = Term("vmem_wave_instructions", mix.vmem_instr * wave_iters, "instr",
                  "vmem_per_iter * iterations * waves_per_block * blocks",
                  {"vmem_per_iter": mix.vmem_instr})
    bar_t = Term("barriers_per_block", mix.barrier * iters, "1", "barrier_per_iter * iterations",
                 {"barrier_per_iter": mix.barrier})
    return Term("work", flop, "FLOP", "2 * M * N * K * batch", {"wave_iterations": wave_iters},
                children=(flop_t, iter_t, mix_t, fma_t, lds_t, vmem_t, bar_t))
