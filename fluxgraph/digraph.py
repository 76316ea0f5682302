"""A small directed graph for the checks' ordering analyses.

The checks need strongly connected components and shortest paths on graphs of at most a
few thousand nodes; importing networkx for that costs more than the analysis itself (a
fifth of a second of start-up on every ``fluxgraph check``). networkx stays the model's
export graph (``ClusterModel.graph``); this module mirrors the part of its API the checks use.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any


class NoPath(Exception):
    pass


class DiGraph:
    def __init__(self) -> None:
        self._succ: dict[str, dict[str, dict[str, Any]]] = {}

    def add_node(self, n: str) -> None:
        self._succ.setdefault(n, {})

    def add_edge(self, u: str, v: str, **attrs: Any) -> None:
        self.add_node(u)
        self.add_node(v)
        self._succ[u].setdefault(v, {}).update(attrs)

    def has_edge(self, u: str, v: str) -> bool:
        return v in self._succ.get(u, {})

    def successors(self, n: str) -> Iterator[str]:
        return iter(self._succ.get(n, {}))

    @property
    def nodes(self) -> list[str]:
        return list(self._succ)

    def subgraph(self, members: Iterable[str]) -> DiGraph:
        keep = set(members)
        sub = DiGraph()
        for u in self._succ:
            if u in keep:
                sub.add_node(u)
                for v, d in self._succ[u].items():
                    if v in keep:
                        sub._succ[u][v] = d
        return sub

    def edge_data(self, u: str, v: str) -> dict[str, Any]:
        return self._succ[u][v]

    def edges_from(self, nodes: Iterable[str]) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for u in nodes:
            for v, d in self._succ.get(u, {}).items():
                yield u, v, d


def strongly_connected_components(g: DiGraph) -> list[set[str]]:
    """Tarjan's algorithm, iterative (no recursion limit on long dependency chains)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[set[str]] = []
    counter = 0
    for root in g.nodes:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, g.successors(root))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, g.successors(nxt)))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp: set[str] = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == node:
                        break
                out.append(comp)
    return out


def shortest_path(g: DiGraph, source: str, target: str) -> list[str]:
    """Breadth-first shortest path (successors in sorted order, so ties break stably)."""
    prev: dict[str, str | None] = {source: None}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        if u == target:
            path = [u]
            step = prev[u]
            while step is not None:
                path.append(step)
                step = prev[step]
            return list(reversed(path))
        for v in sorted(g.successors(u), key=lambda n: n):
            if v not in prev:
                prev[v] = u
                queue.append(v)
    raise NoPath(f"no path from {source} to {target}")
