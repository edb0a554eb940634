"""Kernel sweeps: every catalogue kernel at 1024³ … 8192³ (kernels suite), the template over
a grid of its search space at four shapes (template suite), the strided-batched kernel at the
contest cases and a few more (batched suite); each shape also with the vendor BLAS (cuBLAS /
rocBLAS). The kernels and template suites also give each kernel's occupancy row (oracle.py)
right before its timings, so it is compiled once for both.

Every timed GEMM is checked first and timed over cached input sets (gemm.py). A kernel whose
checked launch takes longer than MAX_LAUNCH_S is not repeated: that one time is recorded as
noisy with a note. A shape whose time, scaled by FLOP from a smaller measured shape of the
same kernel, exceeds PREDICT_SKIP_S is skipped with the prediction as the reason (the naive
kernel at 8192³ on a slow GPU).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gemmmodel.calibrate import gemm, oracle
from gemmmodel.calibrate.context import DeviceFacts
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
EST_EFFICIENCY = 0.1      # assumed fraction of FP32 peak: time estimates only
EST_CHECK_S_PER_ELEMENT = 1e-8   # assumed host cost to download + compare one C element
COMPILE_S = 0.5           # assumed NVRTC compile + load per module: estimates only


def _flop(m: int, n: int, k: int, batch: int = 1) -> float:
    return 2.0 * m * n * k * batch


def _est_s(dev: DeviceFacts, m: int, n: int, k: int, budget_s: float, batch: int = 1) -> float:
    t = _flop(m, n, k, batch) / ((dev.fp32_flop_per_s or 1e13) * EST_EFFICIENCY)
    return estimate_bench_s(t, budget_s) + 3 * t + EST_CHECK_S_PER_ELEMENT * batch * m * n


def _gemm_rows(inputs, result, chk, note: str = "", single_s: float | None = None):
    flop = _flop(inputs.m, inputs.n, inputs.k, inputs.batch)
    time_s = result.median_s if result is not None else single_s
    extra = {"rel_err": chk.rel_err, "nan_count": chk.nan_count, "check_passed": chk.passed}
    parts = ([note] if note else []) + [f"check seed={chk.seed} rows={chk.rows_checked}"]
    if result is None:
        parts.append(f"one launch took {single_s:.3g} s > {MAX_LAUNCH_S} s: not repeated")
        extra.update({"time_s": single_s, "runs": 1, "noisy": True})
    else:
        parts.append(f"rotations={result.n_rotations} inner={result.inner}")
    return rows_for({"flop_per_s": flop / time_s}, timing=result, work=flop, work_unit="FLOP",
                    note="; ".join(parts), **extra)


def _predicted_s(ctx, name: str, m: int, n: int, k: int) -> float | None:
    """Time at (m, n, k) scaled by FLOP from the largest smaller shape measured so far."""
    best = None
    for (kname, km, kn, kk), t in ctx.cache.get("kernel_time_s", {}).items():
        size = km * kn * kk
        if kname == name and size < m * n * k and (best is None or size > best[0]):
            best = (size, t)
    return None if best is None else best[1] * (m * n * k) / best[0]


def measure_gemm(ctx, name: str, launch: Callable[..., None], m: int, n: int, k: int, *,
                 batch: int = 1, note: str = "") -> list[dict[str, Any]]:
    """Check, then time, launch(a, b, c) at (m, n, k[, batch]) on the shape's cached inputs."""
    predicted = _predicted_s(ctx, name, m, n, k) if batch == 1 else None
    if predicted is not None and predicted > PREDICT_SKIP_S:
        raise Skip(f"predicted {predicted:.3g} s per launch from a smaller shape "
                   f"(> {PREDICT_SKIP_S} s): not measured")
    inputs = gemm.shape_inputs(ctx, m, n, k, batch)
    chk = gemm.check(ctx, inputs, launch)
    times = ctx.cache.setdefault("kernel_time_s", {})
    if chk.launch_s > MAX_LAUNCH_S:
        times[(name, m, n, k)] = chk.launch_s
        return _gemm_rows(inputs, None, chk, note, single_s=chk.launch_s)
    result = gemm.time_sets(ctx, inputs, launch, chk.launch_s)
    times[(name, m, n, k)] = result.median_s
    return _gemm_rows(inputs, result, chk, note)


def _measure_plan(ctx, name: str, plan, m: int, n: int, k: int) -> list[dict[str, Any]]:
    rt = ctx.rt
    module = rt.compile_plan(plan)

    def launch(a, b, c):
        rt.launch_plan(module, plan, m, n, k, 1.0, a, b, 0.0, c)

    return measure_gemm(ctx, name, launch, m, n, k, note=f"grid={'x'.join(map(str, plan.grid))}")


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


def _run_vendor(ctx, m: int, n: int, k: int, batch: int = 1) -> list[dict[str, Any]]:
    blas = _vendor(ctx)
    if batch == 1:
        return measure_gemm(ctx, blas.name, lambda a, b, c: blas.sgemm(m, n, k, 1.0, a, b, 0.0,
                                                                       c), m, n, k)
    return measure_gemm(ctx, blas.name, lambda a, b, c: blas.sgemm_strided_batched(
        m, n, k, batch, a, b, c), m, n, k, batch=batch, note="packed row-major, NN")


