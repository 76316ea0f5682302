"""A shared Namespace declared by one pruning Kustomization, without prune protection
(see rules/prunable-shared-namespace.md)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._memo import per_cluster
from fluxgraph.checks._ownership import (
    IMMORTAL_NAMESPACES,
    SharedNamespace,
    loc,
    shared_namespaces,
)
from fluxgraph.cluster import ClusterModel
from fluxgraph.findings import Note, RawFinding, Severity
from fluxgraph.model import as_dict, as_str

ID = "prunable-shared-namespace"
MAX_LISTED = 3
OPERATOR_GROUP = "fluxcd.controlplane.io"
# flux-operator v0.28.0 (controlplaneio-fluxcd/flux-operator#391, internal/builder/templates.go
# ``annotationsTmpl``) annotates every object a FluxInstance applies, its namespace among them,
# with kustomize.toolkit.fluxcd.io/prune: Disabled (and ssa: Ignore)
OPERATOR_PROTECTS_NAMESPACE = (0, 28)
_VERSION = re.compile(r"^v?(\d+)\.(\d+)")


def _operator_version(cluster: ClusterModel) -> tuple[int, int] | None:
    """The flux-operator release the cluster installs, where its files pin one: the tag of an
    OCIRepository of the flux-operator chart, or the chart version of a HelmRelease of it."""
    for obj in cluster.objects():
        ref, spec = obj.ref, as_dict(obj.data.get("spec"))
        text = ""
        if ref.kind == "OCIRepository" and as_str(spec.get("url")).rstrip("/").endswith("/flux-operator"):
            text = as_str(as_dict(spec.get("ref")).get("tag"))
        elif ref.kind == "HelmRelease":
            chart = as_dict(as_dict(spec.get("chart")).get("spec"))
            if as_str(chart.get("chart")).rstrip("/").endswith("flux-operator"):
                text = as_str(chart.get("version"))
        m = _VERSION.match(text)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


@per_cluster
def _operator_namespaces(cluster: ClusterModel) -> dict[str, str]:
    """Namespace -> the FluxInstance the cluster applies into it, whose operator protects it
    from every Kustomization's garbage collection (``OPERATOR_PROTECTS_NAMESPACE``); empty where
    the files pin an older operator."""
    version = _operator_version(cluster)
    if version is not None and version < OPERATOR_PROTECTS_NAMESPACE:
        return {}
    out: dict[str, str] = {}
    for obj in cluster.objects():
        if obj.ref.group == OPERATOR_GROUP and obj.ref.kind == "FluxInstance" and obj.ref.namespace:
            out.setdefault(obj.ref.namespace, f"{obj.ref.namespace}/{obj.ref.name}")
    return out


def _who(sh: SharedNamespace) -> str:
    return "; ".join(_users(sh))


def _users(sh: SharedNamespace) -> list[str]:
    """What else lives in the Namespace, one entry per Kustomization, HelmRelease group or
    component (at most MAX_LISTED, then how many more)."""
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
    return parts


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
        notes: list[Note] = []
        if ns in IMMORTAL_NAMESPACES:
            tail = (
                f"; removing or moving that declaration makes Flux prune it, which the API server refuses "
                f"(NamespaceLifecycle), so the prune fails and {sh.owner.id} stays not Ready (deleting the "
                f"Kustomization leaves it stuck in its finalizer)"
            )
            sev: Severity | None = Severity.INFO  # the API server refuses: nothing is deleted
            notes.append(Note.why(tail[2].upper() + tail[3:]))
        else:
            tail = "; removing or moving that declaration, or deleting the Kustomization, deletes the Namespace and everything in it"
            sev = None
            notes.append(Note.why(tail[2].upper() + tail[3:]))
        protected, others = sh.protected_others
        instance = _operator_namespaces(ctx.cluster).get(ns)
        if sev is None and instance is not None:
            sev = Severity.INFO  # the operator annotates it in the cluster: no prune deletes it
            tail = (
                f"; but FluxInstance {instance} lives in it, and flux-operator (v0.28 and later) applies the instance's "
                "namespace with kustomize.toolkit.fluxcd.io/prune: Disabled, which kustomize-controller reads on the "
                "object in the cluster: no Kustomization's garbage collection deletes it"
            )
            notes = [Note.note(tail[2:])]
        elif sev is None and sh.together is not None:
            sev = Severity.INFO  # the users live in the declaration's folder: they move together
            together = (
                f"everything that uses it is declared under {sh.together}/, which holds the declaration too, so "
                "moving or removing that folder takes them with it"
            )
            tail += "; " + together
            notes.append(Note.note(together))
        elif sev is None and not sh.system and unprotected_by_convention(protected, others):
            sev = Severity.INFO  # the repository does not protect its Namespaces: its own choice
            tail += f"; the cluster protects {protected} of its {others} other Namespaces this way"
            notes.append(Note.note(f"the cluster protects {protected} of its {others} other Namespaces this way"))
        elif sev is None and protected:
            tail += f"; the cluster protects {protected} of its {others} other Namespaces with prune: disabled"
            notes.append(Note.note(f"the cluster protects {protected} of its {others} other Namespaces with prune: disabled"))
        if who:
            tail += f"; it also holds {who}"
            notes.append(Note.affected(_users(sh), "it also holds"))
        elif sh.system:
            tail += "; it is a system namespace"
            notes.append(Note.note("it is a system namespace"))
        if sh.guess:
            tail += f"; {sh.guess}"
            notes.append(Note.note(sh.guess))
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
            headline=f"Shared Namespace {ns} is declared only by {sh.owner.id} (prune: true), without prune: disabled",
            notes=tuple(notes),
        )
