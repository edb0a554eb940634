"""Kernel sweeps: every catalogue kernel at 1024³ … 8192³, the template over a grid of its
search space at four shapes, the strided-batched kernel at the contest cases and a few more; each shape
also timed with the vendor BLAS (cuBLAS / rocBLAS).

Every timed GEMM is checked first (checking.py: NaN-poisoned C, rel err vs float64), then
timed with gemmmodel.runtime.runner.time_gemm (measure.bench over input sets rotated past
the L2, short kernels behind a spin hold). A kernel whose checked launch takes longer than
MAX_LAUNCH_S is not repeated: its one time is recorded as noisy with a note; a shape whose
time predicted from a smaller measured shape exceeds PREDICT_SKIP_S is skipped with the
prediction as the reason (the naive kernel at 8192³ on a slow GPU).
"""

from __future__ import annotations

import importlib.util
from typing import Any, Callable

from gemmmodel.calibrate.checking import check_launch
from gemmmodel.calibrate.context import DeviceFacts
from gemmmodel.calibrate.micro_launch import catalogue_ids, template_configs
from gemmmodel.calibrate.plan import Measurement, Skip, estimate_bench_s, rows_for
from gemmmodel.errors import BadArgument, GemmModelError, InvalidConfig

KERNEL_SIZES = (1024, 2048, 4096, 8192)
#: Template shapes: square, skinny both ways, M and N not multiples of any tile (but of 8).
TEMPLATE_SHAPES = ((4096, 4096, 4096), (8192, 256, 2048), (256, 8192, 2048), (3000, 1000, 1024))
#: The three contest cases (REFERENCE.md §4) then a few more small shapes: (M, N, K, batch).
CONTEST_CASES = ((64, 64, 32, 30), (128, 128, 64, 20), (128, 512, 256, 10))
MORE_BATCHED = ((16, 16, 16, 256), (100, 100, 100, 50), (256, 256, 128, 16),
                (512, 512, 512, 4))
CONTEST_TRANS = ("NN", "NT", "TN", "TT")
MAX_LAUNCH_S = 1.0
PREDICT_SKIP_S = 10.0
EST_EFFICIENCY = 0.1      # assumed fraction of FP32 peak, time estimates only
EST_HOST_S_PER_ELEMENT = 2e-8  # assumed host cost to draw + upload one input element
COMPILE_S = 0.5


def _flop(m: int, n: int, k: int, batch: int = 1) -> float:
    return 2.0 * m * n * k * batch


def _kernel_est_s(dev: DeviceFacts, m: int, n: int, k: int, budget_s: float,
                  batch: int = 1) -> float:
    peak = dev.fp32_flop_per_s or 1e13
    t = _flop(m, n, k, batch) / (peak * EST_EFFICIENCY)
    # host work per measurement: time_gemm draws and uploads fresh inputs; the float64
    # reference is made once per shape and shared by the sweep
    inputs = EST_HOST_S_PER_ELEMENT * batch * (m * k + k * n + m * n)
    return estimate_bench_s(t, budget_s) + 2 * t + inputs + COMPILE_S


def _gemm_rows(m: int, n: int, k: int, result, check, batch: int = 1, note: str = "",
               single_s: float | None = None) -> list[dict[str, Any]]:
    time_s = result.median_s if result is not None else single_s
    extra = {"rel_err": check.rel_err if check else None,
             "nan_count": check.nan_count if check else None,
             "check_passed": check.passed if check else None}
    parts = [note] if note else []
    if check:
        parts.append(f"check seed={check.seed} rows={check.rows_checked}")
    if result is None:
        parts.append(f"one launch took {single_s:.3g} s > {MAX_LAUNCH_S} s: not repeated")
        extra.update({"time_s": single_s, "runs": 1, "noisy": True})
    else:
        parts.append(f"rotations={result.n_rotations} inner={result.inner}")
    return rows_for({"flop_per_s": _flop(m, n, k, batch) / time_s}, timing=result,
                    work=_flop(m, n, k, batch), work_unit="FLOP", note="; ".join(parts),
                    **extra)


def _predicted_s(ctx, name: str, m: int, n: int, k: int) -> float | None:
    """Time at (m, n, k) scaled by FLOP from the largest smaller shape measured so far."""
    known = ctx.cache.get("kernel_time_s", {})
    best = None
    for (kname, km, kn, kk), t in known.items():
        if kname == name and km * kn * kk < m * n * k:
            if best is None or km * kn * kk > best[0]:
                best = (km * kn * kk, t)
    return None if best is None else best[1] * (m * n * k) / best[0]


