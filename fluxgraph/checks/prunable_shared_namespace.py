"""A shared Namespace declared by one pruning Kustomization, without prune protection
(see rules/prunable-shared-namespace.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ownership import (
    IMMORTAL_NAMESPACES,
    SharedNamespace,
    loc,
    shared_namespaces,
)
from fluxgraph.findings import RawFinding, Severity

ID = "prunable-shared-namespace"
MAX_LISTED = 3


def _who(sh: SharedNamespace) -> str:
    parts: list[str] = []
    for ks_id in sorted(sh.others):
        objs = sorted(sh.others[ks_id], key=lambda o: o.location)
        parts.append(
            f"Kustomization {ks_id} ({len(objs)} object{'s' if len(objs) != 1 else ''}, e.g. {objs[0].ref} at {loc(objs[0].location)})"
        )
    for ks_id in sorted(sh.helm):
        hrs = ", ".join(f"HelmRelease {h}" for h in sorted(sh.helm[ks_id]))
        parts.append(f"{hrs} of Kustomization {ks_id} (targetNamespace)")
    for ks_id in sh.unbuilt:
        parts.append(f"Kustomization {ks_id} (targetNamespace)")
    for comp in sorted(sh.components):
        objs = sorted(sh.components[comp], key=lambda o: o.location)
        parts.append(f"{comp}/ in the same Kustomization ({objs[0].ref} at {loc(objs[0].location)})")
    if len(parts) > MAX_LISTED:
        parts = parts[:MAX_LISTED] + [f"{len(parts) - MAX_LISTED} more"]
    return "; ".join(parts)


def unprotected_by_convention(protected: int, others: int) -> bool:
    """Whether the repository's own convention is to leave its Namespaces unprotected: fewer
    than half of the cluster's other Namespace declarations carry a protection (with no other
    Namespace there is no convention to go by). Measured on the corpora, the unprotected shared
    Namespaces maintainers act on are the ones that lack what the same repository gives its
    others (docs/precision.md)."""
    return others > 0 and 2 * protected < others


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    found, looked = shared_namespaces(ctx.cluster)
    ctx.evaluated(looked)
    for sh in found:
        ns = sh.use.name
        decl = sh.declaration
        head = (
            f"Namespace {ns} is declared only at {loc(decl.location)}, by Kustomization {sh.owner.id} (prune: true), "
            f"without kustomize.toolkit.fluxcd.io/prune: disabled"
        )
        who = _who(sh)
        if ns in IMMORTAL_NAMESPACES:
            tail = (
                f"; removing or moving that declaration makes Flux prune it, which the API server refuses "
                f"(NamespaceLifecycle), so the prune fails and {sh.owner.id} stays not Ready (deleting the "
                f"Kustomization leaves it stuck in its finalizer)"
            )
            sev: Severity | None = Severity.INFO  # the API server refuses: nothing is deleted
        else:
            tail = "; removing or moving that declaration, or deleting the Kustomization, deletes the Namespace and everything in it"
            sev = None
        protected, others = sh.protected_others
        if sev is None and sh.together is not None:
            sev = Severity.INFO  # the users live in the declaration's folder: they move together
            tail += (
                f"; everything that uses it is declared under {sh.together}/, which holds the declaration too, so "
                "moving or removing that folder takes them with it"
            )
        elif sev is None and not sh.system and unprotected_by_convention(protected, others):
            sev = Severity.INFO  # the repository does not protect its Namespaces: its own choice
            tail += f"; the cluster protects {protected} of its {others} other Namespaces this way"
        elif sev is None and protected:
            tail += f"; the cluster protects {protected} of its {others} other Namespaces with prune: disabled"
        if who:
            tail += f"; it also holds {who}"
        elif sh.system:
            tail += "; it is a system namespace"
        if sh.guess:
            tail += f"; {sh.guess}"
        related = [objs[0].location for objs in sh.others.values()] + [
            objs[0].location for objs in sh.components.values()
        ]
        yield RawFinding(
            message=head + tail,
            location=decl.location,
            obj=decl.ref,
            kustomization=sh.owner.id,
            related=tuple(sorted(set(related))),
            subject=f"Namespace/{ns}",
            severity=sev,
        )
