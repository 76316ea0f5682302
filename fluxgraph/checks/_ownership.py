"""Shared helpers of the ownership and prune rules (who applies what, what Flux may delete).

Private to ``fluxgraph.checks``. Everything here reads the cluster model only.

Flux facts used (see the rule docs for the references):

- An object is skipped by garbage collection (prune, and the finalizer of a deleted
  Kustomization) when its live labels or annotations carry ``kustomize.toolkit.fluxcd.io/prune:
  disabled``, ``kustomize.toolkit.fluxcd.io/reconcile: disabled`` or
  ``kustomize.toolkit.fluxcd.io/ssa: Ignore`` (kustomize-controller ``deleteObjects``; fluxcd/pkg
  ``ssa/utils/meta.go`` ``AnyInMetadata``: a non-empty value compared with ``strings.EqualFold``).
- A deleted Kustomization's finalizer deletes its inventory unless it is suspended, per
  ``spec.deletionPolicy``: ``MirrorPrune`` (default) follows ``spec.prune``, ``Delete`` and
  ``WaitForTermination`` delete, ``Orphan`` does not (``finalizerShouldDeleteResources``).
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field

from fluxgraph import flux
from fluxgraph.checks._memo import per_cluster, per_object
from fluxgraph.cluster import AppliedObject, ClusterModel, KustomizationNode
from fluxgraph.gc import APPLY_EXCLUSIONS, IF_NOT_PRESENT, IMMORTAL_NAMESPACES, metadata_match, protection
from fluxgraph.gc import deletion_policy_text as deletion_policy_text  # re-exported for the rules
from fluxgraph.model import Location, ObjRef, as_dict
from fluxgraph.ordering import depends_on_after as depends_on_after  # re-exported for the rules
from fluxgraph.ordering import happens_before as happens_before  # re-exported for the rules
from fluxgraph.ordering import ordered_after as ordered_after  # re-exported for the rules
from fluxgraph.ordering import revision_ordered_after as revision_ordered_after  # re-exported for the rules
from fluxgraph.scope import guess_note

KS_GROUP = flux.KUSTOMIZE_GROUP
# Namespaces every cluster has, whatever the repository says; they are shared by definition.
SYSTEM_NAMESPACES = IMMORTAL_NAMESPACES | {"kube-node-lease"}

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def loc(location: Location) -> str:
    """``file:line`` for messages (``Location.file_line``)."""
    return location.file_line


@per_object
def gc_protection(obj: AppliedObject) -> str | None:
    """Why Flux's garbage collection would skip ``obj`` (as applied), or None."""
    return protection(obj.data)


@per_object
def never_applied(obj: AppliedObject) -> bool:
    return metadata_match(obj.data, APPLY_EXCLUSIONS) is not None


@per_object
def if_not_present(obj: AppliedObject) -> bool:
    """``ssa: IfNotPresent`` (kustomize-controller ``apply()`` ``IfNotPresentSelector``): applied
    only when the object does not exist yet."""
    return metadata_match(obj.data, IF_NOT_PRESENT) is not None


def unresolved(ref: ObjRef) -> bool:
    """An identity that still holds a ``${var}`` after substitution: a variable only the cluster
    knows (or no substitution at all, which the API server rejects): not comparable."""
    return "${" in ref.name or "${" in ref.namespace


def guessed_only(cluster: ClusterModel, objs: list[AppliedObject]) -> AppliedObject | None:
    """The first of ``objs`` when every one is of a kind whose scope fluxgraph does not know
    (taken as namespaced, ``fluxgraph.scope``): a verdict resting on them being in a namespace
    rests on that guess. None when one of them is known to be namespaced."""
    if not objs or any(cluster.scope_of(o.ref).known for o in objs):
        return None
    return min(objs, key=lambda o: o.location)




def ks_object(cluster: ClusterModel, ks_id: str) -> AppliedObject | None:
    """The applied object that declares Kustomization ``ks_id`` in its parent's build."""
    node = cluster.kustomizations.get(ks_id)
    if node is None or node.parent is None or node.parent not in cluster.kustomizations:
        return None
    return node.declared_by


def source_name(obj: AppliedObject) -> str | None:
    """``metadata.name`` of the document the object was read from (before kustomize's
    transformers), or None for generated objects."""
    doc = obj.resource.doc
    if doc is None or not isinstance(doc.data, dict):
        return obj.resource.prev_names[0][2] if obj.resource.prev_names else None
    name = as_dict(doc.data.get("metadata")).get("name")
    return name if isinstance(name, str) else None


