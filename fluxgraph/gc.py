"""What Flux's garbage collection does when an object changes owner or leaves the repository.

Shared by ``fluxgraph.explain`` (a planned move) and ``fluxgraph.diff`` (two revisions). Pure
functions over cluster models; no I/O.

Flux facts used, as read in the Flux sources:

* kustomize-controller ``internal/controller/kustomization_controller.go``:
  ``reconcile()`` applies, then ``prune()``\\ s the stale objects (old inventory minus new) only
  when ``spec.prune`` is true, using the spec the Kustomization has *when it reconciles*;
  ``deleteObjects()`` passes the owner labels (``kustomize.toolkit.fluxcd.io/name`` and
  ``/namespace``) as inclusions and ``prune: disabled``, ``reconcile: disabled`` and
  ``ssa: Ignore`` as exclusions; ``checkDependencies()`` makes a Kustomization wait until each
  ``dependsOn`` target exists, is Ready and, when both use the same source, has applied the
  same source revision; ``finalizerShouldDeleteResources()`` decides what the finalizer of a
  deleted Kustomization does (nothing when suspended; ``deletionPolicy`` MirrorPrune follows
  ``spec.prune``, Delete and WaitForTermination delete, Orphan does not).
* the same file, ``Reconcile()``: every reconciliation first reads the Kustomization object
  (``r.Get``), then runs ``checkDependencies()`` (each ``dependsOn`` target read from the API
  server, ``Generation == Status.ObservedGeneration``, Ready, and — only when both use the same
  sourceRef kind/name/namespace — ``Status.LastAppliedRevision`` equal to the artifact's
  revision), and only then ``reconcile()`` with the spec it read. A ``readyExpr`` on a
  dependency replaces that built-in check, revision included, unless the
  ``AdditiveCELDependencyCheck`` gate is on (``internal/features/features.go``: off by default).
  So a Kustomization whose spec ``dependsOn``, on its own source at every hop, the Kustomization
  that applies its object cannot start a revision before that parent has applied it — and the
  parent's apply writes its spec of that revision (a new generation, read by the next
  reconciliation).
* kustomize-controller ``internal/controller/kustomization_indexers.go``
  ``requestsForRevisionChangeOf``: a new source revision enqueues *every* Kustomization on that
  source at once, so an old owner and the parent that changes its spec run concurrently.
* fluxcd/pkg ``ssa/manager_delete.go`` ``Delete``: reads the live object and skips it when its
  labels no longer match the owner labels (another Kustomization applied it since) or when an
  exclusion is in its labels or annotations; NotFound counts as deleted.
* Flux FAQ "How can I safely move resources from one dir to another?": disable pruning first,
  in its own merge, verify it in-cluster, then move (https://fluxcd.io/flux/faq/).
* Kubernetes: deleting a Namespace deletes everything in it; the NamespaceLifecycle admission
  plugin refuses to delete ``default``, ``kube-system`` and ``kube-public``; deleting a
  CustomResourceDefinition deletes every object of that kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fluxgraph import flux
from fluxgraph.cluster import ClusterModel
from fluxgraph.findings import Severity
from fluxgraph.model import ObjRef, as_dict
from fluxgraph.ordering import revision_chain, source_of, waits_for_revision
from fluxgraph.ordering import transitive_dependents as transitive_dependents  # re-exported: explain, diff
from fluxgraph.ordering import transitive_depends as transitive_depends  # re-exported: explain, diff

PRUNE_KEY = "kustomize.toolkit.fluxcd.io/prune"
RECONCILE_KEY = "kustomize.toolkit.fluxcd.io/reconcile"
SSA_KEY = "kustomize.toolkit.fluxcd.io/ssa"
# kustomize-controller deleteObjects(): the exclusions of prune and of the finalizer
# (compared with fluxcd/pkg AnyInMetadata, case-insensitive)
GC_EXCLUSIONS = ((PRUNE_KEY, "disabled"), (RECONCILE_KEY, "disabled"), (SSA_KEY, "Ignore"))
# kustomize-controller apply(): objects that are never applied
APPLY_EXCLUSIONS = ((RECONCILE_KEY, "disabled"), (SSA_KEY, "Ignore"))
# kustomize-controller apply(): applied only while the object does not exist (IfNotPresentSelector),
# and recreated when an update is refused as immutable (ForceSelector, besides spec.force)
IF_NOT_PRESENT = ((SSA_KEY, "IfNotPresent"),)
FORCE_KEY = "kustomize.toolkit.fluxcd.io/force"
FORCE_SELECTOR = ((FORCE_KEY, "Enabled"),)
# The API server's NamespaceLifecycle admission plugin refuses to delete these
# (kubernetes plugin/pkg/admission/namespace/lifecycle, immortalNamespaces).
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
CRD_GROUP = "apiextensions.k8s.io"
DATA_KINDS = frozenset({"PersistentVolumeClaim", "PersistentVolume"})

# What deleting an object takes with it, for the kinds whose deletion destroys data or other
# objects: (group, kind) -> what goes. Built-in kinds by the API's own garbage collection and
# finalizers; custom resources of operators whose controllers delete the data they manage when
# the resource is deleted (their documentation says so: a Cluster's PVCs and pods for
# CloudNativePG, the pools and filesystems' data for Rook). ``diff``'s delete-data verdict and
# docs/explain-and-diff.md read this table.
STATEFUL: dict[tuple[str, str], str] = {
    ("", "Namespace"): "everything in the namespace goes with it, objects no Kustomization shows included (Helm releases' objects, Secrets operators made)",
    ("apiextensions.k8s.io", "CustomResourceDefinition"): "every custom resource of its kind goes with it, in every namespace",
    ("", "PersistentVolumeClaim"): "its volume is released and, under its StorageClass's reclaimPolicy Delete (the default), deleted: its data is lost",
    ("", "PersistentVolume"): "the volume's data is lost unless its reclaimPolicy is Retain",
    ("apps", "StatefulSet"): "its pods go; the claims of its volumeClaimTemplates stay unless persistentVolumeClaimRetentionPolicy.whenDeleted is Delete",
    ("postgresql.cnpg.io", "Cluster"): "CloudNativePG deletes the cluster's pods and PVCs: the database is lost",
    ("acid.zalan.do", "postgresql"): "the Zalando operator deletes the database cluster and its volumes",
    ("postgres-operator.crunchydata.com", "PostgresCluster"): "PGO deletes the cluster and its volumes",
    ("mysql.oracle.com", "InnoDBCluster"): "the MySQL operator deletes the cluster's pods and volumes",
    ("k8s.mariadb.com", "MariaDB"): "the mariadb-operator deletes the database's StatefulSet and, by default, its storage",
    ("mongodbcommunity.mongodb.com", "MongoDBCommunity"): "the MongoDB operator deletes the replica set",
    ("elasticsearch.k8s.elastic.co", "Elasticsearch"): "ECK deletes the cluster's nodes and volumes",
    ("kafka.strimzi.io", "Kafka"): "Strimzi deletes the brokers (and, with deleteClaim: true, their volumes)",
    ("rabbitmq.com", "RabbitmqCluster"): "the RabbitMQ operator deletes the cluster and its volumes",
    ("clickhouse.altinity.com", "ClickHouseInstallation"): "the Altinity operator deletes the installation and its volumes",
    ("minio.min.io", "Tenant"): "the MinIO operator deletes the tenant's pools",
    ("ceph.rook.io", "CephCluster"): "Rook deletes the Ceph cluster (with a cleanupPolicy, its data)",
    ("ceph.rook.io", "CephBlockPool"): "Rook deletes the pool and the images in it",
    ("ceph.rook.io", "CephFilesystem"): "Rook deletes the filesystem's pools (unless preserveFilesystemOnDelete)",
    ("ceph.rook.io", "CephObjectStore"): "Rook deletes the object store's pools (unless preservePoolsOnDelete)",
    ("longhorn.io", "Volume"): "Longhorn deletes the volume and its replicas",
    ("snapshot.storage.k8s.io", "VolumeSnapshot"): "the snapshot's content is deleted under its class's deletionPolicy Delete",
    ("objectbucket.io", "ObjectBucketClaim"): "the bucket is deleted under its StorageClass's reclaimPolicy Delete",
}


def stateful(ref: ObjRef) -> str | None:
    """What deleting ``ref`` takes with it, where ``STATEFUL`` lists its kind."""
    return STATEFUL.get((ref.group, ref.kind))

# Verdicts on what happens to one object, worst last within each severity.
SAFE = "safe"  # a move the old owner cannot prune
ORPHAN = "orphan"  # left in the cluster, no longer managed
DEFERRED = "deferred"  # the old owner is suspended: pruned (or not) when resumed
DELETE = "delete"  # removed from the repository and garbage-collected
REFUSED = "refused"  # Flux prunes it, the API server refuses (immortal namespace)
RACE = "race"  # the old owner may delete it before the new owner applies it
RECREATE = "recreate"  # deleted for certain, then created again by the new owner
BLOCKED = "blocked"  # the old owner waits for a dependency that only it can create

VERDICT_SEVERITY: dict[str, Severity] = {
    SAFE: Severity.INFO,
    ORPHAN: Severity.INFO,
    DEFERRED: Severity.INFO,
    DELETE: Severity.INFO,
    REFUSED: Severity.WARNING,
    RACE: Severity.ERROR,
    RECREATE: Severity.ERROR,
    BLOCKED: Severity.ERROR,
}
_RANK = {v: i for i, v in enumerate((SAFE, ORPHAN, DEFERRED, DELETE, REFUSED, RACE, RECREATE, BLOCKED))}


def worse(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


def metadata_match(data: dict[str, Any], pairs: Iterable[tuple[str, str]]) -> str | None:
    """fluxcd/pkg ``AnyInMetadata``: the first ``key: value`` (label or annotation, non-empty
    value, case-insensitive) found on the object, as text; None when there is none."""
    md = as_dict(data.get("metadata"))
    for sect, what in (("labels", "label"), ("annotations", "annotation")):
        m = as_dict(md.get(sect))
        for key, val in pairs:
            v = m.get(key)
            if isinstance(v, str) and v != "" and v.lower() == val.lower():
                return f"{what} {key}: {v}"
    return None


def protection(data: dict[str, Any]) -> str | None:
    """Why ``deleteObjects`` skips the object (labels/annotations as last applied), or None."""
    return metadata_match(data, GC_EXCLUSIONS)


def finalizer_deletes(spec: flux.FluxKustomization) -> bool:
    """kustomize-controller ``finalizerShouldDeleteResources`` (the inventory assumed non-empty)."""
    if spec.suspend:
        return False
    if spec.deletion_policy == "MirrorPrune":
        return spec.prune
    return spec.deletion_policy in ("Delete", "WaitForTermination")


def deletion_policy_text(spec: flux.FluxKustomization) -> str:
    """What decides a Kustomization's deletion, in the words every report uses."""
    if spec.deletion_policy == "MirrorPrune":
        return f"deletionPolicy MirrorPrune with prune: {'true' if spec.prune else 'false'}"
    return f"deletionPolicy {spec.deletion_policy}"


