"""A Kustomization that depends on a suspended Kustomization of the same source
(see rules/suspended-dependency.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ordering import has_ready_expr, ks_depends_on_location, ks_location
from fluxgraph.findings import Note, RawFinding

ID = "suspended-dependency"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        if ks.spec.suspend:
            continue  # not reconciled itself, so nothing waits
        for dep in ks.spec.depends_on:
            node = cluster.kustomizations.get(str(dep))
            if node is None:
                continue
            ctx.evaluated()
            if not node.spec.suspend or has_ready_expr(cluster, ks.spec, dep):
                continue
            src, dep_src = ks.spec.source_ref, node.spec.source_ref
            if src is None or dep_src is None or src.id != dep_src.id:
                continue
            yield ctx.finding(
                f"Kustomization {ks.id} depends on Kustomization {node.id}, which is suspended (spec.suspend: true) "
                f"and builds from the same source {src.id}",
                ks_depends_on_location(cluster, ks.id, dep),
                headline=f"Kustomization {ks.id} depends on {node.id}, which is suspended",
                notes=(
                    Note.why(
                        f"Both build from {src.id}: Flux waits for {node.id} to reconcile the revision {ks.id} is "
                        "about to apply, which a suspended Kustomization never does"
                    ),
                ),
                kustomization=ks.id,
                related=[ks_location(cluster, node.id, ("spec", "suspend"))],
                subject=f"{ks.id} -> {node.id}",
            )
