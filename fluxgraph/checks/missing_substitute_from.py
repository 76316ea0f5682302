"""A non-optional substituteFrom that nothing in the repository produces
(see rules/missing-substitute-from.md)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from fluxgraph.checks import CheckContext
from fluxgraph.checks._namespace import unnamespaced
from fluxgraph.checks._ownership import ks_object, loc
from fluxgraph.checks._subst import field_location, producers, substitute_from_path
from fluxgraph.cluster import ClusterModel, KustomizationNode
from fluxgraph.discovery import bootstrapped
from fluxgraph.findings import Note, RawFinding, Severity, sentence

ID = "missing-substitute-from"


def _unbuilt_could_apply(cluster: ClusterModel, namespace: str, home: str) -> KustomizationNode | None:
    """A Kustomization of the cluster whose objects are not known (its source is outside the
    repository, its path is missing, its build fails) and that could apply an object into
    ``namespace`` of cluster ``home`` (it sets no other targetNamespace): the object may come
    from it, so its absence is not evaluated (that Kustomization is reported itself)."""
    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        if ks.status in ("external", "missing-path", "failed") and ks.target == home:
            if ks.spec.target_namespace in (None, "", namespace):
                return ks
    return None


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    for ks in cluster.kustomizations.values():
        pb = ks.spec.post_build
        if pb is None:
            continue
        decl = ks_object(cluster, ks.id)
        ns = ks.spec.namespace
        for sf in pb.substitute_from:
            if sf.optional:
                continue
            if producers(cluster, sf.kind, ns, sf.name, ks.home):
                ctx.evaluated()
                continue
            if _unbuilt_could_apply(cluster, ns, ks.home) is not None:
                continue  # not evaluated: what that Kustomization applies is not known
            ctx.evaluated()
            stray = unnamespaced(cluster, sf.kind, sf.name, ks.home)
            if stray:
                # the object is in the repository, without a namespace: point at it
                # (namespace-not-specified reports it there)
                o = min(stray, key=lambda x: x.location)
                why = (
                    f"the {sf.kind} {sf.name} this "
                    f"repository has, applied by Kustomization {o.owner} ({loc(o.location)}), has no namespace and the "
                    f"API server refuses it (namespace-not-specified): unless a {sf.kind} {sf.name} already exists in "
                    f"namespace {ns}, every build of {ks.id} fails (substitute from '{sf.kind}/{sf.name}' error)"
                )
                msg = f"Kustomization {ks.id} substitutes from {sf.kind} {ns}/{sf.name}; {why}"
            else:
                why = (
                    f"it must already exist in the cluster, in namespace {ns}, or every build "
                    f"of {ks.id} fails (substitute from '{sf.kind}/{sf.name}' error)"
                )
                msg = (
                    f"Kustomization {ks.id} substitutes from {sf.kind} {ns}/{sf.name}, which nothing in this "
                    f"repository applies: {why}"
                )
            raw = ctx.finding(
                msg,
                field_location(
                    decl, substitute_from_path(decl, sf.kind, sf.name), ks.declared_at or ks.spec.location
                ),
                headline=(
                    f"{ks.id} substitutes from {sf.kind} {ns}/{sf.name}, "
                    + ("whose copy in this repository has no namespace" if stray else "which this repository does not apply")
                ),
                notes=(Note.why(sentence(why)),),
                kustomization=ks.id,
                subject=f"{ks.id}|{sf.kind}/{ns}/{sf.name}",
            )
            boot = bootstrapped(ctx.repo.bootstrap_objects, sf.kind, ns, sf.name)
            if boot is not None and not stray:
                # the repository's bootstrap step creates it before Flux: the cluster has it
                raw = replace(
                    raw,
                    message=f"{raw.message}; the repository's bootstrap creates a {sf.kind} {sf.name} before Flux runs "
                    f"({loc(boot)}), which covers a cluster built with that step",
                    notes=(
                        *raw.notes,
                        Note.note(
                            f"the repository's bootstrap creates a {sf.kind} {sf.name} before Flux runs ({loc(boot)}), "
                            "which covers a cluster built with that step"
                        ),
                    ),
                    related=(*raw.related, boot),
                    severity=Severity.INFO,
                )
            yield raw
