"""The one timing helper: `bench` (warm-up, time budget, rotation past the L2, quantiles).

Method (after triton.testing.do_bench and /work/.library/device/METHOD.md): device events
around each launch (the runtime's `time_s`), a warm-up that touches every input set, input
sets rotated so that the bytes touched between two uses of one set exceed the L2 (else
repeated runs measure the cache), an optional L2 flush before each timed launch, and
repetition until the p80/p20 spread is under `target_spread` or the time budget is spent
(then the result is flagged `noisy`). The median is the reported time.

Pure logic: the timer, launcher and clock are parameters, so tests run it on a CPU.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from gemmmodel.errors import BadArgument


@dataclass(frozen=True)
class BenchResult:
    """Timing of one launch configuration; all times in seconds.

    spread = p80_s / p20_s - 1; noisy = the spread target was not reached within the budget
    (or max_reps)."""

    median_s: float
    p20_s: float
    p80_s: float
    spread: float
    reps: int
    noisy: bool
    min_s: float
    mean_s: float
    n_rotations: int
    inner: int
    warmup: int
    wall_s: float
    samples_s: tuple[float, ...] = field(default=(), repr=False)
    hold: dict = field(default_factory=dict)  # the timer's stats(), if it has them

    def to_dict(self, samples: bool = False) -> dict:
        out = asdict(self)
        if not samples:
            out.pop("samples_s")
        else:
            out["samples_s"] = list(self.samples_s)
        return out


def spread_of(samples_s) -> float:
    """p80 / p20 - 1 of the samples (linear-interpolated quantiles)."""
    p20, p80 = np.percentile(np.asarray(samples_s, dtype=float), [20, 80])
    return float(p80 / p20 - 1.0) if p20 > 0 else math.inf


def rotations_needed(bytes_per_set: int, l2_bytes: int | None, *, factor: float = 2.0,
                     max_sets: int = 256, max_total_bytes: int | None = None) -> int:
    """How many input sets to rotate over: the smallest n with (n - 1) * bytes_per_set >=
    factor * l2_bytes, i.e. between two uses of one set at least `factor` L2s of other data
    is touched. Capped at max_sets and at max_total_bytes (the device memory we may use)."""
    if bytes_per_set <= 0:
        raise BadArgument(f"bytes_per_set must be > 0, got {bytes_per_set}")
    if not l2_bytes:
        return 1
    n = 1 + math.ceil(factor * l2_bytes / bytes_per_set)
    if max_total_bytes is not None:
        n = min(n, max(1, max_total_bytes // bytes_per_set))
    return max(1, min(n, max_sets))


def bench(launch_fn: Callable[[int], None], *, timer: Callable[[Callable[[], None]], float],
          n_rotations: int = 1, inner: int = 1, budget_s: float = 1.0, warmup: int | None = None,
          min_reps: int = 10, max_reps: int = 10_000, target_spread: float = 0.02,
          l2_flush: Callable[[], None] | None = None, min_reps_floor: int = 3,
          clock: Callable[[], float] = time.perf_counter) -> BenchResult:
    """Time `launch_fn(i)` (i = input set index, 0 … n_rotations-1) with `timer`.

    inner: launches per timed sample (sample = elapsed / inner), for kernels so short that
    one event pair per launch would mostly measure the events themselves.

    timer(fn) -> seconds of device time for fn (Runtime.time_s; runner.HeldTimer also
    checks its hold: its stats() land in BenchResult.hold). warmup: untimed-in-result
    launches first (default: one pass over all sets + 2). Then timed launches, rotating
    sets, until reps >= min_reps and the p80/p20 spread < target_spread (clean), or reps
    reach max_reps or the wall budget_s (host clock, warm-up excluded) is spent (noisy).
    l2_flush, if given, runs before each timed launch, outside the timed region.
    A slow kernel (median warm-up time * min_reps > budget_s) lowers min_reps to what fits
    the budget, but never below min_reps_floor."""
    if n_rotations < 1 or min_reps < 1 or max_reps < min_reps:
        raise BadArgument(f"bench: need n_rotations >= 1 and 1 <= min_reps <= max_reps; got "
                          f"{n_rotations}, {min_reps}, {max_reps}")
    if budget_s <= 0:
        raise BadArgument(f"bench: budget_s must be > 0, got {budget_s}")
    warmup = n_rotations + 2 if warmup is None else int(warmup)
    if inner < 1:
        raise BadArgument(f"bench: inner must be >= 1, got {inner}")
    counter = [0]

    def run_inner() -> None:
        for _ in range(inner):
            launch_fn(counter[0] % n_rotations)
            counter[0] += 1

    warm = [float(timer(run_inner)) / inner for _ in range(warmup)]
    if warm:
        est_s = float(np.median(warm))
        if est_s * min_reps > budget_s:
            min_reps = max(min_reps_floor, int(budget_s / max(est_s, 1e-12)))
            min_reps = min(min_reps, max_reps)

    samples: list[float] = []
    start = clock()
    spread = math.inf
    noisy = True
    while True:
        if l2_flush is not None:
            l2_flush()
        samples.append(float(timer(run_inner)) / inner)
        if len(samples) < min_reps:
            continue
        spread = spread_of(samples)
        if spread < target_spread:
            noisy = False
            break
        if len(samples) >= max_reps or clock() - start >= budget_s:
            break
    wall = clock() - start
    arr = np.asarray(samples)
    p20, med, p80 = np.percentile(arr, [20, 50, 80])
    return BenchResult(median_s=float(med), p20_s=float(p20), p80_s=float(p80),
                       spread=float(spread), reps=len(samples), noisy=noisy,
                       min_s=float(arr.min()), mean_s=float(arr.mean()),
                       n_rotations=n_rotations, inner=inner, warmup=warmup, wall_s=float(wall),
                       samples_s=tuple(float(x) for x in samples),
                       hold=dict(timer.stats()) if hasattr(timer, "stats") else {})
