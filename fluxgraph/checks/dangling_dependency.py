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
from fluxgraph.findings import RawFinding
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
            facts = []
            others = _same_name(ks_ids, dep)
            if others:
                if not _explicit_namespace(ks.spec.spec, dep):
                    facts.append(
                        f"dependsOn without namespace means {ks.spec.namespace}, the dependent's own"
                    )
                facts.append(f"Kustomization {', '.join(others)} has that name")
            if str(dep) in cluster.helm_releases:
                facts.append(
                    f"HelmRelease {dep} has that name; a Kustomization can only depend on Kustomizations"
                )
            extra = f" ({'; '.join(facts)})" if facts else ""
            related = [ks_location(cluster, o) for o in others]
            yield ctx.finding(
                f"Kustomization {ks.id} depends on Kustomization {dep}, which is not declared in cluster {cluster.name}{extra}",
                ks_depends_on_location(cluster, ks.id, dep),
                kustomization=ks.id,
                related=related,
                subject=f"Kustomization {ks.id} -> {dep}",
            )

    for hr in sorted(cluster.helm_releases.values(), key=lambda h: h.id):
        for dep in hr.spec.depends_on:
            ctx.evaluated()
            if str(dep) in cluster.helm_releases or uncertain(dep, hr_ids):
                continue
            facts = []
            spec = hr.obj.data.get("spec")
            others = _same_name(hr_ids, dep)
            if others:
                if not _explicit_namespace(spec if isinstance(spec, dict) else {}, dep):
                    facts.append(
                        f"dependsOn without namespace means {hr.spec.namespace}, the dependent's own"
                    )
                facts.append(f"HelmRelease {', '.join(others)} has that name")
            if str(dep) in cluster.kustomizations:
                facts.append(
                    f"Kustomization {dep} has that name; a HelmRelease can only depend on HelmReleases"
                )
            extra = f" ({'; '.join(facts)})" if facts else ""
            related = [cluster.helm_releases[o].obj.location for o in others]
            yield ctx.finding(
                f"HelmRelease {hr.id} depends on HelmRelease {dep}, which is not declared in cluster {cluster.name}{extra}",
                hr_depends_on_location(hr.obj, hr.spec.namespace, dep),
                obj=hr.obj.ref,
                kustomization=hr.owner,
                related=related,
                subject=f"HelmRelease {hr.id} -> {dep}",
            )


def _explicit_namespace(spec: dict[str, object], dep: NamedRef) -> bool:
    raw = spec.get("dependsOn")
    if not isinstance(raw, list):
        return False
    return any(
        isinstance(d, dict) and d.get("name") == dep.name and d.get("namespace") == dep.namespace for d in raw
    )
