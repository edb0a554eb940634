"""Instruction fetch: the issue rate a kernel's code size allows (run AC, twenty-third change).

Run AC (tools/device/icache.py, kernels/micro/icache.cu; calibration/<gpu>/icache.json) times
a loop whose body is N straight-line FFMAs with no dependency stalls and no memory
instructions, at w = 1-8 warps per scheduler (nb four-warp blocks on every SM, all at once).
Its result is
    eta_fetch(code_KiB, w)   warp instructions per clock per scheduler (1 = one issue slot
                             per clock), linearly interpolated in the code size and in w
                             between the measured points and held at the end points.
On the H200 it is 0.94-0.99 up to 28 KiB at every w, and beyond that depends on w: one
warp per scheduler falls to 0.41 from 40 KiB and 0.17 from 144 KiB; two stay at 0.96-0.98
up to 112 KiB, then 0.33; three to eight sit at 0.49-0.83 from 40 KiB on. The template's BK 32 8x8
loops (36-70 KiB) and their batched or bounds-checked builds (up to 180 KiB) are in that
range; ncu puts half of the warps' stalls of such a build on `no_instruction` (runs AC and AB).

The model (assemble.py, combine._pipes) charges it as a floor on the issue pipe:
    P_issue = max(P_issue, t_fetch),   t_fetch = issue_s / eta_fetch(code_KiB, w)
      issue_s   the issue term's slots per scheduler over clock_hz (before issue_efficiency)
      code_KiB  the kernel's whole code: the compiled build's total instructions x the
                instruction size (16 bytes on sm_70 and later: nvdisasm's addresses step by
                0x10), the code its warps fetch from while they run the prologue, main loop
                (and its versions for edge and interior tiles), last tile and epilogue
      w         the resident warps per scheduler of the round (its partial last round its own)
Without the table (every GPU but the H200 here) or without the compiled instruction count,
eta_fetch = 1 and the term is absent. No parameter is fitted to it.

Where the floor applies (twenty-ninth change, session 56): only below NO_STALL_WARPS = 3
resident warps per scheduler (the round's w; its partial last round its own). At three or
more, eta_fetch = 1 (`stall_rate`). Run AC's table falls to 0.49-0.83 from 40 KiB at
w >= 3, but its loop is straight-line FFMAs from w independent blocks at full issue rate.
ncu measured the template's own launches instead (calibration/h200/ncu_*.txt, runs G to AS;
`ncu_fetch_stalls`). Every launch at 2.6 or more active warps per scheduler put at most 0.14
warps per issue on `no_instruction` (95 launches, median 0.03), with whole code from 5 to
69 KiB (run AQ's 56 KiB BK 8 /db at 3.9 warps: 0.07; run AS's 61 KiB bounds-checked
64x64x8/8x8/db at 2.9: 0.06). Larger code at w >= 3 is an extrapolation. Below 2 active
warps, the builds with large loops put 0.2-1.4 there (44 launches): run
AB's batched 64x64x32/8x8/p4/db 1.42 at one warp, run AS's bounds-checked BK 32 8x8 /db
builds 0.28-0.47. Session 49 found the same at run AQ and left the floor on because
selection did not improve. Taken now for what ncu measures: LOKO tau 0.8900 -> 0.8934 on
the H200 (docs/model.md section 10).
A loop inside larger code (forty-first change, session 76): run AC's rate at the whole code's
size is that of a loop that streams all of it on every pass. A GEMM build's main loop is
only part of its code. Once the whole code is past the L1.5's cliff (about 128 KiB) and the
loop is not, each pass re-fetches only what other blocks' prologues and epilogues evicted.
Run BL (tools/device/icache_phase.py; calibration/<gpu>/icache_phase.json) measured that
case: a hot loop of 24 or 48 KiB run `trips` times per pass of 0-128 KiB of cold code, at
w = 1, 2 and 4, with the blocks in step or out of step. At two warps per scheduler the
model takes
    eta_fetch = max(eta_AC(code_KiB, w), eta_BL,out(loop_KiB, code_KiB, trips, w))
      loop_KiB  the main loop's code (compile facts), held at run BL's 24-48 KiB ends
      trips     the block's tile iterations, ceil(K / BK) (linear in log trips, held at
                run BL's 4-64)
      out       run BL's blocks out of step: a GEMM's warps wait at their own LDS reads,
                loads and barriers, so they do not walk the code together as run BL's
                in-step FFMA loops do. Scored in session 76: the in-step or a 1 / rounds
                in-step share put the held-out one-round launches 0.30 log fast.
Only the max. Below the cliff run BL's rate can sit under run AC's (a 24 KiB loop in 88-120
KiB at w = 2: 0.39-0.90), but the template's builds there are not slower than run AC's rate
says: taking run BL's rate there put held-out picks on worse builds (session 76). At one
warp per scheduler run AC's rate stays. Session 69 found that a GEMM's last round at w = 1
follows the whole code's rate, where run BL's loop does not; a session 76 variant that took
run BL's rate at w = 1 too put 4 held-out shapes' picks at 75-80 % of the best. Without run
BL's file (every GPU but the H200) the rule is off.

Not modelled: run AO (calibration/<gpu>/icache_ao*.json) shows the rate at w also depends
on how the w warps are grouped into blocks (at w = 2 and 64-96 KiB: 0.97 from two four-warp
blocks, 0.88 from one eight-warp block; at w = 4 one sixteen-warp block held together by
barriers 0.83-0.94 against 0.66-0.70 otherwise); the table is of four-warp blocks.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from gemmmodel.model.terms import Term

#: Run AC's result file in calibration/<gpu>/.
ICACHE_FILE = "icache.json"
#: Bytes per instruction of NVIDIA's sm_70+ ISAs (fixed-width 128-bit encoding; nvdisasm's
#: addresses of the committed builds step by 0x10).
NVIDIA_INSTRUCTION_BYTES = 16


def load_icache(folder: Path) -> tuple:
    """((code KiB, w, eta), ...) from folder/ICACHE_FILE; () when absent."""
    path = Path(folder) / ICACHE_FILE
    if not path.is_file():
        return ()
    rows = json.loads(path.read_text()).get("rows", [])
    return tuple(sorted((float(r["body_ffma"]) * NVIDIA_INSTRUCTION_BYTES / 1024.0,
                         float(r["warps_per_scheduler"]), float(r["fma_rate_per_scheduler"]))
                        for r in rows if r.get("fma_rate_per_scheduler")))


def fetch_rate(table: tuple, code_kib: float, w: float) -> float:
    """eta_fetch(code_KiB, w) (module docstring); 1.0 without a table or a code size."""
    if not table or not code_kib or code_kib <= 0:
        return 1.0
    ws = sorted({r[1] for r in table})
    at_w = []
    for wv in ws:
        pts = sorted((r[0], r[2]) for r in table if r[1] == wv)
        sizes, etas = zip(*pts)
        at_w.append(float(np.interp(float(code_kib), sizes, etas)))
    return float(np.interp(max(float(w), 0.0), ws, at_w))


#: Resident warps per scheduler from which the template's launches show no fetch stall in ncu
#: (module docstring): the fetch floor applies only below it.
NO_STALL_WARPS = 3.0


def stall_rate(table: tuple, code_kib: float, w: float) -> float:
    """The issue rate the model's fetch floor uses: eta_fetch(code_KiB, w) below
    NO_STALL_WARPS resident warps per scheduler, 1.0 (no floor) from there on."""
    if float(w) >= NO_STALL_WARPS:
        return 1.0
    return fetch_rate(table, code_kib, w)


#: Run BL's result file in calibration/<gpu>/: a hot loop inside larger code.
ICACHE_PHASE_FILE = "icache_phase.json"
#: Resident warps per scheduler from which run BL's loop-in-code rate may raise run AC's.
LOOP_IN_CODE_WARPS = 2.0


def load_icache_phase(folder: Path) -> tuple:
    """((w, loop KiB, trips, code KiB, in step, eta), ...) from folder/ICACHE_PHASE_FILE
    (run BL); () when absent."""
    path = Path(folder) / ICACHE_PHASE_FILE
    if not path.is_file():
        return ()
    rows = json.loads(path.read_text()).get("rows", [])
    return tuple(sorted((float(r["warps_per_scheduler"]), float(r["hot_kib"]),
                         float(r["trips"]), float(r["code_kib"]), not float(r["skew"]) > 0,
                         float(r["fma_rate_per_scheduler"]))
                        for r in rows if r.get("fma_rate_per_scheduler")))


@lru_cache(maxsize=8)
def _phase_grid(table: tuple, in_step: bool) -> tuple:
    """Run BL's rows of one step grouped once per table: (ws, loop sizes, trips,
    {(w, loop KiB, trips): (code sizes, mean eta at each)})."""
    groups: dict = {}
    for w, hot, tr, kib, step, eta in table:
        if step == in_step:
            groups.setdefault((w, hot, tr), {}).setdefault(kib, []).append(eta)
    curves = {key: (tuple(sorted(pts)), tuple(float(np.mean(pts[x])) for x in sorted(pts)))
              for key, pts in groups.items()}
    axes = [sorted({key[i] for key in curves}) for i in range(3)]
    return (*axes, curves)


def _phase_rate(table: tuple, loop_kib: float, code_kib: float, trips: float, w: float,
                in_step: bool) -> float:
    """Run BL's rate, linear in the code size, log trips, loop size and w between the
    measured points, held at the ends."""
    ws, hots, trs, curves = _phase_grid(table, in_step)
    log_trs = np.log(trs)
    log_trips = np.log(max(float(trips), 1.0))

    def at_w(wv: float) -> float:
        per_hot = [float(np.interp(log_trips, log_trs,
                                   [np.interp(code_kib, *curves[(wv, h, t)]) for t in trs]))
                   for h in hots]
        return float(np.interp(loop_kib, hots, per_hot))

    return float(np.interp(float(w), ws, [at_w(x) for x in ws]))


def loop_in_code_rate(phase: tuple, loop_kib: float | None, code_kib: float | None,
                      trips: float, w: float) -> float | None:
    """eta_BL,out of the module docstring (forty-first change): run BL's issue rate of a
    loop of loop_KiB run `trips` times inside code_KiB of code, its blocks out of step;
    None where the rule is off (no run BL table, no loop or code size, or w outside
    [LOOP_IN_CODE_WARPS, NO_STALL_WARPS))."""
    if not phase or not loop_kib or not code_kib or loop_kib <= 0 or code_kib <= 0:
        return None
    if not LOOP_IN_CODE_WARPS <= float(w) < NO_STALL_WARPS:
        return None
    return _phase_rate(phase, loop_kib, code_kib, trips, w, in_step=False)


#: ncu's metric of warps stalled on instruction fetch, per issue.
NCU_NO_INSTRUCTION = ("smsp__average_warps_issue_stalled_no_instruction_per_issue_active"
                      ".ratio")
NCU_WARPS = "smsp__warps_active.avg.per_cycle_active"


def ncu_fetch_stalls(folder: Path) -> list[dict]:
    """Every template launch in folder/ncu_*.txt (tools/device/ncu_launch.py under ncu
    --csv --page raw with the WarpStateStats section): {file, config, size, warps,
    no_instruction}, warps = active warps per scheduler, no_instruction = warps stalled on
    instruction fetch per issue. Files without that metric are skipped."""
    from gemmmodel.errors import GemmModelError
    from gemmmodel.ingest import read_ncu_launches

    out = []
    for path in sorted(Path(folder).glob("ncu_*.txt")):
        try:
            launches = read_ncu_launches(path.read_text(errors="replace"))
        except GemmModelError:
            continue
        for fields, launch in launches:
            warps = launch.counters.get(NCU_WARPS, (None,))[0]
            stall = launch.counters.get(NCU_NO_INSTRUCTION, (None,))[0]
            if warps is None or stall is None:
                continue
            out.append({"file": path.name, "config": fields[2], "size": fields[-1],
                        "warps": float(warps), "no_instruction": float(stall)})
    return out


def _facts_kib(facts, spec, table_key: str, mix: str) -> float | None:
    """Instructions x the instruction size (KiB): facts[table_key] of a template table's
    facts, or the "instructions" of the KernelFacts mix `mix`; None where either is unknown
    (AMD: variable-length encodings)."""
    if str(getattr(spec, "vendor", "")).lower() != "nvidia" or facts is None:
        return None
    if isinstance(facts, dict):
        n = facts.get(table_key)
    else:
        n = (getattr(facts, mix, None) or {}).get("instructions")
    return float(n) * NVIDIA_INSTRUCTION_BYTES / 1024.0 if n else None


def code_kib(facts, spec) -> float | None:
    """The kernel's code size (KiB) from its compile facts: total instructions x the
    instruction size; None where either is unknown (AMD: variable-length encodings)."""
    return _facts_kib(facts, spec, "code_instructions", "mix_total")


def loop_code_kib(facts, spec) -> float | None:
    """The main loop's code size (KiB) from its compile facts (the loop's instructions x
    the instruction size); None where unknown."""
    return _facts_kib(facts, spec, "loop_code_instructions", "mix_loop")


def fetch_term(table: tuple, kib: float | None, w: float, source: str = "",
               loop_eta: float | None = None, loop_inputs: dict | None = None) -> Term | None:
    """The Term of eta_fetch at the kernel's code size and w; None where the model has no
    fetch limit for it (no table or no code size). loop_eta: run BL's rate of the kernel's
    loop inside its code (loop_in_code_rate), which raises run AC's where it is higher."""
    if not table or not kib:
        return None
    if float(w) >= NO_STALL_WARPS:
        return Term("instruction_fetch_rate", 1.0, "instr/clk",
                    f"1 (w >= {NO_STALL_WARPS:g}: no fetch stall in ncu)",
                    {"code_KiB": kib, "w": w, "eta_table": fetch_rate(table, kib, w)},
                    note="ncu: the template's launches at 3 or more warps per scheduler put "
                         "<= 0.14 warps per issue on no_instruction (fetch.py); run AC's "
                         "table is not used here")
    eta = fetch_rate(table, kib, w)
    if loop_eta is not None and loop_eta > eta:
        return Term("instruction_fetch_rate", min(1.0, loop_eta), "instr/clk",
                    "max(eta_AC(code_KiB, w), eta_BL,out(loop_KiB, code_KiB, trips, w)): "
                    "run BL's rate of the main loop inside the whole code, out of step",
                    {"code_KiB": kib, "w": w, "eta_AC": eta, **(loop_inputs or {})},
                    note=f"run BL ({ICACHE_PHASE_FILE}) above run AC ({source or ICACHE_FILE})"
                         "; issue pipe >= issue_s / eta_fetch")
    return Term("instruction_fetch_rate", eta, "instr/clk",
                "eta_fetch(code_KiB, w): measured issue rate of a straight-line loop of that "
                "size (interpolated), below 3 warps per scheduler",
                {"code_KiB": kib, "w": w},
                note=f"run AC ({source or ICACHE_FILE}); issue pipe >= issue_s / eta_fetch")


__all__ = ["ICACHE_FILE", "ICACHE_PHASE_FILE", "LOOP_IN_CODE_WARPS", "NO_STALL_WARPS",
           "NVIDIA_INSTRUCTION_BYTES", "code_kib", "fetch_rate", "fetch_term", "load_icache",
           "load_icache_phase", "loop_code_kib", "loop_in_code_rate", "ncu_fetch_stalls",
           "stall_rate"]
