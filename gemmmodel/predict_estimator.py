"""How good is the register estimate `predict` uses for configs never compiled?

`check(spec, n, seed)` compiles a named sample of the template search space for the spec's
compile target (hipcc / nvcc through gemmmodel.compile, disk-cached), and stores per config
the compiler's registers per thread next to two estimates:
  model  gemmmodel.model.waves.resources(..., facts=None).regs: what the model uses when
         no compile facts exist (including its cap for compilers that plan for larger
         blocks), i.e. what `predict` ranks with on the estimator path;
  rules  gemmmodel.template.estimate_registers: what the validity rules use.
Rows go to calibration/register_estimate.csv (one block of rows per target; a new check
of a target replaces its rows). The sample is random.Random(seed).sample(search_space, n),
so (target, seed, n) names it and the file lists every config. `summary(target)` gives the
relative errors (estimate / compiler - 1): n, mean |error|, bias, min, max.
"""

from __future__ import annotations

import csv
import os
import random
import statistics
from datetime import datetime, timezone
from pathlib import Path

from gemmmodel import CALIBRATION_DIR
from gemmmodel.errors import BadArgument, GemmModelError

FILE = CALIBRATION_DIR / "register_estimate.csv"
COLUMNS = ("target", "spec", "seed", "sample_size", "config", "compiler", "compiler_regs",
           "spills", "model_estimate", "rules_estimate", "date_utc")


def sample(spec, n: int, seed: int) -> list:
    """The named sample: n configs of search_space(spec) drawn with random.Random(seed)."""
    from gemmmodel.template import search_space

    space = search_space(spec)
    if n < 1 or n > len(space):
        raise BadArgument(f"sample size must be 1..{len(space)}, got {n}")
    return random.Random(seed).sample(space, n)


def estimates(cfg, spec) -> tuple[int, int]:
    """(model estimate, rules estimate) of registers per thread for one config."""
    from gemmmodel.model.kernel import describe
    from gemmmodel.model.waves import resources
    from gemmmodel.template import estimate_registers

    desc = describe(cfg.params(int(spec.wave_size)))
    return int(resources(desc, spec, None).regs), int(estimate_registers(cfg))


def check(spec, n: int = 12, seed: int = 2026, path: Path | None = None,
          progress=None) -> list[dict]:
    """Compile the sample and store the comparison (module docstring); returns the rows."""
    from gemmmodel.compile import compile_facts
    from gemmmodel.template import ENTRY, TEMPLATE_SOURCE

    rows = []
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for i, cfg in enumerate(sample(spec, n, seed)):
        if progress:
            progress(f"[{i + 1}/{n}] {cfg.name} for {spec.compile_target}")
        facts = compile_facts(TEMPLATE_SOURCE, spec, defines=cfg.defines(), entry=ENTRY)[0]
        regs = facts.vgprs if facts.vgprs is not None else facts.regs
        if not regs:
            raise GemmModelError(f"{cfg.name}: the compiler reported no register count")
        model, rules = estimates(cfg, spec)
        rows.append({"target": spec.compile_target, "spec": spec.name, "seed": seed,
                     "sample_size": n, "config": cfg.name,
                     "compiler": facts.compiler.split("|")[0].strip(), "compiler_regs": regs,
                     "spills": facts.spills, "model_estimate": model, "rules_estimate": rules,
                     "date_utc": stamp})
    write(rows, spec.compile_target, path)
    return rows


def read(path: Path | None = None) -> list[dict]:
    path = Path(path or FILE)
    if not path.is_file():
        return []
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def write(rows: list[dict], target: str, path: Path | None = None) -> Path:
    """Replace the rows of `target` in the file with `rows` (atomic rename)."""
    path = Path(path or FILE)
    kept = [r for r in read(path) if r["target"] != target] + rows
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for row in kept:
            writer.writerow({c: row.get(c, "") for c in COLUMNS})
    os.replace(tmp, path)
    return path


def _stats(errors: list[float]) -> dict:
    return {"mean_abs_error": statistics.fmean(abs(e) for e in errors),
            "bias": statistics.fmean(errors), "min_error": min(errors),
            "max_error": max(errors)}


def summary(target: str, path: Path | None = None) -> dict | None:
    """Relative errors of both estimates for one compile target (None without data)."""
    rows = [r for r in read(path) if r["target"] == target]
    if not rows:
        return None
    comp = [float(r["compiler_regs"]) for r in rows]
    model = [float(r["model_estimate"]) / c - 1 for r, c in zip(rows, comp)]
    rules = [float(r["rules_estimate"]) / c - 1 for r, c in zip(rows, comp)]
    return {"target": target, "n": len(rows), "seed": int(rows[0]["seed"]),
            "compiler": rows[0]["compiler"], "date_utc": rows[0]["date_utc"],
            "file": str(Path(path or FILE).relative_to(CALIBRATION_DIR.parent))
            if Path(path or FILE).is_relative_to(CALIBRATION_DIR.parent) else str(path),
            "model": _stats(model), "rules": _stats(rules),
            "sample": [r["config"] for r in rows]}