def applied_by(model: ClusterModel, ks_id: str, ancestor: str) -> bool:
    """Whether ``ancestor`` applies ``ks_id``'s Kustomization object, directly or through children."""
    return ancestor in model.ancestors(ks_id)


# spec fields of a Kustomization that decide when it runs or what it deletes, not what its build
# writes for the Kustomizations it applies
_ORDER_ONLY_FIELDS = frozenset(
    {
        "interval",
        "retryInterval",
        "timeout",
        "dependsOn",
        "wait",
        "healthChecks",
        "healthCheckExprs",
        "prune",
        "deletionPolicy",
        "suspend",
        "force",
    }
)


@dataclass(frozen=True)
class SpecCarrier:
    """The Kustomization that applies ``ks_id``'s object, which ``ks_id``'s current spec waits for
    on the same source (``chain``: ``ks_id -> ... -> parent``): ``ks_id`` starts a revision only
    after ``parent`` has applied it, and that apply writes ``ks_id``'s spec of the revision —
    provided ``parent`` builds it as it did (``parent_changes``: what of the parent's own spec or
    variables changes in the same revision, so that it may still build with the previous one)."""

    ks_id: str
    parent: str
    chain: tuple[str, ...]
    parent_changes: tuple[str, ...] = ()

    @property
    def holds(self) -> bool:
        return not self.parent_changes

    def describe(self) -> str:
        how = "dependsOn" if len(self.chain) == 2 else "waits through dependsOn for"
        return f"{self.ks_id} {how} {self.parent}, which applies it, on the same source ({' -> '.join(self.chain)})"


