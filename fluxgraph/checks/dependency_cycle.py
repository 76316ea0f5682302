"""Kustomizations (or HelmReleases) whose ``dependsOn`` chains lead back to themselves
(see rules/dependency-cycle.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ordering import hr_depends_on_location, ks_depends_on_location
from fluxgraph.digraph import DiGraph, NoPath, shortest_path, strongly_connected_components
from fluxgraph.findings import RawFinding
from fluxgraph.flux import NamedRef
from fluxgraph.model import Location, ObjRef

ID = "dependency-cycle"


def shortest_cycle(g: DiGraph, start: str, members: set[str]) -> list[str]:
    """The shortest cycle through ``start`` inside ``members`` (``[start, ..., start]``)."""
    sub = g.subgraph(members)
    best: list[str] | None = None
    for succ in sorted(sub.successors(start)):
        try:
            path = shortest_path(sub, succ, start)
        except NoPath:
            continue
        cand = [start, *path]
        if best is None or len(cand) < len(best):
            best = cand
    assert best is not None
    return best


def cycles(g: DiGraph) -> Iterator[tuple[list[str], set[str]]]:
    """One cycle per strongly connected component (self-loops included), through its
    smallest member: ``(cycle, component)``."""
    for comp in sorted((sorted(c) for c in strongly_connected_components(g)), key=lambda c: c[0]):
        members = set(comp)
        if len(comp) == 1 and not g.has_edge(comp[0], comp[0]):
            continue
        yield shortest_cycle(g, comp[0], members), members


def _report(
    ctx: CheckContext,
    kind: str,
    g: DiGraph,
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
        yield ctx.finding(
            msg,
            where(cyc[0], cyc[1]),
            obj=obj(first),
            kustomization=owner(first),
            related=related,
            subject=f"{kind} cycle {' '.join(sorted(members))}",
        )


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    kg: DiGraph = DiGraph()
    for ks in cluster.kustomizations.values():
        kg.add_node(ks.id)
        for dep in ks.spec.depends_on:
            ctx.evaluated()
            if str(dep) in cluster.kustomizations:
                kg.add_edge(ks.id, str(dep))

    def ks_where(a: str, b: str) -> Location:
        ns, _, name = b.partition("/")
        return ks_depends_on_location(cluster, a, NamedRef(ns, name))

    yield from _report(ctx, "Kustomization", kg, ks_where, lambda i: i, lambda i: None)

    hg: DiGraph = DiGraph()
    for hr in cluster.helm_releases.values():
        hg.add_node(hr.id)
        for dep in hr.spec.depends_on:
            ctx.evaluated()
            if str(dep) in cluster.helm_releases:
                hg.add_edge(hr.id, str(dep))

    def hr_where(a: str, b: str) -> Location:
        ns, _, name = b.partition("/")
        hr = cluster.helm_releases[a]
        return hr_depends_on_location(hr.obj, hr.spec.namespace, NamedRef(ns, name))

    yield from _report(
        ctx,
        "HelmRelease",
        hg,
        hr_where,
        lambda i: cluster.helm_releases[i].owner,
        lambda i: cluster.helm_releases[i].obj.ref,
    )
