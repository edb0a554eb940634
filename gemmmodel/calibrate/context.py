"""What every calibration measurement gets: the runtime, the device facts, the spec, the
timing helper and a per-process cache.

DeviceFacts are the few device numbers the suites need to size their work (SM count, L2
size, threads per SM, a clock). On the GPU they come from `Runtime.device_info()`; for a dry
run (no GPU) they come from a GPU spec, and so does anything the device does not report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gemmmodel import KERNELS_DIR
from gemmmodel.calibrate.plan import Skip
from gemmmodel.errors import BadArgument

MICRO_DIR = KERNELS_DIR / "micro"
DEFAULT_BENCH_BUDGET_S = 0.25


@dataclass(frozen=True)
class DeviceFacts:
    """Device numbers used to size measurements and estimate their time (SI units).

    `source` says where they came from: "device" (device_info) or "spec:<name>".
    dram_bandwidth_Bps and fp32_flop_per_s are for time estimates only (None if unknown)."""

    name: str
    sms: int
    l2_bytes: int
    max_threads_per_sm: int
    clock_hz: float
    total_memory_bytes: int | None = None
    dram_bandwidth_Bps: float | None = None
    fp32_flop_per_s: float | None = None
    source: str = "device"


def _spec_attr(spec: Any, name: str) -> Any:
    return getattr(spec, name, None) if spec is not None else None


def facts_from_spec(spec: Any) -> DeviceFacts:
    """DeviceFacts from a GpuSpec (dry runs). Raises BadArgument when a needed field is absent."""
    need = ("compute_units", "l2_bytes", "max_waves_per_cu", "wave_size", "clock_hz")
    missing = [n for n in need if _spec_attr(spec, n) is None]
    if missing:
        raise BadArgument(f"spec {getattr(spec, 'name', '?')} lacks {', '.join(missing)}")
    sms = int(spec.compute_units)
    flop = _spec_attr(spec, "fp32_flop_per_clk_per_cu")
    return DeviceFacts(
        name=str(getattr(spec, "title", None) or spec.name), sms=sms,
        l2_bytes=int(spec.l2_bytes),
        max_threads_per_sm=int(spec.max_waves_per_cu) * int(spec.wave_size),
        clock_hz=float(spec.clock_hz),
        dram_bandwidth_Bps=_spec_attr(spec, "dram_bandwidth_Bps"),
        fp32_flop_per_s=flop * sms * float(spec.clock_hz) if flop else None,
        source=f"spec:{spec.name}",
    )


def facts_from_device(info: dict[str, Any], spec: Any = None) -> DeviceFacts:
    """DeviceFacts from Runtime.device_info(), falling back to the spec field by field."""
    base = facts_from_spec(spec) if spec is not None else None

    def pick(key: str, fallback: Any) -> Any:
        value = info.get(key)
        if value is None:
            value = fallback
        if value is None:
            raise BadArgument(f"device_info lacks '{key}' and no spec gives it (pass --gpu)")
        return value

    clock = info.get("sm_clock_max_hz") or info.get("sm_clock_hz")
    return DeviceFacts(
        name=str(info.get("name") or (base.name if base else "unknown")),
        sms=int(pick("sms", base.sms if base else None)),
        l2_bytes=int(pick("l2_bytes", base.l2_bytes if base else None)),
        max_threads_per_sm=int(pick("max_threads_per_sm",
                                    base.max_threads_per_sm if base else None)),
        clock_hz=float(clock or pick("clock_hz", base.clock_hz if base else None)),
        total_memory_bytes=info.get("total_memory_bytes"),
        dram_bandwidth_Bps=base.dram_bandwidth_Bps if base else None,
        fp32_flop_per_s=base.fp32_flop_per_s if base else None,
        source="device",
    )


@dataclass
class Context:
    """State shared by the measurements of one calibration run.

    rt: a gemmmodel.runtime Runtime; device: DeviceFacts; spec: the GpuSpec or None; bench:
    gemmmodel.runtime.measure.bench (tests may inject another); bench_budgets_s: measure.bench
    budget per suite (s); suite: the suite now running (the runner sets it); cache: what is
    made once per process (the measured clock, GEMM inputs, the vendor BLAS handle)."""

    rt: Any
    device: DeviceFacts
    spec: Any = None
    bench: Callable[..., Any] | None = None
    bench_budgets_s: dict[str, float] = field(default_factory=dict)
    suite: str = ""
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def bench_budget_s(self) -> float:
        """measure.bench budget of the running suite (s; DEFAULT_BENCH_BUDGET_S if unset)."""
        return self.bench_budgets_s.get(self.suite, DEFAULT_BENCH_BUDGET_S)

    def __post_init__(self) -> None:
        if self.bench is None:
            from gemmmodel.runtime.measure import bench

            self.bench = bench

    def time(self, launch_fn: Callable[[int], None], *, n_rotations: int = 1, inner: int = 1,
             hold_s: float = 0.0, timer: Callable | None = None, budget_s: float | None = None,
             **kwargs: Any):
        """measure.bench on this runtime's event timer; returns its BenchResult.

        inner: launches per timed sample; hold_s > 0: a spin kernel of at least that length
        runs before each sample's start event, so host launch gaps stay out of the measured
        time (runner.HeldTimer: lengthened where the host's enqueue outlasts it). timer: a
        ready one (runner.group_timer's) instead."""
        from gemmmodel.runtime.runner import HeldTimer

        if timer is None:
            timer = HeldTimer(self.rt, hold_s) if hold_s > 0 else self.rt.time_s
        return self.bench(launch_fn, timer=timer, n_rotations=n_rotations, inner=inner,
                          budget_s=budget_s or self.bench_budget_s, **kwargs)

    def micro_module(self, file_name: str, entries: list[str],
                     defines: dict[str, int] | None = None):
        """Compile (cached by the runtime) a microbenchmark source of kernels/micro/.

        The sources are CUDA only (inline PTX: %globaltimer, ld.volatile.shared): on another
        vendor's runtime the measurement is skipped with that reason."""
        vendor = getattr(self.rt, "vendor", "nvidia")
        if vendor != "nvidia":
            raise Skip(f"kernels/micro/{file_name} is CUDA only (inline PTX); this GPU is "
                       f"{vendor}")
        path = Path(MICRO_DIR) / file_name
        return self.rt.compile_file(path, entries, defines or {})
