"""A Kustomization that depends on one that waits for it: a parent with ``wait: true`` (or
``healthChecks``) and a child whose ``dependsOn`` leads back to the parent
(see rules/wait-dependency-deadlock.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import networkx as nx

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ordering import (
    has_ready_expr,
    ks_depends_on_location,
    ks_location,
    waited_kustomizations,
)
from fluxgraph.findings import RawFinding
from fluxgraph.flux import NamedRef
from fluxgraph.model import Location

ID = "wait-dependency-deadlock"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    # edge a -> b: a becomes Ready only after b is Ready
    g = nx.DiGraph()
    for ks in cluster.kustomizations.values():
        g.add_node(ks.id)
        for dep in ks.spec.depends_on:
            if str(dep) in cluster.kustomizations and not has_ready_expr(cluster, ks.spec, dep):
                g.add_edge(ks.id, str(dep), how="dependsOn", path=None)
        for child, how, path in waited_kustomizations(cluster, ks):
            ctx.evaluated()
            if not g.has_edge(ks.id, child):
                g.add_edge(ks.id, child, how=how, path=path)
    for comp in sorted((sorted(c) for c in nx.strongly_connected_components(g)), key=lambda c: c[0]):
        members = set(comp)
        waits = sorted((a, b) for a, b, how in g.out_edges(comp, data="how") if b in members and how != "dependsOn")
        if len(comp) < 2 or not waits:
            continue
        waiter, child = waits[0]
        route = nx.shortest_path(g.subgraph(members), child, waiter)
        cyc = [waiter, *route]
        edges = list(zip(cyc, cyc[1:], strict=False))
        # start the story at the first dependsOn edge: that is the line the finding points at
        start = next((i for i, (a, b) in enumerate(edges) if g.edges[a, b]["how"] == "dependsOn"), 0)
        edges = edges[start:] + edges[:start]
        yield _finding(ctx, g, edges, members)


def _where(ctx: CheckContext, g: nx.DiGraph, a: str, b: str) -> Location:
    d: dict[str, Any] = g.edges[a, b]
    if d["how"] == "dependsOn":
        ns, _, name = b.partition("/")
        return ks_depends_on_location(ctx.cluster, a, NamedRef(ns, name))
    return ks_location(ctx.cluster, a, d["path"])


def _finding(ctx: CheckContext, g: nx.DiGraph, edges: list[tuple[str, str]], members: set[str]) -> RawFinding:
    first = edges[0][0]
    msg = f"Kustomization {first}"
    for i, (a, b) in enumerate(edges):
        how = g.edges[a, b]["how"]
        step = f"depends on {b}" if how == "dependsOn" else f"waits for {b} ({how})"
        msg += f" {step}" if i == 0 else f", which {step}"
    msg += ": none of them becomes ready" if len(edges) > 2 else ": neither becomes ready"
    return ctx.finding(
        msg,
        _where(ctx, g, *edges[0]),
        kustomization=first,
        related=[_where(ctx, g, a, b) for a, b in edges[1:]],
        subject=f"wait deadlock {' '.join(sorted(members))}",
    )
