"""Compile many kernels at once, in a pool of processes, into the on-disk cubin cache.

NVRTC needs no GPU and compiles one program per call, so a sweep over hundreds of template
configs spends most of its time compiling. `precompile(jobs, arch_flag)` runs NVRTC in
`workers` processes and writes each cubin to env GEMMMODEL_CUBIN_CACHE under the same key
`CudaRuntime._compile` looks up (gemmmodel.runtime.cuda.cubin_cache_path), so the sweep that
follows loads cubins instead of compiling. NVIDIA only: hiprtc has no such cache here.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from gemmmodel import KERNELS_DIR
from gemmmodel.errors import BadArgument


@dataclass(frozen=True)
class CompileJob:
    """One source file with its entries and -D defines (the LaunchPlan's compile part)."""

    source: Path
    entries: tuple[str, ...]
    defines: dict = field(default_factory=dict)


def _one(job: CompileJob, arch_flag: str) -> str:
    from gemmmodel.runtime.base import compile_options
    from gemmmodel.runtime.cuda import (
        NVRTC_BASE_OPTIONS, cubin_cache_path, nvrtc_compile, write_atomic,
    )

    text = job.source.read_text()
    opts = compile_options(arch_flag, job.defines, [job.source.parent, KERNELS_DIR],
                           NVRTC_BASE_OPTIONS)
    path = cubin_cache_path(text, opts, list(job.entries))
    if path.exists():
        return "cached"
    try:
        cubin, _ = nvrtc_compile(text, job.source.name, opts)
    except Exception as err:  # recorded, not raised: the sweep reports the failing config
        return f"error: {type(err).__name__}: {str(err)[:200]}"
    write_atomic(path, cubin)
    return "compiled"


def precompile(jobs: list[CompileJob], arch_flag: str, workers: int | None = None) -> dict:
    """Compile `jobs` into the cubin cache; returns counts of compiled / cached / errors."""
    if not os.environ.get("GEMMMODEL_CUBIN_CACHE"):
        raise BadArgument("precompile needs env GEMMMODEL_CUBIN_CACHE (a folder for cubins)")
    workers = workers or max(1, (os.cpu_count() or 2) - 1)
    counts: dict[str, int] = {"compiled": 0, "cached": 0, "error": 0}
    errors: list[str] = []
    ctx = mp.get_context("spawn")  # a fork of a process holding a CUDA context is unsafe
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        for job, status in zip(jobs, pool.map(_one, jobs, [arch_flag] * len(jobs),
                                              chunksize=4)):
            key = status.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
            if key == "error":
                errors.append(f"{job.source.name} {job.defines}: {status}")
    return {**counts, "errors": errors[:20]}
