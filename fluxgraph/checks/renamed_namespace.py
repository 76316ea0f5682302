"""A Namespace object renamed by targetNamespace or a kustomize ``namespace:`` into a namespace
that is already in use (see rules/renamed-namespace.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ownership import loc, renamed_namespaces
from fluxgraph.findings import Note, RawFinding, Severity

ID = "renamed-namespace"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    found, looked = renamed_namespaces(ctx.cluster)
    ctx.evaluated(looked)
    for r in found:
        ks = r.owner
        cause = (
            f"spec.targetNamespace of Kustomization {ks.id}"
            if r.by_target_namespace
            else "a kustomize `namespace:`"
        )
        parts = [f"Namespace {r.original} ({loc(r.obj.location)}) is renamed to {r.renamed} by {cause}"]
        if r.claims:
            parts.append(f"{r.renamed} is already in use ({'; '.join(r.claims)})")
        if r.lost:
            parts.append(
                f"{r.original} is in use ({'; '.join(r.lost)}) and no other object declares it, so it is not "
                f"created, and a Kustomization that applied it under its own name before prunes it"
            )
        if r.prunable and r.claims:
            parts.append(
                f"Kustomization {ks.id} (prune: true) now owns Namespace {r.renamed}: removing this object or "
                f"the Kustomization deletes {r.renamed} and everything in it"
            )
        elif r.claims:
            why = f"{r.protected} keeps it from being pruned" if r.protected else "prune: false"
            parts.append(f"Kustomization {ks.id} takes over {r.renamed} ({why})")
        sev: Severity | None = None if r.prunable else Severity.INFO  # nothing can be pruned
        notes = [Note.note(p) for p in parts[1:]]
        by = f"spec.targetNamespace of {ks.id}" if r.by_target_namespace else f"a kustomize `namespace:` in {ks.id}"
        yield RawFinding(
            headline=f"Namespace {r.original} is renamed to {r.renamed} by {by}",
            notes=tuple(notes),
            message="; ".join(parts),
            location=r.obj.resource.position(("metadata", "name")),
            obj=r.obj.ref,
            kustomization=ks.id,
            subject=f"Namespace/{r.original}->{r.renamed}",
            severity=sev,
        )