def spec_carrier(base: ClusterModel, head: ClusterModel, ks_id: str) -> SpecCarrier | None:
    """Whether ``ks_id`` reconciles ``head``'s revision only with its ``head`` spec: its ``base``
    spec (the one in the cluster when the revision arrives) ``dependsOn``, directly or through
    other Kustomizations, the Kustomization that applies its object, on its own source at every
    hop (``checkDependencies`` waits for that parent's ``LastAppliedRevision``). Only that parent
    counts (an ancestor further up applies the parent, not ``ks_id``), and it must apply ``ks_id``
    at both revisions. A hop through another Kustomization must keep its ``dependsOn`` (same
    source, no ``readyExpr``) at ``head`` too, as either spec of it may be the one that waits.
    None when there is no such chain. ``base`` and ``head`` may be the same model (a change
    planned from the current revision)."""
    bn = base.kustomizations.get(ks_id)
    hn = head.kustomizations.get(ks_id)
    if bn is None or hn is None or bn.parent is None or bn.parent != hn.parent or bn.parent == ks_id:
        return None
    parent = bn.parent
    ph = head.kustomizations.get(parent)
    pb = base.kustomizations.get(parent)
    if ph is None or pb is None:
        return None
    chain = revision_chain(base, ks_id, parent)
    if chain is None:
        return None
    src = source_of(bn.spec)
    for a, b in zip(chain[1:-1], chain[2:], strict=True):
        an = head.kustomizations.get(a)
        if an is None or source_of(an.spec) != src:
            return None
        dep = next((d for d in an.spec.depends_on if str(d) == b), None)
        if dep is None or not waits_for_revision(head, an, dep):
            return None
    if source_of(ph.spec) != src:
        return None
    changes = [
        f"spec.{k}"
        for k in sorted(set(pb.spec.spec) | set(ph.spec.spec))
        if k not in _ORDER_ONLY_FIELDS and pb.spec.spec.get(k) != ph.spec.spec.get(k)
    ]
    if dict(pb.variables) != dict(ph.variables):
        changes.append("its substitution variables")
    return SpecCarrier(ks_id, parent, tuple(chain), tuple(changes))


