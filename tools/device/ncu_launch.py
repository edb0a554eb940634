"""Launch kernels ONCE each, for Nsight Compute to count (run under `ncu`, device machine).

    ncu --csv --page raw -k regex:mb_smem_pattern ... python3 tools/device/ncu_launch.py patterns
    ncu --csv --page raw -k regex:sgemm ... python3 tools/device/ncu_launch.py configs \
        --size 2048x2048x2048 CONFIG [CONFIG ...]      # or MxNxKxBATCH: strided-batched

`patterns`: mb_smem_pattern (kernels/micro/smem.cu) for every pattern of
gemmmodel.calibrate.micro_compute.SMEM_PATTERNS at 32/64/128 bits, in that order (the order
is printed as `order,<index>,<bits>,<pattern>` lines so ncu's rows can be matched).
`configs`: each template config (or catalogue id) once at --size on fresh random inputs; a
template config name ending in `+edge` launches its bounds-checked build (EDGE=1) even
where the shape is a tile multiple.
Timing is not the point here (ncu serialises and replays); counts are.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def patterns(rt) -> None:
    from gemmmodel.calibrate.micro_compute import NEVER, SMEM_PATTERNS, SMEM_PATTERN_BITS
    from gemmmodel import KERNELS_DIR

    idx = 0
    for bits in SMEM_PATTERN_BITS:
        module = rt.compile_file(Path(KERNELS_DIR) / "micro" / "smem.cu", ["mb_smem_pattern"],
                                 {"VEC": bits // 32})
        sink, timing = rt.alloc(4 * 1024), rt.alloc(16)
        for name, table in SMEM_PATTERNS.items():
            buf = rt.upload(np.asarray(table, dtype=np.int32))
            rt.launch(module, "mb_smem_pattern", (1, 1, 1), (1024, 1, 1),
                      [buf, 4, NEVER, sink, timing])
            rt.synchronize()
            rt.free(buf)
            print(f"order,{idx},{bits},{name}", flush=True)
            idx += 1
        rt.free(sink)
        rt.free(timing)


def configs(rt, names: list[str], size: str) -> None:
    """Each config once at `size`: MxNxK through its launch plan, MxNxKxBATCH (batch > 1)
    through the strided-batched entry as tools/device/acceptance.py sweep times it."""
    from gemmmodel.batched import compile_batched, kernel_args, launch_spec, row_major_problem
    from gemmmodel.catalogue import resolve
    from gemmmodel.template import parse_name

    m, n, k, *rest = (int(x) for x in size.lower().split("x"))
    batch = rest[0] if rest else 1
    rng = np.random.default_rng(11)
    bufs = [rt.upload(rng.uniform(-1, 1, batch * r * c).astype(np.float32))
            for r, c in ((m, k), (k, n), (m, n))]
    for idx, name in enumerate(names):
        if batch > 1:
            cfg = parse_name(name)
            prob = row_major_problem(m, n, k, batch)
            entry, grid, block = launch_spec(prob, cfg)
            rt.launch(compile_batched(rt, cfg), entry, grid, block,
                      kernel_args(prob, bufs[1], bufs[0], bufs[2]))
        else:
            plan = (parse_name(name[:-len("+edge")]).plan(m, n, k, edge=True)  # EDGE=1 forced
                    if name.endswith("+edge") else resolve(name).plan(m, n, k))
            entry = plan.entry
            rt.launch_plan(rt.compile_plan(plan), plan, m, n, k, 1.0, bufs[0], bufs[1], 0.0,
                           bufs[2])
        rt.synchronize()
        print(f"order,{idx},{name},{entry},{size}", flush=True)
    for b in bufs:
        rt.free(b)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["patterns", "configs"])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--size", default="2048x2048x2048")
    args = ap.parse_intermixed_args()
    from gemmmodel.runtime import get_runtime

    rt = get_runtime("nvidia")
    if args.mode == "patterns":
        patterns(rt)
    else:
        configs(rt, args.names, args.size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
