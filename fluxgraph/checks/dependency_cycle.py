"""Kustomizations (or HelmReleases) whose ``dependsOn`` chains lead back to themselves
(see rules/dependency-cycle.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import networkx as nx

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ordering import hr_depends_on_location, ks_depends_on_location
from fluxgraph.findings import Note, RawFinding
from fluxgraph.flux import NamedRef
from fluxgraph.model import Location, ObjRef

ID = "dependency-cycle"


def shortest_cycle(g: Any, start: str, members: set[str]) -> list[str]:
    """The shortest cycle through ``start`` inside ``members`` (``[start, ..., start]``)."""
    sub = g.subgraph(members)
    best: list[str] | None = None
    for succ in sorted(sub.successors(start)):
        try:
            path = nx.shortest_path(sub, succ, start)
        except nx.NetworkXNoPath:
            continue
        cand = [start, *path]
        if best is None or len(cand) < len(best):
            best = cand
    assert best is not None
    return best


def cycles(g: Any) -> Iterator[tuple[list[str], set[str]]]:
    """One cycle per strongly connected component (self-loops included), through its
    smallest member: ``(cycle, component)``. Nodes carry the model graph's ``ks:``/``hr:``
    prefix; the cycle and component are returned without it."""
    for comp in sorted((sorted(c) for c in nx.strongly_connected_components(g)), key=lambda c: c[0]):
        members = set(comp)
        if len(comp) == 1 and not g.has_edge(comp[0], comp[0]):
            continue
        cyc = shortest_cycle(g, comp[0], members)
        yield [n[3:] for n in cyc], {n[3:] for n in members}


def _report(
    ctx: CheckContext,
    kind: str,
    g: Any,
    where: Callable[[str, str], Location],
    owner: Callable[[str], str],
    obj: Callable[[str], ObjRef | None],
) -> Iterator[RawFinding]:
    for cyc, members in cycles(g):
        first = cyc[0]
        if len(cyc) == 2:
            msg = f"{kind} {first} depends on itself"
        else:
            msg = f"{kind}s depend on each other in a cycle: {' -> '.join(cyc)}"
        rest = sorted(members - set(cyc))
        if rest:
            msg += f" (also in the same cycle: {', '.join(rest)})"
        related = [where(a, b) for a, b in zip(cyc[1:-1], cyc[2:], strict=False)]
        notes = [] if len(cyc) == 2 else [Note.affected([" -> ".join(cyc)], "the cycle")]
        if rest:
            notes.append(Note.note(f"also in the same cycle: {', '.join(rest)}"))
        notes.append(Note.why(f"Flux reconciles a {kind} only after everything it depends on is ready, so none of them ever is"))
        yield ctx.finding(
            msg,
            where(cyc[0], cyc[1]),
            headline=msg if len(cyc) == 2 else f"{len(cyc) - 1} {kind}s depend on each other in a cycle",
            notes=tuple(notes),
            obj=obj(first),
            kustomization=owner(first),
            related=related,
            subject=f"{kind} cycle {' '.join(sorted(members))}",
        )


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    ctx.evaluated(sum(len(ks.spec.depends_on) for ks in cluster.kustomizations.values()))

    def ks_where(a: str, b: str) -> Location:
        ns, _, name = b.partition("/")
        return ks_depends_on_location(cluster, a, NamedRef(ns, name))

    yield from _report(ctx, "Kustomization", cluster.depends_on_graph("ks"), ks_where, lambda i: i, lambda i: None)

    ctx.evaluated(sum(len(hr.spec.depends_on) for hr in cluster.helm_releases.values()))

    def hr_where(a: str, b: str) -> Location:
        ns, _, name = b.partition("/")
        hr = cluster.helm_releases[a]
        return hr_depends_on_location(hr.obj, hr.spec.namespace, NamedRef(ns, name))

    yield from _report(
        ctx,
        "HelmRelease",
        cluster.depends_on_graph("hr"),
        hr_where,
        lambda i: cluster.helm_releases[i].owner,
        lambda i: cluster.helm_releases[i].obj.ref,
    )
