"""A Kustomization substitutes from a ConfigMap/Secret that another Kustomization applies,
without a same-source dependsOn chain to that one (see rules/substitute-from-race.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from fluxgraph.checks import CheckContext
from fluxgraph.checks._memo import per_cluster
from fluxgraph.checks._ownership import depends_on_after, ks_object, ordered_after, revision_ordered_after
from fluxgraph.checks._subst import Producer, field_location, producers, substitute_from_path, tokens
from fluxgraph.cluster import AppliedObject, ClusterModel, KustomizationNode
from fluxgraph.discovery import bootstrapped
from fluxgraph.findings import FixData, Note, RawFinding, Severity
from fluxgraph.materialize import store_of
from fluxgraph.model import Location, as_dict

ID = "substitute-from-race"


def _why(cluster: ClusterModel, ks: KustomizationNode, p: Producer) -> str:
    """Why ``ks`` is not ordered after ``p`` at the same revision."""
    if p.owner in cluster.ancestors(ks.id):
        return (
            f"{p.owner} applies {ks.id} itself, which orders only {ks.id}'s creation: a new revision starts both "
            f"at once, and {ks.id} has no dependsOn on {p.owner}"
        )
    if depends_on_after(cluster, ks.id, p.owner):
        return (
            f"{ks.id} reaches {p.owner} through dependsOn only across another source, which waits for Ready, "
            "not for the same revision"
        )
    return f"{ks.id} has no dependsOn on {p.owner}, directly or through its dependencies"


def _cause(p: Producer) -> dict[str, Any]:
    """One finding per producer: a shared component that puts cluster-settings into every
    namespace, or a parent that applies it and substitutes from it too, races every
    Kustomization that reads it (itself included)."""
    made = f"{p.obj.ref.kind} {p.obj.ref.name}"
    return {
        "cause": p.obj.location,
        "cause_message": (
            f"Kustomization {p.owner} applies {made} from here, and Kustomizations substitute from it without being "
            f"ordered after that apply at the same revision (a dependsOn chain to {p.owner} on the same source; "
            f"{p.owner} itself cannot be): on a new revision they can build before it is applied or updated, and then "
            "their build uses the previous values, or fails on a variable the revision adds"
        ),
        "cause_subject": f"{p.owner}|{made}",
        "cause_headline": f"{made} can be substituted by Kustomizations before {p.owner} applies it",
    }


def _created_after(cluster: ClusterModel, ks: KustomizationNode, p: Producer) -> bool:
    """Whether ``ks`` can only exist once ``p``'s object does: an ancestor of ``ks`` applies it
    (server-side apply sorts ConfigMaps and Secrets before custom resources such as
    Kustomizations, fluxcd/pkg ``ssa/sort.go``, and applies one object after another), or an
    ancestor is ordered after ``p``'s Kustomization by dependsOn."""
    ancestors = cluster.ancestors(ks.id)
    if p.owner in ancestors:
        return True
    return any(ordered_after(cluster, a, p.owner) for a in ancestors)


@per_cluster
def _referenced(cluster: ClusterModel) -> dict[str, set[str]]:
    """Kustomization id -> the variable names its substituted objects reference."""
    out: dict[str, set[str]] = {}
    for tok in tokens(cluster):
        out.setdefault(tok.ks.id, set()).add(tok.ref.name)
    return out


def _provides(ks: KustomizationNode, target: str) -> set[str]:
    """The variables of ``ks`` that come from ``target`` (``Kind/ns/name``)."""
    return {k for k, origin in ks.variable_origin.items() if origin.startswith(target)}


def _labels(p: Producer) -> dict[str, str]:
    return {str(k): str(v) for k, v in as_dict(as_dict(p.obj.data.get("metadata")).get("labels")).items()}


