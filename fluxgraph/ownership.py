"""Who puts an object into a cluster: the one answer every rule, the diagrams and ``explain`` read.

An object reaches a cluster in two ways. A Kustomization applies it (it is in the
Kustomization's built inventory, ``KustomizationNode.objects``), or a controller makes it from
an object a Kustomization applies: the Secret an ``ExternalSecret`` writes, a ConfigMap
reflector copies into another namespace (``fluxgraph.materialize``, one table of makers).
``producers`` returns both, so "does the cluster get this Secret, and from whom" has one answer
whether the question comes from ``missing-substitute-from``, ``substitute-from-race``, the
diagram's substituteFrom arrows or ``explain``'s variable sources.

The target is the cluster the object is put into: ``""`` for the cluster being modelled, a
kubeConfig reference for a remote one (``cluster.target_of``). A Kustomization's
``substituteFrom`` and a HelmRelease's ``valuesFrom`` are read by the controller's own client,
in the cluster the Flux object lives in (``KustomizationNode.home``, the HelmRelease's
``ref.target``), whatever its ``spec.kubeConfig``: kustomize-controller
``internal/controller/kustomization_controller.go`` ``build()`` calls
``generator.SubstituteVariables(ctx, r.Client, ...)`` and helm-controller
``internal/controller/helmrelease_controller.go`` ``chartutil.ChartValuesFromReferences(ctx,
log, r.Client, obj.Namespace, ...)``, both with the controller's own client, not the
impersonated or remote one the apply uses.

Who prunes an object and what deleting a Kustomization deletes are ``fluxgraph.gc``'s; the order
in which Kustomizations apply is ``fluxgraph.ordering``'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from fluxgraph.cluster import AppliedObject, ClusterModel
from fluxgraph.materialize import MadeIndex
from fluxgraph.model import ObjRef

_Key = tuple[str, str, str, str]  # (target, kind, namespace, name)


@dataclass(frozen=True)
class Producer:
    """What puts an object into the cluster: ``obj`` itself (``how == ""``), or the maker
    ``obj`` whose controller creates it (``how`` says which field, ``fluxgraph.materialize``)."""

    obj: AppliedObject
    how: str

    @property
    def owner(self) -> str:
        """The Kustomization that applies ``obj``."""
        return self.obj.owner


def _index(model: ClusterModel) -> tuple[dict[_Key, list[Producer]], MadeIndex]:
    """Every core object the model's Kustomizations apply, by (target, kind, namespace, name),
    and what the cluster's controllers make of them: built once per model and kept in
    ``ClusterModel.memo`` (models are not modified after ``api.load``)."""
    hit = model.memo.get("ownership.producers")
    if hit is None:
        index: dict[_Key, list[Producer]] = {}
        for obj in model.objects():
            ref = obj.ref
            if ref.group == "":
                index.setdefault((ref.target, ref.kind, ref.namespace, ref.name), []).append(Producer(obj, ""))
        hit = model.memo["ownership.producers"] = (index, MadeIndex.build(model.objects()))
    return hit


def producers(model: ClusterModel, kind: str, namespace: str, name: str, target: str = "") -> list[Producer]:
    """What in the repository puts the core object ``kind`` ``namespace``/``name`` into cluster
    ``target``: the object itself as applied, then each maker whose controller creates it."""
    applied, made = _index(model)
    out = list(applied.get((target, kind, namespace, name), ()))
    out.extend(Producer(m.maker, m.how) for m in made.find(kind, namespace, name, target))
    return out


def producer_owners(model: ClusterModel, kind: str, namespace: str, name: str, target: str = "") -> list[str]:
    """The Kustomizations that apply the object, or the maker of it, sorted."""
    return sorted({p.owner for p in producers(model, kind, namespace, name, target)})


def objects_by_ref(model: ClusterModel) -> dict[ObjRef, list[AppliedObject]]:
    """Every applied object by its identity; several when Kustomizations apply the same one."""
    out: dict[ObjRef, list[AppliedObject]] = {}
    for obj in model.objects():
        out.setdefault(obj.ref, []).append(obj)
    return out