def _run_batched(ctx, m: int, n: int, k: int, batch: int, trans: str) -> list[dict[str, Any]]:
    from gemmmodel.runtime.runner import run_kernels

    (row,) = run_kernels(ctx.rt, ["batched"], [(m, n, k, batch)], check=True,
                         budget_s=ctx.bench_budget_s, trans=trans)
    if row.status == "skipped" and "not available" in row.reason:
        raise GemmModelError(row.reason)     # retried by a rerun once it is available
    if row.status == "skipped":
        raise Skip(row.reason)
    if not row.median_s:
        raise GemmModelError(row.reason or "batched run failed")
    note = "gemmmodel.batched, BLAS column-major semantics, checked by run_kernels"
    return rows_for({"flop_per_s": row.flop / row.median_s}, work=row.flop, work_unit="FLOP",
                    note=note + (f"; {row.reason}" if row.reason else ""),
                    time_s=row.median_s, time_p20_s=row.p20_s, time_p80_s=row.p80_s,
                    spread=row.spread, noisy=row.noisy, runs=row.reps, rel_err=row.rel_err,
                    nan_count=row.nan_count, check_passed=row.passed)


def _skipped(reason: str) -> Callable[[Any], list]:
    def run(ctx) -> list:
        raise Skip(reason)
    return run


def _shape(m: int, n: int, k: int) -> dict[str, int]:
    return {"M": m, "N": n, "K": k}


def kernel_measurements(dev: DeviceFacts, budget_s: float, blas: str) -> list[Measurement]:
    """The vendor BLAS at 1024³ … 8192³, then per catalogue kernel its occupancy and every
    size, smallest first (a larger shape's time is predicted from a smaller one)."""
    ids, why = oracle.catalogue_ids()
    out = [Measurement("kernels", "kernel", {"kernel": "catalogue"}, 0.0, _skipped(why))] \
        if why else []
    for s in KERNEL_SIZES:
        out.append(Measurement("kernels", blas, _shape(s, s, s), _est_s(dev, s, s, s, budget_s),
                               lambda ctx, s=s: _run_vendor(ctx, s, s, s)))
    for kid in ids:
        out.append(Measurement("kernels", "occupancy", {"kernel": kid}, COMPILE_S,
                               lambda ctx, k=kid: oracle.run_catalogue(ctx, k)))
        for s in KERNEL_SIZES:
            out.append(Measurement("kernels", "kernel", {"kernel": kid, **_shape(s, s, s)},
                                   _est_s(dev, s, s, s, budget_s),
                                   lambda ctx, k=kid, s=s: _run_catalogue(ctx, k, s, s, s)))
    return out


def template_grid(configs: list[Any]) -> list[Any]:
    """The timed subset of the search space: automatic warp tile, no padding, no swizzle
    (every BM, BN, BK, TM x TN and both buffering modes). Every config gets an occupancy row."""
    return [c for c in configs if c.auto_warp and not c.pad and not c.swizzle]


def template_measurements(dev: DeviceFacts, budget_s: float, blas: str,
                          spec: Any) -> list[Measurement]:
    """The vendor BLAS at TEMPLATE_SHAPES, then per search-space config its occupancy and,
    for template_grid configs, a timing at every shape."""
    configs, why = oracle.template_configs(spec)
    out = [Measurement("template", "template", {"config": "search_space"}, 0.0,
                       _skipped(why))] if why else []
    for m, n, k in TEMPLATE_SHAPES:
        out.append(Measurement("template", blas, _shape(m, n, k), _est_s(dev, m, n, k, budget_s),
                               lambda ctx, s=(m, n, k): _run_vendor(ctx, *s)))
    timed = {c.name for c in template_grid(configs)}
    for cfg in configs:
        out.append(Measurement("template", "occupancy_template", {"config": cfg.name},
                               COMPILE_S, lambda ctx, c=cfg: oracle.run_template(ctx, c)))
        if cfg.name not in timed:
            continue
        for m, n, k in TEMPLATE_SHAPES:
            out.append(Measurement("template", "template", {"config": cfg.name,
                                                            **_shape(m, n, k)},
                                   _est_s(dev, m, n, k, budget_s),
                                   lambda ctx, c=cfg, s=(m, n, k): _run_template(ctx, c, *s)))
    return out


def batched_measurements(dev: DeviceFacts, budget_s: float, blas: str) -> list[Measurement]:
    """The batched kernel (all four op combinations at the contest cases, NN elsewhere) and
    the vendor strided-batched GEMM (NN, packed) at each shape."""
    cases = [(c, t) for c in CONTEST_CASES for t in CONTEST_TRANS]
    cases += [(c, "NN") for c in MORE_BATCHED]
    out, seen = [], set()
    for (m, n, k, batch), trans in cases:
        shape = {**_shape(m, n, k), "batch": batch}
        est = _est_s(dev, m, n, k, budget_s, batch) + COMPILE_S
        if (m, n, k, batch) not in seen:
            seen.add((m, n, k, batch))
            out.append(Measurement("batched", f"{blas}_batched", shape, est,
                                   lambda ctx, s=(m, n, k, batch): _run_vendor(ctx, *s)))
        out.append(Measurement("batched", "batched", {**shape, "trans": trans}, est,
                               lambda ctx, s=(m, n, k, batch), t=trans: _run_batched(ctx, *s,
                                                                                    t)))
    return out
