"""Main-loop finder: natural loops of the control-flow graph of a Listing.

Blocks start at labels and after branches. A back edge is an edge u -> h whose head h
dominates u; its natural loop is h plus every block that reaches u without passing h.
Loops with the same header are merged. The main loop is the loop with the most FMA
instructions; among equals the smallest (innermost) one. Where that loop holds another
loop with FMAs and a barrier, the main loop is that inner loop (the most FMAs among such,
again descending): the outer one is a loop over whole block problems, such as the batch
loop of the strided-batched entries (`for z ...` around the tile loop), whose body also
holds the tile loop's prologue, peeled last step and epilogue; the tile loop is what runs
once per tile iteration. Blocks unreachable from the
entry (e.g. the self-branch nvdisasm shows after EXIT) take no part.

One trip's path (`MainLoop.path`): the loop's instructions hold every branch of its body,
e.g. both the unchecked and the bounds-checked loads of a tile (sgemm_tile with EDGE=1),
which one trip never runs together. The path walks the body from the header: it falls
through conditional branches (compilers lay the expected path out straight), follows
unconditional ones, and stops at the back edge, at a block outside the body or at a block
already walked. Where that path misses FMAs of the loop (the work sits behind a taken
branch), the path is the whole body.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from gemmmodel.compile.listing import Instr, Label, Listing, count_mix


@dataclass(frozen=True)
class MainLoop:
    """The chosen loop: its instructions (layout order), nesting depth (1 = outermost) and
    the instructions of the loop right around it (empty when it is outermost)."""

    instrs: tuple
    depth: int
    outer_instrs: tuple = ()
    path: tuple = ()


def _blocks(listing: Listing) -> tuple[list[list[Instr]], dict[str, int], list[bool]]:
    """Split into basic blocks: returns blocks, label -> block index, falls-through flags."""
    blocks: list[list[Instr]] = [[]]
    label_block: dict[str, int] = {}
    for item in listing.items:
        if isinstance(item, Label):
            if blocks[-1]:
                blocks.append([])
            label_block[item.name] = len(blocks) - 1
            continue
        blocks[-1].append(item)
        if item.target is not None or item.ends_flow:
            blocks.append([])
    falls = [not (blk and blk[-1].ends_flow) for blk in blocks]
    return blocks, label_block, falls


def control_flow_graph(listing: Listing) -> tuple[nx.DiGraph, list[list[Instr]]]:
    """The CFG: nodes are block indices (0 = entry), edges fall-through and branch edges."""
    blocks, label_block, falls = _blocks(listing)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(blocks)))
    for i, blk in enumerate(blocks):
        last = blk[-1] if blk else None
        if last is not None and last.target is not None and last.target in label_block:
            graph.add_edge(i, label_block[last.target])
        if falls[i] and i + 1 < len(blocks):
            graph.add_edge(i, i + 1)
    return graph, blocks


def reachable_instructions(listing: Listing) -> list[Instr]:
    """Instructions of the blocks reachable from the entry, in layout order (drops e.g. the
    trap loop and alignment NOPs that nvdisasm shows after the last EXIT)."""
    graph, blocks = control_flow_graph(listing)
    reachable = nx.descendants(graph, 0) | {0}
    return [ins for b in sorted(reachable) for ins in blocks[b]]


def natural_loops(graph: nx.DiGraph, entry: int = 0) -> dict[int, set[int]]:
    """Header block -> set of blocks of its natural loop (back edges to one header merged)."""
    reachable = nx.descendants(graph, entry) | {entry}
    sub = graph.subgraph(reachable)
    idom = nx.immediate_dominators(sub, entry)

    def dominates(h: int, u: int) -> bool:
        while True:
            if u == h:
                return True
            parent = idom.get(u, u)  # networkx >= 3.5 leaves the entry out of idom
            if parent == u:
                return False
            u = parent

    loops: dict[int, set[int]] = {}
    for u, h in sub.edges():
        if not dominates(h, u):
            continue
        body = loops.setdefault(h, {h})
        stack = [u]
        while stack:
            node = stack.pop()
            if node in body:
                continue
            body.add(node)
            stack.extend(p for p in sub.predecessors(node) if p not in body)
    return loops


def trip_path(graph: nx.DiGraph, blocks: list[list[Instr]], body: set[int],
              header: int) -> list[int]:
    """Blocks of one trip through a loop, in order (module docstring)."""
    path, seen, node = [], set(), header
    while node in body and node not in seen:
        path.append(node)
        seen.add(node)
        last = blocks[node][-1] if blocks[node] else None
        falls = node + 1 if graph.has_edge(node, node + 1) else None
        jump = next((v for v in graph.successors(node) if v != falls), None)
        if last is not None and last.target is not None and not last.conditional:
            node = jump if jump is not None else falls   # the branch's one successor
        elif falls is not None and falls in body and falls != header:
            node = falls
        elif jump is not None and jump != header:
            node = jump
        else:
            break
    return path


def find_main_loop(listing: Listing) -> MainLoop | None:
    """The loop with the most FMAs (then the fewest instructions); None without loops."""
    graph, blocks = control_flow_graph(listing)
    loops = natural_loops(graph)
    if not loops:
        return None

    def instrs_of(body: set[int]) -> list[Instr]:
        return [ins for b in sorted(body) for ins in blocks[b]]

    def key(header: int) -> tuple[int, int]:
        mix = count_mix(instrs_of(loops[header]))
        return (-mix["fma"], mix["instructions"])

    best = min(loops, key=key)
    def tile_loop(body: set[int]) -> bool:
        mix = count_mix(instrs_of(body))
        return mix["fma"] > 0 and mix["barrier"] > 0

    while True:   # descend into a nested tile loop (module docstring)
        inner = [h for h, body in loops.items()
                 if h != best and h in loops[best] and body < loops[best] and tile_loop(body)]
        if not inner:
            break
        best = min(inner, key=key)
    around = [h for h, body in loops.items() if h != best and best in body]
    depth = len(around) + 1
    outer = min(around, key=lambda h: len(loops[h]), default=None)
    body = instrs_of(loops[best])
    path = [ins for b in trip_path(graph, blocks, loops[best], best) for ins in blocks[b]]
    if count_mix(path)["fma"] < count_mix(body)["fma"]:
        path = body
    return MainLoop(instrs=tuple(body), depth=depth,
                    outer_instrs=tuple(instrs_of(loops[outer])) if outer is not None else (),
                    path=tuple(path))
