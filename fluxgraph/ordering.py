"""Ordering facts of Flux Kustomizations, once. Two questions, answered only here (every rule,
``diff``, ``explain`` and ``fix`` asks these functions; ``fluxgraph.checks._ownership`` and
``fluxgraph.gc`` re-export them):

* **the same revision**: which ``dependsOn`` edge makes a Kustomization wait for a
  dependency's revision (``waits_for_revision``), the chain of such edges between two
  Kustomizations (``revision_chain``), and whether one applies a revision only after another
  has (``revision_ordered_after``): what values read at build time need;
* **existence**: whether one is only reconciled once another has applied at least once
  (``ordered_after``, ``happens_before``: parent links and ``dependsOn`` at any source), what
  a Namespace or a CRD needs; and the ``dependsOn`` closure (``transitive_depends``,
  ``transitive_dependents``, ``depends_on_after``).

Flux facts, as read in kustomize-controller ``internal/controller/kustomization_controller.go``
``checkDependencies()``: a Kustomization waits until each ``dependsOn`` target exists, has
observed its generation and is Ready, and, only when both use the same ``sourceRef`` (kind,
name, namespace), has ``Status.LastAppliedRevision`` equal to the revision it is about to apply.
A ``readyExpr`` (CEL, kustomize-controller v1.7) on an entry replaces that built-in check,
revision included, unless the ``AdditiveCELDependencyCheck`` feature gate is on
(``internal/features/features.go``: off by default). So only a same-source edge without a
``readyExpr`` orders a revision. Parenthood does not: a new revision enqueues every
Kustomization of the source at once (``kustomization_indexers.go``
``requestsForRevisionChangeOf``), and a dependsOn on another source waits for Ready only.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from fluxgraph import flux
from fluxgraph.cluster import ClusterModel, KustomizationNode
from fluxgraph.flux import NamedRef


def depends_on_index(spec: dict[str, Any], dep: NamedRef, default_ns: str) -> int | None:
    """Index of ``dep`` in ``spec.dependsOn`` (the namespace default applied)."""
    raw = spec.get("dependsOn")
    if not isinstance(raw, list):
        return None
    for i, d in enumerate(raw):
        if not isinstance(d, dict):
            continue
        ns = d.get("namespace") if isinstance(d.get("namespace"), str) and d.get("namespace") else default_ns
        if d.get("name") == dep.name and ns == dep.namespace:
            return i
    return None


def depends_on_entry(spec: dict[str, Any], dep: NamedRef, default_ns: str) -> dict[str, Any]:
    i = depends_on_index(spec, dep, default_ns)
    return spec["dependsOn"][i] if i is not None else {}


def has_ready_expr(model: ClusterModel, spec: flux.FluxKustomization, dep: NamedRef) -> bool:
    """A ``readyExpr`` (CEL, KC v1.7) replaces the built-in readiness and revision check
    unless the ``AdditiveCELDependencyCheck`` feature gate is on. The Flux the cluster runs must
    have the field (``fluxrelease.CHANGES`` "ready-expr"): an older API server drops it, and
    the entry is a plain dependency."""
    from fluxgraph.fluxrelease import since

    if model.flux.minor < since("ready-expr"):
        return False
    expr = depends_on_entry(spec.spec, dep, spec.namespace).get("readyExpr")
    return isinstance(expr, str) and bool(expr.strip())


def source_of(spec: flux.FluxKustomization) -> str | None:
    return spec.source_ref.id if spec.source_ref is not None else None


def waits_for_revision(model: ClusterModel, node: KustomizationNode, dep: NamedRef) -> bool:
    """Whether ``node``'s ``dependsOn`` entry ``dep`` makes it wait for ``dep``'s revision: both
    use the same source and the entry has no ``readyExpr``. A dependency absent from the model
    (a Kustomization to be added) is taken to use ``node``'s source."""
    if has_ready_expr(model, node.spec, dep):
        return False
    other = model.kustomizations.get(str(dep))
    return other is None or source_of(other.spec) == source_of(node.spec)


def revision_chain(model: ClusterModel, frm: str, to: str) -> list[str] | None:
    """The shortest ``dependsOn`` path ``frm -> ... -> to`` (ids, both ends included) whose every
    edge waits for the revision (``waits_for_revision``): ``frm`` applies a revision only after
    ``to`` has applied it. None where there is none. ``to`` may be absent from the model."""
    if frm not in model.kustomizations:
        return None
    prev: dict[str, str] = {}
    queue = deque([frm])
    seen = {frm}
    while queue:
        cur = queue.popleft()
        node = model.kustomizations.get(cur)
        if node is None:
            continue
        for d in node.spec.depends_on:
            dep = str(d)
            if dep in seen or (dep != to and dep not in model.kustomizations) or not waits_for_revision(model, node, d):
                continue
            seen.add(dep)
            prev[dep] = cur
            if dep == to:
                chain = [to]
                while chain[-1] != frm:
                    chain.append(prev[chain[-1]])
                return list(reversed(chain))
            queue.append(dep)
    return None


def revision_ordered_after(model: ClusterModel, ks_id: str, other: str) -> bool:
    """Whether ``ks_id`` applies a source revision only after ``other`` has applied that same
    revision: ``revision_chain(model, ks_id, other)`` exists. Answered from the Kustomizations
    that reach ``other`` over the same edges (one backward walk per ``other``, kept in
    ``ClusterModel.memo``, the model not being modified after ``api.load``): asked for every pair of a 10,000-long
    chain, a forward search per question would be quadratic."""
    hit = model.memo.get("ordering.revision")
    if hit is None:
        hit = model.memo["ordering.revision"] = (_revision_preds(model), {})
    preds: dict[str, list[str]] = hit[0]
    after: dict[str, frozenset[str]] = hit[1]
    reach = after.get(other)
    if reach is None:
        reach = after[other] = _backward_reach(preds, other)
    return ks_id in reach


