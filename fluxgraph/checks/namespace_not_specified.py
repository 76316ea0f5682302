"""A namespaced object that reaches the API server without a namespace
(see rules/namespace-not-specified.md).

kustomize-controller applies every object as built, with server-side apply, and sets no
namespace on it: after the build (kustomize ``namespace:``, Flux ``spec.targetNamespace``) and
postBuild substitution, nothing defaults ``metadata.namespace`` (kustomize-controller
``internal/controller/kustomization_controller.go`` ``build()`` and ``apply()``; fluxcd/pkg
``ssa/normalize`` changes ports, Secret data and ``status`` only). controller-runtime's client
then sends the dry-run apply to the resource's all-namespaces path
(``NamespaceIfScoped("", true)``), where the API server serves only LIST and WATCH for a
namespaced resource (k8s.io/apiserver ``pkg/endpoints/installer.go`` ``registerResourceHandlers``):
404, which fluxcd/pkg ``ssa/errors/errors.go`` ``DryRunErr.Error`` reports as
``<Kind>/<name> namespace not specified: the server could not find the requested resource``.
The dry run of the whole apply stage fails, so nothing of that stage is applied and nothing is
pruned (``ApplyAllStaged``; ``reconcile()`` returns before ``prune()``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from fluxgraph.checks import CheckContext
from fluxgraph.checks._namespace import lacks_namespace
from fluxgraph.checks._ordering import ks_location
from fluxgraph.checks._ownership import loc, never_applied
from fluxgraph.cluster import AppliedObject, ClusterModel, KustomizationNode
from fluxgraph.findings import Note, RawFinding, Severity
from fluxgraph.model import value_at
from fluxgraph.scope import guess_note, kind_label

ID = "namespace-not-specified"


def _consumers(cluster: ClusterModel, obj: AppliedObject) -> list[tuple[KustomizationNode, int, bool]]:
    """Kustomizations whose ``substituteFrom`` names ``obj``'s kind and name, in the cluster
    ``obj`` is applied to (substituteFrom reads the cluster a Kustomization lives in)."""
    out: list[tuple[KustomizationNode, int, bool]] = []
    if obj.ref.kind not in ("ConfigMap", "Secret") or obj.ref.group != "":
        return out
    for ks in cluster.kustomizations.values():
        pb = ks.spec.post_build
        if pb is None or ks.home != obj.ref.target:
            continue
        for i, sf in enumerate(pb.substitute_from):
            if sf.kind == obj.ref.kind and sf.name == obj.ref.name:
                out.append((ks, i, sf.optional))
    return sorted(out, key=lambda t: t[0].id)


def _consumer_text(cluster: ClusterModel, obj: AppliedObject, consumers: list[tuple[KustomizationNode, int, bool]]) -> str:
    parts = []
    for ks, i, optional in consumers[:4]:
        where = loc(ks_location(cluster, ks.id, ("spec", "postBuild", "substituteFrom", i)))
        opt = ", optional" if optional else ""
        parts.append(f"Kustomization {ks.id} substitutes from {obj.ref.kind} {obj.ref.name} in namespace {ks.spec.namespace} ({where}{opt})")
    more = f" and {len(consumers) - 4} more" if len(consumers) > 4 else ""
    required = [ks.id for ks, _, optional in consumers if not optional]
    if not required:
        then = "they build without its variables"
    elif len(required) == 1:
        then = f"the build of {required[0]} fails"
    else:
        then = f"the builds of {len(required)} of them fail"
    return f"; {'; '.join(parts)}{more}: this {obj.ref.kind} is never that one, and while no other copy is there, {then}"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    for node in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        if node.incomplete:
            continue  # not evaluated in full (and listed so): a plugin it does not run may set it
        bad: list[AppliedObject] = []
        for obj in node.objects:
            if never_applied(obj):
                continue  # Flux never sends it to the API server
            ctx.evaluated()  # it has a namespace, or needs none
            if not obj.ref.namespace and lacks_namespace(cluster, obj):
                bad.append(obj)
        for obj in bad:
            ref = obj.ref
            scope = cluster.scope_of(ref)
            label = kind_label(ref.group, ref.kind)
            written = value_at(obj.pre_substitution, ("metadata", "namespace"))
            how = "has no metadata.namespace"
            if isinstance(written, str) and written:
                how = f"has metadata.namespace {written!r}, empty after substitution"
            msg = (
                f"{label} {ref.name} {how}, and Kustomization {node.id} gives it none (no spec.targetNamespace, "
                "no namespace: in the kustomizations that bring it in): the API server refuses it at apply "
                f"('{ref.kind}/{ref.name} namespace not specified'; Flux does not default it to the Kustomization's "
                f"namespace), so the apply of {node.id} fails (nothing of its stage is applied, nothing is pruned)"
            )
            if not scope.known:
                msg += f"; {guess_note(ref.group, ref.kind)}"
            consumers = _consumers(cluster, obj)
            if consumers:
                msg += _consumer_text(cluster, obj, consumers)
            raw = ctx.finding(
                msg,
                obj.resource.position(("metadata",)),
                obj=ref,
                kustomization=node.id,
                related=[ks_location(cluster, node.id, ("spec",))],
                subject=f"{node.id}|{ref.kind}/{ref.name}",
                # one Kustomization without a namespace for many objects: one finding at it
                cause=ks_location(cluster, node.id, ("spec",)),
                cause_message=(
                    f"Kustomization {node.id} applies namespaced objects without metadata.namespace and sets no "
                    "spec.targetNamespace (nor a kustomize namespace:): the API server refuses them at apply "
                    "('namespace not specified'), so its apply fails"
                ),
                cause_subject=f"{node.id} without namespace",
                headline=f"{label} {ref.name} {how}, and Kustomization {node.id} gives it none",
                notes=[
                    Note.why(
                        f"The API server refuses it at apply ('{ref.kind}/{ref.name} namespace not specified'; Flux does "
                        f"not default it to the Kustomization's namespace), so the apply of {node.id} fails (nothing of "
                        "its stage is applied, nothing is pruned)"
                    ),
                    Note.note("no spec.targetNamespace, no namespace: in the kustomizations that bring it in"),
                    *([Note.note(guess_note(ref.group, ref.kind))] if not scope.known else []),
                    *([Note.note(_consumer_text(cluster, obj, consumers).lstrip("; "))] if consumers else []),
                ],
                cause_headline=f"Kustomization {node.id} applies namespaced objects without a namespace",
            )
            yield raw if scope.known else _guess(raw, ref.kind)


_CLUSTER_NAMED = re.compile(r"^Cluster[A-Z]")


def _guess(raw: RawFinding, kind: str) -> RawFinding:
    """An object of a kind fluxgraph does not know is taken as namespaced: a guess, so a
    warning (a cluster-scoped kind installed from outside the repository applies fine); advice
    where the kind's name follows the API convention for cluster-scoped counterparts
    (``ClusterRole``, ``ClusterIssuer``, ``ClusterSecretStore``): most likely it needs none.
    The known exceptions (Cluster API's namespaced ``ClusterClass``, ``ClusterResourceSet``,
    OLM's ``ClusterServiceVersion``) are in ``fluxgraph.scope``'s table, so never unknown."""
    if _CLUSTER_NAMED.match(kind):
        return replace(
            raw,
            message=f"{raw.message}; its name follows the convention of cluster-scoped kinds (ClusterRole, ClusterIssuer), so it most likely needs no namespace",
            severity=Severity.INFO,
        )
    return replace(raw, severity=Severity.WARNING)
