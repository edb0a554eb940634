"""summary.json: the headline numbers of a calibration folder, each next to its spec value.

Headlines (SI units): DRAM read / write / copy B/s; L2 read B/s (median of the sweep points
between 4 MiB and L2 / 2); shared memory B/clk/SM (128-bit, stride 1) and B/s per SM at the
measured clock; FP32 FMA peak FLOP/s and FLOP/clk/SM; SM clock; launch overhead (time of a
1-block empty kernel, median over block sizes) and spawn blocks/s (fit slope, median over the
block sizes the spec says reach the full rate); latencies L1 / L2 / DRAM / shared in s and
cycles. Details: the launch fits per block size, the FMA latency-hiding curve, the L2 sweep,
the bank-conflict cost (cycles per access / stride-1 cycles) by conflict degree, where the
degree of a stride comes from the spec's bank model (lds_banks, lds_bank_bytes, lds_phases),
and the vendor BLAS FLOP/s of the kernels suite.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from gemmmodel.calibrate.provenance import read_provenance
from gemmmodel.calibrate.store import ResultStore, atomic_write_text, parse_params

FILE_NAME = "summary.json"
MiB = 1 << 20


def latest_values(rows: list[dict[str, str]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(name, params text, quantity) -> {'value', 'params', 'row'} of the last ok row."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        if row["status"] != "ok" or row["quantity"] == "none" or row["value"] in ("", "nan"):
            continue
        out[(row["name"], row["params"], row["quantity"])] = {
            "value": float(row["value"]), "params": parse_params(row["params"]), "row": row}
    return out


def _select(values: dict, name: str, quantity: str, **match: Any) -> list[tuple[dict, float]]:
    return [(v["params"], v["value"]) for (n, _, q), v in values.items()
            if n == name and q == quantity
            and all(v["params"].get(k) == want for k, want in match.items())]


def _one(values: dict, name: str, quantity: str, **match: Any) -> float | None:
    found = _select(values, name, quantity, **match)
    return found[-1][1] if found else None


def _spec_value(spec: Any, attr: str) -> float | None:
    value = getattr(spec, attr, None) if spec is not None else None
    return float(value) if isinstance(value, (int, float)) and value else None


def headline(measured: float | None, unit: str, spec: Any = None, spec_attr: str = "",
             spec_value: float | None = None) -> dict[str, Any]:
    """{'measured', 'unit', 'spec', 'spec_attr', 'ratio' (measured / spec)}."""
    if spec_value is None and spec_attr:
        spec_value = _spec_value(spec, spec_attr)
    ratio = measured / spec_value if measured is not None and spec_value else None
    return {"measured": measured, "unit": unit, "spec": spec_value, "spec_attr": spec_attr or None,
            "ratio": ratio}


def conflict_wavefronts(bits: int, stride: int, spec: Any) -> tuple[int, int] | None:
    """(wavefronts, worst per-group conflict degree) of a warp whose lane l reads the
    bits-wide element l * stride, by the spec's bank model; None without one."""
    phases = getattr(spec, "lds_phases", None) if spec is not None else None
    banks = getattr(spec, "lds_banks", None) if spec is not None else None
    bank_bytes = getattr(spec, "lds_bank_bytes", None) if spec is not None else None
    groups = (phases or {}).get(f"b{bits}")
    if not groups or not banks or not bank_bytes:
        return None
    elem = bits // 8
    total, worst = 0, 0
    for group in groups:
        rows_per_bank: dict[int, set[int]] = {}
        for lane in group:
            start = lane * stride * elem
            for byte in range(start, start + elem, bank_bytes):
                word = byte // bank_bytes
                rows_per_bank.setdefault(word % banks, set()).add(word // banks)
        degree = max(len(r) for r in rows_per_bank.values())
        total += degree
        worst = max(worst, degree)
    return total, worst


def _launch_fits(values: dict) -> dict[str, dict[str, Any]]:
    fits: dict[str, dict[str, Any]] = {}
    for kind in ("empty", "tiny"):
        by_threads: dict[int, list[tuple[int, float]]] = {}
        for params, t in _select(values, "launch", "launch_time_s", kernel=kind):
            by_threads.setdefault(int(params["threads"]), []).append((int(params["blocks"]), t))
        for threads, points in sorted(by_threads.items()):
            points.sort()
            x = np.array([p[0] for p in points], dtype=float)
            y = np.array([p[1] for p in points], dtype=float)
            fit = {"points": len(points), "one_block_s": float(y[0]) if x[0] == 1 else None}
            if len(points) >= 3:
                slope, intercept = np.polyfit(x, y, 1, w=1.0 / y)
                fit.update({"overhead_s": float(intercept),
                            "blocks_per_s": float(1.0 / slope) if slope > 0 else None})
            fits.setdefault(kind, {})[str(threads)] = fit
    return fits


def _conflicts(values: dict, spec: Any) -> tuple[dict, dict]:
    table: dict[str, list[dict[str, Any]]] = {}
    by_degree: dict[str, dict[str, float]] = {}
    for bits in (32, 64, 128):
        points = sorted((int(p["stride"]), v) for p, v in
                        _select(values, "smem_stride", "cycles_per_access", bits=bits))
        base = dict(points).get(1)
        base_model = conflict_wavefronts(bits, 1, spec)
        rows, groups = [], {}
        for stride, cycles in points:
            model = conflict_wavefronts(bits, stride, spec)
            ratio = cycles / base if base else None
            model_ratio = model[0] / base_model[0] if model and base_model else None
            rows.append({"stride": stride, "cycles_per_access": cycles, "ratio": ratio,
                         "degree": model[1] if model else None, "model_ratio": model_ratio})
            if model and ratio is not None:
                groups.setdefault(model[1], []).append(ratio)
        table[f"b{bits}"] = rows
        by_degree[f"b{bits}"] = {str(d): statistics.median(r) for d, r in sorted(groups.items())}
    return table, by_degree


def build_summary(out_dir: str | Path, spec: Any = None) -> dict[str, Any]:
    """The summary dict of a calibration folder (see module doc)."""
    out_dir = Path(out_dir)
    values = latest_values(ResultStore(out_dir).rows("micro"))
    prov = read_provenance(out_dir)
    clock = _one(values, "clock", "clock_hz")
    head: dict[str, Any] = {"clock_hz": headline(clock, "Hz", spec, "clock_hz")}
    for kind in ("read", "write", "copy"):
        head[f"dram_{kind}_Bps"] = headline(_one(values, f"dram_{kind}", "bandwidth_Bps"),
                                            "B/s", spec, "dram_bandwidth_Bps")
    l2 = getattr(spec, "l2_bytes", None) or (prov.get("runs") or [{}])[-1].get("l2_bytes")
    sweep = sorted((int(p["ws_bytes"]), v) for p, v in _select(values, "l2_read",
                                                               "bandwidth_Bps"))
    plateau = [v for ws, v in sweep if l2 and 4 * MiB <= ws <= l2 // 2]
    l2_bw = statistics.median(plateau) if plateau else (max(v for _, v in sweep) if sweep
                                                        else None)
    head["l2_read_Bps"] = headline(l2_bw, "B/s", spec, "l2_bandwidth_Bps")
    lds_clk = _one(values, "smem_stride", "bytes_per_clk_per_sm", bits=128, stride=1)
    head["lds_bytes_per_clk_per_sm"] = headline(lds_clk, "B/clk/SM", spec,
                                                "lds_bytes_per_clk_per_cu")
    spec_lds = _spec_value(spec, "lds_bytes_per_clk_per_cu")
    head["lds_Bps_per_sm"] = headline(lds_clk * clock if lds_clk and clock else None, "B/s",
                                      spec_value=spec_lds * _spec_value(spec, "clock_hz")
                                      if spec_lds and _spec_value(spec, "clock_hz") else None)
    fma = [v for _, v in _select(values, "fma_peak", "flop_per_s")]
    fma += [v for _, v in _select(values, "fma_curve", "flop_per_s")]
    head["fma_peak_flop_per_s"] = headline(max(fma) if fma else None, "FLOP/s",
                                           spec_value=getattr(spec, "fp32_peak_flops", None))
    fma_clk = [v for _, v in _select(values, "fma_peak", "flop_per_clk_per_sm")]
    fma_clk += [v for _, v in _select(values, "fma_curve", "flop_per_clk_per_sm")]
    head["fma_flop_per_clk_per_sm"] = headline(max(fma_clk) if fma_clk else None,
                                               "FLOP/clk/SM", spec, "fp32_flop_per_clk_per_cu")
    fits = _launch_fits(values)
    empty = fits.get("empty", {})
    ones = [f["one_block_s"] for f in empty.values() if f.get("one_block_s")]
    head["launch_overhead_s"] = headline(statistics.median(ones) if ones else None, "s", spec,
                                         "launch_overhead_s")
    full = set(getattr(spec, "spawn_full_rate_block_sizes", ()) or ())
    rates = [f["blocks_per_s"] for t, f in empty.items()
             if f.get("blocks_per_s") and (not full or int(t) in full)]
    spec_spawn = _spec_value(spec, "spawn_blocks_per_clk")
    spec_clock = _spec_value(spec, "clock_hz")
    head["spawn_blocks_per_s"] = headline(
        statistics.median(rates) if rates else None, "blocks/s",
        spec_value=spec_spawn * spec_clock if spec_spawn and spec_clock else None,
        spec_attr="spawn_blocks_per_clk")
    for level, attr in (("l1", ""), ("l2", "l2_latency_s"), ("dram", "dram_latency_s")):
        head[f"latency_{level}_s"] = headline(_one(values, "chase", "latency_s", level=level),
                                              "s", spec, attr)
        head[f"latency_{level}_cycles"] = headline(
            _one(values, "chase", "latency_cycles", level=level), "cycles")
    head["latency_lds_s"] = headline(_one(values, "smem_chase", "latency_s"), "s", spec,
                                     "lds_latency_s")
    head["latency_lds_cycles"] = headline(_one(values, "smem_chase", "latency_cycles"), "cycles")
    # cp.async per warp instruction per SM, the template's copies: 4 B per lane from 16-B
    # steps (A along k) and 16 B per lane, contiguous (B); seconds at the measured clock
    for key, case in (("b32", {"bytes": 4, "src_stride": 4, "dst_stride": 68}),
                      ("b128", {"bytes": 16, "src_stride": 4, "dst_stride": 1})):
        clk = _one(values, "cp_async", "cycles_per_warp_instruction", **case)
        head[f"cp_async_{key}_cycles"] = headline(clk, "cycles")
        head[f"cp_async_{key}_s"] = headline(clk / clock if clk and clock else None, "s", spec,
                                             f"async_copy_{key}_s")
    conflicts, by_degree = _conflicts(values, spec)
    curve: dict[str, dict[str, float]] = {}
    for params, v in _select(values, "fma_curve", "flop_per_clk_per_sm"):
        curve.setdefault(str(params["ilp"]), {})[str(params["warps"])] = v
    vendor = {}
    for (name, _, quantity), v in latest_values(ResultStore(out_dir).rows("kernels")).items():
        if quantity == "flop_per_s" and name in ("cublas", "rocblas"):
            p = v["params"]
            vendor[f"{name} {p['M']}x{p['N']}x{p['K']}"] = v["value"]
    return {
        "gpu": prov.get("gpu_name"), "spec": getattr(spec, "name", None),
        "provenance_ids": [r.get("provenance_id") for r in prov.get("runs", [])],
        "units": "SI (s, B, B/s, FLOP/s, Hz); per-clock values per SM",
        "headline": head,
        "launch_fits": fits,
        "fma_curve_flop_per_clk_per_sm": {k: dict(sorted(v.items(), key=lambda kv: int(kv[0])))
                                          for k, v in sorted(curve.items())},
        "l2_sweep": [{"ws_bytes": ws, "bandwidth_Bps": v} for ws, v in sweep],
        "lds_conflicts": conflicts,
        "lds_conflict_cost_by_degree": by_degree,
        "vendor_flop_per_s": vendor,
    }


def _clean(obj: Any) -> Any:
    """JSON-safe copy: non-finite floats become None, numpy scalars plain numbers."""
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_summary(out_dir: str | Path, spec: Any = None) -> Path:
    """Write out_dir/summary.json atomically; returns its path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    data = _clean(build_summary(out_dir, spec))
    return atomic_write_text(out_dir / FILE_NAME,
                             json.dumps(data, indent=2, allow_nan=False, default=str) + "\n")
