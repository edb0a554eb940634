"""The Term: one named quantity of the model with its unit, formula, inputs and sub-terms.

Every model function returns a Term (docs/design.md "Model terms"), so `explain` can print
the tree and `--json` can carry it. Values are SI (s, B, FLOP, Hz) or plain counts; `unit`
names the unit, `formula` writes the rule with the symbols used in `inputs`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Term:
    """One quantity of the model. `inputs` maps each symbol of `formula` to the value used;
    a symbol whose value came from the spec or calibration names that in `note` or in the
    input key's sub-term. `children` are the sub-terms the value was computed from."""

    name: str
    value: float
    unit: str
    formula: str
    inputs: dict = field(default_factory=dict)
    children: tuple = ()
    note: str = ""

    def child(self, name: str) -> Term:
        """The first term called `name` in this tree (depth first, self included)."""
        for term in self.walk():
            if term.name == name:
                return term
        raise KeyError(f"no term {name!r} under {self.name!r}")

    def find(self, name: str) -> Term | None:
        """Like child() but None when absent."""
        try:
            return self.child(name)
        except KeyError:
            return None

    def walk(self) -> Iterator[Term]:
        """Every term of the tree, depth first, self first."""
        yield self
        for sub in self.children:
            yield from sub.walk()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (NaN/inf become None)."""
        return {
            "name": self.name,
            "value": _clean(self.value),
            "unit": self.unit,
            "formula": self.formula,
            "inputs": {k: _clean(v) for k, v in self.inputs.items()},
            "note": self.note,
            "children": [c.to_dict() for c in self.children],
        }


def _clean(value: Any) -> Any:
    if isinstance(value, Term):
        return value.to_dict()
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    return value


def leaf(name: str, value: float, unit: str, source: str, note: str = "") -> Term:
    """A term that is an input (spec, calibration, parameter): `formula` names its source."""
    return Term(name=name, value=float(value), unit=unit, formula=source, inputs={},
                note=note)
