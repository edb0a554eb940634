"""The occupancy oracle: resident blocks per SM by the driver's occupancy calculator
(Runtime.occupancy, cuOccupancyMaxActiveBlocksPerMultiprocessor on NVIDIA) and the registers
per thread of the compiled code, for every catalogue kernel and every template config of
gemmmodel.template.search_space(spec). The rows are the test oracle of gemmmodel.occupancy.

The kernels and template suites plan these next to the sweeps of the same kernel, so a kernel
is compiled once for both (Runtime.compile caches modules per process).
"""

from __future__ import annotations

from typing import Any

from gemmmodel.calibrate.plan import Skip, rows_for
from gemmmodel.errors import BadArgument, GemmModelError, InvalidConfig

#: Shape of the launch plan whose module and block size are examined (every catalogue
#: kernel's multiple_of divides 4096).
OCCUPANCY_SHAPE = (4096, 4096, 4096)


def occupancy_rows(ctx, plan) -> list[dict[str, Any]]:
    """Rows occupancy_blocks_per_sm and regs_per_thread of a LaunchPlan's kernel."""
    rt = ctx.rt
    module = rt.compile_plan(plan)
    threads = plan.threads_per_block
    blocks = rt.occupancy(module, plan.entry, threads, plan.shared_bytes)
    attrs = rt.function_attributes(module, plan.entry)
    note = (f"threads={threads} static_smem_bytes={attrs.get('static_smem_bytes')} "
            f"dynamic_smem_bytes={plan.shared_bytes} local_bytes={attrs.get('local_bytes')}")
    return rows_for({"occupancy_blocks_per_sm": blocks, "regs_per_thread": attrs.get("regs")},
                    note=note)


def run_catalogue(ctx, kernel_id: str) -> list[dict[str, Any]]:
    from gemmmodel.catalogue import resolve

    try:
        plan = resolve(kernel_id).plan(*OCCUPANCY_SHAPE)
    except BadArgument as err:
        raise Skip(f"no launch plan at {OCCUPANCY_SHAPE}: {err}") from None
    return occupancy_rows(ctx, plan)


def run_template(ctx, config: Any) -> list[dict[str, Any]]:
    try:
        plan = config.plan(*OCCUPANCY_SHAPE)
    except (BadArgument, InvalidConfig) as err:
        raise Skip(f"no launch plan at {OCCUPANCY_SHAPE}: {err}") from None
    return occupancy_rows(ctx, plan)


def catalogue_ids() -> tuple[list[str], str]:
    """(catalogue ids in file order, '' or why the catalogue could not be read)."""
    try:
        from gemmmodel.catalogue import load_catalogue

        return list(load_catalogue()), ""
    except (GemmModelError, OSError, ValueError) as err:  # missing or unreadable catalogue
        return [], f"catalogue not readable: {type(err).__name__}: {err}"


def template_configs(spec: Any) -> tuple[list[Any], str]:
    """(template configs of search_space(spec), '' or why there are none)."""
    if spec is None:
        return [], "no GPU spec for this device: the template search space needs one (--gpu)"
    try:
        from gemmmodel.template import search_space
    except ImportError as err:
        return [], f"gemmmodel.template not importable: {err}"
    try:
        return list(search_space(spec)), ""
    except (GemmModelError, ValueError, TypeError, AttributeError, KeyError) as err:
        return [], f"template.search_space failed: {type(err).__name__}: {err}"
