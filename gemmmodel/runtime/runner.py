"""Run, check and time named kernels on the GPU: the library side of `gemmmodel run`.

`run_kernels(runtime, names, sizes, …)` resolves each name with gemmmodel.catalogue.resolve,
compiles catalogue / template kernels through the runtime (NVRTC / hiprtc), optionally
checks them (check.py: beta = 0 with NaN-poisoned C, then alpha = 0.75, beta = -0.5), and
times them with measure.bench over input sets rotated past the L2. "cublas" / "rocblas" run
the vendor baseline (vendor.py; a 4-D size MxNxKxBATCH runs its strided-batched GEMM);
"batched" is handed to gemmmodel.batched.run_cli_case. Results are RunRow records in SI
units (seconds, FLOP/s).

Host launch gaps: every timed sample starts with a spin kernel (Runtime.hold) so that the
events measure device time even when Python enqueues launches slower than the GPU runs them;
kernels under ~50 µs are launched `inner` times per sample (group_timer). The hold starts at
hold_for(inner) and is checked on every sample (HeldTimer): a group the host took longer to
enqueue than its hold is timed again behind a longer one.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from gemmmodel.errors import BadArgument, CompileError, GemmModelError
from gemmmodel.runtime.check import check_gemm
from gemmmodel.runtime.measure import bench, rotations_needed

#: Fraction of device memory the rotated input sets may take.
MEMORY_FRACTION = 0.4
#: Below this per-launch time several launches share one event pair (see module doc).
SHORT_KERNEL_S = 50e-6
HOST_ENQUEUE_S = 30e-6  # assumption: one Python launch's host cost (HeldTimer checks holds)
#: The shortest spin hold ahead of a timed group (hold_for). Measured (device run AG, H200,
#: calibration/h200/batched_timing_ag.json): enqueuing one strided-batched launch from
#: Python took 38-62 us (median), 55-114 us at the 90th percentile; behind a 60 us hold
#: 1-16 % of the event-timed samples of 80-110 us launches ran more than 5 % above the
#: config's fastest decile, behind a 1 ms hold none for six of eight configs (the other
#: two, both 32x32x16/4x4/p4, 6 and 13 %, as behind the short hold).
HOLD_MIN_S = 1e-3


#: A timed group counts when the host enqueued it within this share of its hold; the rest
#: covers the stop event's record and the driver's hand-over to the device (assumption).
HOLD_MARGIN = 0.8
#: Times a group is timed again behind a longer hold before its sample is kept as it is.
HOLD_RETRIES = 4


def hold_for(inner: int) -> float:
    """Seconds of spin hold ahead of a timed group of `inner` launches: the host must have
    enqueued them all before the device reaches the start event, or the events time the
    host. HOST_ENQUEUE_S per launch plus one, and at least HOLD_MIN_S. A starting value:
    HeldTimer checks it against the host's real enqueue time."""
    return max(HOST_ENQUEUE_S * (inner + 1), HOLD_MIN_S)


class HeldTimer:
    """measure.bench's timer: runtime.time_s(fn, hold_s), with the hold checked.

    enqueue_s = host clock from just before the hold's launch to the return of fn() (the
    last launch of the group handed to the driver). The device cannot have run out of work
    before the start event's group was queued when enqueue_s <= HOLD_MARGIN * hold_s. A
    group over that is timed again behind max(2 * hold_s, 2 * enqueue_s), and the longer
    hold stays for the following groups; after HOLD_RETRIES such retries the last sample is
    kept and counted in host_bound. Run AJ (calibration/h200/selection_resweep_aj*.csv)
    shows why: 4-10 us batched launches in groups of 50 took ~3 ms to enqueue behind a
    1.5 ms hold, and half of one shape's configs came back noisy, some 2-5x slow."""

    def __init__(self, runtime, hold_s: float, clock: Callable[[], float] = time.perf_counter):
        self.runtime, self.hold_s, self.clock = runtime, float(hold_s), clock
        self.retimed = 0        # groups timed again behind a longer hold
        self.host_bound = 0     # samples kept although their enqueue outlasted the hold
        self.max_enqueue_s = 0.0

    def __call__(self, fn: Callable[[], None]) -> float:
        for attempt in range(HOLD_RETRIES + 1):
            done = [0.0]

            def marked() -> None:
                fn()
                done[0] = self.clock()

            start = self.clock()
            elapsed = self.runtime.time_s(marked, self.hold_s)
            enqueue = done[0] - start
            self.max_enqueue_s = max(self.max_enqueue_s, enqueue)
            if enqueue <= HOLD_MARGIN * self.hold_s:
                return elapsed
            if attempt < HOLD_RETRIES:
                self.retimed += 1
                self.hold_s = max(2.0 * self.hold_s, 2.0 * enqueue)
        self.host_bound += 1
        return elapsed

    def stats(self) -> dict:
        """The hold this timer ended with and what its checks found (for result rows)."""
        return {"hold_s": self.hold_s, "hold_retimed": self.retimed,
                "host_bound": self.host_bound, "max_enqueue_s": self.max_enqueue_s}


