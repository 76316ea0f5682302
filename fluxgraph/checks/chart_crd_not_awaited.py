"""A Kustomization applies custom resources whose CRD a HelmRelease installs, and it depends on
the Kustomization that applies the HelmRelease, which does not wait for it
(see rules/chart-crd-not-awaited.md)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from fluxgraph.checks import CheckContext
from fluxgraph.checks._charts import OutOfBand, Provider, installed_out_of_band, provides, releases
from fluxgraph.checks._health import awaited, ready_before, spec_has
from fluxgraph.checks._ordering import (
    HR_GROUP,
    has_ready_expr,
    ks_depends_on_location,
    ks_location,
    quick_retry,
)
from fluxgraph.checks._ownership import never_applied, unresolved
from fluxgraph.checks._subst import FLUX_GROUPS
from fluxgraph.cluster import AppliedObject, ClusterModel, KustomizationNode
from fluxgraph.findings import Note, RawFinding, Severity
from fluxgraph.flux import NamedRef
from fluxgraph.model import as_dict
from fluxgraph.scope import BUILTIN

ID = "chart-crd-not-awaited"


def _applied_crd_groups(cluster: ClusterModel) -> set[tuple[str, str]]:
    """(target, group) of every CustomResourceDefinition a Kustomization applies: those are
    ``prerequisite-without-depends-on``'s."""
    out = set()
    for obj in cluster.objects():
        if obj.ref.kind == "CustomResourceDefinition" and obj.ref.group == "apiextensions.k8s.io":
            g = as_dict(obj.data.get("spec")).get("group")
            if isinstance(g, str):
                out.add((obj.ref.target, g))
    return out


def wait_path(node: KustomizationNode) -> tuple[Any, ...]:
    """Where the dependency's missing wait belongs: its ``wait`` line, else its ``healthChecks``,
    else its ``spec``."""
    if spec_has(node, "wait"):
        return ("spec", "wait")
    if spec_has(node, "healthChecks"):
        return ("spec", "healthChecks")
    return ("spec",)


def how_not_waiting(node: KustomizationNode, what: str) -> str:
    if node.spec.wait:
        return f"it has wait: true but does not apply {what} itself"
    if node.spec.health_checks:
        return f"its healthChecks do not name {what}"
    return "it has neither wait: true nor healthChecks"


def direct_dependency(cluster: ClusterModel, ks: KustomizationNode, dep_id: str) -> str | None:
    """``ks`` itself or the nearest of its ancestors whose ``dependsOn`` names ``dep_id`` (not by a
    ``readyExpr`` alone), or None."""
    for x in (ks.id, *cluster.ancestors(ks.id)):
        node = cluster.kustomizations.get(x)
        if node is None:
            continue
        for dep in node.spec.depends_on:
            if str(dep) == dep_id and not has_ready_expr(cluster, node.spec, dep):
                return x
    return None


def _hr_key(p: Provider) -> tuple[str, str, str, str, str]:
    r = p.hr.obj.ref
    return (r.target, HR_GROUP, "HelmRelease", r.namespace, r.name)


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    crd_groups = _applied_crd_groups(cluster)
    rels = releases(cluster)
    providers: dict[tuple[str, str], list[Provider]] = {}

    def providers_of(target: str, group: str) -> list[Provider]:
        key = (target, group)
        if key not in providers:
            found = []
            for rel in rels:
                if rel.hr.target != target:
                    continue
                p = provides(rel, group)
                if p is not None:
                    found.append(p)
            providers[key] = found
        return providers[key]

    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        if ks.spec.suspend or ks.mutation("dependsOn") is not None:
            continue  # admission may order it (not evaluated, and listed so)
        # group -> the first custom resource of that group this Kustomization applies
        users: dict[str, AppliedObject] = {}
        for obj in sorted(ks.objects, key=lambda o: o.location):
            r = obj.ref
            if not r.group or (r.group, r.kind) in BUILTIN or r.group in FLUX_GROUPS or r.group.endswith(".fluxcd.io"):
                continue
            if never_applied(obj) or unresolved(r) or (r.target, r.group) in crd_groups:
                continue
            users.setdefault(r.group, obj)
        if not users:
            continue
        before: dict[str, str] | None = None
        for group, user in sorted(users.items()):
            provs = [p for p in providers_of(user.ref.target, group) if p.hr.owner != ks.id]
            if not provs:
                continue
            ctx.evaluated()
            if before is None:
                before = ready_before(cluster, ks.id)
            # the installers ks (or an ancestor of it) names in its own dependsOn: that is the
            # ordering its author wrote for the CRD; reached only through another dependency, whose
            # own health may well wait for the chart in ways the model cannot see, it is not judged
            ordered = [p for p in provs if direct_dependency(cluster, ks, p.hr.owner) is not None]
            if not ordered:
                continue  # not ordered after any installer: a missing dependsOn, not this rule's
            waited = False
            unknown = False
            for d in before:
                aw = awaited(cluster, d)
                if aw is None:
                    unknown = True
                    continue
                if any(_hr_key(p) in aw for p in provs):
                    waited = True
                    break
            if waited or unknown:
                continue  # unknown: a dependency whose health check the model cannot see
            p = ordered[0]
            yield _finding(ctx, ks, user, p, direct_dependency(cluster, ks, p.hr.owner) or ks.id,
                           installed_out_of_band(ctx.repo, p))