def built_name(obj: AppliedObject) -> str:
    """``metadata.name`` after the kustomize build, before postBuild substitution."""
    name = as_dict(obj.pre_substitution.get("metadata")).get("name")
    return name if isinstance(name, str) else obj.ref.name


def is_placeholder_name(name: str) -> bool:
    """A name that cannot be a real namespace (``_``, ``${NS}``): written to be renamed."""
    return "${" in name or not (len(name) <= 63 and _DNS_LABEL.match(name))


def component(node: KustomizationNode, obj: AppliedObject) -> str | None:
    """The part of a Kustomization's build an object comes from: the directory its top-level
    kustomization entered (``platform/cilium`` of ``platform``, or ``apps/base/podinfo`` for an
    entry ``../base/podinfo``), or the build dir itself for what the top level lists, generates
    or takes from a component directly. None when the model cannot tell (an object without a
    recorded ``origin.home``, which only a builder other than fluxgraph's would make).
    """
    origin = obj.resource.origin
    via = origin.via
    top = posixpath.dirname(via[0]) if via else (node.build_dir or "")
    if not via:
        return top  # listed by the top-level kustomization itself
    # origin.via lists the kustomization files of the directories entered, outermost first,
    # without the innermost; origin.home is the innermost (the one whose build it joined)
    if len(via) >= 2:
        entry = posixpath.dirname(via[1])
    elif origin.home is not None:
        entry = posixpath.dirname(origin.home)
    else:
        return None
    rel = posixpath.relpath(entry, top) if top else entry
    if rel == ".." or rel.startswith("../"):
        return entry  # a base entered from the top level
    first = rel.split("/", 1)[0]
    return posixpath.join(top, first) if top else first


@dataclass
class NamespaceUse:
    """Who declares a Namespace, and whose objects live in it, in one target cluster
    (``target``: ``ObjRef.target``)."""

    name: str
    target: str = ""
    declarations: list[AppliedObject] = field(default_factory=list)
    residents: dict[str, list[AppliedObject]] = field(
        default_factory=lambda: defaultdict(list)
    )  # ks id -> objects
    helm_targets: dict[str, list[str]] = field(
        default_factory=lambda: defaultdict(list)
    )  # ks id -> HelmRelease ids
    # Kustomizations with this targetNamespace whose objects the model could not list
    unbuilt_targets: list[str] = field(default_factory=list)

    @property
    def declarers(self) -> list[str]:
        return sorted({o.owner for o in self.declarations})


@per_cluster
def namespace_uses(cluster: ClusterModel) -> dict[tuple[str, str], NamespaceUse]:
    """``(target cluster, namespace name)`` -> who declares it and who lives in it. Objects that
    a Kustomization applies to another cluster (spec.kubeConfig) meet only objects applied there."""
    uses: dict[tuple[str, str], NamespaceUse] = {}

    def use(target: str, name: str) -> NamespaceUse:
        if (target, name) not in uses:
            uses[(target, name)] = NamespaceUse(name, target)
        return uses[(target, name)]

    for obj in cluster.objects():
        if unresolved(obj.ref):
            continue
        if obj.ref.kind == "Namespace" and obj.ref.group == "":
            if obj.ref.name:
                use(obj.ref.target, obj.ref.name).declarations.append(obj)
        elif obj.ref.namespace:
            use(obj.ref.target, obj.ref.namespace).residents[obj.owner].append(obj)
    for hr in cluster.helm_releases.values():
        ns = hr.spec.target_namespace or hr.spec.namespace
        if hr.target != hr.obj.ref.target or ns != hr.spec.namespace:
            use(hr.target, ns).helm_targets[hr.owner].append(hr.id)
    for ks in cluster.kustomizations.values():
        if ks.spec.target_namespace and ks.status != "built":
            use(ks.target, ks.spec.target_namespace).unbuilt_targets.append(ks.id)
    return uses


@dataclass
class SharedNamespace:
    """A Namespace declared by one pruning Kustomization that something else depends on."""

    use: NamespaceUse
    declaration: AppliedObject
    owner: KustomizationNode
    others: dict[str, list[AppliedObject]]  # other Kustomizations' objects in it
    helm: dict[str, list[str]]  # other Kustomizations' HelmReleases installing into it
    unbuilt: list[str]  # other Kustomizations targeting it whose objects are not known
    components: dict[str, list[AppliedObject]]  # other components of the owner
    system: bool
    # set when the hazard rests only on objects of kinds fluxgraph does not know being namespaced
    guess: str = ""
    # the folder of the declaration (that of the kustomization file listing it) when every user
    # is declared inside it: moving that folder moves them together
    together: str | None = None
    # the repository's convention: how many of the cluster's other Namespace declarations carry
    # a prune protection, of how many
    protected_others: tuple[int, int] = (0, 0)


