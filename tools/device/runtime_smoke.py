"""One device run that exercises the runtime layer end to end; results go to $OUT.

    PYTHONPATH=. python3 tools/device/runtime_smoke.py

(a) device_info; (b) NVRTC compile + launch + check of a small kernel, and the effect of the
spin hold on the timing of a tiny kernel; (c) the NVIDIA occupancy fixture
(occupancy_probe.py); (d) cuBLAS FP32 through CuPy: error and time at several sizes and the
strided-batched contest cases, plus the alpha/beta path; (e) two template configs and the
batched kernel, where those modules exist; (f) every catalogue kernel at 1024^3 with
--check (catalogue.toml, or its catalogue_*.toml parts); (g) the runtime pytest files. Each section is
independent: a failure is printed and the run goes on.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

OUT = Path(os.environ.get("OUT", "smoke_out"))
REPORT: dict = {}


def section(name):
    def wrap(fn):
        def run(*args):
            t0 = time.time()
            print(f"\n=== {name}", flush=True)
            try:
                REPORT[name] = fn(*args)
            except Exception as err:  # noqa: BLE001 - one broken section must not hide others
                traceback.print_exc()
                REPORT[name] = {"error": f"{type(err).__name__}: {err}"}
            print(f"=== {name} done in {time.time() - t0:.1f} s", flush=True)
        return run
    return wrap


SAXPY = """
#include "gemm_port.h"
GM_KERNEL void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


@section("device_info")
def device_info(rt):
    info = rt.device_info()
    print(json.dumps(info, indent=1))
    return info


