"""dependsOn between Kustomizations that build from different sources of this repository: Flux
does not wait for the dependency to apply the same revision (see rules/cross-source-depends-on.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ownership import ks_object, loc
from fluxgraph.cluster import KustomizationNode
from fluxgraph.findings import Note, RawFinding
from fluxgraph.model import Location, as_dict

ID = "cross-source-depends-on"


def _dep_position(ctx: CheckContext, ks_id: str, index: int) -> Location:
    node = ctx.cluster.kustomizations[ks_id]
    obj = ks_object(ctx.cluster, ks_id)
    if obj is None:
        return node.declared_at or node.spec.location
    raw = as_dict(obj.pre_substitution.get("spec")).get("dependsOn")
    if isinstance(raw, list) and index < len(raw):
        return obj.resource.position(("spec", "dependsOn", index))
    return obj.location


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        if ks.spec.source_ref is None:
            continue
        mine = ks.spec.source_ref.id
        crossing: list[tuple[int, KustomizationNode]] = []
        for i, dep_ref in enumerate(ks.spec.depends_on):
            dep = cluster.kustomizations.get(str(dep_ref))
            if dep is None or dep.spec.source_ref is None:
                continue  # a missing dependency is another rule's business
            ctx.evaluated()
            theirs = dep.spec.source_ref.id
            if mine == theirs:
                continue
            src_a, src_b = cluster.sources.get(mine), cluster.sources.get(theirs)
            # only when both carry this repository's content: one commit can change both
            if src_a is None or src_b is None or not src_a.in_repo or not src_b.in_repo:
                continue
            crossing.append((i, dep))
        if not crossing:
            continue
        deps = "; ".join(
            f"{dep.id} (source {dep.spec.source_ref.id if dep.spec.source_ref else '?'}, {loc(dep.declared_at or dep.spec.location)})"
            for _, dep in crossing
        )
        names = ", ".join(dep.id for _, dep in crossing)
        yield RawFinding(
            message=(
                f"Kustomization {ks.id} (source {mine}) dependsOn {deps}; with different sources Flux only waits "
                f"for {names} to be Ready, not for {'it' if len(crossing) == 1 else 'them'} to apply the revision "
                f"that {ks.id} is about to apply"
            ),
            location=_dep_position(ctx, ks.id, crossing[0][0]),
            kustomization=ks.id,
            related=tuple(dep.declared_at or dep.spec.location for _, dep in crossing),
            subject=f"{ks.id} dependsOn {names}",
            headline=(
                f"{ks.id} dependsOn {names if len(crossing) == 1 else f'{len(crossing)} Kustomizations'} of another "
                "source: Ready, not the same revision"
            ),
            notes=(
                Note.why(
                    f"With different sources Flux only waits for {names} to be Ready, not for "
                    f"{'it' if len(crossing) == 1 else 'them'} to apply the revision that {ks.id} (source {mine}) is about to apply"
                ),
                Note.affected([d.strip() for d in deps.split(";")], "dependsOn"),
            ),
        )
