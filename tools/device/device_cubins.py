"""The cubins the device's NVRTC builds for every search-space config, packed to come back.

    GEMMMODEL_CUBIN_CACHE=/tmp/cubins python3 tools/device/device_cubins.py --out $OUT

The model's compile facts (calibration/template_facts_sm_90*.csv) come from the local nvcc,
whose register counts differ from the device NVRTC's by up to 37 (docs/model.md, session
64), so its SASS is not always the code that ran. This compiles the sweep's builds exactly
as tools/device/acceptance.py precompile does (plain, bounds-checked and batched, into the
same cubin cache), then writes $OUT/device_cubins_sm_90.tar.xz: every cubin, named by its
cache key, and manifest.csv (config, build, entries, key, bytes) with the NVRTC version.
Disassemble them with `nvdisasm -c` (gemmmodel.compile.sass reads that text).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from acceptance import _runtime, sweep_jobs

from gemmmodel import KERNELS_DIR
from gemmmodel.runtime.base import compile_options
from gemmmodel.runtime.cuda import NVRTC_BASE_OPTIONS, cubin_cache_path
from gemmmodel.runtime.precompile import precompile


def _nvrtc_version() -> str:
    from cuda.bindings import nvrtc

    _err, major, minor = nvrtc.nvrtcVersion()
    return f"{major}.{minor}"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--workers", type=int, default=None)
    args = p.parse_args()
    rt = _runtime()
    arch = rt.arch_flag()
    rows = sweep_jobs(rt)
    t0 = time.time()
    counts = precompile([job for _, _, job in rows], arch, workers=args.workers)
    manifest = io.StringIO()
    writer = csv.writer(manifest)
    writer.writerow(["config", "build", "entries", "key", "bytes"])
    out = Path(args.out) / "device_cubins_sm_90.tar.xz"
    missing = 0
    with tarfile.open(out, "w:xz") as tar:
        for name, build, job in rows:
            opts = compile_options(arch, job.defines, [job.source.parent, KERNELS_DIR],
                                   NVRTC_BASE_OPTIONS)
            path = cubin_cache_path(job.source.read_text(), opts, list(job.entries))
            if path is None or not path.exists():
                missing += 1
                continue
            writer.writerow([name, build, " ".join(job.entries), path.name,
                             path.stat().st_size])
            tar.add(path, arcname=f"cubins/{path.name}")
        meta = json.dumps({"nvrtc": _nvrtc_version(), "arch_flag": arch,
                           "device": rt.device_info()["name"], "precompile": counts,
                           "builds": len(rows), "missing": missing,
                           "seconds": round(time.time() - t0, 1)}, indent=1).encode()
        for arcname, data in (("manifest.csv", manifest.getvalue().encode()),
                              ("meta.json", meta)):
            info = tarfile.TarInfo(arcname)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    print(json.dumps({"out": str(out), "bytes": out.stat().st_size, "builds": len(rows),
                      "missing": missing, **{k: v for k, v in counts.items()
                                             if k != "errors"}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