# -- one object changing owner ----------------------------------------------------------


@dataclass(frozen=True)
class OldOwnerState:
    """The old owner as it may be when it reconciles the revision that drops the object.

    A new source revision enqueues the old owner and its parent at the same time, so the old
    owner may run it with its previous spec (``before``) or, if the parent applied it first,
    with the new one (``after``; None when the Kustomization is gone) — unless its previous spec
    waits for that parent on the same source (``carrier``, see ``spec_carrier``): then only the
    new one."""

    id: str
    before: flux.FluxKustomization
    after: flux.FluxKustomization | None
    # a dependsOn chain old -> new on the same source, per spec (None: none)
    chain_before: Sequence[str] | None = None
    chain_after: Sequence[str] | None = None
    carrier: SpecCarrier | None = None


@dataclass(frozen=True)
class NewOwnerState:
    id: str
    exists_before: bool  # the new owner is already in the cluster before the change
    created_by_old: bool  # the old owner applies the new owner's Kustomization object
    waits_for_old: bool  # the new owner dependsOn the old one (transitively)
    suspended: bool = False


@dataclass(frozen=True)
class Judgement:
    verdict: str
    reason: str

    @property
    def severity(self) -> Severity:
        return VERDICT_SEVERITY[self.verdict]


def prunes_now(spec: flux.FluxKustomization) -> bool:
    """Whether the Kustomization's next reconcile deletes what leaves its inventory:
    kustomize-controller ``Reconcile`` returns early ``if obj.Spec.Suspend`` and
    ``prune()`` deletes only ``if obj.Spec.Prune``. A suspended one prunes once resumed: the
    latent-hazard rules read ``spec.prune`` alone for that reason."""
    return spec.prune and not spec.suspend


