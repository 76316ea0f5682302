"""Shared helpers of the ordering rules (dependsOn, wait, health checks, timeouts).

Private to ``fluxgraph.checks``: where a Flux object's fields sit in the repository, which
Kustomizations the model could not see into, and the objects kustomize-controller skips.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fluxgraph import flux
from fluxgraph.checks._ownership import never_applied
from fluxgraph.cluster import AppliedObject, ClusterModel, KustomizationNode
from fluxgraph.flux import NamedRef, format_duration
from fluxgraph.model import Location, as_dict
from fluxgraph.ordering import depends_on_entry as depends_on_entry  # re-exported for the rules
from fluxgraph.ordering import depends_on_index
from fluxgraph.ordering import has_ready_expr as has_ready_expr  # re-exported for the rules

KS_GROUP = flux.KUSTOMIZE_GROUP
HR_GROUP = flux.HELM_GROUP


# -- where things are ---------------------------------------------------------------------


def ks_location(cluster: ClusterModel, ks_id: str, path: tuple[Any, ...] = ()) -> Location:
    """Where Kustomization ``ks_id`` (or its field ``path``) is declared."""
    node = cluster.kustomizations[ks_id]
    obj = node.declared_by  # for the root: the first object of the walk that declares it again
    if obj is None:
        return node.declared_at or node.spec.location
    return obj.resource.position(path)


def ks_depends_on_location(cluster: ClusterModel, ks_id: str, dep: NamedRef) -> Location:
    node = cluster.kustomizations[ks_id]
    i = depends_on_index(node.spec.spec, dep, node.spec.namespace)
    path: tuple[Any, ...] = ("spec", "dependsOn", i) if i is not None else ("spec", "dependsOn")
    return ks_location(cluster, ks_id, path)


def hr_depends_on_location(obj: AppliedObject, namespace: str, dep: NamedRef) -> Location:
    i = depends_on_index(as_dict(obj.data.get("spec")), dep, namespace)
    path: tuple[Any, ...] = ("spec", "dependsOn", i) if i is not None else ("spec", "dependsOn")
    return obj.resource.position(path)


# -- what the model could not see -----------------------------------------------------------


@dataclass(frozen=True)
class Blind:
    """A Kustomization whose applied objects are unknown (or partly unknown) to the model."""

    id: str
    status: str
    target_namespace: str | None

    def could_declare(self, namespace: str) -> bool:
        # kustomize's namespace transformer puts every namespaced object in targetNamespace
        return self.target_namespace is None or self.target_namespace == namespace


def blind_spots(cluster: ClusterModel) -> list[Blind]:
    """Places that may declare Flux objects the model does not know: Kustomizations that were
    not (fully) built, and flux-operator ResourceSets (which generate objects at run time)."""
    out = []
    for ks in cluster.kustomizations.values():
        if ks.status != "built" or ks.incomplete:
            out.append(
                Blind(ks.id, ks.status if ks.status != "built" else "incomplete", ks.spec.target_namespace)
            )
        for obj in ks.objects:
            if obj.ref.kind == "ResourceSet" and obj.ref.group.startswith("fluxcd.controlplane.io"):
                out.append(Blind(f"{obj.ref.namespace}/{obj.ref.name}", "resourceset", None))
    return sorted(out, key=lambda b: b.id)


_VAR_RE = re.compile(r"\$\{[^}]*\}")


def _pattern(text: str) -> re.Pattern[str] | None:
    """A regex for a name that still holds an unresolved ``${VAR}``; None for a plain name."""
    if "${" not in text:
        return None
    parts = _VAR_RE.split(text)
    return re.compile(".*".join(re.escape(p) for p in parts) + r"\Z", re.S)


def unresolved(text: str) -> bool:
    return "${" in text


def pattern_matches(ids: Iterable[str], wanted: str) -> list[str]:
    """Ids (``ns/name``) holding an unresolved variable that could stand for ``wanted``."""
    out = []
    for i in ids:
        p = _pattern(i)
        if p is not None and p.match(wanted):
            out.append(i)
    return out


# -- what kustomize-controller skips ----------------------------------------------------------

def apply_skipped(obj: AppliedObject) -> bool:
    """Objects kustomize-controller neither applies nor health-checks (``reconcile: disabled``,
    ``ssa: Ignore``: ``gc.APPLY_EXCLUSIONS``)."""
    return never_applied(obj)


def health_check_refs(node: KustomizationNode, kind: str, group: str) -> list[tuple[int, NamedRef]]:
    """``spec.healthChecks`` entries naming ``kind`` of ``group`` with a namespace
    (kustomize-controller does not default it: ``inventory.ReferenceToObjMetadataSet``)."""
    out = []
    raw = node.spec.spec.get("healthChecks")
    for i, hc in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(hc, dict) or hc.get("kind") != kind:
            continue
        raw_api = hc.get("apiVersion")
        api = raw_api if isinstance(raw_api, str) and raw_api else "apps/v1"
        if api.rsplit("/", 1)[0] != group:
            continue
        name, ns = hc.get("name"), hc.get("namespace")
        if isinstance(name, str) and name and isinstance(ns, str) and ns:
            out.append((i, NamedRef(ns, name)))
    return out


def waited_kustomizations(
    cluster: ClusterModel, node: KustomizationNode
) -> list[tuple[str, str, tuple[Any, ...]]]:
    """Kustomizations whose readiness ``node``'s health check waits for:
    ``(id, how, path of the responsible field)``.  With ``wait: true`` every applied object
    except itself (the deadlock guard in ``checkHealth``) and skipped ones; otherwise the
    ``healthChecks`` entries."""
    out: list[tuple[str, str, tuple[Any, ...]]] = []
    if node.spec.wait:
        for obj in node.objects:
            r = obj.ref
            if r.kind != "Kustomization" or r.group != KS_GROUP or apply_skipped(obj):
                continue
            cid = f"{r.namespace}/{r.name}"
            if cid != node.id and cid in cluster.kustomizations:
                out.append((cid, "wait: true", ("spec", "wait")))
    else:
        for i, ref in health_check_refs(node, "Kustomization", KS_GROUP):
            cid = str(ref)
            if cid != node.id and cid in cluster.kustomizations:
                out.append((cid, "healthChecks", ("spec", "healthChecks", i)))
    return out


def duration(seconds: float) -> str:
    return format_duration(seconds)


# A cold-boot ordering gap that kustomize-controller's retry repairs this soon costs a delay of
# about one retry, not an outage (measured on the corpora, docs/precision.md): advice.
QUICK_RETRY = 300.0


def quick_retry(ks: KustomizationNode) -> str | None:
    """The words for a Kustomization whose failed apply is retried within ``QUICK_RETRY``
    seconds (``retryInterval``, else ``interval``), else None."""
    every = ks.spec.effective_retry_interval
    if every > QUICK_RETRY:
        return None
    field = "retryInterval" if ks.spec.retry_interval is not None else "interval"
    return (
        f"{ks.id} retries a failed apply every {format_duration(every)} ({field}), so on a cold boot the gap costs a delay of about "
        "one retry, not an outage"
    )
