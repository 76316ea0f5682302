"""The same object applied by two Flux Kustomizations (see rules/object-applied-twice.md)."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ownership import KS_GROUP, if_not_present, loc, never_applied, unresolved
from fluxgraph.cluster import AppliedObject
from fluxgraph.findings import RawFinding
from fluxgraph.kustomize.build import KUSTOMIZATION_FILES
from fluxgraph.model import Location, ObjRef

ID = "object-applied-twice"


def _what(ref: ObjRef) -> str:
    return (
        f"Kustomization {ref.namespace}/{ref.name}"
        if ref.kind == "Kustomization" and ref.group == KS_GROUP
        else str(ref)
    )


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    # Flux's inventory identity: group, kind, namespace (empty when cluster-scoped), name
    # in one target cluster (objects applied elsewhere through spec.kubeConfig are others)
    by_id: dict[ObjRef, list[AppliedObject]] = defaultdict(list)
    for obj in ctx.cluster.objects():
        r = obj.ref
        if r.name and r.kind and not unresolved(r):
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
        yield ctx.finding(
            f"{_what(ref)} is applied by {len(decls)} Kustomizations: {where}",
            decls[0].location,
            obj=ref,
            kustomization=decls[0].owner,
            related=[o.location for o in decls[1:]],
            subject=f"{ref.group}/{ref.kind}/{ref.namespace}/{ref.name}" + (f"@{ref.target}" if ref.target else ""),
            cause=Location(_folder_file(ctx, folder, decls[0].location.file)) if shared else None,
            cause_message=f"Kustomizations {' and '.join(owners)} both apply the objects of {folder or '.'}/",
            cause_subject=f"{' '.join(owners)} {folder}",
        )


def _folder_file(ctx: CheckContext, folder: str, fallback: str) -> str:
    """The kustomization file of ``folder`` that a build read, else ``fallback``."""
    for ks in ctx.cluster.kustomizations.values():
        for f in ks.files:
            if posixpath.dirname(f) == folder and posixpath.basename(f) in KUSTOMIZATION_FILES:
                return f
    return fallback