def judge_move(obj_data: dict[str, Any], old: OldOwnerState, new: NewOwnerState) -> Judgement:
    """What the old owner's garbage collection does to an object that the new owner applies
    from now on (the object's data as the old owner last applied it)."""
    prot = protection(obj_data)
    if prot is not None:
        return Judgement(SAFE, f"the live object carries {prot}, which garbage collection skips")
    c = old.carrier
    if c is not None and c.holds and old.after is not None and old.after != old.before:
        j = judge_move(obj_data, OldOwnerState(old.id, old.after, None, old.chain_after), new)
        return Judgement(
            j.verdict,
            f"{j.reason}; that is the spec {old.id} reconciles this revision with: {c.describe()}, so it starts "
            f"the revision only after {c.parent} has applied it, new spec included (checkDependencies)",
        )
    specs: list[tuple[str, flux.FluxKustomization, Sequence[str] | None]] = [
        ("before", old.before, old.chain_before)
    ]
    if old.after is not None and old.after != old.before:
        specs.append(("after", old.after, old.chain_after))
    if not any(prunes_now(s) for _, s, _ in specs):
        if all(s.suspend for _, s, _ in specs):
            return Judgement(SAFE, f"{old.id} is suspended and does not reconcile")
        return Judgement(SAFE, f"{old.id} has prune: false")

    results: list[Judgement] = []
    for _which, spec, chain in specs:
        if not prunes_now(spec):
            results.append(Judgement(SAFE, f"{old.id} has prune: false"))
            continue
        if chain:
            if new.created_by_old and not new.exists_before:
                results.append(
                    Judgement(
                        BLOCKED,
                        f"{old.id} dependsOn {new.id} ({' -> '.join(chain)}), but {new.id} is declared inside "
                        f"{old.id}'s own build: {old.id} waits for a Kustomization that only it can create",
                    )
                )
            else:
                results.append(
                    Judgement(
                        SAFE,
                        f"{old.id} dependsOn {new.id} on the same source ({' -> '.join(chain)}): it prunes only after {new.id} applied the revision",
                    )
                )
            continue
        if new.created_by_old and not new.exists_before:
            results.append(
                Judgement(
                    RECREATE,
                    f"{old.id} (prune: true) creates {new.id} and prunes in the same reconciliation, before {new.id} "
                    f"runs: the object is deleted, then created again by {new.id}",
                )
            )
        elif new.waits_for_old:
            results.append(
                Judgement(
                    RECREATE,
                    f"{new.id} dependsOn {old.id}, so {old.id} (prune: true) always reconciles first: the object is "
                    f"deleted, then created again by {new.id}",
                )
            )
        elif new.suspended:
            results.append(
                Judgement(
                    RACE,
                    f"{new.id} is suspended and will not take the object over; {old.id} (prune: true) deletes it",
                )
            )
        else:
            results.append(
                Judgement(
                    RACE,
                    f"{old.id} (prune: true) and {new.id} reconcile the new revision concurrently and {old.id} does not "
                    f"dependsOn {new.id}: if {old.id} runs first it deletes the object",
                )
            )
    worst = results[0]
    for j in results[1:]:
        if _RANK[j.verdict] > _RANK[worst.verdict]:
            worst = j
    if len(results) == 2 and results[0].verdict in (RACE, RECREATE) and results[1].verdict == SAFE:
        if c is not None and not c.holds:
            return Judgement(
                RACE,
                f"{results[1].reason}, but that change lands in the same revision as the move: {c.describe()}, but "
                f"{c.parent} changes its own {', '.join(c.parent_changes)} in the same revision: it may apply the revision "
                f"with its previous spec, and what it writes for {old.id} then need not carry the change — merge the "
                f"protection first (Flux FAQ)",
            )
        return Judgement(
            RACE,
            f"{results[1].reason}, but that change lands in the same revision as the move: {old.id} may reconcile the "
            f"revision with its previous spec (prune: true, no dependsOn on {new.id}) before its parent applies the "
            f"change — merge the protection first (Flux FAQ)",
        )
    if len(results) == 2 and results[0].verdict == SAFE and results[1].verdict in (RACE, RECREATE):
        return Judgement(
            RACE,
            f"{results[1].reason} — the protection of the previous spec ({results[0].reason}) is removed in the same revision",
        )
    return worst


def judge_removal(
    obj_data: dict[str, Any], owner_id: str, specs: Iterable[flux.FluxKustomization], kind: str, name: str
) -> Judgement:
    """An object no Kustomization applies any more, its owner still in the cluster."""
    prot = protection(obj_data)
    specs = list(specs)
    if prot is not None:
        return Judgement(ORPHAN, f"left in the cluster: it carries {prot}")
    if all(s.suspend for s in specs):
        return Judgement(
            DEFERRED, f"{owner_id} is suspended: garbage-collected when it is resumed (if prune is still on)"
        )
    if not any(prunes_now(s) for s in specs):
        return Judgement(ORPHAN, f"left in the cluster: {owner_id} has prune: false")
    if kind == "Namespace" and name in IMMORTAL_NAMESPACES:
        return Judgement(
            REFUSED,
            f"{owner_id} prunes it, the API server refuses (NamespaceLifecycle) and {owner_id} stays not Ready",
        )
    if all(prunes_now(s) for s in specs):
        return Judgement(DELETE, f"garbage-collected by {owner_id} (prune: true)")
    return Judgement(
        DELETE,
        f"garbage-collected by {owner_id} if it reconciles with prune: true (prune changes in the same revision)",
    )


