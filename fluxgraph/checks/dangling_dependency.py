"""A ``dependsOn`` entry that names no Kustomization (or HelmRelease) of the cluster
(see rules/dangling-dependency.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ordering import (
    blind_spots,
    hr_depends_on_location,
    ks_depends_on_location,
    ks_location,
    pattern_matches,
    unresolved,
)
from fluxgraph.findings import Note, RawFinding
from fluxgraph.flux import NamedRef

ID = "dangling-dependency"


def _same_name(ids: list[str], dep: NamedRef) -> list[str]:
    return sorted(i for i in ids if i.partition("/")[2] == dep.name and i != str(dep))


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    blind = blind_spots(cluster)
    ks_ids = list(cluster.kustomizations)
    hr_ids = list(cluster.helm_releases)

    def uncertain(dep: NamedRef, ids: list[str]) -> bool:
        """The dependency may exist where the model cannot see: an unresolved variable, or a
        Kustomization (ResourceSet) whose output is unknown and could hold that namespace."""
        if unresolved(str(dep)) or pattern_matches(ids, str(dep)):
            return True
        return any(b.could_declare(dep.namespace) for b in blind)

    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        for dep in ks.spec.depends_on:
            ctx.evaluated()
            if str(dep) in cluster.kustomizations or uncertain(dep, ks_ids):
                continue
            others = _same_name(ks_ids, dep)
            extra = _facts("Kustomization", "HelmRelease", others, str(dep) in cluster.helm_releases, ks.spec.spec, ks.spec.namespace, dep)
            yield ctx.finding(
                f"Kustomization {ks.id} depends on Kustomization {dep}, which is not declared in cluster {cluster.name}{_joined(extra)}",
                ks_depends_on_location(cluster, ks.id, dep),
                headline=f"Kustomization {ks.id} depends on {dep}, which is not declared in {cluster.name}",
                notes=tuple(Note.note(fact) for fact in extra),
                kustomization=ks.id,
                related=[ks_location(cluster, o) for o in others],
                subject=f"Kustomization {ks.id} -> {dep}",
            )

    for hr in sorted(cluster.helm_releases.values(), key=lambda h: h.id):
        for dep in hr.spec.depends_on:
            ctx.evaluated()
            if str(dep) in cluster.helm_releases or uncertain(dep, hr_ids):
                continue
            spec = hr.obj.data.get("spec")
            others = _same_name(hr_ids, dep)
            extra = _facts(
                "HelmRelease", "Kustomization", others, str(dep) in cluster.kustomizations,
                spec if isinstance(spec, dict) else {}, hr.spec.namespace, dep,
            )  # fmt: skip
            yield ctx.finding(
                f"HelmRelease {hr.id} depends on HelmRelease {dep}, which is not declared in cluster {cluster.name}{_joined(extra)}",
                hr_depends_on_location(hr.obj, hr.spec.namespace, dep),
                headline=f"HelmRelease {hr.id} depends on {dep}, which is not declared in {cluster.name}",
                notes=tuple(Note.note(fact) for fact in extra),
                obj=hr.obj.ref,
                kustomization=hr.owner,
                related=[cluster.helm_releases[o].obj.location for o in others],
                subject=f"HelmRelease {hr.id} -> {dep}",
            )


def _facts(
    kind: str, other_kind: str, others: list[str], other_kind_has_it: bool, spec: dict[str, object], own_ns: str, dep: NamedRef
) -> list[str]:
    """What may explain the dangling name, for a ``kind`` (Kustomization or HelmRelease) that can
    depend only on its own kind: objects of that name in other namespaces (and the namespace
    defaulting that missed them), or an object of the other kind with that name."""
    facts = []
    if others:
        if not _explicit_namespace(spec, dep):
            facts.append(f"dependsOn without namespace means {own_ns}, the dependent's own")
        facts.append(f"{kind} {', '.join(others)} has that name")
    if other_kind_has_it:
        facts.append(f"{other_kind} {dep} has that name; a {kind} can only depend on {kind}s")
    return facts


def _joined(facts: list[str]) -> str:
    return f" ({'; '.join(facts)})" if facts else ""


def _explicit_namespace(spec: dict[str, object], dep: NamedRef) -> bool:
    raw = spec.get("dependsOn")
    if not isinstance(raw, list):
        return False
    return any(
        isinstance(d, dict) and d.get("name") == dep.name and d.get("namespace") == dep.namespace for d in raw
    )
