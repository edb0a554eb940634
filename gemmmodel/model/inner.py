"""The template's inner loop measured alone, and the share of a kernel's time outside it.

Run N (tools/device/inner_loop.py, kernels/micro/inner_loop.cu; calibration/<gpu>/
inner_loop.json) times the template's compute() alone: one BK-deep step of float4 fragment
reads and TM x TN FMAs per call, LDS tiles filled once, no global loads, no barriers, with
exactly nb blocks of 4 warps on every SM (w = nb warps per scheduler). Its result is
    eta(TM, TN, BK, w)   warp FMA instructions per clock per scheduler (1 = the FP32 pipe's
                         peak on sm_90), linearly interpolated in w between the measured
                         points and held at the end points outside them.
For a template config (float4 fragments: the same compute()) on a GPU with that table:
    t_inner_s = n_fma / (eta * clock_hz)
      n_fma = wave iterations per SIMD on the busiest CU x FMA instructions per wave
      iteration (the model's issue term), w = the kernel's resident warps per scheduler,
      clock_hz = the clock of the model's issue term.
It is the time the kernel's FMAs take at the rate its own inner loop reaches alone at that
occupancy: a floor, not a prediction. Against a time T (measured or predicted),
    t_outside_s = T - t_inner_s,   clk_per_tile = t_outside_s * clock_hz * w / wave iterations
is what the kernel spends outside its inner loop (global loads and their exposed latency,
LDS stores, barriers, the checked path, tails), per tile iteration of one warp. `explain`
shows both for the measured time and the prediction (docs/model.md section 10, run N).
The model does not use eta: it is explanation data (section 10 says what was tried).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from gemmmodel.model.terms import Term

#: Run N's result file in calibration/<gpu>/.
INNER_LOOP_FILE = "inner_loop.json"


def load_inner_loop(folder: Path) -> tuple:
    """((TM, TN, BK, w, eta), ...) from folder/INNER_LOOP_FILE; () when absent."""
    path = Path(folder) / INNER_LOOP_FILE
    if not path.is_file():
        return ()
    rows = json.loads(path.read_text()).get("rows", [])
    return tuple(sorted((int(r["tm"]), int(r["tn"]), int(r["bk"]),
                         float(r["warps_per_scheduler"]), float(r["fma_rate_per_scheduler"]))
                        for r in rows if r.get("fma_rate_per_scheduler")))


def inner_loop_rate(table: tuple, tm: int, tn: int, bk: int, w: float) -> float | None:
    """eta at w warps per scheduler for the thread tile TM x TN and depth BK (module
    docstring); None where the table has no such loop."""
    points = [(r[3], r[4]) for r in table if r[:3] == (tm, tn, bk)]
    if not points:
        return None
    ws, etas = zip(*sorted(points))
    return float(np.interp(float(w), ws, etas))


def inner_loop_time(table: tuple, params: dict, root: Term, source: str = "") -> Term | None:
    """t_inner_s of a prediction's tree `root` for kernel `params` (module docstring); None
    for kernels whose loop is not the template's float4 compute() or without a table row."""
    if not table or int(params.get("vector_width", 1)) != 4 or "TM" not in params:
        return None
    issue, pipes = root.find("t_issue_s"), root.find("t_pipes_s")
    cycles, clock = root.find("issue_cycles_per_wave_iteration"), root.find("clock_hz")
    if issue is None or pipes is None or cycles is None or clock is None:
        return None
    base = issue.children[0] if issue.children else issue
    wave_iters = float(base.inputs.get("wave_iterations_per_simd", 0.0))
    w = float(pipes.inputs.get("w", 0.0))
    tm, tn, bk = int(params["TM"]), int(params["TN"]), int(params["BK"])
    eta = inner_loop_rate(table, tm, tn, bk, w)
    if eta is None or eta <= 0 or wave_iters <= 0:
        return None
    n_fma = wave_iters * float(cycles.inputs["fma_instructions"])
    return Term("t_inner_loop_s", n_fma / (eta * clock.value), "s",
                "n_fma / (eta(TM, TN, BK, w) * clock_hz)",
                {"n_fma": n_fma, "eta": eta, "TM": tm, "TN": tn, "BK": bk, "w": w,
                 "wave_iterations": wave_iters, "clock_hz": clock.value},
                note=f"eta measured: the template's compute() alone ({source or INNER_LOOP_FILE})")


def outside_share(inner: Term, time_s: float) -> dict:
    """What a time `time_s` spends outside the inner loop (module docstring)."""
    i = inner.inputs
    outside = time_s - inner.value
    per_tile = outside * i["clock_hz"] * max(i["w"], 1.0) / i["wave_iterations"]
    return {"time_s": time_s, "outside_s": outside,
            "outside_fraction": outside / time_s if time_s > 0 else None,
            "outside_clk_per_tile_iteration": per_tile}


__all__ = ["INNER_LOOP_FILE", "inner_loop_rate", "inner_loop_time", "load_inner_loop",
           "outside_share"]
