"""The launch's last edge block (twenty-eighth change, session 55; docs/model.md section 7).

A bounds-checked build's edge blocks (the last block row and column, work.edge_block_count)
run the checked loads. Device runs U, AB, AD, AE and AQ stamped every block
(calibration/<gpu>/tail_stamps*.json): an edge block runs rho = its duration over the
interior blocks' of its round, 1.0-1.2 for single buffers and 1.2-1.5 for register-staged
double buffers, and the launch ends with the last one. The model prices it as

    t_edge = scale * (rho_model - 1) * t_block * pile

    scale      edge_tail_scale for a single buffer, edge_tail_scale_db for a register-staged
               double buffer (below)

    rho_model  the model's own time of the launch with every block on the checked path (its
               issue work, and the stalls it issues, times r / checked_path_factor, r the
               checked path's instructions over the plain loop's, work.checked_path_term)
               over its time as it is (combine.evaluate_arrays)
    t_block    (t_pipes + t_latency + t_async) / rounds: one round's duration
    pile       edge_pile_term (thirty-third change, session 62): the launch ends with the CU
               that holds the most edge blocks at once. Run U's stamps at 3000x1000x1024:
               the SMs that held k = 0, 1, 2, 3 edge blocks in the first round ended it at
               164, 194, 200, 231 us (64x64x8/8x8/db), 126, 141, 153 us for k = 0-2
               (64x64x16/8x4). A build with many blocks per SM (BK 8) piles more of them
               on one SM than one with few. Nothing is fitted: pile = the expected most
               edge blocks on one CU over the edge blocks a typical edge block's CU holds.

A register-staged double buffer's edge blocks (thirty-fourth change, session 63) take the
same term with their own scale, edge_tail_scale_db: rho_model puts every block on the
checked path with every tile checked (checked_share 1: they wait for their loads before the
compute), and edge_tail_scale_db is fitted to its stamped launches. Before, they set the
last round's latency instead (Components.edge_critical, twenty-fourth change), which put
their edge cost at 2000x2000x1024 and 1000x3000x2048 at +0.033 and +0.051 log against the
+0.133 and +0.163 measured (run AZ). A cp.async double buffer has no checked path.

Both scales are fitted here, not by fit.py: least squares through the origin of the
measured rho - 1 on the model's rho_model - 1 over the stamped launches of that buffering
(`fit_edge_tail_scale`): the edge block's extra instructions share its SM's issue with the
interior blocks, which leave slots idle at their barriers and loads, so it runs well below
the fully checked launch's rate. Their values and training data are in calib.DEFAULT_FIT's
notes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from gemmmodel import CALIBRATION_DIR
from gemmmodel.model.terms import Term

#: The stamped runs (device runs U, AB, AD, AE, AQ) under calibration/<gpu>/.
STAMP_GLOB = "tail_stamps*.json"


def measured_edge_ratios(gpu: str = "h200", root: Path | None = None) -> list[dict]:
    """[{size, config, rho}]: per stamped launch with edge blocks, the median over its
    repeats of the edge blocks' duration over the interior blocks' (block_us_edge /
    block_us_interior)."""
    folder = Path(root or CALIBRATION_DIR) / gpu
    groups: dict = {}
    for path in sorted(folder.glob(STAMP_GLOB)):
        for run in json.loads(path.read_text()).get("runs", []):
            if run.get("edge_blocks") and run.get("block_us_edge") and \
                    run.get("block_us_interior"):
                key = (str(run["size"]), str(run["config"]))
                groups.setdefault(key, []).append(run["block_us_edge"] /
                                                  run["block_us_interior"])
    return [{"size": s, "config": c, "rho": float(np.median(v))}
            for (s, c), v in sorted(groups.items())]


def model_edge_ratio(config: str, size: str, spec, calib) -> float:
    """rho_model of a template config at a shape (module docstring), with the calibration
    and fit `calib`; 1.0 where the launch has no edge block."""
    from gemmmodel.compile.table import template_facts
    from gemmmodel.model import assemble
    from gemmmodel.model.combine import evaluate
    from gemmmodel.template import parse_name

    shape = tuple(int(x) for x in size.split("x"))
    shape = shape + (1,) * (4 - len(shape))
    cfg = parse_name(config)
    comp = assemble(cfg.params(int(spec.wave_size)), template_facts(cfg, spec, None, shape),
                    spec, shape, calib)
    return float(evaluate(comp, calib.fit or {})["edge_ratio"])


def fit_edge_tail_scale(gpu: str = "h200", root: Path | None = None,
                        double: bool = False) -> dict:
    """edge_tail_scale (double: edge_tail_scale_db) by least squares through the origin of
    measured rho - 1 on rho_model - 1 over the stamped single-buffer (double: register-
    staged double-buffer) launches (module docstring): {scale, n, rms, rows}."""
    from gemmmodel.model import load_calib
    from gemmmodel.spec import load_spec

    spec, calib = load_spec(gpu), load_calib(gpu)
    rows = [{**r, "rho_model": model_edge_ratio(r["config"], r["size"], spec, calib)}
            for r in measured_edge_ratios(gpu, root) if ("/db" in r["config"]) == double]
    x = np.array([r["rho_model"] - 1.0 for r in rows])
    y = np.array([r["rho"] - 1.0 for r in rows])
    scale = float(x @ y / (x @ x)) if len(rows) and x @ x > 0 else 0.0
    rms = float(np.sqrt(np.mean((y - scale * x) ** 2))) if len(rows) else 0.0
    return {"scale": scale, "n": len(rows), "rms": rms, "rows": rows}


def most_edge_blocks(slots: int, share: float, cus: int) -> float:
    """E[max over `cus` CUs of Binomial(slots, share)]: the expected most edge blocks that
    one CU holds at once, where each of its `slots` resident blocks is an edge block with
    probability `share`, independently (edge_pile_term)."""
    if slots < 1 or cus < 1 or share <= 0.0:
        return 0.0
    share = min(share, 1.0)
    pmf = [math.comb(slots, k) * share ** k * (1.0 - share) ** (slots - k)
           for k in range(slots + 1)]
    cdf, expected = 0.0, 0.0
    for k in range(slots):        # E[max] = sum over k >= 1 of P(max >= k)
        cdf += pmf[k]
        expected += 1.0 - min(cdf, 1.0) ** cus
    return expected


def edge_pile_term(edge_blocks: int, blocks: int, slots: int, cus: int,
                   launch_blocks: int | None = None) -> Term:
    """How many times one edge block's extra the launch's end waits for (thirty-third
    change, session 62; module docstring): the most edge blocks one CU holds at once over
    the edge blocks that a typical edge block's CU holds (itself and the others of its
    slots), at least 1; 1 without edge blocks.

        pile = max(1, E[max_CU Binomial(c, p)] / (1 + (c - 1) p))
        c = blocks resident per CU at once, p = edge blocks / blocks, over the CUs the
        launch fills (min(CUs, launch_blocks)); `blocks` and `edge_blocks` may count one
        batch slice (p is the same per slice), `launch_blocks` counts the whole launch
        (default: `blocks`)

    The edge blocks land on the CUs as if at random: the block scheduler deals the grid's
    linear order out over the SMs in a strided order whose phase drifts by a few blocks
    per round (run U's stamps), so the last block column and row spread unevenly."""
    if edge_blocks <= 0 or blocks <= 0:
        return Term("edge_pile", 1.0, "1", "1 (no edge block)")
    c = max(1, int(slots))
    p = edge_blocks / blocks
    filled = int(blocks if launch_blocks is None else launch_blocks)
    n_cu = max(1, min(int(cus), filled))
    most = most_edge_blocks(c, p, n_cu)
    typical = 1.0 + (c - 1) * p
    return Term("edge_pile", max(1.0, most / typical), "1",
                "max(1, E[max over CUs of Binomial(c, p)] / (1 + (c - 1) p))",
                {"c": c, "p": p, "cus": n_cu, "most_edge_blocks": most,
                 "typical_edge_blocks": typical},
                note="the CU with the most edge blocks ends last; edge_tail_scale (fitted to "
                     "the stamps' median edge block) stands for a typical one "
                     "(device run U; held-out check: run AZ)")


__all__ = ["STAMP_GLOB", "edge_pile_term", "fit_edge_tail_scale", "measured_edge_ratios",
           "model_edge_ratio", "most_edge_blocks"]
