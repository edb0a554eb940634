"""LDS (shared memory) bank conflicts: a lane-level simulator and the LDS time term.

Rule (ARCH-FACTS "LDS" and "Shared memory"; the lane groups are spec data, spec.lds_phases):
the lanes of one wave are split into groups per access width ("b32", "b64", "b128"); the
lanes of a group are served together by the `lds_banks` banks of `lds_bank_bytes` bytes.
Within a group, a bank that must deliver d DISTINCT words takes d cycles (lanes reading the
same word share it: broadcast). One instruction therefore takes
    passes = sum over groups of max(1, max over banks of distinct words in that bank)
bank cycles ("passes"); a conflict-free group takes 1. Each pass moves at most
lds_banks * lds_bank_bytes bytes, so the LDS serves lds_bytes_per_clk_per_cu /
(lds_banks * lds_bank_bytes) passes per clock per CU (1 on every shipped spec).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

import numpy as np

from gemmmodel.errors import SpecError
from gemmmodel.model.access import LdsAccess, lds_accesses
from gemmmodel.model.kernel import KernelDesc
from gemmmodel.model.terms import Term

_WIDTH_BYTES = {"b32": 4, "b64": 8, "b96": 12, "b128": 16}


def lane_groups(spec, width_bytes: int, kind: str = "read") -> list[list[int]]:
    """Lane groups for an access of `width_bytes` from spec.lds_phases: the key
    "b<bits>_<kind>" (e.g. "b128_write") when the spec gives one, else "b<bits>";
    b96 uses the b128 groups."""
    try:
        return [list(g) for g in _groups_cached(spec, width_bytes, kind)]
    except TypeError:  # an unhashable spec-like object
        return [list(g) for g in _groups_cached.__wrapped__(spec, width_bytes, kind)]


@lru_cache(maxsize=256)
def _groups_cached(spec, width_bytes: int, kind: str) -> tuple:
    phases = getattr(spec, "lds_phases", None) or {}
    width = _width_key(width_bytes)
    key = f"{width}_{kind}" if f"{width}_{kind}" in phases else width
    if key not in phases:
        raise SpecError(f"no LDS lane groups for {key} accesses", key_path=f"lds_phases.{key}",
                        file=getattr(spec, "name", ""))
    return tuple(tuple(int(x) for x in g) for g in phases[key])


def _width_key(width_bytes: int) -> str:
    """Spec key of an access width ("b32", "b64", "b128"); b96 uses the b128 entries."""
    return "b128" if width_bytes == 12 else f"b{8 * width_bytes}"


def merge_windows(spec, width_bytes: int, kind: str = "read") -> list[list[int]]:
    """Merge windows of spec.lds_merge_windows for an access (measured for loads only: the
    key "b<bits>" applies to reads, "b<bits>_write" to writes); [] where the spec has none."""
    table = getattr(spec, "lds_merge_windows", None) or {}
    width = _width_key(width_bytes)
    key = f"{width}_write" if kind == "write" else width
    return [list(int(x) for x in w) for w in table.get(key, ())]


def conflict_passes(addr: np.ndarray, width_bytes: int, groups: Sequence[Sequence[int]],
                    banks: int, bank_bytes: int,
                    windows: Sequence[Sequence[int]] = ()) -> np.ndarray:
    """Bank passes per instruction for each row of `addr`.

    addr: (rows, lanes) byte addresses (or one wave as a 1-D array), -1 = idle lane; a row
    is one wave executing one instruction. Returns float array (rows,): sum over groups of
    the conflict degree (distinct words in the busiest bank; at least 1 for a group with
    an active lane, 0 for a group without).

    windows (spec.lds_merge_windows): lane windows, each a union of whole groups. A window
    whose lanes form at most one pass of runs (maximal sequences of consecutive lanes on one
    address: runs x width <= banks x bank_bytes) takes the conflict degree of the window as
    one group instead of the sum over its groups, when that is smaller."""
    addr = np.atleast_2d(np.asarray(addr, dtype=np.int64))
    if windows:
        return _merged_passes(addr, width_bytes, groups, banks, bank_bytes, windows)
    rows, lanes = addr.shape
    words_per_lane = max(1, width_bytes // bank_bytes)
    padded = np.concatenate([addr, np.full((rows, 1), -1, dtype=np.int64)], axis=1)
    size = max(len(g) for g in groups)
    idx = np.full((len(groups), size), lanes, dtype=np.int64)   # `lanes` = the idle column
    for i, g in enumerate(groups):
        members = [x for x in g if x < lanes]
        idx[i, :len(members)] = members
    lane_addr = padded[:, idx]                                   # (rows, G, size)
    words = lane_addr[..., None] // bank_bytes + np.arange(words_per_lane)
    words = np.where(lane_addr[..., None] >= 0, words, -1).reshape(rows, len(groups), -1)
    words.sort(axis=2)
    first = np.ones_like(words, dtype=bool)
    first[..., 1:] = words[..., 1:] != words[..., :-1]
    unique = first & (words >= 0)
    cell = (np.arange(rows * len(groups)).reshape(rows, len(groups), 1) * banks
            + words % banks)
    counts = np.bincount(cell[unique], minlength=rows * len(groups) * banks)
    degree = counts.reshape(rows, len(groups), banks).max(axis=2)
    active = (words >= 0).any(axis=2)
    return np.where(active, np.maximum(degree, 1), 0).sum(axis=1).astype(float)


def _merged_passes(addr, width_bytes, groups, banks, bank_bytes, windows) -> np.ndarray:
    """conflict_passes with merge windows (see there)."""
    lanes = addr.shape[1]
    total = np.zeros(addr.shape[0])
    covered: set[int] = set()
    per_pass = banks * bank_bytes
    for window in windows:
        win = [x for x in window if x < lanes]
        members = [i for i, g in enumerate(groups) if set(g) <= set(window)]
        covered.update(members)
        inside = [groups[i] for i in members]
        if not win or not inside:
            continue
        apart = conflict_passes(addr, width_bytes, inside, banks, bank_bytes)
        merged = conflict_passes(addr, width_bytes, [win], banks, bank_bytes)
        a = addr[:, win]
        live = a >= 0
        runs = live[:, :1].astype(int).sum(axis=1) + (
            (a[:, 1:] != a[:, :-1]) & live[:, 1:]).sum(axis=1)
        total += np.where(runs * width_bytes <= per_pass, np.minimum(merged, apart), apart)
    rest = [g for i, g in enumerate(groups) if i not in covered]
    if rest:
        total += conflict_passes(addr, width_bytes, rest, banks, bank_bytes)
    return total


def stride_pattern(stride_words: int, lanes: int, bank_bytes: int = 4) -> np.ndarray:
    """Byte addresses where lane l starts at word l * stride_words (the conflict sweep)."""
    return np.arange(lanes, dtype=np.int64) * stride_words * bank_bytes


def access_passes(access: LdsAccess, spec) -> float:
    """Mean bank passes of one LDS instruction over the waves of the block."""
    groups = lane_groups(spec, access.width_bytes, access.kind)
    p = conflict_passes(access.addr, access.width_bytes, groups, int(spec.lds_banks),
                        int(spec.lds_bank_bytes),
                        merge_windows(spec, access.width_bytes, access.kind))
    return float(p.mean())


def ideal_passes(access: LdsAccess, spec) -> float:
    """Passes the instruction would take with no conflicts (bytes / pass size, >= groups)."""
    active = access.addr >= 0
    if active.all():
        return ideal_passes_for_width(spec, access.width_bytes, access.kind)
    groups = lane_groups(spec, access.width_bytes, access.kind)
    lanes = access.addr.shape[1]
    live = active.any(axis=0)
    per_pass = int(spec.lds_banks) * int(spec.lds_bank_bytes)
    total = 0
    for g in groups:
        n = sum(1 for x in g if x < lanes and live[x])
        if n:
            total += max(1, -(-n * access.width_bytes // per_pass))
    return float(total)


@lru_cache(maxsize=8192)
def _table_cached(desc: KernelDesc, spec) -> tuple:
    accs = lds_accesses(desc, int(spec.wave_size))
    banks, bank_bytes = int(spec.lds_banks), int(spec.lds_bank_bytes)
    passes = {}
    # one simulation per (width, kind): stack the waves of every instruction of that kind
    for key in {(a.width_bytes, a.kind) for a in accs}:
        same = [i for i, a in enumerate(accs) if (a.width_bytes, a.kind) == key]
        stacked = np.vstack([accs[i].addr for i in same])
        per_row = conflict_passes(stacked, key[0], lane_groups(spec, *key), banks, bank_bytes,
                                  merge_windows(spec, *key))
        for j, i in enumerate(same):
            waves = accs[i].addr.shape[0]
            passes[i] = float(per_row[j * waves:(j + 1) * waves].mean())
    rows = []
    for i, acc in enumerate(accs):
        ideal = ideal_passes(acc, spec)
        rows.append({"name": acc.name, "kind": acc.kind, "width": acc.width_key,
                     "per_iter": acc.per_iter, "passes": passes[i], "ideal_passes": ideal,
                     "conflict_factor": passes[i] / ideal if ideal else 1.0})
    return tuple(rows)


def lds_table(desc: KernelDesc, spec) -> list[dict]:
    """Per LDS instruction of one tile iteration: width, count per thread, passes per wave
    instruction (mean over waves), conflict-free passes and the degree ratio (cached per
    kernel and spec)."""
    try:
        return [dict(r) for r in _table_cached(desc, spec)]
    except TypeError:  # an unhashable spec-like object
        return [dict(r) for r in _table_cached.__wrapped__(desc, spec)]


def _factor(rows: list[dict]) -> float:
    """Passes over conflict-free passes of a set of simulated instructions (1 if none)."""
    ideal = sum(r["per_iter"] * r["ideal_passes"] for r in rows)
    return sum(r["per_iter"] * r["passes"] for r in rows) / ideal if ideal else 1.0


def _vectorised(desc: KernelDesc) -> KernelDesc:
    """The same kernel with 4-wide accesses wherever its layout is contiguous (what the
    compiler makes of scalar source accesses when it can merge them)."""
    return replace(desc, vec=4, tk=4 if desc.a_layout == "row" else desc.tk)


def ideal_passes_for_width(spec, width_bytes: int, kind: str = "read") -> float:
    """Conflict-free passes of one full-wave instruction of `width_bytes` per lane."""
    lanes = int(spec.wave_size)
    per_pass = int(spec.lds_banks) * int(spec.lds_bank_bytes)
    total = 0
    for g in lane_groups(spec, width_bytes, kind):
        n = sum(1 for x in g if x < lanes)
        if n:
            total += max(1, -(-n * width_bytes // per_pass))
    return float(total)


def lds_passes_per_iter(desc: KernelDesc, spec, mix=None) -> Term:
    """Bank passes per block per tile iteration (all waves of the block), split read/write.

    Without compile facts: the simulated instructions of access.py. With a compile-fact mix
    (work.Mix, source "compile facts"): its LDS instruction counts by width, each at the
    conflict-free passes of its width times the simulated conflict factor of its kind
    (reads / writes), since the compiler may merge or split the accesses the source names."""
    table = lds_table(desc, spec)
    waves = -(-desc.threads // int(spec.wave_size))
    factor = {kind: _factor([r for r in table if r["kind"] == kind]) for kind in ("read", "write")}
    if mix is not None and str(getattr(mix, "source", "")).startswith("compile facts"):
        # the compiler may have vectorised (or split) what the source names: take each
        # width's conflict factor from the simulation of the variant with that width
        variants = table + [r for r in lds_table(_vectorised(desc), spec)
                            if r["width"] not in {t["width"] for t in table}]
        counts = {"read": dict(mix.lds_read), "write": dict(mix.lds_write)}
        per_kind = {}
        for kind, by_width in counts.items():
            total = 0.0
            for w, n in by_width.items():
                same = [r for r in variants if r["kind"] == kind and r["width"] == w]
                f = _factor(same) if same else factor[kind]
                total += n * f * ideal_passes_for_width(spec, _WIDTH_BYTES[w], kind)
            per_kind[kind] = waves * total
        reads, writes = per_kind["read"], per_kind["write"]
        how = "compile-fact counts x simulated conflict factor of their width"
    else:
        reads = sum(r["per_iter"] * r["passes"] for r in table if r["kind"] == "read") * waves
        writes = sum(r["per_iter"] * r["passes"] for r in table if r["kind"] == "write") * waves
        how = "simulated instructions (params)"
    return Term(
        name="lds_passes_per_iter", value=reads + writes, unit="passes",
        formula="waves * sum_instr(per_iter * passes)",
        inputs={"waves": waves, "read_passes": reads, "write_passes": writes,
                "read_conflict_factor": factor["read"],
                "write_conflict_factor": factor["write"], "counts": how},
        children=tuple(
            Term(name=f"lds {r['name']}", value=r["passes"], unit="passes/instr",
                 formula="sum_groups max(1, distinct words in busiest bank)",
                 inputs={"width": r["width"], "per_iter": r["per_iter"],
                         "ideal_passes": r["ideal_passes"]})
            for r in table),
        note="lane groups from spec.lds_phases; banks = spec.lds_banks",
    )


def pass_rate_per_clk(spec) -> float:
    """Bank passes the LDS of one CU serves per clock (bytes/clk over bytes per pass)."""
    per_pass = float(spec.lds_banks) * float(spec.lds_bank_bytes)
    return float(spec.lds_bytes_per_clk_per_cu) / per_pass


def async_copy_cycles_per_iter(desc: KernelDesc, spec, calib, shape) -> Term | None:
    """Data-pipe clocks per block tile iteration of the asynchronous global->LDS copies
    (cp.async) of an LDS double-buffered kernel, or None where it stages through registers.
    Its presence marks a cp.async loop (assemble.py: combine.py's async_wait_clk per block
    tile iteration); its value is reported, not charged to a pipe (docs/model.md section
    10, ninth change: charged per instruction it grew with BK, the measured cost did not).

    The tile template and the catalogue's lds-double kernels copy with cp.async on GPUs that
    have it (spec/calibration async_copy_b32_s, async_copy_b128_s > 0) when the shape needs
    no edge checks and the launch is not batched (kernels/template/sgemm_tile.cu: EDGE == 0);
    A (transposed in LDS) by VEC copies of 4 B per chunk, B by one 16-B copy per chunk
    (4 B where VEC = 1). Each warp instruction holds the SM's L1/shared data pipe for the
    measured time when copies stream alone (micro cp_async, 4-B lanes 16 B apart and
    contiguous 16-B lanes). The LDS write passes of the same tile are charged to the LDS
    pipe: the copies land in the same banks."""
    if not desc.lds_double:
        return None
    from gemmmodel.model.calib import value

    t32, src32 = value(spec, calib, "async_copy_b32_s")
    t128, src128 = value(spec, calib, "async_copy_b128_s")
    from gemmmodel.template.plan import needs_edge

    m, n, k, batch = (tuple(shape) + (1,))[:4]
    if t32 <= 0 or t128 <= 0 or batch != 1 or needs_edge(desc, m, n, k):
        return None
    clock, _ = value(spec, calib, "clock_hz")
    vec = max(1, int(desc.vec))
    chunks_a = desc.bm * desc.bk / vec / desc.threads
    chunks_b = desc.bk * desc.bn / vec / desc.threads
    if desc.a_layout == "transposed":
        a4, a16 = chunks_a * vec, 0.0
    else:
        a4, a16 = (0.0, chunks_a) if vec == 4 else (chunks_a, 0.0)
    b4, b16 = (0.0, chunks_b) if vec == 4 else (chunks_b, 0.0)
    waves = -(-desc.threads // int(spec.wave_size))
    per_instr4, per_instr16 = t32 * clock, t128 * clock
    clk = waves * ((a4 + b4) * per_instr4 + (a16 + b16) * per_instr16)
    return Term("async_copy_cycles_per_iter", clk, "clk",
                "waves * (copies_4B * t_4B + copies_16B * t_16B) * clock_hz",
                {"waves": waves, "copies_4B_per_thread": a4 + b4,
                 "copies_16B_per_thread": a16 + b16, "t_4B_clk": per_instr4,
                 "t_16B_clk": per_instr16},
                note=f"cp.async time per warp instruction: {src32} (4 B), {src128} (16 B)")