def _finding(
    ctx: CheckContext, ks: KustomizationNode, user: AppliedObject, p: Provider, via: str, oob: OutOfBand | None
) -> RawFinding:
    cluster = ctx.cluster
    owner = cluster.kustomizations[p.hr.owner]
    hr = f"HelmRelease {p.hr.id}"
    r = user.ref
    chart = f"chart {p.chart}" + (f", matched to {r.group} by its name only: a guess" if p.guess else "")
    if via == ks.id:
        dep = f"{ks.id} depends on {owner.id}"
    else:
        dep = f"{ks.id} is applied by {via}, which depends on {owner.id}"
    where = ks_location(cluster, owner.id, wait_path(owner))
    dep_loc = ks_depends_on_location(cluster, via, NamedRef(*owner.id.split("/", 1)))
    msg = (
        f"Kustomization {ks.id} applies {r.kind} {r.name} of {r.group}, whose CRD {hr} installs ({chart}); {dep}, "
        f"which applies that HelmRelease but does not wait for it ({how_not_waiting(owner, hr)}): {owner.id} is Ready "
        f"as soon as the HelmRelease object is applied, so on a cold boot {ks.id} can apply before the chart is "
        f"installed, and its apply fails with no matches for kind {r.kind}"
    )
    raw = ctx.finding(
        msg,
        where,
        obj=r,
        kustomization=ks.id,
        related=[user.location, dep_loc, p.hr.obj.location],
        subject=f"{ks.id}|{r.group}|{p.hr.id}",
        cause=where,
        cause_message=(
            f"Kustomization {owner.id} applies {hr} ({chart}), which installs the CRDs of {r.group}, without waiting "
            f"for it, and Kustomizations that apply {r.group} custom resources depend on {owner.id}: on a cold boot "
            "their apply can fail with no matches for kind until the chart is installed"
        ),
        cause_subject=f"{owner.id}|{p.hr.id}|{r.group}",
        headline=f"{ks.id} can apply {r.kind} {r.name} before {hr} installs its CRD",
        notes=[
            Note.why(
                f"The CRD of {r.group} comes from {hr} ({chart}); {dep}, which applies that HelmRelease but does not wait "
                f"for it ({how_not_waiting(owner, hr)}), so on a cold boot the apply can fail with no matches for kind {r.kind}"
            ),
        ],
        cause_headline=f"{owner.id} applies {hr}, which installs the CRDs of {r.group}, without waiting for it",
    )
    if oob is not None:
        at = f" ({oob.location.file_line})" if oob.location is not None else ""
        raw = replace(
            raw,
            message=f"{raw.message}; {oob.how}{at}, which covers a cold boot that runs it first",
            notes=(*raw.notes, Note.note(f"{oob.how}{at}, which covers a cold boot that runs it first")),
            related=(*raw.related, *((oob.location,) if oob.location is not None else ())),
            cause_message=f"{raw.cause_message}; {oob.how}{at}",
        )
    if p.guess or oob is not None:
        return replace(raw, severity=Severity.INFO)
    soon = quick_retry(ks)
    if soon is not None:
        return replace(raw, message=f"{raw.message}; {soon}", notes=(*raw.notes, Note.note(soon)), severity=Severity.INFO)
    return raw