@per_cluster
def shared_namespaces(cluster: ClusterModel) -> tuple[list[SharedNamespace], int]:
    """Rule ``prunable-shared-namespace``: the hazards found and how many Namespaces were looked at.

    Also used by ``cascading-child-deletion`` so that such a Namespace is reported once."""
    out: list[SharedNamespace] = []
    looked = 0
    renamed = {id(r.obj) for r in renamed_namespaces(cluster)[0]}
    uses = namespace_uses(cluster)
    flux_ns = cluster.root_id.partition("/")[0]
    declared = [  # the namespace Flux runs in is flux bootstrap's, never annotated: no convention
        (use.name, use.target, any(gc_protection(d) is not None for d in use.declarations))
        for use in uses.values()
        if use.declarations and use.name not in IMMORTAL_NAMESPACES and not (use.name == flux_ns and use.target == "")
    ]
    for use in uses.values():
        if len(use.declarers) != 1:
            continue  # none, or several (object-applied-twice)
        looked += 1
        owner = cluster.kustomizations[use.declarers[0]]
        decl = use.declarations[0]
        if not owner.spec.prune or gc_protection(decl) is not None or id(decl) in renamed:
            continue  # (a renamed one is reported as renamed-namespace)
        if decl.operator_applied is not None:
            continue  # flux-operator prunes what a ResourceSet generates, not the Kustomization
        if owner.parent is None and use.name == owner.spec.namespace and use.target == owner.home:
            # The root Kustomization declaring the namespace it lives in (flux bootstrap's
            # gotk-components.yaml): pruned only when Flux itself is uninstalled or the root
            # Kustomization is deleted, and then everything goes anyway.
            continue
        others = {k: v for k, v in use.residents.items() if k != owner.id}
        helm = {k: v for k, v in use.helm_targets.items() if k != owner.id}
        unbuilt = sorted(k for k in use.unbuilt_targets if k != owner.id)
        mine = component(owner, decl)
        comps: dict[str, list[AppliedObject]] = defaultdict(list)
        if mine is not None:
            for o in use.residents.get(owner.id, []):
                c = component(owner, o)
                if c is not None and c != mine and not _within(c, mine):
                    comps[c].append(o)
        system = use.name in SYSTEM_NAMESPACES or (use.name == flux_ns and use.target == "")
        if others or helm or unbuilt or comps or system:
            sh = SharedNamespace(use, decl, owner, others, helm, unbuilt, dict(comps), system)
            if not system:
                sh.together = _folder_holding(cluster, decl, others, helm, unbuilt, comps)
            rest = [p for n, t, p in declared if (n, t) != (use.name, use.target)]
            sh.protected_others = (sum(rest), len(rest))
            if not (helm or unbuilt or system):
                guessed = guessed_only(cluster, [o for objs in (*others.values(), *comps.values()) for o in objs])
                if guessed is not None:
                    sh.guess = guess_note(guessed.ref.group, guessed.ref.kind)
            out.append(sh)
    return out, looked


def _within(path: str, base: str) -> bool:
    return base == "" or path == base or path.startswith(base + "/")


def _folder_holding(
    cluster: ClusterModel,
    decl: AppliedObject,
    others: dict[str, list[AppliedObject]],
    helm: dict[str, list[str]],
    unbuilt: list[str],
    comps: dict[str, list[AppliedObject]],
) -> str | None:
    """The folder of a Namespace's declaration (that of the kustomization file that lists it)
    when everything that uses the Namespace is declared inside it: the other Kustomizations'
    declarations and the folders they build, the HelmReleases that install into it, the other
    components. Moving or removing that folder then moves or removes the users with it, which
    is not the hazard of a Namespace that other folders rely on."""
    home = decl.resource.origin.home
    folder = posixpath.dirname(home if home and not home.endswith("<generated>") else decl.location.file)
    if not folder:
        return None  # the repository root holds everything
    paths: list[str] = []
    for ks_id in [*others, *helm, *unbuilt]:
        node = cluster.kustomizations.get(ks_id)
        if node is None:
            return None
        if node.declared_at is not None:
            paths.append(node.declared_at.file)
        if node.build_dir is not None:
            paths.append(node.build_dir)
    for hrs in helm.values():
        for hr_id in hrs:
            hr = cluster.helm_releases.get(hr_id)
            if hr is not None:
                paths.append(hr.obj.location.file)
    # another component's objects join the build of the kustomization that includes it
    paths.extend(o.resource.origin.home or o.location.file for objs in comps.values() for o in objs)
    return folder if paths and all(_within(p, folder) for p in paths) else None