def _self(
    ctx: CheckContext,
    ks: KustomizationNode,
    own: Producer,
    others: list[Producer],
    target: str,
    first: str,
    loc: Location,
    kind: str,
    name: str,
) -> RawFinding:
    """A Kustomization that substitutes from what it applies (or makes) itself. Advice where
    both halves of the hazard are answered:

    - the stale build: kustomize-controller watches the object (Flux 2.7's
      ``--watch-configs-label-selector``, fluxcd/kustomize-controller
      ``requestsForConfigDependency``: a change re-queues every Kustomization that substitutes
      from it, this one included), so a stale build lasts one reconcile; or none of the
      variables it provides is used by what the Kustomization substitutes;
    - the fresh cluster: the object arrives without this Kustomization (another Kustomization
      that does not wait for it applies it too, or the repository's bootstrap creates it)."""
    cluster = ctx.cluster
    made = f"which it produces itself ({own.how})" if own.how else "which it applies itself"
    raw = ctx.finding(
        f"Kustomization {ks.id} substitutes from {target}, {made}: every build reads the values of the "
        f"previous apply, and on a fresh cluster {first} before {target} exists",
        loc,
        kustomization=ks.id,
        related=[own.obj.location],
        subject=f"{ks.id}|{target}|self",
        fix=FixData.none(f"{ks.id} applies {target} itself: moving it to another Kustomization is a decision"),
        headline=f"{ks.id} substitutes from {kind} {name}, which it {'produces' if own.how else 'applies'} itself",
        notes=[
            Note.why(
                f"Every build of {ks.id} reads the values {target} had after the previous apply, and on a fresh "
                f"cluster {first} before {target} exists"
            ),
            *([Note.note(f"it is produced by {own.how}")] if own.how else []),
        ],
        **_cause(own),
    )
    if own.how:
        # what a maker writes changes when its store does, not at this revision: only the fresh
        # cluster is at stake, and the repository's bootstrap may answer it
        return _advice_if_bootstrapped(
            ctx, raw, ks, kind, name,
            lambda boot: f"its values come from the store that {own.how.split(' ')[0]} reads, not the revision, and on a "
            f"fresh cluster the repository's bootstrap creates it before Flux runs ({boot})",
        )
    if cluster.flux.watches(_labels(own)):
        stale = (
            f"; kustomize-controller watches {target} ({cluster.flux.watch_selector or 'reconcile.fluxcd.io/watch: Enabled'}) "
            f"and reconciles {ks.id} again as soon as its apply changes it, so a stale build lasts one reconcile"
        )
    elif not _provides(ks, target) & _referenced(cluster).get(ks.id, set()):
        stale = f"; none of the variables {target} provides is used by the objects {ks.id} substitutes, so a stale build changes nothing"
    else:
        return raw
    # another Kustomization that can apply it without this one (not applied by it, not ordered
    # after it): the build fails until that one has applied the object, then a retry succeeds
    other = next((q for q in others if not q.how and not ordered_after(cluster, q.owner, ks.id)), None)
    boot = bootstrapped(ctx.repo.bootstrap_objects, kind, ks.spec.namespace, name)
    if other is not None:
        fresh = (
            f"; on a fresh cluster Kustomization {other.owner}, which does not wait for {ks.id}, applies it too "
            f"({other.obj.location}), and a retry builds once it has"
        )
        related = other.obj.location
    elif boot is not None:
        fresh = f"; on a fresh cluster the repository's bootstrap creates it before Flux runs ({boot})"
        related = boot
    else:
        return replace(raw, message=raw.message + stale, notes=(*raw.notes, Note.note(stale[2:])))
    return replace(
        raw,
        message=raw.message + stale + fresh,
        notes=(*raw.notes, Note.note(stale[2:]), Note.note(fresh[2:])),
        related=(*raw.related, related),
        severity=Severity.INFO,
    )


def _copied(obj: AppliedObject) -> bool:
    return "fluxcd.controlplane.io/copyFrom" in as_dict(as_dict(obj.data.get("metadata")).get("annotations"))


@per_cluster
def _store_owners(cluster: ClusterModel) -> dict[tuple[str, str, str, str], set[str]]:
    """(target cluster, kind, namespace, name) of every external-secrets store the cluster
    applies -> the Kustomizations that apply it."""
    out: dict[tuple[str, str, str, str], set[str]] = {}
    for obj in cluster.objects():
        ref = obj.ref
        if ref.group == "external-secrets.io" and ref.kind in ("SecretStore", "ClusterSecretStore"):
            out.setdefault((ref.target, ref.kind, ref.namespace if ref.kind == "SecretStore" else "", ref.name), set()).add(obj.owner)
    return out


