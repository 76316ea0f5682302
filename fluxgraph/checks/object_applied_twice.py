"""The same object applied by two Flux Kustomizations (see rules/object-applied-twice.md)."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ownership import (
    KS_GROUP,
    gc_protection,
    if_not_present,
    loc,
    never_applied,
    unresolved,
)
from fluxgraph.cluster import AppliedObject
from fluxgraph.findings import Note, RawFinding, Severity
from fluxgraph.kustomize.build import KUSTOMIZATION_FILES
from fluxgraph.model import Location, ObjRef, as_dict

ID = "object-applied-twice"


def _what(ref: ObjRef) -> str:
    return (
        f"Kustomization {ref.namespace}/{ref.name}"
        if ref.kind == "Kustomization" and ref.group == KS_GROUP
        else str(ref)
    )


def _content(o: AppliedObject, *, metadata: bool) -> Any:
    """The object without what differs between owners by construction: kustomize-controller's
    own ``kustomize.toolkit.fluxcd.io/`` labels (and, ``metadata=False``, every label and
    annotation: a source's metadata changes nothing it does)."""
    data = dict(o.data)
    md = dict(as_dict(data.get("metadata")))
    if metadata:
        md["labels"] = {k: v for k, v in as_dict(md.get("labels")).items() if not str(k).startswith("kustomize.toolkit.fluxcd.io/")}
    else:
        md.pop("labels", None)
        md.pop("annotations", None)
    data["metadata"] = md
    return data


def _same(decls: list[AppliedObject], *, metadata: bool) -> bool:
    first = _content(decls[0], metadata=metadata)
    return all(_content(o, metadata=metadata) == first for o in decls[1:])


FLUX_SOURCES = frozenset({"HelmRepository", "OCIRepository", "GitRepository", "Bucket"})


def advice_only(decls: list[AppliedObject]) -> str | None:
    """Why two owners of one object cannot delete anything a maintainer would miss, if so (the
    finding is info then): every copy is the same object and every copy is protected from
    pruning (``prune: disabled``, ``ssa: Ignore``: kustomize-controller ``deleteObjects`` skips
    it, so only the owner labels flip), or every copy is protected and they differ only in
    their labels and annotations (which flip between reconciles, nothing is deleted); or the copies
    are one ConfigMap or Secret of one shared file (a component several apps include), which
    another owner applies again at its next reconcile; or the copies are the same chart source (a
    HelmRepository or OCIRepository several apps share), whose deletion by one owner fails the
    others' HelmReleases only until another owner applies it again."""
    if all(gc_protection(o) is not None for o in decls) and _same(decls, metadata=False):
        if _same(decls, metadata=True):
            return "every copy is the same and protected from pruning, so only the owner labels flip"
        return (
            "every copy is protected from pruning and they differ only in labels and annotations, which flip "
            "between the owners' reconciles"
        )
    ref = decls[0].ref
    if (
        ref.group == ""
        and ref.kind in ("ConfigMap", "Secret")
        and len({o.location.file for o in decls}) == 1
        and _same(decls, metadata=False)
    ):
        return (
            f"every copy is the same {ref.kind} from one shared file (labels and annotations aside, which flip between "
            "the owners' reconciles), and it holds nothing else: if one owner prunes it, the others apply it again at "
            "their next reconcile"
        )
    if ref.kind in FLUX_SOURCES and ref.group == "source.toolkit.fluxcd.io" and _same(decls, metadata=False):
        return (
            "every copy is the same source: if one owner deletes it, the others' releases fail only until "
            "another owner applies it again"
        )
    return None


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    # Flux's inventory identity: group, kind, namespace (empty when cluster-scoped), name
    # in one target cluster (objects applied elsewhere through spec.kubeConfig are others)
    by_id: dict[ObjRef, list[AppliedObject]] = defaultdict(list)
    for obj in ctx.cluster.objects():
        r = obj.ref
        # what a ResourceSet generates is applied once, by flux-operator (the ResourceSet itself is counted)
        if r.name and r.kind and not unresolved(r) and obj.operator_applied is None:
            by_id[r].append(obj)
    ctx.evaluated(len(by_id))
    for objs in by_id.values():
        owners = sorted({o.owner for o in objs})
        if len(owners) < 2:
            continue
        # one declaration per Kustomization (a build cannot hold the same id twice)
        first: dict[str, AppliedObject] = {}
        for o in sorted(objs, key=lambda o: o.location):
            first.setdefault(o.owner, o)
        # sides that never write the object once it exists do not fight over it
        active = [o for o in first.values() if not never_applied(o) and not if_not_present(o)]
        if len(active) < 2:
            continue
        decls = sorted(first.values(), key=lambda o: (o.location, o.owner))
        where = ", ".join(f"{o.owner} ({loc(o.location)})" for o in decls)
        ref = decls[0].ref
        # one finding per cause: a folder that two Kustomizations both build (a cluster folder
        # whose generated kustomization takes in the folder of a child Kustomization); copies of
        # an object in two folders have no common cause
        owners = sorted({o.owner for o in decls})
        shared = len({o.location.file for o in decls}) == 1
        folder = posixpath.dirname(decls[0].location.file)
        why = advice_only(decls)
        raw = ctx.finding(
            f"{_what(ref)} is applied by {len(decls)} Kustomizations: {where}" + (f"; {why}" if why else ""),
            decls[0].location,
            obj=ref,
            kustomization=decls[0].owner,
            related=[o.location for o in decls[1:]],
            subject=f"{ref.group}/{ref.kind}/{ref.namespace}/{ref.name}" + (f"@{ref.target}" if ref.target else ""),
            cause=Location(_folder_file(ctx, folder, decls[0].location.file)) if shared else None,
            cause_message=f"Kustomizations {' and '.join(owners)} both apply the objects of {folder or '.'}/",
            cause_subject=f"{' '.join(owners)} {folder}",
            headline=f"{_what(ref)} is applied by {len(decls)} Kustomizations",
            notes=[
                Note.affected([f"{o.owner} ({loc(o.location)})" for o in decls]),
                *([Note.note(why)] if why else []),
            ],
            cause_headline=f"{' and '.join(owners)} both apply the objects of {folder or '.'}/",
        )
        yield raw if why is None else replace(raw, severity=Severity.INFO)


def _folder_file(ctx: CheckContext, folder: str, fallback: str) -> str:
    """The kustomization file of ``folder`` that a build read, else ``fallback``."""
    for ks in ctx.cluster.kustomizations.values():
        for f in ks.files:
            if posixpath.dirname(f) == folder and posixpath.basename(f) in KUSTOMIZATION_FILES:
                return f
    return fallback
