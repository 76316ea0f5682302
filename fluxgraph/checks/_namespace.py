"""Objects that reach the API server without a namespace (shared by namespace-not-specified and
missing-substitute-from; see rules/namespace-not-specified.md for the Flux facts)."""

from __future__ import annotations

from fluxgraph.checks._ownership import never_applied
from fluxgraph.cluster import AppliedObject, ClusterModel


def lacks_namespace(cluster: ClusterModel, obj: AppliedObject) -> bool:
    """``obj`` is applied by Flux, is (or is taken as) namespaced, and has no namespace. An
    object of a build fluxgraph did not evaluate in full is not judged: a ``transformers:``
    plugin or a remote component it does not run may set the namespace. Nor is an object of a
    root made up for ``--cluster`` (``ClusterModel.synthesized_root``): the Kustomization that
    really applies the folder, outside the repository, may give it ``targetNamespace``."""
    if obj.ref.namespace or obj.resource.namespace:
        return False
    owner = cluster.kustomizations.get(obj.owner)
    if owner is None or owner.incomplete:
        return False
    if owner.parent is None and cluster.synthesized_root:
        return False  # --cluster on a folder: the Kustomization that applies it gives the namespace
    if cluster.scope_of(obj.ref).cluster_scoped:
        return False
    return not never_applied(obj)


def unnamespaced(cluster: ClusterModel, kind: str, name: str, target: str) -> list[AppliedObject]:
    """The objects of ``kind``/``name`` applied to ``target`` without a namespace (what a
    ``substituteFrom`` of that kind and name may have been meant to read)."""
    return [
        o
        for o in cluster.objects()
        if o.ref.kind == kind and o.ref.name == name and o.ref.group == "" and o.ref.target == target
        and lacks_namespace(cluster, o)
    ]