def _late(cluster: ClusterModel, ks: KustomizationNode, m: Producer) -> tuple[str, tuple[str, str, str] | None] | None:
    """Why maker ``m`` can only write once ``ks`` has applied, and the store that makes it so
    (None where it is the maker's own Kustomization), or None: the Kustomization that applies it
    is reconciled after ``ks``, or the store it reads is applied only by ``ks`` or by
    Kustomizations reconciled after it (the controller reports the store missing and writes
    nothing: external-secrets ``SecretStoreNotReady``)."""
    if m.owner != ks.id and ordered_after(cluster, m.owner, ks.id):
        return f"{m.how} (applied by {m.owner}), and {m.owner} is only reconciled once {ks.id} has applied", None
    store = store_of(m.obj)
    if store is None:
        return None
    owners = _store_owners(cluster).get((m.obj.ref.target, *store))
    if not owners or not all(o == ks.id or ordered_after(cluster, o, ks.id) for o in owners):
        return None  # a store the repository does not apply is not evaluated
    kind, _, name = store
    by = ks.id if owners == {ks.id} else " and ".join(sorted(owners))
    why = f"{m.how} (applied by {m.owner}) from {kind} {name}, which only {by} applies" + (
        "" if owners == {ks.id} else f", reconciled once {ks.id} has applied"
    )
    return why, store


def _after_consumer(
    ctx: CheckContext, ks: KustomizationNode, makers: list[Producer], target: str, loc: Location, kind: str, name: str
) -> RawFinding | None:
    """An object only an operator writes (from an external store), whose every maker can only
    write once ``ks`` has applied (``_late``: the maker's Kustomization, or the store it reads,
    comes after ``ks``): on a fresh cluster ``ks``'s build fails for want of the object, and
    so never applies what would make it. Advice where the repository's bootstrap creates it."""
    cluster = ctx.cluster
    late = [_late(cluster, ks, m) for m in makers]
    if not late or any(w is None for w in late):
        return None
    m = makers[0]
    why, late_store = late[0] or ("", None)
    store = late_store if len(makers) == 1 else None
    # one finding per maker whose store comes late: every Kustomization it blocks is a member
    cause: dict[str, Any] = (
        {
            "cause": m.obj.location,
            "cause_message": (
                f"{m.obj.ref.kind} {m.obj.ref.namespace or ''}{'/' if m.obj.ref.namespace else ''}{m.obj.ref.name} writes "
                f"{kind} {name} from {store[0]} {store[2]}, which only "
                f"Kustomizations that substitute from that {kind} (or are reconciled after one) apply: on a "
                "fresh cluster none of them builds before it exists, so it is never written"
            ),
            "cause_subject": f"{m.obj.ref.kind}/{m.obj.ref.name}|{store[0]}/{store[2]}|after",
            "cause_headline": f"{kind} {name} is written from {store[0]} {store[2]}, which only its consumers apply",
        }
        if store is not None
        else {}
    )
    raw = ctx.finding(
        f"Kustomization {ks.id} substitutes from {target}, which nothing applies: {why}: on a fresh cluster the "
        f"build of {ks.id} fails before {target} exists, so nothing that would make it is ever applied",
        loc,
        kustomization=ks.id,
        related=[m.obj.location],
        subject=f"{ks.id}|{target}|after",
        fix=FixData.none(f"the object {ks.id} needs comes after it: bootstrapping it or reordering is a decision"),
        headline=f"{ks.id} substitutes from {kind} {name}, which can only exist after it has applied",
        notes=[
            Note.why(why[:1].upper() + why[1:]),
            Note.note(f"on a fresh cluster the build of {ks.id} fails before {target} exists, so nothing that would make it is applied"),
        ],
        **cause,
    )
    return _advice_if_bootstrapped(
        ctx, raw, ks, kind, name,
        lambda boot: f"the repository's bootstrap creates it before Flux runs ({boot}), which covers a cluster built with that step",
    )