def group_timer(runtime, launch_one: Callable[[], None], *, first_s: float | None = None,
                max_inner: int = 64, tries: int = 3,
                clock: Callable[[], float] = time.perf_counter) -> tuple[int, HeldTimer]:
    """(inner, timer) for measure.bench: the one place that turns an estimate into a timing
    plan. est = the fastest of `tries` lone launch_one() calls behind a checked hold of 4 x
    HOST_ENQUEUE_S (and first_s, a time already taken, if given); inner = 1 when est >=
    SHORT_KERNEL_S, else enough launches for a group of 4 x SHORT_KERNEL_S, at most
    max_inner; the timer starts at hold_for(inner). clock: the host clock both timers read."""
    probe = HeldTimer(runtime, HOST_ENQUEUE_S * 4, clock)
    times = ([first_s] if first_s else []) + [probe(launch_one) for _ in range(tries)]
    est = max(min(times), 1e-7)
    inner = 1 if est >= SHORT_KERNEL_S else min(max_inner, math.ceil(SHORT_KERNEL_S * 4 / est))
    return inner, HeldTimer(runtime, hold_for(inner), clock)


@dataclass
class RunRow:
    """One kernel at one size. status: ok | failed | skipped (reason says why)."""

    kernel: str
    size: str
    m: int
    n: int
    k: int
    batch: int = 1
    status: str = "ok"
    reason: str = ""
    median_s: float | None = None
    p20_s: float | None = None
    p80_s: float | None = None
    spread: float | None = None
    reps: int | None = None
    noisy: bool | None = None
    flop_per_s: float | None = None
    rel_err: float | None = None
    nan_count: int | None = None
    passed: bool | None = None
    checks: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def flop(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.batch

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key, val in out.items():
            if isinstance(val, float) and not math.isfinite(val):
                out[key] = None
        return out


def expand_names(names: list[str]) -> list[str]:
    """'all' becomes every catalogue id (file order); other names pass through."""
    out: list[str] = []
    for name in names:
        if name.strip().lower() == "all":
            from gemmmodel.catalogue import load_catalogue

            out += list(load_catalogue())
        elif name.strip():
            out.append(name.strip())
    return out


def parse_sizes(text: str) -> list[tuple[int, ...]]:
    """'MxNxK[xB],…' -> list of tuples of 3 or 4 ints (BadArgument on a bad one)."""
    from gemmmodel.catalogue import parse_size

    sizes = []
    for part in [p for p in text.split(",") if p.strip()]:
        dims = 4 if part.lower().count("x") == 3 else 3
        sizes.append(tuple(parse_size(part.strip(), dims=dims)))
    if not sizes:
        raise BadArgument("no size given: use --size MxNxK[,…]")
    return sizes


def size_text(size: tuple[int, ...]) -> str:
    return "x".join(str(s) for s in size)


def time_gemm(runtime, launch: Callable, m: int, n: int, k: int, *, batch: int = 1,
              budget_s: float = 1.0, forget: Callable | None = None, seed: int = 0):
    """bench() a launch(a_buf, b_buf, c_buf) over input sets rotated past the L2."""
    info = runtime.device_info()
    bytes_per_set = 4 * batch * (m * k + k * n + m * n)
    n_sets = rotations_needed(bytes_per_set, info.get("l2_bytes"),
                              max_total_bytes=int(MEMORY_FRACTION *
                                                  info.get("total_memory_bytes", 0)) or None)
    rng = np.random.default_rng(seed)
    host = [rng.uniform(-1, 1, size=batch * rows * cols).astype(np.float32)
            for rows, cols in ((m, k), (k, n), (m, n))]
    sets = []
    try:
        for _ in range(n_sets):
            sets.append(tuple(runtime.upload(arr) for arr in host))
        launch(*sets[0])  # first call: library handles, plans, module load
        inner, timer = group_timer(runtime, lambda: launch(*sets[0]))
        return bench(lambda i: launch(*sets[i]), timer=timer, n_rotations=n_sets,
                     inner=inner, budget_s=budget_s)
    finally:
        for bufs in sets:
            for buf in bufs:
                if forget is not None:
                    forget(buf)
                runtime.free(buf)


def _fill_bench(row: RunRow, result) -> None:
    row.median_s, row.p20_s, row.p80_s = result.median_s, result.p20_s, result.p80_s
    row.spread, row.reps, row.noisy = result.spread, result.reps, result.noisy
    row.flop_per_s = row.flop / result.median_s if result.median_s > 0 else None
    row.extra.update({"n_rotations": result.n_rotations, "inner": result.inner, **result.hold})


def _fill_checks(row: RunRow, results) -> None:
    row.checks = [r.to_dict() for r in results]
    row.rel_err = max(r.rel_err for r in results)
    row.nan_count = sum(r.nan_count for r in results)
    row.passed = all(r.passed for r in results)


CHECK_CASES = ((1.0, 0.0), (0.75, -0.5))


def _run_plan_kernel(runtime, ref, row: RunRow, check: bool, budget_s: float) -> None:
    m, n, k = row.m, row.n, row.k
    if ref.config is not None:  # a template config: the device's limits, before compiling
        from gemmmodel.template import check_for_runtime

        check_for_runtime(ref.config, runtime)
    plan = ref.plan(m, n, k)
    module = runtime.compile_plan(plan)

    def launch(a, b, c, alpha=1.0, beta=0.0):
        runtime.launch_plan(module, plan, m, n, k, alpha, a, b, beta, c)

    if check:
        _fill_checks(row, [check_gemm(runtime, launch, m, n, k, alpha=al, beta=be)
                           for al, be in CHECK_CASES])
    _fill_bench(row, time_gemm(runtime, launch, m, n, k, budget_s=budget_s))


def _run_vendor(runtime, ref, row: RunRow, check: bool, budget_s: float) -> None:
    from gemmmodel.runtime.vendor import vendor_blas

    blas = vendor_blas(runtime)
    if blas.name != ref.name:
        row.status = "skipped"
        row.reason = f"{ref.name} needs another vendor's GPU; this one is {runtime.vendor}: " \
                     f"use {blas.name}"
        return
    m, n, k, batch = row.m, row.n, row.k, row.batch
    if batch == 1:
        def launch(a, b, c, alpha=1.0, beta=0.0):
            blas.sgemm(m, n, k, alpha, a, b, beta, c)
        if check:
            _fill_checks(row, [check_gemm(runtime, launch, m, n, k, alpha=1.0, beta=0.0)])
    else:
        def launch(a, b, c):
            blas.sgemm_strided_batched(m, n, k, batch, a, b, c)
        if check:
            row.extra["check_note"] = "strided batched baseline is not checked"
    _fill_bench(row, time_gemm(runtime, launch, m, n, k, batch=batch, budget_s=budget_s,
                               forget=blas.forget))


def _run_batched(runtime, row: RunRow, check: bool, budget_s: float, trans: str) -> None:
    try:
        from gemmmodel.batched import run_cli_case
    except ImportError:
        row.status, row.reason = "skipped", "gemmmodel.batched is not available"
        return
    offered = {"runtime": runtime, "check": check, "budget_s": budget_s}
    params = inspect.signature(run_cli_case).parameters
    kwargs = {key: val for key, val in offered.items() if key in params}
    result = run_cli_case(row.size, trans, **kwargs)
    data = result.to_dict() if hasattr(result, "to_dict") else dict(result or {})
    for key in ("median_s", "p20_s", "p80_s", "spread", "reps", "noisy", "rel_err",
                "nan_count", "passed", "status", "reason", "checks"):
        if key in data:
            setattr(row, key, data.pop(key))
    if row.median_s:
        row.flop_per_s = row.flop / row.median_s
    row.extra.update(data)


def run_kernels(runtime, names: list[str], sizes: list[tuple[int, ...]], *, check: bool = False,
                budget_s: float = 1.0, trans: str = "NN",
                progress: Callable[[str], None] | None = None) -> list[RunRow]:
    """Run every (name, size) pair; a failure or unsupported shape becomes a row, not a crash
    (KernelNotFound for an unknown name is raised before anything runs)."""
    from gemmmodel.catalogue import resolve

    refs = [resolve(name) for name in expand_names(names)]
    return run_refs(runtime, refs, sizes, check=check, budget_s=budget_s, trans=trans,
                    progress=progress)


def run_refs(runtime, refs: list, sizes: list[tuple[int, ...]], *, check: bool = False,
             budget_s: float = 1.0, trans: str = "NN",
             progress: Callable[[str], None] | None = None) -> list[RunRow]:
    """run_kernels for already resolved gemmmodel.catalogue.KernelRef objects."""
    rows: list[RunRow] = []
    total = len(refs) * len(sizes)
    for ref in refs:
        for size in sizes:
            m, n, k = size[:3]
            batch = size[3] if len(size) == 4 else 1
            row = RunRow(kernel=ref.name, size=size_text(size), m=m, n=n, k=k, batch=batch)
            rows.append(row)
            if progress:
                progress(f"[{len(rows)}/{total}] {ref.name} {row.size}")
            try:
                if ref.kind == "batched":
                    _run_batched(runtime, row, check, budget_s, trans)
                elif len(size) == 4 and ref.kind != "vendor":
                    raise BadArgument(f"{ref.name} takes MxNxK sizes, not {row.size}")
                elif ref.kind == "vendor":
                    _run_vendor(runtime, ref, row, check, budget_s)
                else:
                    try:
                        ref.check_shape(m, n, k)
                    except BadArgument as err:
                        row.status, row.reason = "skipped", str(err)
                        continue
                    _run_plan_kernel(runtime, ref, row, check, budget_s)
            except (CompileError, GemmModelError) as err:
                row.status, row.reason = "failed", f"{type(err).__name__}: {err}"
            if row.status == "ok" and row.passed is False:
                row.status, row.reason = "failed", "check failed"
    return rows
