"""A child Kustomization whose removal or rename deletes stateful objects through its finalizer
(see rules/cascading-child-deletion.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ordering import ks_location
from fluxgraph.checks._ownership import (
    deletion_policy_text,
    gc_protection,
    ks_object,
    loc,
    renamed_namespaces,
    shared_namespaces,
    unresolved,
)
from fluxgraph.cluster import AppliedObject
from fluxgraph.findings import Note, RawFinding
from fluxgraph.gc import finalizer_deletes
from fluxgraph.model import as_dict

ID = "cascading-child-deletion"
MAX_LISTED = 4


def _retained_volumes(objs: list[AppliedObject]) -> tuple[set[str], set[str]]:
    """Names and storage classes of PersistentVolumes (statically provisioned, declared in the
    same build) whose reclaim policy keeps the data: Retain, or unset (Retain for static PVs)."""
    names: set[str] = set()
    classes: set[str] = set()
    for o in objs:
        if o.ref.group == "" and o.ref.kind == "PersistentVolume":
            spec = as_dict(o.data.get("spec"))
            if spec.get("persistentVolumeReclaimPolicy", "Retain") != "Delete":
                names.add(o.ref.name)
                if isinstance(spec.get("storageClassName"), str):
                    classes.add(spec["storageClassName"])
    return names, classes


def _stateful(obj: AppliedObject, retained: tuple[set[str], set[str]]) -> str | None:
    """What deleting ``obj`` destroys beyond a restart, or None."""
    kind, group = obj.ref.kind, obj.ref.group
    if group == "" and kind == "PersistentVolumeClaim":
        spec = as_dict(obj.data.get("spec"))
        if spec.get("dataSourceRef") or spec.get("dataSource"):
            return None  # populated from a snapshot or a backup (VolSync, kopiur) when recreated
        if spec.get("volumeName") in retained[0] or spec.get("storageClassName") in retained[1]:
            return None  # bound to a retained static volume declared next to it: rebinds
        return "data"
    if group == "" and kind == "PersistentVolume":
        reclaim = as_dict(obj.data.get("spec")).get("persistentVolumeReclaimPolicy", "Retain")
        return "data" if reclaim == "Delete" else None
    if group == "" and kind == "Namespace":
        return "data"
    if group == "apps" and kind == "StatefulSet":
        spec = as_dict(obj.data.get("spec"))
        policy = as_dict(spec.get("persistentVolumeClaimRetentionPolicy")).get("whenDeleted")
        if spec.get("volumeClaimTemplates") and policy == "Delete":
            return "data"
        return "workload"
    return None


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    # Namespaces reported by prunable-shared-namespace or renamed-namespace already
    reported_ns = {id(sh.declaration) for sh in shared_namespaces(cluster)[0]}
    reported_ns |= {id(r.obj) for r in renamed_namespaces(cluster)[0]}
    for child in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        if child.parent is None:
            continue
        parent = cluster.kustomizations.get(child.parent)
        if parent is None:
            continue
        ctx.evaluated()
        if not parent.spec.prune or not finalizer_deletes(child.spec):
            continue
        decl = ks_object(cluster, child.id)
        if decl is not None and gc_protection(decl) is not None:
            continue  # the parent never prunes the child object
        hits: list[tuple[AppliedObject, str]] = []
        retained = _retained_volumes(child.objects)
        for obj in child.objects:
            if unresolved(obj.ref) or gc_protection(obj) is not None:
                continue
            what = _stateful(obj, retained)
            if what is None:
                continue
            if id(obj) in reported_ns:
                continue
            hits.append((obj, what))
        if not hits:
            continue
        hits.sort(key=lambda h: h[0].location)  # the few kept, not every object, by location
        data = [o for o, w in hits if w == "data"]
        listed = ", ".join(f"{o.ref} ({loc(o.location)})" for o, _ in hits[:MAX_LISTED])
        if len(hits) > MAX_LISTED:
            listed += f" and {len(hits) - MAX_LISTED} more"
        where = decl.location if decl is not None else (child.declared_at or child.spec.location)
        cause = None
        if _policy_from_parent(decl) and parent.spec.patches:
            cause = ks_location(cluster, parent.id, ("spec", "patches"))
        yield ctx.finding(
            (
                f"Kustomization {child.id} is applied by Kustomization {parent.id} (prune: true) and has "
                f"{deletion_policy_text(child.spec)}: renaming, moving or removing it deletes {listed}"
                + ("" if data else " (their PersistentVolumeClaims are kept; the pods are recreated)")
            ),
            where,
            obj=decl.ref if decl is not None else None,
            kustomization=child.id,
            related=[o.location for o, _ in hits],
            subject=f"Kustomization/{child.id}",
            # one finding per cause: a parent whose patches give every child its prune and
            # deletionPolicy
            cause=cause,
            cause_message=(
                f"the patches of Kustomization {parent.id} (prune: true) give child Kustomizations "
                f"{deletion_policy_text(child.spec)}: renaming, moving or removing one of them deletes its stateful objects"
            ),
            cause_subject=f"{parent.id} patches {deletion_policy_text(child.spec)}",
            headline=f"Removing or renaming Kustomization {child.id} deletes {len(hits)} stateful object{'s' if len(hits) != 1 else ''}",
            notes=[
                Note.why(
                    f"It is applied by {parent.id} (prune: true) and has {deletion_policy_text(child.spec)}: its finalizer "
                    "deletes what it applied when its object goes"
                ),
                Note.affected([f"{o.ref} ({loc(o.location)})" for o, _ in hits]),
                *([] if data else [Note.note("their PersistentVolumeClaims are kept; the pods are recreated")]),
            ],
            cause_headline=f"The patches of {parent.id} give its children {deletion_policy_text(child.spec)} under prune: true",
        )


def _policy_from_parent(decl: AppliedObject | None) -> bool:
    """Whether the child's prune or deletionPolicy, as applied, differ from its own document
    (the parent's patches set them)."""
    if decl is None or decl.resource.doc is None or not isinstance(decl.resource.doc.data, dict):
        return False
    written = as_dict(decl.resource.doc.data.get("spec"))
    effective = as_dict(decl.data.get("spec"))
    return any(written.get(k) != effective.get(k) for k in ("prune", "deletionPolicy"))
