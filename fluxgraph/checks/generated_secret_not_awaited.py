"""A Kustomization substitutes from a Secret that an ExternalSecret (or a similar generator) of
a dependency makes, and that dependency does not wait for it
(see rules/generated-secret-not-awaited.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._health import ObjKey, awaited, ready_before
from fluxgraph.checks._ordering import ks_depends_on_location, ks_location
from fluxgraph.checks._ownership import revision_ordered_after
from fluxgraph.checks._subst import Producer, field_location, producers, substitute_from_path
from fluxgraph.checks.chart_crd_not_awaited import how_not_waiting, wait_path
from fluxgraph.cluster import ClusterModel, KustomizationNode
from fluxgraph.findings import Note, RawFinding
from fluxgraph.flux import NamedRef
from fluxgraph.model import Location

ID = "generated-secret-not-awaited"


def _reads_secret(node: KustomizationNode, namespace: str, name: str) -> bool:
    """``node`` substitutes from Secret ``namespace/name`` without ``optional``: its build fails
    until the Secret exists, so it is never Ready before that."""
    pb = node.spec.post_build
    if pb is None or node.spec.namespace != namespace:
        return False
    return any(sf.kind == "Secret" and sf.name == name and not sf.optional for sf in pb.substitute_from)


def _secured(cluster: ClusterModel, before: dict[str, str], keys: set[ObjKey], namespace: str, name: str) -> bool | None:
    """Whether a Kustomization that is Ready before the consumer waits for the Secret (or its
    generator), or cannot be Ready before the Secret exists; None when a dependency's health
    check is not known."""
    unknown = False
    for d in before:
        node = cluster.kustomizations.get(d)
        if node is not None and _reads_secret(node, namespace, name):
            return True
        aw = awaited(cluster, d)
        if aw is None:
            unknown = True
            continue
        if any(k in aw for k in keys):
            return True
    return None if unknown else False


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        pb = ks.spec.post_build
        if pb is None or ks.spec.suspend or ks.mutation("dependsOn") is not None:
            continue  # admission may order it (not evaluated, and listed so)
        ns = ks.spec.namespace
        before: dict[str, str] | None = None
        for sf in pb.substitute_from:
            if sf.kind != "Secret":
                continue
            prods = producers(cluster, "Secret", ns, sf.name, ks.home)
            if not prods or any(not p.how for p in prods):
                continue  # nothing makes it (missing-substitute-from), or the Secret itself is applied
            # an owner the consumer is not ordered after at the same revision is substitute-from-race's
            makers = [p for p in prods if p.owner != ks.id and revision_ordered_after(cluster, ks.id, p.owner)]
            if not makers or len(makers) != len(prods):
                continue
            ctx.evaluated()
            if before is None:
                before = ready_before(cluster, ks.id)
            keys: set[ObjKey] = {(ks.home, "", "Secret", ns, sf.name)}
            for p in makers:
                r = p.obj.ref
                keys.add((r.target, r.group, r.kind, r.namespace, r.name))
            if _secured(cluster, before, keys, ns, sf.name) is not False:
                continue
            yield _finding(ctx, ks, sf.name, sf.optional, makers[0], before)


def _finding(
    ctx: CheckContext, ks: KustomizationNode, name: str, optional: bool, p: Producer, before: dict[str, str]
) -> RawFinding:
    cluster = ctx.cluster
    owner = cluster.kustomizations[p.owner]
    maker = f"{p.obj.ref.kind} {p.obj.ref.name}"
    secret = f"Secret {ks.spec.namespace}/{name}"
    via = before.get(owner.id, ks.id)
    order = f"depends on {owner.id}" if via == ks.id else f"is ordered after {via}, which depends on {owner.id}"
    consequence = (
        f"{ks.id} builds without the Secret's variables (optional: true) and applies the result"
        if optional
        else f"the build of {ks.id} fails with substitute from 'Secret/{name}' error until the Secret exists "
        "(retried at retryInterval)"
    )
    where = ks_location(cluster, owner.id, wait_path(owner))
    decl = ks.declared_by
    entry = field_location(decl, substitute_from_path(decl, "Secret", name), ks.declared_at or ks.spec.location)
    related: list[Location] = [entry, p.obj.location]
    if via in cluster.kustomizations:
        related.append(ks_depends_on_location(cluster, via, NamedRef(*owner.id.split("/", 1))))
    return ctx.finding(
        f"Kustomization {ks.id} substitutes from {secret}, which {maker} makes; {ks.id} {order}, which applies that "
        f"{p.obj.ref.kind} but does not wait for it or the Secret ({how_not_waiting(owner, maker)}): {owner.id} is Ready "
        f"as soon as the {p.obj.ref.kind} is applied, before its controller has written the Secret, so on a cold boot "
        f"{consequence}",
        where,
        obj=p.obj.ref,
        kustomization=ks.id,
        related=related,
        subject=f"{ks.id}|{secret}|{owner.id}",
        cause=where,
        cause_message=(
            f"Kustomization {owner.id} applies {maker}, which makes {secret}, without waiting for it, and Kustomizations "
            f"that depend on {owner.id} substitute from that Secret: on a cold boot their build can run before the Secret "
            "exists"
        ),
        cause_subject=f"{owner.id}|{maker}",
        headline=f"{ks.id} substitutes from {secret}, which {owner.id} does not wait for",
        notes=(
            Note.why(
                f"{ks.id} {order}, which applies {maker} (it makes the Secret) but does not wait for it "
                f"({how_not_waiting(owner, maker)}): {owner.id} is Ready before the controller has written the "
                f"Secret, so on a cold boot {consequence}"
            ),
        ),
        cause_headline=f"{owner.id} applies {maker}, which makes {secret}, without waiting for it",
        cause_why=(
            f"Kustomizations that depend on {owner.id} substitute from that Secret: on a cold boot their build can "
            "run before the Secret exists"
        ),
    )
