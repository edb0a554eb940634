"""The analytic model: pure term functions, their combination, the fit and validation.

`predict_kernel(params, facts, spec, shape, calib)` -> Prediction(time_s, bottleneck, root).
params: the kernel parameter dict (docs/design.md); facts: KernelFacts, a dict with the same
keys, or None (then the counts and registers come from the parameters); spec: GpuSpec;
shape: (M, N, K[, batch]); calib: Calib or None (spec values and DEFAULT_FIT).
The formulas, units and sources of every term are written down in docs/model.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from gemmmodel.model.assemble import assemble, flop, normalise_shape
from gemmmodel.model.calib import DEFAULT_FIT, Calib, load_calib
from gemmmodel.model.combine import Components, evaluate
from gemmmodel.model.combine_tree import bottleneck, build_tree
from gemmmodel.model.terms import Term


@dataclass(frozen=True)
class Prediction:
    """Predicted time (s) of one launch, the bottleneck's name and the term tree."""

    time_s: float
    bottleneck: str
    root: Term
    flops: float = 0.0   # achieved FLOP/s = flop / time_s

    def to_dict(self) -> dict:
        return {"time_s": self.time_s, "bottleneck": self.bottleneck,
                "flops": self.flops, "root": self.root.to_dict()}


def predict_components(comp: Components, shape, calib: Calib | None = None) -> Prediction:
    theta = calib.theta() if calib is not None else dict(DEFAULT_FIT)
    parts = evaluate(comp, theta)
    root = build_tree(comp, theta, parts)
    t = parts["total"]
    return Prediction(time_s=t, bottleneck=bottleneck(parts, comp), root=root,
                      flops=flop(shape) / t if t > 0 else 0.0)


def predict_kernel(params: dict, facts, spec, shape, calib: Calib | None = None) -> Prediction:
    """Predict one launch of the kernel `params` on `spec` at `shape` (see module doc)."""
    comp = assemble(params, facts, spec, shape, calib)
    return predict_components(comp, normalise_shape(shape), calib)


__all__ = [
    "DEFAULT_FIT",
    "Calib",
    "Prediction",
    "Term",
    "assemble",
    "load_calib",
    "predict_components",
    "predict_kernel",
]