def _revision_preds(model: ClusterModel) -> dict[str, list[str]]:
    """Who waits for whose revision, backwards: dependency -> dependents."""
    preds: dict[str, list[str]] = {}
    for k, node in model.kustomizations.items():
        for d in node.spec.depends_on:
            if str(d) in model.kustomizations and waits_for_revision(model, node, d):
                preds.setdefault(str(d), []).append(k)
    return preds


def _backward_reach(preds: dict[str, list[str]], other: str) -> frozenset[str]:
    """Every node that reaches ``other`` over the edges ``preds`` lists backwards."""
    found: set[str] = set()
    todo = list(preds.get(other, ()))
    while todo:
        cur = todo.pop()
        if cur not in found:
            found.add(cur)
            todo.extend(preds.get(cur, ()))
    return frozenset(found)


# -- existence: who has applied at least once before another first reconciles ---------------


def happens_before(cluster: ClusterModel, ks_id: str) -> set[str]:
    """Kustomizations whose apply is complete before ``ks_id`` first reconciles.

    A parent applied the child's Kustomization object, so the parent's apply (its Namespaces and
    CRDs go first, in the same ``ApplyAllStaged`` call) precedes the child's existence; a
    ``dependsOn`` target is Ready (applied) before the dependent proceeds. Both are transitive.
    """
    seen: set[str] = set()
    stack = [ks_id]
    while stack:
        cur = cluster.kustomizations.get(stack.pop())
        if cur is None:
            continue
        nxt: list[str] = [str(d) for d in cur.spec.depends_on]
        if cur.parent:
            nxt.append(cur.parent)
        for n in nxt:
            if n not in seen and n != ks_id:
                seen.add(n)
                stack.append(n)
    return seen


def _reachability(cluster: ClusterModel) -> tuple[dict[str, list[str]], dict[str, frozenset[str]]]:
    """Who links to whom backwards (dependsOn and parent), and the answers found so far (kept
    with the model, ``ClusterModel.memo``, which is not modified after ``api.load``)."""
    hit = cluster.memo.get("ordering.existence")
    if hit is None:
        preds: dict[str, list[str]] = {}
        for node in cluster.kustomizations.values():
            for nxt in [f"{d.namespace}/{d.name}" for d in node.spec.depends_on] + ([node.parent] if node.parent else []):
                preds.setdefault(nxt, []).append(node.id)
        hit = cluster.memo["ordering.existence"] = (preds, {})
    found: tuple[dict[str, list[str]], dict[str, frozenset[str]]] = hit
    return found


def ordered_after(cluster: ClusterModel, ks_id: str, other: str) -> bool:
    """Whether ``ks_id`` is only reconciled once ``other`` has applied at least once: ``other``
    is an ancestor of it, a (transitive, namespace-defaulted) dependency, or an ancestor of one.
    The relation ``happens_before`` lists, asked the other way round (a test keeps them equal).
    This orders what exists (a Namespace, a CRD), not what a revision changes: for values read
    at build time use ``revision_ordered_after``.

    Answered from the set of Kustomizations that reach ``other`` through dependsOn and parent
    links (one backward walk per ``other``, cached per cluster): asking for every Kustomization
    of a 10,000-long dependsOn chain walked the chain each time."""
    preds, after = _reachability(cluster)
    reach = after.get(other)
    if reach is None:
        reach = after[other] = _backward_reach(preds, other)
    return ks_id in reach


def depends_on_after(cluster: ClusterModel, ks_id: str, other: str) -> bool:
    """Whether a ``dependsOn`` chain (any sources) leads from ``ks_id`` to ``other``."""
    import networkx as nx

    g = cluster.depends_on_graph()
    a, b = f"ks:{ks_id}", f"ks:{other}"
    return a in g and b in g and nx.has_path(g, a, b)


# -- dependsOn at any source -------------------------------------------------------------


def transitive_depends(model: ClusterModel, ks_id: str) -> dict[str, int]:
    """Every Kustomization ``ks_id`` waits for through ``dependsOn``, with its distance."""
    out: dict[str, int] = {}
    queue = [(ks_id, 0)]
    while queue:
        cur, d = queue.pop(0)
        node = model.kustomizations.get(cur)
        if node is None:
            continue
        for dep in node.spec.depends_on:
            k = str(dep)
            if k not in out and k != ks_id:
                out[k] = d + 1
                queue.append((k, d + 1))
    return out


def transitive_dependents(model: ClusterModel, ks_id: str) -> dict[str, int]:
    """Every Kustomization that waits for ``ks_id`` through ``dependsOn``, with its distance."""
    rev: dict[str, list[str]] = {}
    for ks in model.kustomizations.values():
        for dep in ks.spec.depends_on:
            rev.setdefault(str(dep), []).append(ks.id)
    out: dict[str, int] = {}
    queue = [(ks_id, 0)]
    while queue:
        cur, d = queue.pop(0)
        for k in rev.get(cur, []):
            if k not in out and k != ks_id:
                out[k] = d + 1
                queue.append((k, d + 1))
    return out