def _advice_if_bootstrapped(
    ctx: CheckContext, raw: RawFinding, ks: KustomizationNode, kind: str, name: str, why: Callable[[Location], str]
) -> RawFinding:
    """``raw`` as advice, with ``why`` of the bootstrap step, where the repository's bootstrap
    creates the object in ``ks``'s namespace before Flux runs (``discovery.bootstrap_objects``);
    else ``raw`` unchanged."""
    boot = bootstrapped(ctx.repo.bootstrap_objects, kind, ks.spec.namespace, name)
    if boot is None:
        return raw
    return replace(
        raw,
        message=f"{raw.message}; {why(boot)}",
        notes=(*raw.notes, Note.note(why(boot))),
        related=(*raw.related, boot),
        severity=Severity.INFO,
    )


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    for ks in cluster.kustomizations.values():
        pb = ks.spec.post_build
        if pb is None or ks.mutation("dependsOn") is not None:
            continue  # admission may order it (not evaluated, and listed so)
        decl = ks_object(cluster, ks.id)
        ns = ks.spec.namespace
        for sf in pb.substitute_from:
            ctx.evaluated()
            prods = producers(cluster, sf.kind, ns, sf.name, ks.home)
            if not prods:
                continue  # missing-substitute-from
            # a copy flux-operator writes for a ResourceSet (fluxcd.controlplane.io/copyFrom)
            # holds the source object's values, not those of a revision: no revision race
            prods = [p for p in prods if not (p.obj.operator_applied and _copied(p.obj))]
            if not prods:
                continue
            target = f"{sf.kind}/{ns}/{sf.name}"
            loc = field_location(decl, substitute_from_path(decl, sf.kind, sf.name), ks.declared_at or ks.spec.location)
            first = (
                "Flux renders without its variables (optional: true) and applies the result"
                if sf.optional
                else "the build fails"
            )
            own = [p for p in prods if p.owner == ks.id]
            if own:
                yield _self(ctx, ks, own[0], [p for p in prods if p.owner != ks.id], target, first, loc, sf.kind, sf.name)
                continue
            # what an operator writes from an external store is not of the revision: its arrival
            # on a cold boot is generated-secret-not-awaited's (a copy of a repository object is),
            # unless its maker can only come after the consumer (below)
            store = [q for q in prods if q.how and q.obj.ref.group != ""]
            prods = [q for q in prods if not q.how or q.obj.ref.group == ""]
            if store and not prods and not sf.optional:
                late = _after_consumer(ctx, ks, store, target, loc, sf.kind, sf.name)
                if late is not None:
                    yield late
                continue
            if not prods or any(revision_ordered_after(cluster, ks.id, p.owner) for p in prods):
                continue
            p = prods[0]
            owners = sorted({q.owner for q in prods})
            via = f" ({p.how})" if p.how else ""
            # for `fluxgraph fix`: the Kustomization to depend on, when there is one
            fix = (
                FixData(depends_on=p.owner, provides=target)
                if len(owners) == 1
                else FixData.none(f"{' and '.join(owners)} all apply {target}: which one to depend on is a decision")
            )
            cold = "" if _created_after(cluster, ks, p) else f", and on a fresh cluster {first} before it exists"
            raw = ctx.finding(
                f"Kustomization {ks.id} substitutes from {target}, which Kustomization {p.owner} applies{via}, "
                f"but {_why(cluster, ks, p)}: it can build a new revision before {target} is applied or updated, "
                f"and then uses its previous values (or fails on a variable the revision adds){cold}",
                loc,
                kustomization=ks.id,
                related=[p.obj.location],
                subject=f"{ks.id}|{target}|{p.owner}",
                fix=fix,
                headline=f"{ks.id} can substitute {sf.kind} {sf.name} before {p.owner} applies it",
                notes=[
                    Note.why(
                        f"{target} is applied by {p.owner}{via}, but {_why(cluster, ks, p)}: a new revision can build "
                        f"before {target} is applied or updated, with its previous values{cold}"
                    ),
                ],
                **_cause(p),
            )
            used = _provides(ks, target) & _referenced(cluster).get(ks.id, set())
            if cluster.flux.watches(_labels(p)):
                raw = replace(
                    raw,
                    message=f"{raw.message}; kustomize-controller watches {target} ({cluster.flux.watch_selector or 'reconcile.fluxcd.io/watch: Enabled'}) "
                    f"and reconciles {ks.id} again as soon as it changes, so a stale build lasts seconds",
                    notes=(
                        *raw.notes,
                        Note.note(
                            f"kustomize-controller watches {target} ({cluster.flux.watch_selector or 'reconcile.fluxcd.io/watch: Enabled'}) "
                            f"and reconciles {ks.id} again as soon as it changes, so a stale build lasts seconds"
                        ),
                    ),
                    severity=Severity.INFO,
                )
            elif not used and not cold:
                raw = replace(
                    raw,
                    message=f"{raw.message}; none of the variables {target} provides is used by the objects {ks.id} substitutes",
                    notes=(*raw.notes, Note.note(f"none of the variables {target} provides is used by the objects {ks.id} substitutes")),
                    severity=Severity.INFO,
                )
            yield raw