def judge_finalizer(
    obj_data: dict[str, Any], owner: flux.FluxKustomization, kind: str, name: str, *, moved_to: str | None
) -> Judgement:
    """An object of a Kustomization that is deleted (its finalizer runs with its last spec)."""
    prot = protection(obj_data)
    if prot is not None:
        return Judgement(
            SAFE if moved_to else ORPHAN, f"the finalizer of {owner.id} skips it: it carries {prot}"
        )
    if not finalizer_deletes(owner):
        why = "suspended" if owner.suspend else deletion_policy_text(owner)
        return Judgement(SAFE if moved_to else ORPHAN, f"the finalizer of {owner.id} keeps it ({why})")
    if kind == "Namespace" and name in IMMORTAL_NAMESPACES:
        return Judgement(
            REFUSED, f"the finalizer of {owner.id} deletes it, the API server refuses (NamespaceLifecycle)"
        )
    if moved_to:
        return Judgement(
            RACE,
            f"{owner.id} is deleted and its finalizer ({deletion_policy_text(owner)}) deletes every object still labelled "
            f"with it; {moved_to} takes the object over only when it has applied it (Flux FAQ: renaming a Kustomization "
            f"deletes and recreates its objects)",
        )
    return Judgement(DELETE, f"deleted by the finalizer of {owner.id} ({deletion_policy_text(owner)})")


# -- what a deletion takes with it --------------------------------------------------------


@dataclass
class Cascade:
    """Objects deleted because a Namespace, CRD or Kustomization they depend on is deleted."""

    cause: str  # "Namespace/x", "CustomResourceDefinition/x", "Kustomization/ns/x"
    kind: str  # namespace | crd | kustomization | helmrelease
    victims: list[tuple[str, ObjRef]] = field(default_factory=list)  # (owner at head, object)
    helm_releases: list[str] = field(default_factory=list)  # HelmReleases installing into a namespace
    note: str = ""


def namespace_cascade(
    model: ClusterModel, ns: str, target: str = "", *, exclude_owner_objects: set[ObjRef] | None = None
) -> Cascade:
    """What deleting Namespace ``ns`` of cluster ``target`` (``ObjRef.target``) takes with it."""
    c = Cascade(f"Namespace/{ns}", "namespace")
    for obj in model.objects():
        if (
            obj.ref.namespace == ns
            and obj.ref.target == target
            and not (exclude_owner_objects and obj.ref in exclude_owner_objects)
        ):
            c.victims.append((obj.owner, obj.ref))
    for hr in model.helm_releases.values():
        into = hr.spec.target_namespace or hr.spec.namespace
        if into == ns and hr.target == target and (hr.spec.namespace != ns or hr.obj.ref.target != target):
            c.helm_releases.append(f"{hr.id} (targetNamespace, of {hr.owner})")
    c.victims.sort(key=lambda v: (v[0], str(v[1])))
    return c


def crd_kind(obj_data: dict[str, Any]) -> tuple[str, str] | None:
    """(group, kind) a CustomResourceDefinition defines."""
    spec = as_dict(obj_data.get("spec"))
    names = as_dict(spec.get("names"))
    kind = names.get("kind")
    group = spec.get("group")
    if isinstance(kind, str) and isinstance(group, str):
        return group, kind
    return None


def crd_cascade(model: ClusterModel, obj_data: dict[str, Any], name: str, target: str = "") -> Cascade:
    """What deleting CustomResourceDefinition ``name`` of cluster ``target`` takes with it."""
    c = Cascade(f"CustomResourceDefinition/{name}", "crd")
    gk = crd_kind(obj_data)
    if gk is None:
        c.note = "the kind it defines is not readable"
        return c
    group, kind = gk
    for obj in model.objects():
        if obj.ref.kind == kind and obj.ref.group == group and obj.ref.target == target:
            c.victims.append((obj.owner, obj.ref))
    c.victims.sort(key=lambda v: (v[0], str(v[1])))
    c.note = f"every {kind}.{group} in the cluster is deleted with it"
    return c


def is_namespace(ref: ObjRef) -> bool:
    return ref.kind == "Namespace" and ref.group == ""


def is_crd(ref: ObjRef) -> bool:
    return ref.kind == "CustomResourceDefinition" and ref.group == CRD_GROUP


def is_flux_ks(ref: ObjRef) -> bool:
    return ref.kind == "Kustomization" and ref.group == flux.KUSTOMIZE_GROUP


def is_helmrelease(ref: ObjRef) -> bool:
    return ref.kind == "HelmRelease" and ref.group == flux.HELM_GROUP


def ks_id_of(ref: ObjRef, owner_namespace: str = "flux-system") -> str:
    return f"{ref.namespace or owner_namespace}/{ref.name}"
