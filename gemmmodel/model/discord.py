"""Where Kendall's tau loses its pairs: discordant pairs of a validation by shape.

Issue 6's tau is taken over every (kernel, shape) row at once, so a pair of rows counts as
discordant when the model orders their two times the other way round from the
measurements, whether the two rows share a shape or not. `discordance(rows)` splits them:

    within   pairs of rows of the same shape (the model mis-ranks two configs there)
    cross    pairs of rows of two shapes whose measured times overlap (the model's level
             for one shape against the other's, and the two shapes' scatter)
    tau_if_exact  tau over all rows with this shape's predictions replaced by its
             measured times: an upper bound on what fixing the model at this shape alone
             can give (its discordant pairs vanish, the rest stay)

and lists the shape pairs with the most cross-shape discordance. A pair is discordant when
sign(p_i - p_j) * sign(m_i - m_j) < 0 (ties count as neither), the pairs scipy's tau-b
counts as discordant.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def discordant_matrix(pred, meas) -> np.ndarray:
    """n x n booleans: pair (i, j) is ordered the other way round by `pred` and `meas`."""
    p = np.log(np.asarray(pred, dtype=float))
    m = np.log(np.asarray(meas, dtype=float))
    return (np.sign(p[:, None] - p[None, :]) * np.sign(m[:, None] - m[None, :])) < 0


def _tau(pred, meas) -> float | None:
    if len(pred) < 2:
        return None
    tau = stats.kendalltau(pred, meas).statistic
    return None if np.isnan(tau) else float(tau)


def discordance(rows: list[dict], top_pairs: int = 5) -> dict:
    """{pairs, discordant, within, cross, by_shape[], shape_pairs[]} of validation rows
    (each with `shape`, `predicted_s` and `measured_s`); module docstring."""
    if not rows:
        return {"pairs": 0, "discordant": 0, "within": 0, "cross": 0, "by_shape": [],
                "shape_pairs": []}
    pred = np.array([r["predicted_s"] for r in rows], dtype=float)
    meas = np.array([r["measured_s"] for r in rows], dtype=float)
    shapes = np.array([str(r["shape"]) for r in rows])
    disc = discordant_matrix(pred, meas)
    upper = np.triu(np.ones_like(disc), 1)
    same = shapes[:, None] == shapes[None, :]
    n = len(rows)
    names = sorted(set(shapes.tolist()))
    by_shape = []
    for shape in names:
        inside = shapes == shape
        exact = np.where(inside, meas, pred)
        by_shape.append({
            "shape": shape, "n": int(inside.sum()),
            "tau": _tau(pred[inside], meas[inside]),
            "within": int((disc & upper)[np.ix_(inside, inside)].sum()),
            "cross": int(disc[np.ix_(inside, ~inside)].sum()),
            "tau_if_exact": _tau(exact, meas),
        })
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            count = int(disc[np.ix_(shapes == a, shapes == b)].sum())
            if count:
                pairs.append({"shapes": [a, b], "discordant": count})
    pairs.sort(key=lambda x: -x["discordant"])
    return {"pairs": n * (n - 1) // 2, "discordant": int((disc & upper).sum()),
            "within": int((disc & upper & same).sum()),
            "cross": int((disc & upper & ~same).sum()),
            "by_shape": sorted(by_shape, key=lambda r: -(r["within"] + r["cross"])),
            "shape_pairs": pairs[:top_pairs]}


__all__ = ["discordance", "discordant_matrix"]