def measure_gemm(ctx, name: str, launch: Callable[..., None], m: int, n: int, k: int,
                 forget: Callable | None = None, note: str = "") -> list[dict[str, Any]]:
    """Check, then time, one GEMM launch(a, b, c[, alpha, beta]) at (m, n, k)."""
    from gemmmodel.runtime.runner import time_gemm

    predicted = _predicted_s(ctx, name, m, n, k)
    if predicted is not None and predicted > PREDICT_SKIP_S:
        raise Skip(f"predicted {predicted:.3g} s per launch from a smaller shape "
                   f"(> {PREDICT_SKIP_S} s): not measured")
    check = check_launch(ctx.rt, ctx.cache, lambda a, b, c: launch(a, b, c), m, n, k,
                         forget=forget)
    times = ctx.cache.setdefault("kernel_time_s", {})
    if check.launch_s > MAX_LAUNCH_S:
        times[(name, m, n, k)] = check.launch_s
        return _gemm_rows(m, n, k, None, check, note=note, single_s=check.launch_s)
    result = time_gemm(ctx.rt, launch, m, n, k, budget_s=ctx.bench_budget_s, forget=forget)
    times[(name, m, n, k)] = result.median_s
    return _gemm_rows(m, n, k, result, check, note=note)


def _measure_plan(ctx, name: str, plan, m: int, n: int, k: int) -> list[dict[str, Any]]:
    rt = ctx.rt
    module = rt.compile_plan(plan)

    def launch(a, b, c, alpha=1.0, beta=0.0):
        rt.launch_plan(module, plan, m, n, k, alpha, a, b, beta, c)

    return measure_gemm(ctx, name, launch, m, n, k,
                        note=f"grid={'x'.join(map(str, plan.grid))}")


def _run_catalogue(ctx, kernel_id: str, m: int, n: int, k: int) -> list[dict[str, Any]]:
    from gemmmodel.catalogue import resolve

    ref = resolve(kernel_id)
    try:
        ref.check_shape(m, n, k)
        plan = ref.plan(m, n, k)
    except BadArgument as err:
        raise Skip(str(err)) from None
    return _measure_plan(ctx, ref.name, plan, m, n, k)


def _run_template(ctx, config: Any, m: int, n: int, k: int) -> list[dict[str, Any]]:
    try:
        plan = config.plan(m, n, k)
    except (BadArgument, InvalidConfig) as err:
        raise Skip(str(err)) from None
    return _measure_plan(ctx, config.name, plan, m, n, k)


def _vendor(ctx):
    if "blas" not in ctx.cache:
        from gemmmodel.runtime.vendor import vendor_blas

        ctx.cache["blas"] = vendor_blas(ctx.rt)
    return ctx.cache["blas"]


def _run_vendor(ctx, m: int, n: int, k: int) -> list[dict[str, Any]]:
    blas = _vendor(ctx)

    def launch(a, b, c, alpha=1.0, beta=0.0):
        blas.sgemm(m, n, k, alpha, a, b, beta, c)

    return measure_gemm(ctx, blas.name, launch, m, n, k, forget=blas.forget)


def _run_vendor_batched(ctx, m: int, n: int, k: int, batch: int) -> list[dict[str, Any]]:
    from gemmmodel.runtime.runner import time_gemm

    blas = _vendor(ctx)

    def launch(a, b, c):
        blas.sgemm_strided_batched(m, n, k, batch, a, b, c)

    check = check_launch(ctx.rt, ctx.cache, launch, m, n, k, batch=batch, forget=blas.forget)
    result = time_gemm(ctx.rt, launch, m, n, k, batch=batch, budget_s=ctx.bench_budget_s,
                       forget=blas.forget)
    return _gemm_rows(m, n, k, result, check, batch=batch, note="packed row-major, NN")


def _run_batched(ctx, m: int, n: int, k: int, batch: int, trans: str) -> list[dict[str, Any]]:
    if importlib.util.find_spec("gemmmodel.batched") is None:
        raise GemmModelError("gemmmodel.batched is not available yet (rerun when it is)")
    from gemmmodel.runtime.runner import run_kernels

    (row,) = run_kernels(ctx.rt, ["batched"], [(m, n, k, batch)], check=True,
                         budget_s=ctx.bench_budget_s, trans=trans)
    if row.status == "skipped" and "not available" in row.reason:
        raise GemmModelError(row.reason)     # retried by a rerun once it is available
    if row.status == "skipped":
        raise Skip(row.reason)
    if row.status != "ok" and row.median_s is None:
        raise GemmModelError(row.reason or "batched run failed")
    extra = {"rel_err": row.rel_err, "nan_count": row.nan_count, "check_passed": row.passed}
    timing = {"time_s": row.median_s, "time_p20_s": row.p20_s, "time_p80_s": row.p80_s,
              "spread": row.spread, "noisy": row.noisy, "runs": row.reps}
    note = "checked by gemmmodel.batched (BLAS column-major semantics)"
    if row.reason:
        note += f"; {row.reason}"
    return rows_for({"flop_per_s": row.flop / row.median_s if row.median_s else None},
                    work=row.flop, work_unit="FLOP", note=note, **timing, **extra)


