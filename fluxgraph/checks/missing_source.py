"""A Kustomization whose ``spec.sourceRef`` names a source that nothing declares
(see rules/missing-source.md).

The model records the problem (``missing-source``) after the walk. A source can also come from
outside the Kustomization graph, and those are not reported:

- the root source that ``flux bootstrap`` or the flux-operator creates (the model synthesizes
  it from gotk-sync.yaml or the FluxInstance ``spec.sync``);
- a source that a FluxInstance (or the flux-instance chart's ``instance.sync`` values) applied in
  the cluster creates: ``<sync.kind>/<instance namespace>/<sync.name, default the namespace>``;
- a source that a flux-operator ResourceSet templates (``<< inputs.x >>`` matches anything).

When a Kustomization could not be evaluated (failed build, remote or external source) the
source may be declared there; the finding says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ownership import ks_object
from fluxgraph.cluster import ClusterModel
from fluxgraph.discovery import find_syncs
from fluxgraph.findings import RawFinding
from fluxgraph.flux import SourceRef
from fluxgraph.model import as_dict

ID = "missing-source"
OPERATOR_GROUP = "fluxcd.controlplane.io"
_TEMPLATE = re.compile(r"<<.*?>>")


def _matches(template: str, value: str) -> bool:
    parts = _TEMPLATE.split(template)
    pattern = ".*".join(re.escape(p) for p in parts)
    return re.fullmatch(pattern, value) is not None


def declared_elsewhere(cluster: ClusterModel, ref: SourceRef) -> str | None:
    """What outside the Kustomization graph creates ``ref``, or None."""
    for obj in cluster.objects():
        r = obj.ref
        if r.group == OPERATOR_GROUP and r.kind == "FluxInstance":
            for s in find_syncs({"sync": as_dict(obj.data.get("spec")).get("sync")}):
                if (
                    s.get("kind") == ref.kind
                    and (s.get("name") or r.namespace) == ref.name
                    and r.namespace == ref.namespace
                ):
                    return f"FluxInstance {r.namespace}/{r.name}"
        elif r.group == "helm.toolkit.fluxcd.io" and r.kind == "HelmRelease":
            spec = as_dict(obj.data.get("spec"))
            ns = spec.get("targetNamespace") if isinstance(spec.get("targetNamespace"), str) else r.namespace
            for s in find_syncs(spec.get("values")):
                if s.get("kind") == ref.kind and (s.get("name") or ns) == ref.name and ns == ref.namespace:
                    return f"the FluxInstance of HelmRelease {r.namespace}/{r.name}"
        elif r.group == OPERATOR_GROUP and r.kind == "ResourceSet":
            for res in as_dict(obj.data.get("spec")).get("resources") or []:
                md = as_dict(as_dict(res).get("metadata"))
                name, ns = md.get("name"), md.get("namespace") or r.namespace
                if (
                    as_dict(res).get("kind") == ref.kind
                    and isinstance(name, str)
                    and isinstance(ns, str)
                    and _matches(name, ref.name)
                    and _matches(ns, ref.namespace)
                ):
                    return f"ResourceSet {r.namespace}/{r.name}"
    return None


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    unevaluated = sorted(
        k.id for k in cluster.kustomizations.values() if k.status in ("failed", "external") or k.incomplete
    )
    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        ctx.evaluated()
        for p in ks.problems:
            if p.code != "missing-source" or p.not_evaluated or ks.spec.source_ref is None:
                continue
            if declared_elsewhere(cluster, ks.spec.source_ref) is not None:
                continue
            msg = p.message
            others = [k for k in unevaluated if k != ks.id]
            if others:
                msg += (
                    f" (unless one of the Kustomizations fluxgraph could not evaluate declares it: "
                    f"{', '.join(others[:3])}{' and more' if len(others) > 3 else ''})"
                )
            obj = ks_object(cluster, ks.id)
            where = obj.resource.position(("spec", "sourceRef")) if obj is not None else p.location
            yield ctx.finding(
                msg,
                where,
                kustomization=ks.id,
                related=p.related,
                subject=f"{ks.id} -> {ks.spec.source_ref.id}",
            )
