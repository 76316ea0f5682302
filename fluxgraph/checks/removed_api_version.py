"""A Flux object whose apiVersion the cluster's Flux does not serve, or serves deprecated and
removes in the next release (see rules/removed-api-version.md).

What the cluster serves is ``fluxgraph.fluxapi``'s: the Flux CRDs the cluster applies itself,
else those of the Flux release it runs (``ClusterModel.flux``: read from the repository, or
``--flux-version``). Severity follows what is known:

- error: the CRDs the cluster applies, or the release the repository pins (or the command line
  names), do not list the version: the parent's apply fails ("no matches for kind");
- warning: the same where no version is pinned (the latest is assumed: the repository may run an
  older Flux that still serves it, but an upgrade breaks it), or the version is deprecated in
  the modelled release and the next one removes it;
- info: deprecated, removed later than the next release.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from fluxgraph import flux as flux_mod
from fluxgraph import fluxapi
from fluxgraph.checks import CheckContext
from fluxgraph.findings import FixData, Note, RawFinding, Severity, sentence
from fluxgraph.model import Location

ID = "removed-api-version"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    apis = fluxapi.cluster_apis(cluster)
    flux = cluster.flux
    found: list[tuple[tuple[str, ...], RawFinding, str]] = []  # (cause key, finding, cause message)
    for obj in fluxapi.flux_objects(cluster):
        group, version = fluxapi.api_version(obj)
        kind = obj.ref.kind
        if not apis.evaluated(group, kind):
            continue
        ctx.evaluated()
        crd = apis.crd(group, kind)
        entry = crd.versions.get(version) if crd is not None else None
        if entry is not None and entry.served and not entry.deprecated:
            continue
        first, last = fluxapi.history(group, kind, version)
        if first is None and group == flux_mod.KUSTOMIZE_GROUP and kind == "Kustomization":
            continue  # a Kustomization version no release served: invalid-flux-object's (unknown-api-version)
        applied = (group, kind) in apis.applied
        source = f"the CRD the cluster applies ({crd.where})" if applied and crd is not None else flux.short()
        removed = fluxapi.removed_in(group, kind, version)
        served = [v for v, e in sorted(crd.versions.items()) if e.served and not e.deprecated] if crd is not None else []
        migrate = f"flux migrate -f . rewrites it to {group}/{served[0]}" if len(served) == 1 else "flux migrate -f . rewrites it"
        what = f"{kind} {obj.ref.namespace + '/' if obj.ref.namespace else ''}{obj.ref.name}"
        src_short, _, src_where = source.partition(" (")
        src_note = [Note.note(f"judged against {source}")] if src_where else []
        rel = fluxapi.releases()
        ahead = not applied and first is not None and apis.release is not None and rel.index(first) > rel.index(apis.release)
        if (entry is None or not entry.served) and ahead:
            # a version of a later release: the pin contradicts the repository's own objects
            fact = f"{source} does not serve yet (Flux {first} is the first to)"
            tail = f"(no matches for kind {kind} in version {group}/{version})"
            message = (
                f"{what} uses {group}/{version}, which {fact}: either the cluster runs a newer Flux than the "
                f"repository pins, or the apply of {obj.owner} fails {tail}"
            )
            cause = (
                f"{kind} objects use {group}/{version}, which {fact}: either the cluster runs a newer Flux than "
                f"the repository pins, or the apply of each Kustomization applying one fails {tail}"
            )
            fact_h = f"which {src_short} does not serve yet"
            # the mechanism around whoever applies the objects: "<before>{applier}<after>"
            before = (
                f"Flux {first} is the first to serve it: either the cluster runs a newer Flux than the "
                "repository pins, or the apply of "
            )
            after = f" fails {tail}"
            extra: list[Note] = []
            severity = Severity.WARNING
            verdict = "ahead"
        elif entry is None or not entry.served:
            if crd is None:
                fact = f"{source} has no {kind} kind ({group})"
            else:
                fact = f"{source} does not serve" + (f" (removed in Flux {removed})" if removed else "")
            if flux.assumed and not applied and last is not None:
                fact += f"; Flux {last} is the last to serve it"
            tail = f"(no matches for kind {kind} in version {group}/{version}); {migrate}"
            message = f"{what} uses {group}/{version}, which {fact}: the apply of {obj.owner} fails {tail}"
            cause = f"{kind} objects use {group}/{version}, which {fact}: the apply of each Kustomization applying one fails {tail}"
            fact_h = f"which {src_short} has no {kind} kind" if crd is None else f"which {src_short} does not serve"
            gone = f": Flux {removed} removed it" if removed and crd is not None else ""
            before, after = "The apply of ", f" fails (no matches for kind {kind} in version {group}/{version}){gone}"
            extra = [Note.note(f"Flux {last} is the last to serve it")] if flux.assumed and not applied and last is not None else []
            extra.append(Note.note(migrate))
            severity = Severity.WARNING if flux.assumed and not applied else Severity.ERROR
            verdict = "removed"
        else:
            nxt = fluxapi.next_minor(apis.release) if apis.release is not None else None
            soon = removed is not None and nxt is not None and removed == nxt
            when = f"Flux {removed} removes it" if removed else "a later Flux removes it"
            message = f"{what} uses {group}/{version}, which {source} serves deprecated: {when}; {migrate}"
            cause = f"{kind} objects use {group}/{version}, which {source} serves deprecated: {when}; {migrate}"
            fact_h = f"deprecated in {src_short}"
            before, after = sentence(f"{when}: the apply of "), " then fails"
            extra = [Note.note(migrate)]
            severity = Severity.WARNING if soon else Severity.INFO
            verdict = "deprecated"
        raw = ctx.finding(
            message,
            obj.resource.position(("apiVersion",)),
            headline=f"{what} uses {group}/{version}, {fact_h}",
            notes=(Note.why(f"{before}{obj.owner}{after}"), *src_note, *extra),
            cause_headline=f"{kind} objects use {group}/{version}, {fact_h}",
            cause_why=f"{before}each Kustomization applying one{after}",
            obj=obj.ref,
            kustomization=obj.owner,
            subject=f"{obj.ref.key}|{group}/{version}",
            fix=FixData.none("the newer version's fields differ; flux migrate -f . is the tool that rewrites manifests"),
        )
        found.append(((group, version, kind, verdict), replace(raw, severity=severity), cause))
    # one finding per cause: the objects of one kind in one removed (or deprecated) version are
    # reported together, at the first of them
    first_at: dict[tuple[str, ...], Location] = {}
    for key, raw, _ in found:
        if key not in first_at or raw.location < first_at[key]:
            first_at[key] = raw.location
    for key, raw, cause in found:
        yield replace(raw, cause=first_at[key], cause_message=cause, cause_subject="|".join(key))
