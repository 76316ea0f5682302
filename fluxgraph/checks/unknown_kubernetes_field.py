"""A field of a built-in Kubernetes object that the kind's schema does not have (see
rules/unknown-kubernetes-field.md).

The same check as ``unknown-flux-field`` and ``unknown-custom-resource-field``
(``fluxapi.unknown_fields``), against the schemas of Kubernetes' built-in kinds that
``fluxgraph.k8sapi`` reads from the kubernetes-validate package. What the schemas cannot judge is said as not evaluated: the package
missing, or objects of a built-in kind at an apiVersion the newest Kubernetes it describes does
not serve.
"""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph import fluxapi, k8sapi
from fluxgraph.checks import CheckContext, field_notes
from fluxgraph.checks._fields import unknown_fields
from fluxgraph.checks._ownership import never_applied
from fluxgraph.findings import FixData, RawFinding
from fluxgraph.model import Location, Problem

ID = "unknown-kubernetes-field"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    defined = fluxapi.crd_objects(cluster)
    candidates = [
        o
        for o in cluster.objects()
        if not o.ref.target
        and o.ref.group not in fluxapi.FLUX_GROUPS
        and (o.ref.group, o.ref.kind) not in defined
        and not never_applied(o)
    ]
    if not candidates:
        return
    schemas = k8sapi.builtin_schemas()
    if isinstance(schemas, str):
        if any("." not in o.ref.group for o in candidates):  # the core group and apps, batch, policy...
            ctx.not_evaluated(
                Problem(
                    "not-evaluated-kubernetes-fields",
                    f"{schemas}: the fields of the cluster's built-in Kubernetes objects are not checked ({ID})",
                    Location(cluster.root_dir or "."),
                    subject=f"kubernetes-fields:{cluster.name}",
                )
            )
        return
    unserved: dict[str, list[Location]] = {}
    for obj in candidates:
        group, version = fluxapi.api_version(obj)
        if (group, obj.ref.kind) not in schemas.group_kinds:
            continue  # not a built-in kind: a custom resource of a CRD the repository does not apply
        schema = schemas.schema(group, version, obj.ref.kind)
        if schema is None:
            unserved.setdefault(f"{obj.resource.api_version} {obj.ref.kind}", []).append(obj.resource.position(("apiVersion",)))
            continue
        ctx.evaluated()
        what = f"{obj.ref.kind} {obj.ref.namespace + '/' if obj.ref.namespace else ''}{obj.ref.name}"
        for u in unknown_fields(obj, schema):
            name, _, hint = fluxapi.unknown_field_words(u)
            yield ctx.finding(
                f"{what} has {name}, which the {obj.resource.api_version} {obj.ref.kind} of Kubernetes {schemas.version} "
                f"does not have: the API server drops it when {obj.owner} applies the object{hint}",
                obj.resource.position(u.path, key=True),
                headline=f"{what} has {name}, which {obj.resource.api_version} does not have",
                notes=field_notes(obj.owner, hint, f"{obj.resource.api_version} {obj.ref.kind} of Kubernetes {schemas.version}"),
                obj=obj.ref,
                kustomization=obj.owner,
                subject=f"{obj.ref.key}|{name}",
                fix=FixData.none("which field was meant is a decision"),
            )
    if unserved:
        first = min(loc for locs in unserved.values() for loc in locs)
        n = sum(len(v) for v in unserved.values())
        kinds = ", ".join(sorted(unserved))
        ctx.not_evaluated(
            Problem(
                "not-evaluated-kubernetes-fields",
                f"{n} object{'s' if n != 1 else ''} of apiVersions that Kubernetes {schemas.version} does not serve ({kinds}) "
                f"{'are' if n != 1 else 'is'} not checked for unknown fields ({ID}): an older Kubernetes may serve them, "
                "the schemas fluxgraph reads do not describe them",
                first,
                subject=f"kubernetes-fields:{cluster.name}",
            )
        )
