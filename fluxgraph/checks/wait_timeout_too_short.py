"""A Kustomization that health-checks a HelmRelease with a timeout shorter than the
HelmRelease may take (see rules/wait-timeout-too-short.md)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ordering import (
    HR_GROUP,
    apply_skipped,
    duration,
    health_check_refs,
    ks_location,
)
from fluxgraph.cluster import HelmReleaseNode
from fluxgraph.findings import Note, RawFinding
from fluxgraph.flux import parse_duration
from fluxgraph.model import as_dict

ID = "wait-timeout-too-short"

HR_DEFAULT_TIMEOUT = 300.0  # helm-controller api/v2 GetTimeout


@dataclass(frozen=True)
class Need:
    seconds: float
    how: str  # "upgrade: 15m × (1 + 2 retries)"
    attempt: float = 0.0  # the longest single attempt (install or upgrade, plus tests)


def _seconds(v: Any, default: float) -> float:
    d = parse_duration(v)
    return d if d is not None and d >= 0 else default


def helmrelease_need(data: dict[str, Any]) -> Need | None:
    """The longest a HelmRelease may stay not-ready in one legitimate install or upgrade:
    the action's timeout (``install.timeout`` / ``upgrade.timeout``, else ``spec.timeout``,
    else 5m), plus the test timeout when ``test.enable``, times (1 + remediation retries);
    with ``strategy.name: RetryOnFailure`` remediation retries are ignored (helm-controller#1278).
    Actions with ``disableWait`` are not counted; None when no action is."""
    spec = as_dict(data.get("spec"))
    base = _seconds(spec.get("timeout"), HR_DEFAULT_TIMEOUT)
    test = as_dict(spec.get("test"))
    test_t = _seconds(test.get("timeout"), base) if test.get("enable") is True else 0.0
    best: Need | None = None
    longest_attempt = 0.0
    for action in ("install", "upgrade"):
        a = as_dict(spec.get(action))
        if a.get("disableWait") is True:
            continue
        t = _seconds(a.get("timeout"), base)
        if as_dict(a.get("strategy")).get("name") == "RetryOnFailure":
            retries = 0  # remediation is ignored; failed actions are retried at strategy.retryInterval
        else:
            retries = as_dict(a.get("remediation")).get("retries", 0)
            retries = (
                retries if isinstance(retries, int) and not isinstance(retries, bool) and retries > 0 else 0
            )
        attempt = t + test_t
        longest_attempt = max(longest_attempt, attempt)
        total = attempt * (1 + retries)
        parts = duration(t) + (f" + test {duration(test_t)}" if test_t else "")
        if retries:
            how = (
                f"{action}: ({parts}) × (1 + {retries} retries)"
                if test_t
                else f"{action}: {parts} × (1 + {retries} retries)"
            )
        else:
            how = f"{action}: {parts}"
        if best is None or total >= best.seconds:  # upgrade wins a tie: it is the everyday action
            best = Need(total, how)
    return Need(best.seconds, best.how, longest_attempt) if best is not None else None


def _waited_releases(ctx: CheckContext, ks_id: str) -> list[tuple[HelmReleaseNode, str]]:
    cluster = ctx.cluster
    ks = cluster.kustomizations[ks_id]
    out: list[tuple[HelmReleaseNode, str]] = []
    if ks.spec.wait:
        for obj in ks.objects:
            r = obj.ref
            if r.kind == "HelmRelease" and r.group == HR_GROUP and not apply_skipped(obj):
                hr = cluster.helm_releases.get(f"{r.namespace}/{r.name}")
                if hr is not None:
                    out.append((hr, "wait: true"))
    else:
        for _i, ref in health_check_refs(ks, "HelmRelease", HR_GROUP):
            hr = cluster.helm_releases.get(str(ref))
            if hr is not None:
                out.append((hr, "healthChecks"))
    return [(hr, how) for hr, how in out if not hr.spec.suspend]


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        if ks.spec.suspend or not (ks.spec.wait or ks.spec.health_checks):
            continue
        timeout = ks.spec.effective_timeout
        short: list[tuple[float, str, HelmReleaseNode, Need, str]] = []
        for hr, how in _waited_releases(ctx, ks.id):
            ctx.evaluated()
            need = helmrelease_need(hr.obj.data)
            if need is not None and timeout < need.seconds:
                short.append((-need.seconds, hr.id, hr, need, how))
        if not short:
            continue
        short.sort(key=lambda t: (t[0], t[1]))
        _, _, hr, need, how = short[0]
        if ks.spec.timeout is not None:
            path: tuple[Any, ...] = ("spec", "timeout")
            tdesc = "spec.timeout"
        else:
            path = ("spec", "interval")
            tdesc = "no spec.timeout: interval minus 30s"
        related = []
        cause = None
        obj = ks.declared_by
        if obj is not None and obj.resource.doc is not None and obj.resource.doc.scalar_node(path) is None:
            tdesc += f", set by a patch{f' of {ks.parent}' if ks.parent else ''}"
            if ks.parent and cluster.kustomizations[ks.parent].spec.patches:
                cause = ks_location(cluster, ks.parent, ("spec", "patches"))
                related.append(cause)
        msg = (
            f"Kustomization {ks.id} waits for HelmRelease {hr.id} ({how}) for at most {duration(timeout)} ({tdesc}); "
            f"the HelmRelease may take {duration(need.seconds)} to become ready ({need.how})"
        )
        if len(short) > 1:
            others = ", ".join(s[1] for s in short[1:4]) + (", ..." if len(short) > 4 else "")
            msg += f"; {len(short) - 1} more HelmRelease(s) may also take longer than {duration(timeout)}: {others}"
        hr_spec = as_dict(hr.obj.data.get("spec"))
        hr_loc = hr.obj.resource.position(("spec", "timeout") if "timeout" in hr_spec else ())
        # one finding per cause: a parent whose patches give every child the same timeout
        raw = ctx.finding(
            msg,
            ks_location(cluster, ks.id, path),
            obj=hr.obj.ref,
            kustomization=ks.id,
            related=[*related, hr_loc],
            subject=f"{ks.id} timeout",
            cause=cause,
            cause_message=(
                f"the patches of Kustomization {ks.parent} give child Kustomizations a health-check timeout of "
                f"{duration(timeout)}, shorter than the HelmReleases they wait for may take to become ready"
            ),
            cause_subject=f"{ks.parent} patches timeout {duration(timeout)}",
            headline=f"{ks.id} waits {duration(timeout)} for HelmRelease {hr.id}, which may take {duration(need.seconds)}",
            notes=[
                Note.why(
                    f"Kustomization {ks.id} waits for HelmRelease {hr.id} ({how}) for at most {duration(timeout)} "
                    f"({tdesc}); the HelmRelease may take {duration(need.seconds)} to become ready ({need.how})"
                ),
                *(
                    [Note.affected([s[1] for s in short[1:]], f"{len(short) - 1} more HelmRelease(s) may also take longer")]
                    if len(short) > 1
                    else []
                ),
            ],
            cause_headline=f"The patches of {ks.parent} give child Kustomizations a {duration(timeout)} health-check timeout",
        )
        yield raw