@dataclass
class RenamedNamespace:
    """A Namespace object whose name kustomize changed, where the new name is already in use
    (``claims``) or the old one is in use and declared nowhere else (``lost``)."""

    obj: AppliedObject
    owner: KustomizationNode
    original: str
    renamed: str
    by_target_namespace: bool
    claims: list[str]
    lost: list[str]
    protected: str | None

    @property
    def prunable(self) -> bool:
        return self.protected is None and self.owner.spec.prune


def _claims(
    cluster: ClusterModel,
    target: str,
    name: str,
    use: NamespaceUse | None,
    owner: str,
    flux_namespaces: dict[tuple[str, str], list[str]],
) -> list[str]:
    """Who already uses namespace ``name`` of cluster ``target``, besides ``owner``'s own objects."""
    claims: list[str] = []
    if name in SYSTEM_NAMESPACES:
        claims.append("a system namespace")
    holders = sorted(flux_namespaces.get((target, name), []))
    if holders:
        claims.append(
            f"{_some('Flux Kustomization', holders)} {'lives' if len(holders) == 1 else 'live'} there"
        )
    if use is None:
        return claims
    others = sorted(k for k in use.declarers if k != owner)
    if others:
        claims.append(
            f"{_some('Kustomization', others)} {'declares' if len(others) == 1 else 'declare'} it too"
        )
    residents = sorted(k for k in use.residents if k != owner and k not in others)
    if residents:
        guessed = guessed_only(cluster, [o for k in residents for o in use.residents[k]])
        claims.append(
            f"{_some('Kustomization', residents)} {'has' if len(residents) == 1 else 'have'} objects there"
            + (f" ({guess_note(guessed.ref.group, guessed.ref.kind)})" if guessed is not None else "")
        )
    return claims


@per_cluster
def renamed_namespaces(cluster: ClusterModel) -> tuple[list[RenamedNamespace], int]:
    """Rule ``renamed-namespace``: the hazards found and how many renames were looked at."""
    uses = namespace_uses(cluster)
    flux_namespaces: dict[tuple[str, str], list[str]] = defaultdict(list)
    for ks in cluster.kustomizations.values():
        flux_namespaces[(ks.home, ks.spec.namespace)].append(ks.id)
    # one document renamed into several namespaces is a template (a kustomize Component or a
    # shared base whose Namespace every including kustomization names)
    names_of_doc: dict[tuple[str, int], set[str]] = defaultdict(set)
    for use in uses.values():
        for obj in use.declarations:
            o = obj.resource.origin
            names_of_doc[(o.file, o.doc_index)].add(built_name(obj))
    out: list[RenamedNamespace] = []
    looked = 0
    for use in uses.values():
        for obj in use.declarations:
            original = source_name(obj)
            renamed = built_name(obj)
            if original is None or original == renamed:
                continue
            looked += 1
            origin = obj.resource.origin
            if is_placeholder_name(original) or len(names_of_doc[(origin.file, origin.doc_index)]) > 1:
                continue  # `name: _`, or a template: written to be renamed
            ks = cluster.kustomizations[obj.owner]
            # the namespace it becomes is someone else's: the Kustomization takes it over
            claims = _claims(cluster, use.target, renamed, use, ks.id, flux_namespaces)
            # the namespace it was written for is in use and now declared nowhere
            old_use = uses.get((use.target, original))
            lost = (
                []
                if old_use is not None and old_use.declarations
                else _claims(cluster, use.target, original, old_use, ks.id, flux_namespaces)
            )
            if not claims and not lost:
                continue  # an overlay giving its own namespace a new name
            by_target = ks.spec.target_namespace == renamed
            hit = RenamedNamespace(obj, ks, original, renamed, by_target, claims, lost, gc_protection(obj))
            if hit.prunable or by_target or lost:
                out.append(hit)
            # else: renamed next to where it is written (a kustomization's namespace:) into a
            # namespace in use, and nothing is pruned: intentional
    return out, looked


def _some(what: str, ids: list[str], limit: int = 2) -> str:
    """``Kustomization a`` / ``Kustomizations a, b and 3 more``."""
    if len(ids) == 1:
        return f"{what} {ids[0]}"
    shown = ", ".join(ids[:limit])
    more = f" and {len(ids) - limit} more" if len(ids) > limit else ""
    return f"{what}s {shown}{more}"
