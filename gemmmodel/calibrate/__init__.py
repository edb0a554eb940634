"""Calibration on the GPU machine: microbenchmarks and kernel sweeps into calibration/<gpu>/.

Layout of the package (one job per module):
- store.py       CSV schema (columns, quantities and their units), append-only writes, keys
- provenance.py  provenance.json: GPU, clocks before/after, driver, CUDA, commit, date, host
- plan.py        Measurement (suite, name, params, estimated time, run) and row helpers
- runner.py      skip what is stored, budgets, progress, one append per measurement
- context.py     DeviceFacts (from the device or a spec) and the per-run Context
- micro_*.py     microbenchmarks (CUDA sources in kernels/micro/)
- gemm.py        check + time one GEMM on per-shape cached inputs; oracle.py occupancy rows
- sweeps.py      the kernels, template and batched sweeps
- suites.py      plan of all suites, dry run, run_calibration
- summary.py     summary.json (headlines next to the spec); load.py DataFrames;
  validate.py    schema / units / provenance check of a calibration folder
"""

from gemmmodel.calibrate.load import load, load_provenance
from gemmmodel.calibrate.store import COLUMNS, QUANTITIES, SUITES
from gemmmodel.calibrate.suites import dry_run, parse_suites, plan_suites, run_calibration

__all__ = ["COLUMNS", "QUANTITIES", "SUITES", "dry_run", "load", "load_provenance",
           "parse_suites", "plan_suites", "run_calibration"]
