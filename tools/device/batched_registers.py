"""Registers per thread of the builds the GPU runs, as its own compiler (NVRTC) makes them:
for every config of the GPU's template search space, the strided-batched entry
(sgemm_tile_batched_nn, what batched launches run) and the uniform entry's bounds-checked
build (sgemm_tile, EDGE=1), read back with cuFuncGetAttribute. Compiles run in worker
processes, each with its own runtime. Run on the GPU machine (device run W):

    PYTHONPATH=. python3 tools/device/batched_registers.py OUT_DIR [--gpu h200] [--jobs 8]

writes OUT_DIR/build_registers.csv (config, build, entry, regs, static_smem_bytes,
local_bytes) and prints progress and a short summary.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def _worker(names: list[str]) -> list[dict]:
    from gemmmodel.batched import compile_batched
    from gemmmodel.runtime import get_runtime
    from gemmmodel.template import parse_name
    from gemmmodel.template.plan import BATCHED_ENTRIES

    rt = get_runtime("nvidia")
    rows = []
    for name in names:
        cfg = parse_name(name)
        builds = (("batched", BATCHED_ENTRIES[(False, False)], lambda: compile_batched(rt, cfg)),
                  ("edge", None, None))
        for build, entry, make in builds:
            try:
                if build == "edge":
                    plan = cfg.plan(cfg.bm * 2 + 1, cfg.bn * 2 + 1, cfg.bk * 4, edge=True)
                    entry, module = plan.entry, rt.compile_plan(plan)
                else:
                    module = make()
                attrs = rt.function_attributes(module, entry)
                rows.append({"config": name, "build": build, "entry": entry,
                             "regs": attrs.get("regs"),
                             "static_smem_bytes": attrs.get("static_smem_bytes"),
                             "local_bytes": attrs.get("local_bytes"), "error": ""})
            except Exception as err:  # one config's failure is a row, not a stop
                rows.append({"config": name, "build": build, "entry": entry or "",
                             "regs": "", "static_smem_bytes": "", "local_bytes": "",
                             "error": " ".join(str(err).split())[:200]})
        print(f"  {name}: done", flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--jobs", type=int, default=8)
    args = ap.parse_args()
    from gemmmodel.spec import load_spec
    from gemmmodel.template import search_space

    names = sorted(c.name for c in search_space(load_spec(args.gpu)))
    chunks = [names[i::args.jobs] for i in range(args.jobs)]
    t0 = time.time()
    rows: list[dict] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for part in pool.map(_worker, chunks):
            rows.extend(part)
    rows.sort(key=lambda r: (r["config"], r["build"]))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "build_registers.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    bad = sum(1 for r in rows if r["error"])
    print(f"{len(rows)} rows ({bad} errors) in {time.time() - t0:.0f} s -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
