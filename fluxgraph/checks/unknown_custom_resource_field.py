"""A field of a custom resource that the schema of the CustomResourceDefinition the cluster
applies does not have (see rules/unknown-custom-resource-field.md).

The same check as ``unknown-flux-field`` (``fluxapi.unknown_fields``), for the objects of every
other API group whose CRD the cluster's Kustomizations apply themselves: a CloudNativePG
``Cluster`` next to the CNPG CRDs, a cert-manager ``Certificate`` next to a vendored
``cert-manager.crds.yaml``. A CRD a HelmRelease's chart installs is not in the repository: its
objects are not looked at.
"""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph import fluxapi
from fluxgraph.checks import CheckContext, field_notes
from fluxgraph.checks._fields import unknown_fields
from fluxgraph.checks._ownership import never_applied
from fluxgraph.findings import FixData, RawFinding

ID = "unknown-custom-resource-field"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    defined = fluxapi.crd_objects(cluster)
    if not defined:
        return
    for obj in cluster.objects():
        key = (obj.ref.group, obj.ref.kind)
        if obj.ref.target or key not in defined or obj.ref.group in fluxapi.FLUX_GROUPS:
            continue
        if never_applied(obj):
            continue
        crd = fluxapi.applied_crd(cluster, *key)
        _, version = fluxapi.api_version(obj)
        entry = crd.versions.get(version) if crd is not None else None
        if crd is None or entry is None or not entry.served or not entry.schema.get("p"):
            continue
        ctx.evaluated()
        what = f"{obj.ref.kind} {obj.ref.namespace + '/' if obj.ref.namespace else ''}{obj.ref.name}"
        for u in unknown_fields(obj, entry.schema):
            name, parent, hint = fluxapi.unknown_field_words(u)
            yield ctx.finding(
                f"{what} has {name}, which the {obj.resource.api_version} {obj.ref.kind} of the CRD the cluster applies "
                f"({crd.where}) does not have: the API server drops it when {obj.owner} applies the object{hint}",
                obj.resource.position(u.path, key=True),
                headline=f"{what} has {name}, which {obj.resource.api_version} does not have",
                notes=field_notes(obj.owner, hint, f"{obj.resource.api_version} {obj.ref.kind} of the CRD the cluster applies ({crd.where})"),
                obj=obj.ref,
                kustomization=obj.owner,
                subject=f"{obj.ref.key}|{name}",
                fix=FixData.none("which field was meant is a decision"),
            )
