"""Differences between two prediction term trees: which time term moved, and why.

`term_diff(a, b)` compares two Term trees (gemmmodel.model.terms) of the same model:
`moved` lists the key time terms by how much they changed (s; a term only one tree holds,
the cp.async wait, counts 0 s in the other); `lead` is the one that
explains the change of the total (of the terms that add up to it, the one that moved most
in the total's direction; inside t_pipes_s, the dominant pipe when it carries at least half
of the change); `drivers` are the lead's changed inputs, then the terms under it, then the
other terms, by relative change. Used by explain, compare and predict.
"""

from __future__ import annotations

import math

#: The time terms of a prediction's tree that add up (or max) to the total.
KEY_TERMS = ("t_total_s", "t_pipes_s", "t_issue_s", "t_lds_s", "t_l2_s", "t_dram_s",
             "t_spawn_s", "t_latency_s", "t_async_wait_s", "t_launch_s", "t_ramp_s")
#: The terms whose sum is t_total_s (model/combine.py).
TOP_TERMS = ("t_pipes_s", "t_latency_s", "t_async_wait_s", "t_launch_s", "t_ramp_s")
#: Top terms a tree holds only where they apply (the cp.async wait: cp.async double
#: buffers only); a tree without one spends 0 s on it.
OPTIONAL_TERMS = ("t_async_wait_s",)
#: A step "changed nothing" when its speedup is within 1 +- BAND (a choice of this tool,
#: about the run-to-run spread of GPU timings; not a measured figure).
BAND = 0.02


def direction(speedup: float) -> str:
    """'faster', 'slower' or 'same' (within BAND)."""
    return "faster" if speedup > 1 + BAND else "slower" if speedup < 1 - BAND else "same"


def _paths(root) -> dict:
    out: dict = {}

    def walk(term, prefix):
        path = f"{prefix}/{term.name}" if prefix else term.name
        while path in out:
            path += "'"
        out[path] = term
        for sub in term.children:
            walk(sub, path)

    walk(root, "")
    return out


def key_times(root) -> dict:
    """{name: seconds} of the KEY_TERMS (the pipe times as combined, not their bases)."""
    out = {"t_total_s": root.value}
    for path, term in _paths(root).items():
        depth = path.count("/")
        if term.name in KEY_TERMS and term.name not in out and depth <= 2:
            out[term.name] = term.value
    return out


def _log_ratio(a: float, b: float) -> float:
    if a == b:
        return 0.0
    if a <= 0 or b <= 0:
        return math.inf if max(abs(a), abs(b)) > 0 else 0.0
    return abs(math.log(b / a))


def _lead(moved: list[dict], ka: dict, kb: dict) -> str | None:
    """The key term that explains the change of the total: of the terms that add up to it
    (TOP_TERMS), the one that moved most in the direction of the total; for t_pipes_s the
    pipe that dominates the slower side, when it moved the same way by at least half of
    t_pipes_s's change."""
    total = kb["t_total_s"] - ka["t_total_s"]
    same = [m for m in moved if m["term"] in TOP_TERMS and m["delta_s"]
            and (m["delta_s"] > 0) == (total > 0)]
    pick = same[0] if same else (moved[0] if moved and moved[0]["delta_s"] else None)
    if pick is None:
        return None
    if pick["term"] == "t_pipes_s":
        pipes = [p for p in ("t_issue_s", "t_lds_s", "t_l2_s", "t_dram_s", "t_spawn_s")
                 if p in ka and p in kb]
        slow = kb if total > 0 else ka
        top = max(pipes, key=slow.get) if pipes else None
        if top and (kb[top] - ka[top]) * pick["delta_s"] > 0 and \
                abs(kb[top] - ka[top]) >= 0.5 * abs(pick["delta_s"]):
            return top
    return pick["term"]


def _input_drivers(path: str, pa: dict, pb: dict) -> list[dict]:
    """Numeric inputs of the lead term that changed (e.g. w, q of t_pipes_s); a term only
    one tree holds (OPTIONAL_TERMS) has its inputs at 0 in the other."""
    ta, tb = pa.get(path), pb.get(path)
    if ta is None and tb is None:
        return []
    here = ta if ta is not None else tb
    if ta is None or tb is None:
        zero = {k: 0.0 for k, v in here.inputs.items() if isinstance(v, (int, float))}
        ins_a = here.inputs if ta is not None else zero
        ins_b = here.inputs if tb is not None else zero
    else:
        ins_a, ins_b = ta.inputs, tb.inputs
    out = []
    for key, va in ins_a.items():
        vb = ins_b.get(key)
        if key == "base_s":
            continue
        if isinstance(va, bool) or not isinstance(va, (int, float)) or \
                not isinstance(vb, (int, float)):
            continue
        change = _log_ratio(float(va), float(vb))
        if change >= 1e-3:
            out.append({"term": f"{here.name}.{key}", "path": path, "from": float(va),
                        "to": float(vb), "unit": "s" if key.endswith("_s") else "",
                        "under_lead": True, "log_change": min(change, 99.0)})
    return sorted(out, key=lambda d: -d["log_change"])


def term_diff(root_a, root_b, top: int = 3) -> dict:
    """How tree b differs from tree a: `moved` (key time terms by |delta|, s), `lead` (the
    one that explains the change, _lead) and `drivers` (the lead's changed inputs, then the
    terms under it, then other terms, by relative change)."""
    ka, kb = key_times(root_a), key_times(root_b)
    for name in OPTIONAL_TERMS:
        if name in ka or name in kb:
            ka.setdefault(name, 0.0)
            kb.setdefault(name, 0.0)
    moved = [{"term": name, "from": ka[name], "to": kb[name], "delta_s": kb[name] - ka[name]}
             for name in KEY_TERMS if name in ka and name in kb and name != "t_total_s"]
    moved.sort(key=lambda r: -abs(r["delta_s"]))
    pa, pb = _paths(root_a), _paths(root_b)
    lead = _lead(moved, ka, kb)
    lead_path = next((p for tree in (pa, pb) for p, t in tree.items()
                      if t.name == lead and p.count("/") <= 2), None)
    drivers = _input_drivers(lead_path, pa, pb) if lead_path else []
    for path, ta in pa.items():
        tb = pb.get(path)
        if tb is None or ta.name in KEY_TERMS or ta.name in ("t_total_s", "work", "flop"):
            continue
        if not isinstance(ta.value, (int, float)) or not isinstance(tb.value, (int, float)):
            continue
        change = _log_ratio(float(ta.value), float(tb.value))
        if change < 1e-3:
            continue
        under = lead_path is not None and path.startswith(lead_path + "/")
        drivers.append({"term": ta.name, "path": path, "from": float(ta.value),
                        "to": float(tb.value), "unit": ta.unit, "under_lead": under,
                        "log_change": change if math.isfinite(change) else 99.0})
    drivers.sort(key=lambda d: (not d["under_lead"], -d["log_change"]))
    seen, kept = set(), []
    for d in drivers:
        if d["term"] not in seen:
            seen.add(d["term"])
            kept.append(d)
    lead_move = next((m for m in moved if m["term"] == lead), None)
    if lead is not None and lead_move is None:
        lead_move = {"term": lead, "from": ka[lead], "to": kb[lead], "delta_s": kb[lead] - ka[lead]}
    return {"moved": moved[:top], "lead": lead_move, "drivers": kept[:top]}
