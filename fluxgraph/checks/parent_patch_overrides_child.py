"""A parent's blanket ``spec.patches`` replaces a value that a child Kustomization or a
HelmRelease declares (see rules/parent-patch-overrides-child.md; the comparison lives in
``fluxgraph.overrides``, shared with ``fluxgraph explain``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from fluxgraph.checks import CheckContext
from fluxgraph.checks._charts import crds_turned_off
from fluxgraph.checks._ordering import HR_GROUP
from fluxgraph.cluster import ClusterModel
from fluxgraph.findings import Note, RawFinding, Severity
from fluxgraph.flux import parse_duration
from fluxgraph.model import Location, as_dict
from fluxgraph.overrides import MISSING, Override, cluster_overrides, show, watched

ID = "parent-patch-overrides-child"

MAX_FIELDS = 4  # fields named in the message of one patch's grouped finding


def _what(o: Override) -> str:
    return f"{o.obj.ref.kind} {o.obj.ref.namespace}/{o.obj.ref.name}" if o.obj.ref.namespace else f"{o.obj.ref.kind} {o.obj.ref.name}"


def _plural(kinds: set[str], n: int) -> str:
    kind = kinds.pop() if len(kinds) == 1 else "object"
    return f"{n} {kind}s" if n != 1 else kind


def _summary(overrides: list[Override], cluster: ClusterModel) -> str:
    """What one patch overrides, field by field: the value it sets over the values declared,
    and why a field is advice only where it is."""
    by_field: dict[tuple[str, str], list[Override]] = {}
    for o in overrides:
        by_field.setdefault((o.field, show(o.applied)), []).append(o)
    parts = []
    for (field, applied), os in sorted(by_field.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        declared = sorted({show(o.written) for o in os})
        objs = sorted({_what(o) for o in os})
        who = f"{objs[0]} declares" if len(objs) == 1 else f"{_plural({o.obj.ref.kind for o in os}, len(objs))} declare"
        reasons = {advice_only(o, cluster) for o in os}
        advice = f" (advice only: {reasons.pop()})" if len(reasons) == 1 and None not in reasons else ""
        parts.append(f"{field}: {applied} where {who} {' / '.join(declared[:3])}{advice}")
    more = f", and {len(parts) - MAX_FIELDS} more field(s)" if len(parts) > MAX_FIELDS else ""
    return ", ".join(parts[:MAX_FIELDS]) + more


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def advice_only(o: Override, cluster: ClusterModel | None = None) -> str | None:
    """Why an override changes nothing a maintainer relies on, if it does not (the finding is
    info then). Measured on the corpora (docs/precision.md), the overrides maintainers act on
    are the guards a patch undoes (``retries: 0`` on a release whose upgrade must not be rolled
    back, ``remediateLastFailure: false``, ``prune: false``) and timeouts it shortens; a patch
    that harmonises remediation counts, lengthens a timeout or only marks the same
    ``substituteFrom`` entries optional is the repository's defaults at work; a CRD policy
    (``install.crds``/``upgrade.crds``) over a release whose values turn the chart's CRDs off
    (``fluxgraph.checks._charts``) has nothing to act on."""
    w, a = o.written, o.applied
    last = o.path[-1] if o.path else ""
    # helm-controller: a negative count retries without end, 0 not at all; a patch that
    # replaces either undoes a choice (a finite count for "forever", or retries for "never")
    if last == "retries" and _is_int(w) and _is_int(a) and w > 0 and a != 0:
        return "a remediation count, which the patch harmonises"
    if last in ("timeout", "interval", "retryInterval"):
        ws, as_ = parse_duration(w), parse_duration(a)
        if ws is not None and as_ is not None and as_ >= ws:
            return "the patch lengthens it"
    if last == "substituteFrom" and isinstance(w, list) and isinstance(a, list):
        def entries(v: list[Any]) -> set[tuple[str, str]]:
            return {(str(as_dict(e).get("kind")), str(as_dict(e).get("name"))) for e in v}

        if entries(w) <= entries(a):
            return "the same sources, only marked optional or added to"
    if last == "crds" and cluster is not None and o.obj.ref.kind == "HelmRelease" and o.obj.ref.group == HR_GROUP:
        hr = cluster.helm_releases.get(f"{o.obj.ref.namespace}/{o.obj.ref.name}")
        if hr is not None:
            return crds_turned_off(cluster, hr)
    return None


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    ctx.evaluated(len(watched(cluster)))  # per object: "the values it declares are applied"
    found = [o for o in cluster_overrides(cluster) if o.site.blanket]
    by_site: dict[Location, list[Override]] = {}
    for o in found:
        by_site.setdefault(o.site.location, []).append(o)
    summaries: dict[Location, str] = {}
    for o in found:
        site = o.site
        siblings = by_site[site.location]
        if site.location not in summaries:
            summaries[site.location] = _summary(siblings, cluster)
        what = _what(o)
        kustomization = o.obj.owner
        if o.obj.ref.kind == "Kustomization" and o.obj.ref.group == "kustomize.toolkit.fluxcd.io":
            kustomization = f"{o.obj.ref.namespace}/{o.obj.ref.name}"
        applied = "removes it" if o.applied is MISSING else f"applies {show(o.applied)}"
        applied_short = "removes it" if o.applied is MISSING else f"applies {show(o.applied, 24)}"
        msg = (
            f"{what} declares {o.field}: {show(o.written)}, and Flux {applied}: {site.describe()}, a patch of "
            f"{site.target}, sets it whatever the object declares"
        )
        why_not = advice_only(o, cluster)
        if why_not is not None:
            msg += f" (advice only: {why_not})"
        raw = ctx.finding(
            msg,
            o.location,
            obj=o.obj.ref,
            kustomization=kustomization,
            related=[site.location],
            subject=f"{o.obj.ref}|{o.field}",
            # one patch that overrides values in several objects: one finding at the patch
            cause=site.location,
            cause_message=f"{site.patch_text()} overrides values that the objects declare themselves: {summaries[site.location]}",
            cause_subject=f"{site.written_in} spec.patches[{site.written_index}] overrides",
            headline=f"{what} declares {o.field}: {show(o.written, 24)}, and Flux {applied_short}",
            notes=[
                Note.why(f"{site.describe()}, a patch of {site.target}, sets it whatever the object declares"),
                *([Note.note(f"advice only: {why_not}")] if why_not is not None else []),
            ],
            cause_headline=(
                f"spec.patches[{site.written_index}] of {site.written_in}, a patch of {site.target}, overrides "
                "values the objects declare"
            ),
        )
        yield raw if why_not is None else replace(raw, severity=Severity.INFO)
