"""`gemmmodel kernels`: the catalogue and its lineage."""

from __future__ import annotations

import networkx as nx

from gemmmodel import catalogue
from gemmmodel.commands._common import add_json_flag, emit


def add_parser(sub) -> None:
    p = sub.add_parser("kernels", help="list the kernel catalogue and its lineage")
    p.add_argument("--kernel", help="show one kernel (id or alias)")
    add_json_flag(p)
    p.set_defaults(func=run)


def _payload(kernel: str | None) -> dict:
    entries = catalogue.load_catalogue()
    graph = catalogue.lineage(entries)
    if kernel:
        ref = catalogue.resolve(kernel)
        if ref.entry is None:
            return {"kernel": ref.name, "kind": ref.kind}
        data = ref.entry.to_dict()
        data["children"] = sorted(graph.successors(ref.entry.id))
        data["path_from_root"] = _path_from_root(graph, ref.entry.id)
        return {"kernel": data}
    return {
        "kernels": [e.to_dict() for e in entries.values()],
        "lineage": {"edges": [list(edge) for edge in graph.edges()],
                    "roots": [n for n in graph.nodes if graph.in_degree(n) == 0]},
    }


def _path_from_root(graph: nx.DiGraph, node: str) -> list[str]:
    path = [node]
    while True:
        preds = list(graph.predecessors(path[0]))
        if not preds:
            return path
        path.insert(0, preds[0])


def _render(payload: dict) -> str:
    if "kernel" in payload and isinstance(payload["kernel"], dict):
        k = payload["kernel"]
        p = k["params"]
        lines = [f"{k['id']}: {k['title']}", f"  lineage: {' -> '.join(k['path_from_root'])}",
                 f"  technique: {k['technique']}",
                 f"  source: kernels/{k['source']} ({k['entry']}), block {k['block']}",
                 "  params: " + ", ".join(f"{key}={val}" for key, val in p.items()),
                 f"  shapes: multiples of {k['multiple_of']}"]
        if k["aliases"]:
            lines.append(f"  aliases: {', '.join(k['aliases'])}")
        if k["notes"]:
            lines.append(f"  notes: {k['notes']}")
        return "\n".join(lines)
    if "kernel" in payload:
        return f"{payload['kernel']}: {payload['kind']}"
    lines = [f"{'id':<5} {'parent':<7} {'tile':<16} {'thr':>4}  title"]
    for k in payload["kernels"]:
        p = k["params"]
        tile = f"{p.get('BM')}x{p.get('BN')}x{p.get('BK')}/{p.get('TM', 1)}x{p.get('TN', 1)}"
        lines.append(f"{k['id']:<5} {k['parent'] or '-':<7} {tile:<16} {p.get('threads', 0):>4}"
                     f"  {k['title']}" + (f"  [{', '.join(k['aliases'])}]" if k["aliases"] else ""))
    roots = ", ".join(payload["lineage"]["roots"])
    lines.append(f"lineage: {len(payload['lineage']['edges'])} edges, roots {roots}")
    return "\n".join(lines)


def run(args) -> int:
    return emit(args, _payload(args.kernel), _render)