def _failing(reason: str) -> Callable[[Any], list]:
    def run(ctx) -> list:
        raise Skip(reason)
    return run


def kernel_measurements(dev: DeviceFacts, budget_s: float, vendor_name: str) -> list[Measurement]:
    """The vendor BLAS at 1024³ … 8192³, then each catalogue kernel at every size, smallest
    first (one compile per kernel; a larger shape's time is predicted from a smaller one)."""
    out: list[Measurement] = []
    ids, why = catalogue_ids()
    if why:
        out.append(Measurement("kernels", "kernel", {"kernel": "catalogue"}, 0.0, _failing(why)))
    for size in KERNEL_SIZES:
        out.append(Measurement("kernels", vendor_name, {"M": size, "N": size, "K": size},
                               _kernel_est_s(dev, size, size, size, budget_s),
                               lambda ctx, s=size: _run_vendor(ctx, s, s, s)))
    for kid in ids:
        for size in KERNEL_SIZES:
            out.append(Measurement("kernels", "kernel",
                                   {"kernel": kid, "M": size, "N": size, "K": size},
                                   _kernel_est_s(dev, size, size, size, budget_s),
                                   lambda ctx, k=kid, s=size: _run_catalogue(ctx, k, s, s, s)))
    return out


def template_grid(configs: list[Any]) -> list[Any]:
    """The swept subset of the search space: automatic warp tile, no padding, no swizzle
    (every BM, BN, BK, TM x TN and both buffering modes). The rest differ only in layout
    details, and every config still gets an occupancy row (micro suite)."""
    return [c for c in configs if c.auto_warp and not c.pad and not c.swizzle]


def template_measurements(dev: DeviceFacts, budget_s: float, vendor_name: str,
                          spec: Any) -> list[Measurement]:
    """The vendor BLAS at TEMPLATE_SHAPES, then each config of template_grid at every shape
    (config by config: one compile per config and process)."""
    out: list[Measurement] = []
    configs, why = template_configs(spec)
    if why:
        out.append(Measurement("template", "template", {"config": "search_space"}, 0.0,
                               _failing(why)))
    for m, n, k in TEMPLATE_SHAPES:
        out.append(Measurement("template", vendor_name, {"M": m, "N": n, "K": k},
                               _kernel_est_s(dev, m, n, k, budget_s),
                               lambda ctx, s=(m, n, k): _run_vendor(ctx, *s)))
    for cfg in template_grid(configs):
        for m, n, k in TEMPLATE_SHAPES:
            out.append(Measurement("template", "template", {"config": cfg.name, "M": m, "N": n,
                                                            "K": k},
                                   _kernel_est_s(dev, m, n, k, budget_s),
                                   lambda ctx, c=cfg, s=(m, n, k): _run_template(ctx, c, *s)))
    return out


def batched_measurements(dev: DeviceFacts, budget_s: float,
                         vendor_name: str) -> list[Measurement]:
    """The batched kernel (all four op combinations at the contest cases, NN elsewhere) and
    the vendor strided-batched GEMM (NN) at each shape."""
    out: list[Measurement] = []
    cases = [(c, t) for c in CONTEST_CASES for t in CONTEST_TRANS]
    cases += [(c, "NN") for c in MORE_BATCHED]
    seen = set()
    for (m, n, k, batch), trans in cases:
        shape = {"M": m, "N": n, "K": k, "batch": batch}
        est = _kernel_est_s(dev, m, n, k, budget_s, batch)
        if (m, n, k, batch) not in seen:
            seen.add((m, n, k, batch))
            out.append(Measurement("batched", f"{vendor_name}_batched", shape, est,
                                   lambda ctx, s=(m, n, k, batch): _run_vendor_batched(ctx,
                                                                                       *s)))
        out.append(Measurement("batched", "batched", {**shape, "trans": trans}, est,
                               lambda ctx, s=(m, n, k, batch), t=trans: _run_batched(ctx, *s,
                                                                                    t)))
    return out
