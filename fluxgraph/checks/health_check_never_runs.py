"""A health gate a Kustomization declares that kustomize-controller never evaluates: a
``healthCheckExprs`` entry for a kind no polled object has, or a ``healthChecks`` entry that
``wait: true`` ignores (see rules/health-check-never-runs.md)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from fluxgraph.checks import CheckContext
from fluxgraph.checks._health import (
    HealthCheckEntry,
    awaited,
    expr_entries,
    health_check_entries,
    polled,
    ready_before,
    relied_on_by,
    runs_health_check,
    spec_has,
)
from fluxgraph.checks._ordering import HR_GROUP, KS_GROUP, apply_skipped, blind_spots, ks_location
from fluxgraph.checks._subst import producers
from fluxgraph.cluster import ClusterModel, KustomizationNode
from fluxgraph.findings import Note, RawFinding, Severity
from fluxgraph.model import Location, as_dict

ID = "health-check-never-runs"

# What helm's own wait checks (helm pkg/kube/ready.go ReadyChecker.IsReady): a HelmRelease is
# Ready only once these objects of its release are ready, so a Kustomization that waits for the
# HelmRelease waits for them too (Jobs only with waitForJobs, left out).
HELM_WAIT_KINDS = frozenset(
    {
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("apps", "ReplicaSet"),
        ("", "Pod"),
        ("", "Service"),
        ("", "PersistentVolumeClaim"),
        ("", "ReplicationController"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    }
)


def _gk(group: str, kind: str) -> str:
    return f"{kind} of {group}" if group else f"{kind} of the core group"


def _waiting_releases(node: KustomizationNode) -> list[str]:
    """HelmReleases the Kustomization applies and waits for (``wait: true``) whose install and
    upgrade both wait: helm-controller's readiness then includes helm's own wait."""
    out = []
    for obj in node.objects:
        r = obj.ref
        if r.kind != "HelmRelease" or r.group != HR_GROUP or apply_skipped(obj):
            continue
        spec = as_dict(obj.data.get("spec"))
        if any(as_dict(spec.get(a)).get("disableWait") is True for a in ("install", "upgrade")):
            continue
        out.append(f"{r.namespace}/{r.name}")
    return sorted(out)


def _applies(node: KustomizationNode, group: str, kind: str) -> list[str]:
    return sorted(
        f"{o.ref.namespace}/{o.ref.name}" if o.ref.namespace else o.ref.name
        for o in node.objects
        if o.ref.group == group and o.ref.kind == kind and not apply_skipped(o)
    )


def _held_elsewhere(cluster: ClusterModel, ks: KustomizationNode, h: HealthCheckEntry) -> str | None:
    """Why the gate a ``healthChecks`` entry that ``wait: true`` ignores still holds, if it does:

    - a child Kustomization ``ks`` applies (and so polls) waits for HelmReleases whose helm
      wait covers an object of that kind;
    - a Kustomization ``ks`` depends on is Ready only once the named object is healthy (its
      health check polls it, directly or through a Kustomization it polls), or waits for
      HelmReleases whose helm wait covers an object of that kind;
    - the entry names a Secret that an ExternalSecret (or another maker) ``ks`` applies writes:
      the maker is polled, and its Ready condition turns True once the Secret is written
      (kstatus reads the Ready condition, fluxcd/cli-utils ``checkReadyCondition``)."""
    key = h.key(cluster, ks.target)
    helm_kind = (h.group, h.kind) in HELM_WAIT_KINDS
    if helm_kind:
        for o in ks.objects:
            r = o.ref
            child = cluster.kustomizations.get(f"{r.namespace}/{r.name}") if r.kind == "Kustomization" and r.group == KS_GROUP else None
            if child is not None and child.id != ks.id and child.spec.wait and _waiting_releases(child):
                return f"child Kustomization {child.id}, which it polls, waits for HelmRelease {_few(_waiting_releases(child), 2)}, whose helm wait covers a {h.kind} the chart renders"
    for dep in sorted(ready_before(cluster, ks.id)):
        aw = awaited(cluster, dep)
        if aw is not None and key in aw:
            return f"its dependency {dep} is Ready only once {h.label()} is (polled by {aw[key]})"
        node = cluster.kustomizations.get(dep)
        if helm_kind and node is not None and node.spec.wait and _waiting_releases(node):
            return f"its dependency {dep} waits for HelmRelease {_few(_waiting_releases(node), 2)}, whose helm wait covers a {h.kind} the chart renders"
    if (h.group, h.kind) == ("", "Secret"):
        # an entry without a namespace: the Secret of that name a maker this Kustomization
        # applies writes, in whichever namespace (as for an applied object, above)
        spaces = [h.namespace] if h.namespace else sorted({o.ref.namespace for o in ks.objects if o.ref.namespace})
        for ns in spaces:
            for p in producers(cluster, "Secret", ns, h.name, ks.target):
                if p.how and p.obj.owner == ks.id:
                    return f"{p.how}, and wait: true polls that maker, which is Ready once the Secret is written"
    if (h.group, h.kind) == ("apiregistration.k8s.io", "APIService") and "." in h.name:
        version, group = h.name.split(".", 1)
        served = [o for o in ks.objects if o.data.get("apiVersion") == f"{group}/{version}" and not apply_skipped(o)]
        if served:
            o = served[0]
            return (
                f"{ks.id} applies {o.ref.kind} {o.ref.name} of {group}/{version} ({o.location}), whose apply fails "
                "unless the API server serves that version, so the Kustomization is not Ready before it does"
            )
    return _dead_entry(cluster, ks, h)


def _dead_entry(cluster: ClusterModel, ks: KustomizationNode, h: HealthCheckEntry) -> str | None:
    """An entry that names an object nothing in the cluster applies or makes (a misspelt name or
    namespace), on a Kustomization whose ``wait: true`` polls the objects of that kind it does
    apply: the gate its dependents rely on is the one ``wait: true`` keeps. Only where no blind
    spot of the model (a Kustomization it could not fully build, a ResourceSet) could declare it:
    an object the model cannot see is not "nothing"."""
    if not h.namespace and not cluster.scopes.is_cluster_scoped(h.group, h.kind):
        return None
    mine = _applies(ks, h.group, h.kind)
    ns = h.key(cluster, ks.target)[3]
    if not mine or any(b.could_declare(ns) for b in blind_spots(cluster)):
        return None
    key = h.key(cluster, ks.target)
    if any((o.ref.target, o.ref.group, o.ref.kind, o.ref.namespace, o.ref.name) == key for o in cluster.objects()):
        return None
    if producers(cluster, h.kind, ns, h.name, ks.target):
        return None  # made by a controller (core kinds)
    return (
        f"no Kustomization of the cluster applies or makes {h.label()} (a misspelt name or namespace, or an object "
        f"created outside Flux), and wait: true polls the {h.kind} {_few(mine, 2)} that {ks.id} applies"
    )


def _few(items: list[str], n: int = 3) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


def _reliance(deps: list[str]) -> str:
    if not deps:
        return "; no Kustomization waits for it to be Ready"
    return f"; {_few(deps)} wait{'s' if len(deps) == 1 else ''} for it to be Ready"


def _cause(cluster: ClusterModel, node: KustomizationNode, key: str) -> Location | None:
    """The parent's ``spec.patches`` when a patch, not the declaring document, sets ``key``."""
    if spec_has(node, key) or not node.parent:
        return None
    parent = cluster.kustomizations.get(node.parent)
    if parent is None or not parent.spec.patches:
        return None
    return ks_location(cluster, parent.id, ("spec", "patches"))


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    relied = relied_on_by(cluster)
    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        if ks.spec.suspend:
            continue
        exprs = expr_entries(ks)
        ignored = health_check_entries(ks) if ks.spec.wait else []
        if not exprs and not ignored:
            continue
        keys = polled(cluster, ks)
        if keys is None:
            continue  # wait: true on a Kustomization the model could not fully build: not evaluated
        deps = relied.get(ks.id, [])
        active = runs_health_check(ks)
        gks = {(k[1], k[2]) for k in keys}
        releases = _waiting_releases(ks) if ks.spec.wait else []
        for e in exprs:
            ctx.evaluated()
            if (e.group, e.kind) in gks:
                continue
            what = f"healthCheckExprs[{e.index}] ({e.api_version} {e.kind}) of Kustomization {ks.id}"
            path: tuple[Any, ...] = ("spec", "healthCheckExprs", e.index)
            related: list[Location] = []
            severity = Severity.WARNING if deps else Severity.INFO
            if not active:
                why = (
                    "without wait: true or healthChecks, kustomize-controller runs no health check for it, so it is "
                    "Ready as soon as its objects are applied"
                )
                severity = Severity.INFO
            elif ks.spec.wait:
                why = f"wait: true polls only the objects it applies, and none is a {_gk(e.group, e.kind)}"
                if any((h.group, h.kind) == (e.group, e.kind) for h in ignored):
                    why += " (its healthChecks entry for one is ignored under wait: true)"
                if releases:
                    why += f"; what HelmRelease {_few(releases, 2)} creates is not polled"
                    if (e.group, e.kind) in HELM_WAIT_KINDS:
                        why += f", though helm's own wait covers a {e.kind} the chart renders"
                        severity = Severity.INFO
                related.append(ks_location(cluster, ks.id, ("spec", "wait")))
            else:
                why = f"its health check polls only the healthChecks entries, and none is a {_gk(e.group, e.kind)}"
                mine = _applies(ks, e.group, e.kind)
                if mine:
                    why += f" (it applies {e.kind} {_few(mine, 2)})"
                related.append(ks_location(cluster, ks.id, ("spec", "healthChecks")))
            yield _finding(ctx, ks, what, why, deps, path, related, severity, f"{ks.id}|expr|{e.group}/{e.kind}", "healthCheckExprs")
        for h in ignored:
            ctx.evaluated()
            if h.key(cluster, ks.target) in keys or (
                not h.namespace and any(k[1:3] == (h.group, h.kind) and k[4] == h.name for k in keys)
            ):
                continue  # wait: true polls it anyway (an entry without namespace means the applied object)
            what = f"healthChecks[{h.index}] ({h.label()}) of Kustomization {ks.id}"
            why = (
                "with wait: true kustomize-controller ignores healthChecks and polls only the objects the Kustomization "
                f"applies, and {h.label()} is not one of them"
            )
            severity = Severity.WARNING if deps else Severity.INFO
            if (h.group, h.kind) in HELM_WAIT_KINDS and releases:
                why += f"; helm's own wait for HelmRelease {_few(releases, 2)} covers it if that chart renders it"
                severity = Severity.INFO
            elif (held := _held_elsewhere(cluster, ks, h)) is not None:
                why += f"; the gate holds all the same: {held}"
                severity = Severity.INFO
            yield _finding(
                ctx,
                ks,
                what,
                why,
                deps,
                ("spec", "healthChecks", h.index),
                [ks_location(cluster, ks.id, ("spec", "wait"))],
                severity,
                f"{ks.id}|hc|{h.group}/{h.label()}",
                "healthChecks",
            )


