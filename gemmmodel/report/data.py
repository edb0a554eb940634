"""The numbers behind a report page: every catalogue kernel and every measured (kernel,
shape) of one GPU, predicted by the model, next to the measurements (gemmmodel.explain).

Resources come from the compile-facts table, the GPU's own register reports (calibration)
or the model's estimate; the report never runs a compiler (reproducible, fast).
"""

from __future__ import annotations

from gemmmodel.errors import GemmModelError
from gemmmodel.explain import DEFAULT_SIZE, key_times, parse_shape, predict_ref, resources
from gemmmodel.measured import measured_times

#: Scatter points per GPU at most (the template sweep can be large; kept in file order).
MAX_POINTS = 3000


def _row(ref, spec, shape, calib, root) -> dict | None:
    try:
        pred, _, source = predict_ref(ref, spec, shape, calib, False, root)
    except GemmModelError:
        return None
    roof = pred.root.find("roofline_flops")
    pipes = pred.root.find("t_pipes_s")
    return {"kernel": ref.name, "kind": ref.kind, "shape": tuple(shape),
            "predicted_s": pred.time_s, "flops": pred.flops, "bottleneck": pred.bottleneck,
            "key_times": key_times(pred.root), "facts_source": source,
            "not_overlapped_s": pipes.inputs.get("not_overlapped_s", 0.0) if pipes else 0.0,
            "max_pipe_s": pipes.inputs.get("max_pipe_s", 0.0) if pipes else 0.0,
            "roofline": dict(roof.inputs) if roof else {},
            "resources": resources(pred, spec)}


def gpu_data(gpu: str, size=None, root=None) -> dict:
    """Kernels at `size` (default 4096^3), all measured points, lineage edges, for one GPU."""
    from gemmmodel.catalogue import lineage, load_catalogue, resolve
    from gemmmodel.model import load_calib
    from gemmmodel.spec import load_spec

    spec = load_spec(gpu)
    shape = parse_shape(size) if size else DEFAULT_SIZE
    calib = load_calib(spec.name, root)
    measured = measured_times(spec, root)
    catalogue = load_catalogue()
    kernels = {}
    for kid in catalogue:
        row = _row(resolve(kid), spec, shape, calib, root)
        if row is not None:
            hits = [m for m in measured if m.kernel == kid and tuple(m.shape) == shape]
            row["measured_s"] = hits[0].time_s if hits else None
            row["measured_source"] = hits[0].source if hits else None
            kernels[kid] = row
    points, seen = [], set()
    for m in measured:
        key = (m.kernel, tuple(m.shape))
        if key in seen or len(points) >= MAX_POINTS:
            continue
        seen.add(key)
        try:
            ref = resolve(m.kernel)
        except GemmModelError:
            continue
        if ref.kind not in ("catalogue", "template"):
            continue
        row = kernels.get(m.kernel) if tuple(m.shape) == shape else None
        row = row or _row(ref, spec, tuple(m.shape), calib, root)
        if row is not None:
            points.append({"kernel": m.kernel, "kind": ref.kind, "shape": tuple(m.shape),
                           "measured_s": m.time_s, "predicted_s": row["predicted_s"],
                           "source": m.source})
    edges = []
    for parent, child in lineage(catalogue).edges:
        a, b = kernels.get(parent), kernels.get(child)
        if a is None or b is None:
            continue
        meas = (a["measured_s"] / b["measured_s"]
                if a.get("measured_s") and b.get("measured_s") else None)
        edges.append({"parent": parent, "child": child,
                      "predicted_speedup": a["predicted_s"] / b["predicted_s"],
                      "measured_speedup": meas})
    return {"spec": spec, "shape": shape, "calib": calib, "kernels": kernels,
            "points": points, "edges": edges}
