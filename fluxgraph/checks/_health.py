"""Shared reading of health gates for the readiness rules (``health-check-never-runs``,
``generated-secret-not-awaited``, ``chart-crd-not-awaited``).

Private to ``fluxgraph.checks``. Flux facts used (the rule docs cite them in full):

- fluxcd/kustomize-controller ``internal/controller/kustomization_controller.go``
  ``checkHealth``: without ``wait`` and with an empty ``healthChecks`` list no health check runs
  at all; with ``wait: true`` the objects polled are the apply's change set without the
  skipped entries (``healthChecks`` is then not read), less the Kustomization itself; otherwise
  the objects polled are the ``healthChecks`` entries (``inventory.ReferenceToObjMetadataSet``:
  an empty ``apiVersion`` is ``apps/v1``, the namespace is never defaulted), whether or not the
  Kustomization applies them. ``ssa.ResourceManager.WaitForSetWithContext`` waits until every
  polled object is Current (a NotFound object is not: it waits until the timeout).
- fluxcd/pkg ``runtime/cel/status_reader.go`` ``NewStatusReader``: ``healthCheckExprs`` make a
  status reader keyed by the GroupKind of each entry's ``apiVersion``/``kind``; it reads only
  the objects the health check polls.
- ``checkDependencies``: a dependency counts when it is Ready (its own health check passed), or
  by its ``readyExpr`` alone unless the ``AdditiveCELDependencyCheck`` gate is on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fluxgraph.checks._memo import per_cluster
from fluxgraph.checks._ordering import KS_GROUP, apply_skipped, has_ready_expr
from fluxgraph.checks._ownership import happens_before
from fluxgraph.cluster import ClusterModel, KustomizationNode
from fluxgraph.model import as_dict

# (target cluster, API group, kind, namespace, name); namespace "" for cluster-scoped kinds
ObjKey = tuple[str, str, str, str, str]


def api_group(api_version: Any) -> str:
    """The group of an ``apiVersion`` (``schema.ParseGroupVersion``: ``v1`` is the core group)."""
    if not isinstance(api_version, str) or "/" not in api_version:
        return ""
    return api_version.rsplit("/", 1)[0]


@dataclass(frozen=True)
class HealthCheckEntry:
    """A ``spec.healthChecks`` entry, as kustomize-controller turns it into an object id."""

    index: int
    group: str
    kind: str
    namespace: str  # "" when the entry gives none (never defaulted)
    name: str

    def key(self, cluster: ClusterModel, target: str) -> ObjKey:
        ns = self.namespace
        if ns and cluster.scopes.is_cluster_scoped(self.group, self.kind):
            ns = ""  # the object the API server returns for a cluster-scoped kind has none
        return (target, self.group, self.kind, ns, self.name)

    def label(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"


@dataclass(frozen=True)
class ExprEntry:
    """A ``spec.healthCheckExprs`` entry: the GroupKind its expressions are read for."""

    index: int
    api_version: str
    group: str
    kind: str


def health_check_entries(node: KustomizationNode) -> list[HealthCheckEntry]:
    out = []
    raw = node.spec.spec.get("healthChecks")
    for i, hc in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(hc, dict):
            continue
        kind, name, ns = hc.get("kind"), hc.get("name"), hc.get("namespace")
        if not (isinstance(kind, str) and kind and isinstance(name, str) and name):
            continue
        api = hc.get("apiVersion") if isinstance(hc.get("apiVersion"), str) and hc.get("apiVersion") else "apps/v1"
        out.append(HealthCheckEntry(i, api_group(api), kind, ns if isinstance(ns, str) else "", name))
    return out


def expr_entries(node: KustomizationNode) -> list[ExprEntry]:
    out = []
    raw = node.spec.spec.get("healthCheckExprs")
    for i, e in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(e, dict):
            continue
        api, kind = e.get("apiVersion"), e.get("kind")
        if isinstance(api, str) and api and isinstance(kind, str) and kind:
            out.append(ExprEntry(i, api, api_group(api), kind))
    return out


def runs_health_check(node: KustomizationNode) -> bool:
    """``checkHealth`` returns early when ``len(HealthChecks) == 0 && !Wait``."""
    raw = node.spec.spec.get("healthChecks")
    return node.spec.wait or (isinstance(raw, list) and len(raw) > 0)


def inventory_known(node: KustomizationNode) -> bool:
    """Whether the model knows every object the Kustomization applies."""
    return node.status == "built" and not node.incomplete


def polled(cluster: ClusterModel, node: KustomizationNode) -> set[ObjKey] | None:
    """The objects ``checkHealth`` polls for ``node``; None when that depends on objects the model
    does not know (``wait: true`` on a Kustomization that was not fully built)."""
    if not runs_health_check(node):
        return set()
    if node.spec.wait:
        if not inventory_known(node):
            return None
        out = set()
        for obj in node.objects:
            r = obj.ref
            if apply_skipped(obj) or (r.kind == "Kustomization" and r.group == KS_GROUP and f"{r.namespace}/{r.name}" == node.id):
                continue
            out.add((r.target, r.group, r.kind, r.namespace, r.name))
        return out
    return {e.key(cluster, node.target) for e in health_check_entries(node)}


@dataclass(frozen=True)
class Awaited:
    """An object whose health a Kustomization's Ready implies, and the Kustomization that polls it."""

    key: ObjKey
    poller: str