@section("nvrtc_launch")
def nvrtc_launch(rt):
    from gemmmodel import KERNELS_DIR
    from gemmmodel.runtime.measure import bench

    module = rt.compile(SAXPY, ["saxpy"], include_dirs=[KERNELS_DIR])
    n = 1 << 20
    rng = np.random.default_rng()
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    xb, yb = rt.upload(x), rt.upload(y)
    rt.launch(module, "saxpy", (n // 256, 1, 1), (256, 1, 1), [n, 2.5, xb, yb])
    rt.synchronize()
    err = float(np.max(np.abs(rt.download(yb, (n,)) - (2.5 * x + y))))
    print(f"saxpy max abs err {err:.3g}; attrs {rt.function_attributes(module, 'saxpy')}")
    # tiny kernel: one event pair per launch with and without the spin hold, and inner=32
    small = 256

    def launch(_i):
        rt.launch(module, "saxpy", (1, 1, 1), (256, 1, 1), [small, 1.0, xb, yb])
    timings = {}
    for label, kwargs, hold in (("plain", {}, 0.0), ("hold", {}, 60e-6),
                                ("hold_inner32", {"inner": 32}, 32 * 30e-6 + 30e-6)):
        res = bench(launch, timer=lambda fn, h=hold: rt.time_s(fn, h), budget_s=0.3, **kwargs)
        timings[label] = res.to_dict()
        print(f"tiny saxpy {label}: median {res.median_s * 1e6:.2f} us, "
              f"spread {res.spread:.3f}, reps {res.reps}")
    rt.free(xb)
    rt.free(yb)
    return {"max_abs_err": err, "tiny_kernel": timings}


@section("cublas")
def cublas(rt):
    from gemmmodel.runtime.check import check_gemm
    from gemmmodel.runtime.runner import run_kernels
    from gemmmodel.runtime.vendor import vendor_blas

    blas = vendor_blas(rt)
    m, n, k = 512, 384, 640
    ab = check_gemm(rt, lambda a, b, c, al, be: blas.sgemm(m, n, k, al, a, b, be, c), m, n, k,
                    alpha=0.75, beta=-0.5)
    print(f"cublas alpha/beta path (cupy.cublas.gemm) 512x384x640: rel_err {ab.rel_err:.3g} "
          f"passed {ab.passed}")
    sizes = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
             (64, 64, 32, 30), (128, 128, 64, 20), (128, 512, 256, 10)]
    rows = run_kernels(rt, ["cublas"], sizes, check=True, budget_s=1.0,
                       progress=lambda s: print(s, flush=True))
    for r in rows:
        tf = (r.flop_per_s or 0) / 1e12
        print(f"{r.size:>18}  median {r.median_s * 1e6 if r.median_s else -1:10.2f} us  "
              f"{tf:6.2f} TFLOP/s  spread {r.spread}  rel_err {r.rel_err}  {r.status} "
              f"{r.reason} {r.extra}")
    rc, text = _cli(["run", "--kernel", "cublas", "--size", "2048x2048x2048", "--check",
                     "--budget", "0.5"])
    print(f"gemmmodel run (rc {rc}):\n{text}")
    return {"alpha_beta_check": ab.to_dict(), "rows": [r.to_dict() for r in rows]}


@section("occupancy")
def occupancy(rt):
    import occupancy_probe

    data = occupancy_probe.measure(rt)
    slug = occupancy_probe.gpu_slug(data["provenance"]["gpu"] or "gpu")
    path = OUT / f"nvidia_occupancy_{slug}.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    for c in data["cases"]:
        print(f"{c['name']:<45} regs {c['regs']:3d} local {c['local_bytes']:4d} "
              f"static {c['static_smem_bytes']:6d} dyn {c['dynamic_smem_bytes']:6d} "
              f"-> {c['blocks_per_sm']} blocks/SM")
    return {"file": path.name, "cases": len(data["cases"])}


def _cli(argv):
    from gemmmodel import cli

    usable = []
    for name in cli.COMMANDS:
        try:
            importlib.import_module(f"gemmmodel.commands.{name}")
            usable.append(name)
        except Exception as err:  # noqa: BLE001 - another helper's command may be broken
            print(f"(command {name} not importable: {type(err).__name__})")
    cli.COMMANDS = usable
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cli.main(argv)
    return rc, buf.getvalue()


@section("catalogue_all")
def catalogue_all(rt):
    from gemmmodel import KERNELS_DIR
    from gemmmodel.catalogue import KernelRef, load_catalogue
    from gemmmodel.runtime.runner import run_refs

    if (KERNELS_DIR / "catalogue.toml").exists():
        rt.close()  # drop the earlier modules and buffers; the CLI opens its own runtime
        rc, text = _cli(["run", "--kernel", "all", "--size", "1024x1024x1024", "--check",
                         "--budget", "0.3", "--out", str(OUT / "run_all_1024.csv")])
        print(text)
        return {"rc": rc}
    parts = sorted(KERNELS_DIR.glob("catalogue_*.toml"))
    if not parts:
        print("no kernels/catalogue*.toml: skipped")
        return {"skipped": "no catalogue"}
    refs = []
    for part in parts:  # the catalogue is still in parts: run each part's entries
        refs += [KernelRef(name=kid, kind="catalogue", entry=e)
                 for kid, e in load_catalogue(part).items()]
    rows = run_refs(rt, refs, [(1024, 1024, 1024)], check=True, budget_s=0.3,
                    progress=lambda s: print(s, flush=True))
    from gemmmodel.commands.run import render, write_csv

    payload = {"device": rt.device_info(), "rows": [r.to_dict() for r in rows]}
    write_csv(str(OUT / "run_all_1024.csv"), payload["rows"])
    print(render(payload))
    return {"parts": [p.name for p in parts], "rows": payload["rows"]}


@section("template")
def template(rt):
    from gemmmodel.catalogue import KernelRef
    from gemmmodel.runtime.runner import run_refs
    from gemmmodel.template import resolve_template_name

    refs = []
    for name in ("128x128x8/8x8", "64x64x16/4x4"):
        cfg = resolve_template_name(name)
        refs.append(KernelRef(name=cfg.name, kind="template", config=cfg))
    rows = run_refs(rt, refs, [(2048, 2048, 2048), (4096, 4096, 4096)], check=True,
                    budget_s=1.0, progress=lambda s: print(s, flush=True))
    from gemmmodel.commands.run import render

    payload = {"device": rt.device_info(), "rows": [r.to_dict() for r in rows]}
    print(render(payload))
    return {"rows": payload["rows"]}


@section("batched")
def batched(rt):
    from gemmmodel.catalogue import KernelRef
    from gemmmodel.runtime.runner import run_refs

    rows = run_refs(rt, [KernelRef(name="batched", kind="batched")],
                    [(64, 64, 32, 30), (128, 128, 64, 20), (128, 512, 256, 10)], check=True,
                    budget_s=1.0, progress=lambda s: print(s, flush=True))
    from gemmmodel.commands.run import render

    payload = {"device": rt.device_info(), "rows": [r.to_dict() for r in rows]}
    print(render(payload))
    return {"rows": payload["rows"]}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    from gemmmodel.runtime import get_runtime

    rt = get_runtime()
    device_info(rt)
    nvrtc_launch(rt)
    occupancy(rt)
    cublas(rt)
    template(rt)
    batched(rt)
    catalogue_all(rt)
    (OUT / "smoke.json").write_text(json.dumps(REPORT, indent=1, default=str) + "\n")
    print("\n=== pytest -m gpu", flush=True)
    tests = [str(p) for p in sorted(Path("tests").glob("test_runtime_*.py"))]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", *tests],
                          capture_output=True, text=True, check=False)
    (OUT / "pytest_runtime.log").write_text(proc.stdout + proc.stderr)
    print(proc.stdout[-3000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
