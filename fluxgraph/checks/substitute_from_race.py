"""A Kustomization substitutes from a ConfigMap/Secret that another Kustomization applies,
with no dependsOn on that one (see rules/substitute-from-race.md)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ownership import ks_object, ordered_after
from fluxgraph.checks._subst import field_location, producers, substitute_from_path
from fluxgraph.findings import RawFinding, Severity

ID = "substitute-from-race"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    for ks in cluster.kustomizations.values():
        pb = ks.spec.post_build
        if pb is None:
            continue
        decl = ks_object(cluster, ks.id)
        ns = ks.spec.namespace
        for sf in pb.substitute_from:
            ctx.evaluated()
            prods = producers(cluster, sf.kind, ns, sf.name)
            if not prods:
                continue  # missing-substitute-from
            target = f"{sf.kind}/{ns}/{sf.name}"
            loc = field_location(
                decl, substitute_from_path(decl, sf.kind, sf.name), ks.declared_at or ks.spec.location
            )
            if sf.optional:
                first = "Flux renders without its variables (optional: true) and applies the result"
            else:
                first = "the build fails"
            own = [p for p in prods if p.owner == ks.id]
            if own:
                made = f"which it produces itself ({own[0].how})" if own[0].how else "which it applies itself"
                raw = ctx.finding(
                    f"Kustomization {ks.id} substitutes from {target}, {made}: every build reads the values of the "
                    f"previous apply, and on a fresh cluster {first} before {target} exists",
                    loc,
                    kustomization=ks.id,
                    related=[own[0].obj.location],
                    subject=f"{ks.id}|{target}|self",
                    nofix=f"{ks.id} applies {target} itself: moving it to another Kustomization is a decision",
                )
            else:
                if any(ordered_after(cluster, ks.id, p.owner) for p in prods):
                    continue
                p = prods[0]
                owners = sorted({q.owner for q in prods})
                via = f" ({p.how})" if p.how else ""
                raw = ctx.finding(
                    f"Kustomization {ks.id} substitutes from {target}, which Kustomization {p.owner} applies{via}, "
                    f"but {ks.id} does not depend on {p.owner} (dependsOn, directly or through its dependencies and "
                    f"parents): it can be built before {target} is applied or updated, and then {first} or uses its "
                    "previous values",
                    loc,
                    kustomization=ks.id,
                    related=[p.obj.location],
                    subject=f"{ks.id}|{target}|{p.owner}",
                )
                # for `fluxgraph fix`: the Kustomization to depend on, when there is one
                raw = replace(
                    raw,
                    details=(("producer", p.owner), ("source", target))
                    if len(owners) == 1
                    else (("nofix", f"{' and '.join(owners)} all apply {target}: which one to depend on is a decision"),),
                )
            if sf.optional:
                raw = replace(raw, severity=Severity.ERROR)  # documented variant: silently renders blanks
            yield raw
