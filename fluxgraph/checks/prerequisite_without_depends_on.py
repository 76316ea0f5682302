"""Objects in a Namespace, or custom resources of a CRD, that another Kustomization applies,
without a dependsOn path to it (see rules/prerequisite-without-depends-on.md)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ordering import quick_retry
from fluxgraph.checks._ownership import happens_before, loc, never_applied, ordered_after, unresolved
from fluxgraph.cluster import AppliedObject, ClusterModel
from fluxgraph.discovery import bootstrapped
from fluxgraph.findings import FixData, Note, RawFinding, Severity
from fluxgraph.model import as_dict
from fluxgraph.scope import guess_note

ID = "prerequisite-without-depends-on"


def _crd_key(obj: AppliedObject) -> tuple[str, str] | None:
    spec = as_dict(obj.data.get("spec"))
    group = spec.get("group")
    kind = as_dict(spec.get("names")).get("kind")
    if isinstance(group, str) and isinstance(kind, str) and group and kind:
        return group, kind
    return None


def _existing_namespaces(cluster: ClusterModel, ks_id: str, before: set[str]) -> set[str]:
    """Namespaces that exist whenever ``ks_id`` reconciles: its own (the Kustomization object
    lives there), its source's, those of the Kustomizations reconciled before it, and every
    namespace one of those applies objects into: a dependency is Ready only once its apply
    succeeded, which it cannot into a namespace that does not exist (kustomize-controller sets
    Ready=True after the apply, and ``checkDependencies`` waits for Ready)."""
    out: set[str] = set()
    for k in (ks_id, *before):
        node = cluster.kustomizations.get(k)
        if node is not None:
            out.add(node.spec.namespace)
            if node.spec.source_ref is not None:
                out.add(node.spec.source_ref.namespace)
            if k != ks_id and node.status == "built" and node.target == cluster.kustomizations[ks_id].target:
                out.update(
                    o.ref.namespace for o in node.objects if o.ref.namespace and cluster.scope_of(o.ref).known and not never_applied(o)
                )
    return out


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    # (target cluster, prerequisite) -> declaring Kustomization -> its declaration: a
    # prerequisite matters only in the cluster it is applied to (spec.kubeConfig)
    namespaces: dict[tuple[str, str], dict[str, AppliedObject]] = defaultdict(dict)
    crds: dict[tuple[str, str, str], dict[str, AppliedObject]] = defaultdict(dict)
    for obj in cluster.objects():
        if never_applied(obj) or unresolved(obj.ref):
            continue
        if obj.ref.kind == "Namespace" and obj.ref.group == "":
            namespaces[(obj.ref.target, obj.ref.name)].setdefault(obj.owner, obj)
        elif obj.ref.kind == "CustomResourceDefinition" and obj.ref.group == "apiextensions.k8s.io":
            key = _crd_key(obj)
            if key is not None:
                crds[(obj.ref.target, *key)].setdefault(obj.owner, obj)

    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        if ks.mutation("dependsOn") is not None:
            continue  # admission may order it (not evaluated, and listed so)
        before: set[str] | None = None
        # (what, name) -> first object of this Kustomization that needs it
        needs: dict[tuple[str, str], AppliedObject] = {}
        for obj in sorted(ks.objects, key=lambda o: o.location):
            if never_applied(obj) or unresolved(obj.ref):
                continue
            if obj.ref.namespace and (obj.ref.target, obj.ref.namespace) in namespaces:
                key = ("Namespace", obj.ref.namespace)
                cur = needs.get(key)
                # the first object whose kind is known to be namespaced: one of an unknown kind
                # needs the Namespace only if that kind is namespaced (fluxgraph.scope)
                if cur is None or (not cluster.scope_of(cur.ref).known and cluster.scope_of(obj.ref).known):
                    needs[key] = obj
            if (obj.ref.target, obj.ref.group, obj.ref.kind) in crds:
                needs.setdefault(("CRD", f"{obj.ref.group}/{obj.ref.kind}"), obj)
        for (what, name), user in needs.items():
            if what == "Namespace":
                declarers = namespaces[(ks.target, name)]
            else:
                group, _, kind = name.partition("/")
                declarers = crds[(ks.target, group, kind)]
            ctx.evaluated()
            if ks.id in declarers:
                continue  # applied first in the same apply (ssa ApplyAllStaged)
            # happens_before(ks) & declarers, without building the set for every Kustomization
            # (on a long dependsOn chain that was quadratic)
            if any(ordered_after(cluster, ks.id, d) for d in declarers):
                continue
            if what == "Namespace":
                if before is None:
                    before = happens_before(cluster, ks.id)
                if ks.target == ks.home and name in _existing_namespaces(cluster, ks.id, before):
                    continue
            boot = bootstrapped(ctx.repo.bootstrap_objects, "Namespace", "", name) if what == "Namespace" else None
            # a gap below itself (it applies the declarer) never closes by retrying: not a delay
            soon = quick_retry(ks) if not any(ks.id in cluster.ancestors(k) for k in declarers) else None
            guess = ""
            decl_ks = sorted(declarers)
            decl = declarers[decl_ks[0]]
            by = " or ".join(f"Kustomization {k}" for k in decl_ks)
            below = [k for k in decl_ks if ks.id in cluster.ancestors(k)]
            if what == "Namespace":
                need = f"applies {user.ref} ({loc(user.location)}) into Namespace {name}, which {by} declares ({loc(decl.location)})"
                if not cluster.scope_of(user.ref).known:
                    guess = f"; {guess_note(user.ref.group, user.ref.kind)}"
            else:
                need = f"applies {user.ref} ({loc(user.location)}), whose CRD {decl.ref.name} {by} applies ({loc(decl.location)})"
            some = "it" if len(decl_ks) == 1 else "any of them"
            decl_short = decl_ks[0] if len(decl_ks) == 1 else f"{decl_ks[0]} (or {len(decl_ks) - 1} more)"
            if what == "Namespace":
                headline = f"{ks.id} applies into Namespace {name}, declared by {decl_short}, with no dependsOn on {some}"
                why = (
                    f"Namespace {name} is declared by {by}; without a dependsOn on {some} (directly, through its "
                    f"dependencies or parents) {ks.id} can build and apply first, and the apply of {user.ref} fails"
                )
            else:
                headline = f"{ks.id} applies {user.ref.kind} {user.ref.name}, whose CRD {decl_short} applies, with no dependsOn on {some}"
                why = (
                    f"CRD {decl.ref.name} is applied by {by}; without a dependsOn on {some} (directly, through its "
                    f"dependencies or parents) {ks.id} can apply first, and the dry-run of {user.ref} fails "
                    "(no matches for kind)"
                )
            notes = [Note.why(why)]
            if below and len(below) == len(decl_ks):
                notes.append(Note.note(f"{below[0]} is applied by {ks.id} itself, so on a new cluster this apply fails before {below[0]} exists"))
            if guess:
                notes.append(Note.note(guess[2:]))
            if boot is not None:
                notes.append(Note.note(f"the repository's bootstrap creates Namespace {name} before Flux runs ({loc(boot)}), which covers a cluster built with that step"))
            if soon is not None and not below:
                notes.append(Note.note(soon))
            yield RawFinding(
                headline=headline,
                notes=tuple(notes),
                message=(
                    f"Kustomization {ks.id} {need}, but it has no dependsOn on {'it' if len(decl_ks) == 1 else 'any of them'}, "
                    f"directly or through its dependencies or parents"
                    + (
                        f"; {below[0]} is applied by {ks.id} itself, so on a new cluster this apply fails before "
                        f"{below[0]} exists"
                        if below and len(below) == len(decl_ks)
                        else ""
                    )
                    + guess
                    + (
                        f"; the repository's bootstrap creates Namespace {name} before Flux runs ({loc(boot)}), which "
                        "covers a cluster built with that step"
                        if boot is not None
                        else ""
                    )
                    + (f"; {soon}" if soon is not None and not below else "")
                ),
                severity=Severity.INFO if boot is not None or soon is not None else None,
                location=user.location,
                obj=user.ref,
                kustomization=ks.id,
                related=(decl.location, *([boot] if boot is not None else [])),
                subject=f"{ks.id} needs {what} {name}",
                # for `fluxgraph fix`: the Kustomization to depend on, when there is exactly one
                fix=(
                    FixData(depends_on=decl_ks[0], provides=f"{what} {name}")
                    if len(decl_ks) == 1 and not below
                    else FixData.none(f"{ks.id} applies {below[0]} itself" if below else f"{by} all declare it: which one to depend on is a decision")
                ),
            )
