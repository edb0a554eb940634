"""The row pitch of A: a cp.async double buffer's LDS pipe where K is not a power of two.

Device run AU (tools/device/run_au.sh; calibration/<gpu>/kpitch_sweep.csv) timed the whole
template search space at M = N = 2048 and K = 2048, 2304, 2560, 3072, 4096 on the H200.
Per unit of K, the register-staged builds ran within 0.01 log of their K = 2048 time at
every K; the cp.async double buffers ran slower at 2304, 2560 and 3072 only, by the same
amount at each, and by more at larger BK and without padding. The A tile is row-major with
rows lda = K apart, and the cp.async path gathers it with 4-byte copies into the
transposed LDS tile (kernels/template/sgemm_tile.cu fetch_async); ncu (ncu_au_*.txt) shows
the same instructions and the same fragment-read wavefronts at either K, and 1.4-1.6 x the
wavefronts of the copies' shared-memory writes per unit of K at K = 2304 (bank-conflict
replays), on the pipe these builds are bound by: per 4-byte copy of A, the same at a tall
and a wide tile (a_copy_extra_wavefronts). Why the pitch splits the writes is not
known (the L1-resident micro-benchmark of the copies, lines.py, found no pitch effect), so
the term is the measured slowdown itself:

    x(c, K)  = ln(t(c, K) / K) - ln(t(c, K0) / K0) - median over the run's
               register-staged builds of the same                  [log]
    c(BK, padded) = the median of x over the run's cp.async builds with that depth and
               padding, at the K that are not powers of two (K0 = the smallest K, 2048)
    a_pitch_factor = exp(c(BK, padded))   for a cp.async build (lds.async_copy_cycles_per_
               iter is not None) whose lda = K is not a power of two; 1 otherwise
    t_lds_s *= a_pitch_factor

The factor scales the LDS pipe, not the whole time: the wavefronts grow, and a build that
is bound elsewhere loses less (section 10 of docs/model.md, session 58). Nothing is
fitted: c is read from the run, and no fitted parameter changes (every fitted shape has a
power-of-two K). No table (AMD: no cp.async; a GPU without run AU): no term.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import numpy as np

from gemmmodel.model.kernel import KernelDesc
from gemmmodel.model.terms import Term

#: Run AU's sweep in calibration/<gpu>/.
PITCH_FILE = "kpitch_sweep.csv"


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def runs_cp_async(cfg, shape) -> bool:
    """True where template config `cfg` runs its cp.async double buffer at `shape`: an LDS
    double buffer, a non-batched launch and a tile-multiple shape (sgemm_tile.cu: EDGE ==
    0; on a GPU with cp.async)."""
    from gemmmodel.template.plan import shape_needs_edge

    return cfg.params(32)["buffering"] == "lds-double" and not shape_needs_edge(cfg, shape)


def read_pitch_sweep(path: Path):
    """A run AU sweep file as a DataFrame of config, shape ((M, N, K, batch) tuple) and
    median_s; rows with an error or no time dropped."""
    import pandas as pd

    s = pd.read_csv(path)
    s = s[s["error"].isna() & (s["median_s"] > 0)]
    return pd.DataFrame({"config": s["config"].to_numpy(),
                         "shape": [tuple(int(x) for x in t.split("x")) for t in s["shape"]],
                         "median_s": s["median_s"].astype(float).to_numpy()})


def load_pitch_table(folder: Path) -> tuple:
    """((BK, padded, c), ...) from folder/PITCH_FILE (module docstring); () when absent or
    when the run has no K that is not a power of two."""
    path = Path(folder) / PITCH_FILE
    if not path.is_file():
        return ()
    return _pitch_table(str(path.resolve()), path.stat().st_mtime_ns)


@lru_cache(maxsize=8)
def _pitch_table(path: str, mtime_ns: int) -> tuple:
    """load_pitch_table of one file version (read once per process)."""
    from gemmmodel.template import parse_name

    s = read_pitch_sweep(Path(path))
    k_of = s["shape"].map(lambda t: t[2])
    s = s.assign(k=k_of, per_k=np.log(s["median_s"] / k_of))
    k0 = int(s["k"].min())
    base = s[s["k"] == k0].set_index("config")["per_k"]
    s = s[s["config"].isin(base.index)].assign(
        x=lambda d: d["per_k"] - d["config"].map(base))
    cfgs = {name: parse_name(name) for name in set(s["config"])}
    info = {name: (int(p["BK"]), int(p.get("padding", 0)) > 0)
            for name, p in ((n, cfg.params(32)) for n, cfg in cfgs.items())}
    cp = np.array([runs_cp_async(cfgs[c], t) for c, t in zip(s["config"], s["shape"])])
    reg = s[~cp].groupby("k")["x"].median()
    s = s.assign(x=s["x"] - s["k"].map(reg))
    off = s[cp & ~s["k"].map(is_power_of_two)]
    if off.empty:
        return ()
    off = off.assign(bk=off["config"].map(lambda c: info[c][0]),
                     padded=off["config"].map(lambda c: info[c][1]))
    return tuple(sorted((int(bk), bool(padded), float(np.median(v["x"])))
                        for (bk, padded), v in off.groupby(["bk", "padded"])))


def pitch_term(desc: KernelDesc, shape, table: tuple, cp_async: bool,
               source: str = "") -> Term | None:
    """a_pitch_factor (module docstring) of a cp.async build at `shape`; None where it does
    not apply (no table, a register-staged build, a power-of-two K, a depth and padding
    the run did not measure, or an A tile not gathered by 4-byte copies)."""
    if not table or not cp_async or desc.vec != 4 or desc.a_layout != "transposed":
        return None
    k = int(tuple(shape)[2])
    if is_power_of_two(k):
        return None
    padded = desc.pad > 0
    c = next((r[2] for r in table if r[0] == desc.bk and r[1] == padded), None)
    if c is None:
        return None
    return Term("a_pitch_factor", math.exp(c), "1",
                "exp(c(BK, padded)): K (lda of A) not a power of two, cp.async copies",
                {"BK": desc.bk, "padded": padded, "K": k, "c": c},
                note=f"c measured: run AU's cp.async slowdown per unit of K "
                     f"({source or PITCH_FILE}); scales the LDS pipe")


#: ncu's shared-memory wavefronts of a launch (fragment reads and the copies' writes).
SHARED_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"


def a_copy_extra_wavefronts(text_lo: str, text_hi: str, k_lo: int, k_hi: int) -> dict:
    """{config: row} of two ncu runs of the same cp.async configs at M x N x k_lo and
    M x N x k_hi (run AU MODE=ncu / ncu2: ncu_au[2]_<M>x<N>x<K>.txt), each row

        bk, padded, a_copies_per_tile = BM * BK / 32     (4-byte copy warp instructions
                                                          of A per block tile iteration)
        extra_per_a_copy = (W_hi / k_hi - W_lo / k_lo) * BK / blocks / a_copies_per_tile

    W = the launch's shared-memory wavefronts. The fragment reads take the same wavefronts
    per unit of K at either K (MODE=ncu2 counts them apart), so the difference per block
    tile iteration is the copies' writes; divided by the A copies it is the wavefronts that
    each 4-byte copy of A gains at the second pitch. A diagnostic of docs/model.md, session
    59: the same at a tall and a wide tile of one depth and padding, and not charged by the
    model (the thirtieth change's factor stays)."""
    from gemmmodel.ingest import read_ncu_launch_run
    from gemmmodel.template import parse_name

    lo, hi = read_ncu_launch_run(text_lo), read_ncu_launch_run(text_hi)
    out = {}
    for name in sorted(set(lo) & set(hi)):
        p = parse_name(name).params(32)
        bm, bk = int(p["BM"]), int(p["BK"])
        blocks = float(lo[name].counters["launch__grid_size"][0])
        w = [float(x.counters[SHARED_WAVEFRONTS][0]) / k for x, k in ((lo[name], k_lo),
                                                                   (hi[name], k_hi))]
        copies = bm * bk / 32
        out[name] = {"bk": bk, "padded": int(p.get("padding", 0)) > 0,
                     "a_copies_per_tile": copies,
                     "extra_per_a_copy": (w[1] - w[0]) * bk / blocks / copies}
    return out


__all__ = ["PITCH_FILE", "SHARED_WAVEFRONTS", "a_copy_extra_wavefronts", "is_power_of_two",
           "load_pitch_table", "pitch_term", "read_pitch_sweep", "runs_cp_async"]