def _finding(
    ctx: CheckContext,
    ks: KustomizationNode,
    what: str,
    why: str,
    deps: list[str],
    path: tuple[Any, ...],
    related: list[Location],
    severity: Severity,
    subject: str,
    key: str,
) -> RawFinding:
    cluster = ctx.cluster
    cause = _cause(cluster, ks, key)
    raw = ctx.finding(
        f"{what} is never evaluated: {why}{_reliance(deps)}",
        ks_location(cluster, ks.id, path),
        kustomization=ks.id,
        related=[*([cause] if cause else []), *related],
        subject=subject,
        cause=cause,
        cause_message=(
            f"the patches of Kustomization {ks.parent} give child Kustomizations a {key} entry that their health "
            "check never evaluates"
        )
        if cause is not None
        else "",
        cause_subject=f"{ks.parent} patches {key}" if cause is not None else "",
        headline=f"{what} is never evaluated",
        notes=[
            Note.why(why[:1].upper() + why[1:]),
            Note.affected(deps, "waiting for it to be Ready") if deps else Note.note("no Kustomization waits for it to be Ready"),
        ],
        cause_headline=f"The patches of {ks.parent} give child Kustomizations a {key} entry never evaluated",
    )
    return raw if severity is Severity.WARNING else replace(raw, severity=severity)