@per_cluster
def _awaited_cache(cluster: ClusterModel) -> dict[str, dict[ObjKey, str] | None]:
    return {}


def awaited(cluster: ClusterModel, ks_id: str) -> dict[ObjKey, str] | None:
    """Every object whose health ``ks_id`` being Ready implies, with the Kustomization that polls
    it: what its own health check polls, and, for each Kustomization among those, what that one
    awaits (a Kustomization is Ready only once its own health check passed). None when unknown
    (``polled`` is None somewhere on the way)."""
    cache = _awaited_cache(cluster)
    if ks_id in cache:
        return cache[ks_id]
    out: dict[ObjKey, str] = {}
    unknown = False
    seen: set[str] = set()
    todo = [ks_id]
    while todo:
        cur = todo.pop()
        if cur in seen:
            continue
        seen.add(cur)
        node = cluster.kustomizations.get(cur)
        if node is None:
            continue
        keys = polled(cluster, node)
        if keys is None:
            unknown = True
            continue
        for k in keys:
            out.setdefault(k, cur)
            if k[1] == KS_GROUP and k[2] == "Kustomization":
                todo.append(f"{k[3]}/{k[4]}")
    value = None if unknown else out
    cache[ks_id] = value
    return value


def ready_before(cluster: ClusterModel, ks_id: str) -> dict[str, str]:
    """Kustomizations that are Ready before ``ks_id`` first reconciles, mapped to the
    Kustomization whose ``dependsOn`` says so: the dependencies of ``ks_id`` and of every
    Kustomization ordered before it (its dependencies, its ancestors, theirs...). A dependency
    judged by its ``readyExpr`` alone is left out: what the expression accepts is not known."""
    out: dict[str, str] = {}
    for x in sorted({ks_id, *happens_before(cluster, ks_id)}):
        node = cluster.kustomizations.get(x)
        if node is None:
            continue
        for dep in node.spec.depends_on:
            d = str(dep)
            if d in cluster.kustomizations and not has_ready_expr(cluster, node.spec, dep):
                out.setdefault(d, x)
    return out


def relied_on_by(cluster: ClusterModel) -> dict[str, list[str]]:
    """Kustomization id -> the Kustomizations that wait for it to be Ready: its dependents
    (``dependsOn``) and the Kustomizations whose health check polls it."""
    return _relied(cluster)


@per_cluster
def _relied(cluster: ClusterModel) -> dict[str, list[str]]:
    out: dict[str, set[str]] = {}
    for node in cluster.kustomizations.values():
        for dep in node.spec.depends_on:
            out.setdefault(str(dep), set()).add(node.id)
        keys = polled(cluster, node) or set()
        for k in keys:
            if k[1] == KS_GROUP and k[2] == "Kustomization" and k[0] == node.target:
                cid = f"{k[3]}/{k[4]}"
                if cid != node.id:
                    out.setdefault(cid, set()).add(node.id)
    return {k: sorted(v) for k, v in out.items()}


def spec_has(node: KustomizationNode, key: str) -> bool:
    """Whether the document that declares ``node`` writes ``spec.<key>`` itself (not a patch)."""
    obj = node.declared_by
    if obj is None or obj.resource.doc is None:
        return key in node.spec.spec
    return as_dict(as_dict(obj.resource.doc.data).get("spec")).get(key) is not None
