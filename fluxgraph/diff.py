"""``fluxgraph diff``: what a change does to the clusters, before Flux does it.

``diff_repositories(base, head)`` compares two loaded repositories (pure; no I/O) and returns a
``DiffReport``; ``diff_revisions`` reads git revisions (``fluxgraph.gitrev``) and loads them.
Verdicts on garbage collection come from ``fluxgraph.gc``; their severities are what
``--fail-on`` compares with (docs/explain-and-diff.md lists them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxgraph import contentdiff, envsubst, flux, gc, immutable, ordering, ownership
from fluxgraph.api import Repository
from fluxgraph.cluster import AppliedObject, ClusterModel, KustomizationNode
from fluxgraph.explain import declaration_object, post_build_summary
from fluxgraph.findings import Finding, Severity
from fluxgraph.kustomize.builtins import REPLICA_KINDS, split_image
from fluxgraph.model import Location, ObjRef, as_dict, as_list, as_str
from fluxgraph.revisions import Side, load_pair

if TYPE_CHECKING:
    from fluxgraph.config import Settings

# Effect codes beyond the per-object verdicts of fluxgraph.gc
NAMESPACE_CASCADE = "namespace-cascade"
CRD_CASCADE = "crd-cascade"
KUSTOMIZATION_CASCADE = "kustomization-cascade"
ORPHANED_KUSTOMIZATION = "orphaned-kustomization"
NOT_APPLIED = "not-applied"
DATA_LOSS = "delete-data"
IMMUTABLE_FIELD = "immutable-field"
IMMUTABLE_FIELD_IF_PRESENT = "immutable-field-if-present"
PVC_SHRINK = "pvc-shrink"
FORCED_RECREATE = "forced-recreate"
FORCED_RECREATE_DATA = "forced-recreate-data"
# changes listed for the reviewer (info)
SUSPENDED = "suspended"
RESUMED = "resumed"
SCALED_TO_ZERO = "scaled-to-zero"
MAJOR_VERSION = "major-version"
REVIEW_CODES = frozenset({SUSPENDED, RESUMED, SCALED_TO_ZERO, MAJOR_VERSION})

# One line per verdict code (SARIF rule descriptions, docs/explain-and-diff.md has the table)
EFFECT_SUMMARY: dict[str, str] = {
    gc.SAFE: "A moved object its old owner cannot prune",
    gc.ORPHAN: "An object removed from the repository but left in the cluster",
    gc.DEFERRED: "An object of a suspended owner, garbage-collected when it is resumed",
    gc.DELETE: "An object removed from the repository and garbage-collected",
    gc.REFUSED: "Flux prunes a namespace the API server refuses to delete",
    gc.RACE: "A moved object its old owner may delete before the new owner applies it",
    gc.RECREATE: "A moved object its old owner deletes before the new owner applies it again",
    gc.BLOCKED: "An old owner that waits for a new owner only it can create",
    NAMESPACE_CASCADE: "A deleted Namespace takes objects still applied at head with it",
    CRD_CASCADE: "A deleted CustomResourceDefinition takes custom resources still applied at head with it",
    KUSTOMIZATION_CASCADE: "A deleted Kustomization's finalizer deletes its inventory before it is created again",
    ORPHANED_KUSTOMIZATION: "A Kustomization no longer declared stays in the cluster with its last spec",
    NOT_APPLIED: "A Kustomization that built at base does not at head: nothing of the change is applied",
    DATA_LOSS: "Garbage collection deletes an object that holds data or other objects",
    IMMUTABLE_FIELD: "A change to a field the API server does not let an update change: the apply fails",
    PVC_SHRINK: "A PersistentVolumeClaim's storage request shrinks: the apply fails",
    IMMUTABLE_FIELD_IF_PRESENT: "A change to an immutable field of a Job the TTL controller may have deleted: the apply fails while it exists",
    FORCED_RECREATE: "A force-applied object is deleted and created again to change an immutable field",
    FORCED_RECREATE_DATA: "A force-applied re-creation that deletes data",
    SUSPENDED: "A Kustomization or HelmRelease is suspended",
    RESUMED: "A Kustomization or HelmRelease is resumed",
    SCALED_TO_ZERO: "A workload is scaled to zero replicas",
    MAJOR_VERSION: "A chart or image moves to another major version",
}

EFFECT_SEVERITY: dict[str, Severity] = {
    **gc.VERDICT_SEVERITY,
    NAMESPACE_CASCADE: Severity.ERROR,
    CRD_CASCADE: Severity.ERROR,
    KUSTOMIZATION_CASCADE: Severity.ERROR,
    ORPHANED_KUSTOMIZATION: Severity.WARNING,
    NOT_APPLIED: Severity.ERROR,
    DATA_LOSS: Severity.ERROR,
    IMMUTABLE_FIELD: Severity.ERROR,
    IMMUTABLE_FIELD_IF_PRESENT: Severity.WARNING,
    PVC_SHRINK: Severity.ERROR,
    FORCED_RECREATE: Severity.WARNING,
    FORCED_RECREATE_DATA: Severity.ERROR,
    SUSPENDED: Severity.INFO,
    RESUMED: Severity.INFO,
    SCALED_TO_ZERO: Severity.INFO,
    MAJOR_VERSION: Severity.INFO,
}


@dataclass
class ObjectChange:
    ref: ObjRef
    before: list[str]  # owners at base
    after: list[str]  # owners at head
    location: Location | None
    changes: list[contentdiff.FieldChange] = field(default_factory=list)  # modified, moved: what changed inside


@dataclass
class Effect:
    """One consequence of the change in the cluster."""

    code: str
    ref: ObjRef | None
    old_owner: str | None
    new_owner: str | None
    message: str
    location: Location | None = None
    cascade: gc.Cascade | None = None
    reason: str = ""  # the message without the object it is about (for grouping)
    acknowledged: str = ""  # the reason a diff.acknowledge entry gives: reported, not counted

    @property
    def severity(self) -> Severity:
        return EFFECT_SEVERITY[self.code]


@dataclass
class KsChange:
    id: str
    change: str  # added | removed | renamed | changed
    renamed_to: str | None = None
    fields: list[tuple[str, str, str]] = field(default_factory=list)  # (field, before, after)
    objects_before: int = 0
    objects_after: int = 0
    fate: str = ""  # removed/renamed: what happens to the Kustomization and its objects
    location: Location | None = None


@dataclass
class EdgeChange:
    kind: str  # Kustomization | HelmRelease
    source: str
    target: str
    change: str  # added | removed


@dataclass
class HrChange:
    id: str
    change: str  # added | removed | moved | changed
    before_owner: str | None
    after_owner: str | None
    fields: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass
class VariableChange:
    kustomization: str
    name: str
    change: str  # added | removed | changed | source
    before: str | None  # origin, and the value when it is not secret
    after: str | None


@dataclass
class SubstitutionChange:
    kustomization: str
    change: str  # added | removed
    what: str  # "substituteFrom ConfigMap/x", "substitute KEY", "postBuild"


@dataclass
class ClusterDiff:
    cluster: str
    status: str  # changed | unchanged | added | removed
    added: list[ObjectChange] = field(default_factory=list)
    removed: list[ObjectChange] = field(default_factory=list)
    moved: list[ObjectChange] = field(default_factory=list)
    modified: list[ObjectChange] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    kustomizations: list[KsChange] = field(default_factory=list)
    helm_releases: list[HrChange] = field(default_factory=list)
    depends_on: list[EdgeChange] = field(default_factory=list)
    substitution: list[SubstitutionChange] = field(default_factory=list)
    variables: list[VariableChange] = field(default_factory=list)
    new_findings: list[Finding] = field(default_factory=list)
    fixed_findings: list[Finding] = field(default_factory=list)
    reused: bool = False  # nothing this cluster reads changed: the base model was not rebuilt

    @property
    def empty(self) -> bool:
        return not (
            self.added
            or self.removed
            or self.moved
            or self.modified
            or self.effects
            or self.kustomizations
            or self.helm_releases
            or self.depends_on
            or self.substitution
            or self.variables
            or self.new_findings
            or self.fixed_findings
        )


@dataclass
class DiffReport:
    base: str
    head: str
    base_commit: str | None
    head_commit: str | None
    clusters: list[ClusterDiff]
    new_findings: list[Finding] = field(default_factory=list)  # not tied to one cluster
    fixed_findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def effects(self) -> list[tuple[str, Effect]]:
        return [(c.cluster, e) for c in self.clusters for e in c.effects]

    def all_new_findings(self) -> list[Finding]:
        return [f for c in self.clusters for f in c.new_findings] + self.new_findings

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        acknowledged = 0
        for _, e in self.effects():
            if e.acknowledged:
                acknowledged += 1
            else:
                out[e.severity.value] += 1
        for f in self.all_new_findings():
            out[f.severity.value] += 1
        out["acknowledged"] = acknowledged
        return out

    def exit_code(self, fail_on: Severity) -> int:
        if any(e.severity.rank >= fail_on.rank and not e.acknowledged for _, e in self.effects()):
            return 1
        return 1 if any(f.severity.rank >= fail_on.rank for f in self.all_new_findings()) else 0


# -- helpers --------------------------------------------------------------------------------


def _by_ref(model: ClusterModel | None) -> dict[ObjRef, list[AppliedObject]]:
    return ownership.objects_by_ref(model) if model is not None else {}


def _owners(objs: Iterable[AppliedObject]) -> list[str]:
    return sorted({o.owner for o in objs})


def _secret_origin(origin: str | None) -> bool:
    return bool(origin) and str(origin).startswith("Secret/")


def _show_value(v: Any, origin: str | None) -> str:
    if v is envsubst.UNKNOWN:
        return "(unknown)"
    if _secret_origin(origin):
        return "(secret)"
    s = str(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _ks_fields(model: ClusterModel, node: KustomizationNode) -> dict[str, str]:
    s = node.spec
    return {
        "path": s.path,
        "sourceRef": ordering.source_of(s) or "",
        "prune": str(s.prune).lower(),
        "wait": str(s.wait).lower(),
        "timeout": flux.format_duration(s.effective_timeout),
        "interval": flux.format_duration(s.interval) if s.interval is not None else "",
        "targetNamespace": s.target_namespace or "",
        "suspend": str(s.suspend).lower(),
        "deletionPolicy": s.deletion_policy,
        "postBuild": post_build_summary(s) or "",
        "namePrefix": s.name_prefix,
        "nameSuffix": s.name_suffix,
        "decryption": "yes" if s.decryption else "",
        "healthChecks": str(len(s.health_checks)) if s.health_checks else "",
        "dependsOn": ", ".join(sorted(str(d) for d in s.depends_on)),
        "declared in": node.declared_at.file if node.declared_at else "",
        "applied by": node.parent or "",
        "status": node.status,
    }


def _content(ref: ObjRef, b: list[AppliedObject], h: list[AppliedObject], noise: bool) -> list[contentdiff.FieldChange]:
    """What changes inside the object: its first copy at base against its first at head (an
    object applied twice is object-applied-twice's)."""
    return contentdiff.object_changes(ref.kind, ref.group, b[0].data, h[0].data, noise=noise)


def _first_location(objs: list[AppliedObject]) -> Location | None:
    return objs[0].location if objs else None


# -- Kustomization fates --------------------------------------------------------------------


@dataclass
class _Fate:
    deleted: bool
    reason: str


class _Ctx:
    def __init__(self, base: ClusterModel, head: ClusterModel):
        self.base = base
        self.head = head
        self.base_objs = _by_ref(base)
        self.head_objs = _by_ref(head)
        self._fates: dict[str, _Fate] = {}
        self._deps_cache: dict[str, dict[str, int]] = {}
        self._carriers: dict[str, gc.SpecCarrier | None] = {}
        # A Kustomization that built at base but does not at head (build error, path or source
        # gone): kustomize-controller stops before apply and prune, so its inventory stays as it
        # was, and so do the children it applied. Their base objects stand for head.
        self.frozen: dict[str, KustomizationNode] = {
            k: hn
            for k, hn in head.kustomizations.items()
            if hn.status != "built" and k in base.kustomizations and base.kustomizations[k].status == "built"
        }
        self.carried: set[str] = set()  # frozen ones and their base descendants missing at head
        stack = list(self.frozen)
        while stack:
            k = stack.pop()
            if k in self.carried:
                continue
            self.carried.add(k)
            stack.extend(
                c for c, n in base.kustomizations.items() if n.parent == k and c not in head.kustomizations
            )
        for k in self.carried:
            for o in base.kustomizations[k].objects:
                self.head_objs.setdefault(o.ref, []).append(o)

    def spec_carrier(self, ks_id: str) -> gc.SpecCarrier | None:
        if ks_id not in self._carriers:
            self._carriers[ks_id] = gc.spec_carrier(self.base, self.head, ks_id)
        return self._carriers[ks_id]

    def head_depends(self, ks_id: str) -> dict[str, int]:
        if ks_id not in self._deps_cache:
            self._deps_cache[ks_id] = gc.transitive_depends(self.head, ks_id)
        return self._deps_cache[ks_id]

    def fate(self, ks_id: str) -> _Fate:
        """Whether a Kustomization that is gone at head is deleted from the cluster."""
        if ks_id in self._fates:
            return self._fates[ks_id]
        self._fates[ks_id] = _Fate(False, "")  # cycle guard
        node = self.base.kustomizations[ks_id]
        parent = node.parent
        decl = declaration_object(self.base, ks_id)
        data = decl.data if decl is not None else {}
        if parent is None:
            f = _Fate(True, "the cluster's root Kustomization is gone")
        elif parent in self.head.kustomizations:
            pb = self.base.kustomizations[parent].spec
            ph = self.head.kustomizations[parent].spec
            j = gc.judge_removal(data, parent, [pb, ph], "Kustomization", ks_id.partition("/")[2])
            if j.verdict == gc.DELETE:
                f = _Fate(True, f"{parent} prunes it (prune: true)")
            else:
                f = _Fate(False, f"{parent} does not delete it: {j.reason}")
        else:
            pf = self.fate(parent)
            if not pf.deleted:
                f = _Fate(False, f"its parent {parent} is gone but stays in the cluster ({pf.reason})")
            else:
                j = gc.judge_finalizer(
                    data,
                    self.base.kustomizations[parent].spec,
                    "Kustomization",
                    ks_id.partition("/")[2],
                    moved_to=None,
                )
                f = _Fate(j.verdict == gc.DELETE, f"{parent} is deleted and {j.reason}")
        self._fates[ks_id] = f
        return f


# -- the comparison -------------------------------------------------------------------------


def _cascades(ctx: _Ctx, obj: AppliedObject, verdict: str, owner: str) -> list[Effect]:
    """Effects of deleting ``obj`` on what remains at head."""
    out: list[Effect] = []
    if verdict not in (gc.DELETE, gc.RACE, gc.RECREATE):
        return out
    ref = obj.ref
    if gc.is_namespace(ref) and ref.name not in gc.IMMORTAL_NAMESPACES:
        c = gc.namespace_cascade(ctx.head, ref.name, ref.target)
        if c.victims or c.helm_releases:
            owners = sorted({o for o, _ in c.victims})
            out.append(
                Effect(
                    NAMESPACE_CASCADE,
                    ref,
                    owner,
                    None,
                    f"{'if the race deletes it, ' if verdict == gc.RACE else ''}deleting Namespace {ref.name} deletes everything in it: "
                    f"{len(c.victims)} object(s) still applied at head (of {', '.join(owners) or 'none'})"
                    + (
                        f" and the releases of {len(c.helm_releases)} HelmRelease(s) installing into it"
                        if c.helm_releases
                        else ""
                    ),
                    obj.location,
                    c,
                )
            )
    elif gc.is_crd(ref):
        c = gc.crd_cascade(ctx.head, obj.data, ref.name, ref.target)
        if c.victims:
            owners = sorted({o for o, _ in c.victims})
            out.append(
                Effect(
                    CRD_CASCADE,
                    ref,
                    owner,
                    None,
                    f"{'if the race deletes it, ' if verdict == gc.RACE else ''}deleting CustomResourceDefinition {ref.name} takes {len(c.victims)} custom resource(s) still applied at head with it (of {', '.join(owners)})",
                    obj.location,
                    c,
                )
            )
    elif gc.is_flux_ks(ref):
        child_id = gc.ks_id_of(ref)
        child_base = ctx.base.kustomizations.get(child_id)
        if (
            child_base is not None
            and child_id in ctx.head.kustomizations
            and gc.finalizer_deletes(child_base.spec)
            and child_base.objects
        ):
            c = gc.Cascade(
                f"Kustomization/{child_id}",
                "kustomization",
                note=f"its finalizer ({gc.deletion_policy_text(child_base.spec)}) deletes its inventory",
            )
            c.victims = [(child_id, o.ref) for o in child_base.objects]
            out.append(
                Effect(
                    KUSTOMIZATION_CASCADE,
                    ref,
                    owner,
                    None,
                    f"if the Kustomization object {child_id} is deleted, its finalizer ({gc.deletion_policy_text(child_base.spec)}) "
                    f"deletes its {len(child_base.objects)} object(s) before it is created again",
                    obj.location,
                    c,
                )
            )
    return out


def _object_effects(ctx: _Ctx, cd: ClusterDiff) -> None:
    base, head = ctx.base, ctx.head
    for k, hn in sorted(ctx.frozen.items()):
        first = next((p for p in hn.problems if not p.not_evaluated), None)
        kids = sorted(c for c in ctx.carried if c != k and k in base.ancestors(c))
        tail = f"; its {len(kids)} child Kustomization(s) keep running with their last spec" if kids else ""
        cd.effects.append(
            Effect(
                NOT_APPLIED,
                ObjRef("Kustomization", k.partition("/")[0], k.partition("/")[2], flux.KUSTOMIZE_GROUP, base.kustomizations[k].home),
                k,
                None,
                f"Kustomization {k} does not build at head ({hn.status}{': ' + first.message if first else ''}): Flux applies "
                f"and prunes nothing, and it stays not Ready with its {len(base.kustomizations[k].objects)} object(s){tail}",
                first.location if first else hn.declared_at,
            )
        )
    orphaned_ks: set[str] = set()
    for ref in sorted(ctx.base_objs, key=lambda r: (r.namespace, r.kind, r.name)):
        head_owners = _owners(ctx.head_objs.get(ref, []))
        for bo in ctx.base_objs[ref]:
            o_id = bo.owner
            if o_id in head_owners:
                continue
            o_head = head.kustomizations.get(o_id)
            o_base = base.kustomizations[o_id]
            new_id = next((h for h in head_owners if h != o_id), None)
            if o_head is None:
                fate = ctx.fate(o_id)
                if not fate.deleted:
                    if o_id not in orphaned_ks:
                        orphaned_ks.add(o_id)
                        cd.effects.append(
                            Effect(
                                ORPHANED_KUSTOMIZATION,
                                ObjRef(
                                    "Kustomization",
                                    o_id.partition("/")[0],
                                    o_id.partition("/")[2],
                                    flux.KUSTOMIZE_GROUP,
                                    o_base.home,
                                ),
                                o_id,
                                None,
                                f"Kustomization {o_id} is no longer declared but stays in the cluster ({fate.reason}): it keeps "
                                f"reconciling {o_base.spec.path or '.'} with its last spec and keeps its {len(o_base.objects)} object(s)",
                                o_base.declared_at,
                            )
                        )
                    continue
                j = gc.judge_finalizer(bo.data, o_base.spec, ref.kind, ref.name, moved_to=new_id)
            elif new_id is not None:
                new_head = head.kustomizations[new_id]
                chain_b = ordering.revision_chain(base, o_id, new_id)
                chain_h = ordering.revision_chain(head, o_id, new_id)
                if ordering.source_of(new_head.spec) != ordering.source_of(o_head.spec):
                    chain_b = chain_h = None
                j = gc.judge_move(
                    bo.data,
                    gc.OldOwnerState(
                        o_id, o_base.spec, o_head.spec, chain_b, chain_h, ctx.spec_carrier(o_id)
                    ),
                    gc.NewOwnerState(
                        new_id,
                        exists_before=new_id in base.kustomizations,
                        created_by_old=gc.applied_by(head, new_id, o_id),
                        waits_for_old=o_id in ctx.head_depends(new_id),
                        suspended=new_head.spec.suspend,
                    ),
                )
            else:
                j = gc.judge_removal(bo.data, o_id, [o_base.spec, o_head.spec], ref.kind, ref.name)
            code = j.verdict
            msg = j.reason
            if new_id is not None:
                what = f"{ref} moves from {o_id} to {new_id}"
            else:
                what = f"{ref} is no longer applied by {o_id}"
            cascades = _cascades(ctx, bo, j.verdict, o_id)
            held = gc.stateful(ref)
            if code == gc.DELETE and held is not None and not cascades:
                # a cascade effect names what still applied at head goes with it; without one,
                # what the object holds (data, or objects no Kustomization shows) goes
                if ref.kind == "StatefulSet" and immutable.retention_deletes_claims(bo.data):
                    held = "its pods and, under persistentVolumeClaimRetentionPolicy.whenDeleted: Delete, its claims go: their data is lost"
                code = DATA_LOSS
                msg += f"; {held}"
            if gc.is_helmrelease(ref) and j.verdict in (gc.DELETE, gc.RACE, gc.RECREATE):
                msg += "; deleting a HelmRelease uninstalls its Helm release"
            if ref.kind in gc.DATA_KINDS and j.verdict in (gc.RACE, gc.RECREATE):
                msg += "; the volume's data is lost if it is deleted"
            cd.effects.append(Effect(code, ref, o_id, new_id, f"{what}: {msg}", bo.location, reason=msg))
            cd.effects.extend(cascades)


def _ignore_covers(spec: dict[str, Any], obj: AppliedObject, path: tuple[Any, ...]) -> str | None:
    """The ``spec.ignore`` path of the owner that covers ``path`` of ``obj`` (a JSON pointer
    equal to or above it, in a rule without a target or whose target names the object's kind
    and name), for the message: it does not avoid the failure."""
    pointer = "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)
    for rule in as_list(spec.get("ignore")):
        rule = as_dict(rule)
        target = as_dict(rule.get("target"))
        if target and (
            as_str(target.get("kind")) not in ("", obj.ref.kind) or as_str(target.get("name")) not in ("", obj.ref.name)
        ):
            continue
        for p in as_list(rule.get("paths")):
            if isinstance(p, str) and (pointer == p or pointer.startswith(p.rstrip("/") + "/")):
                return p
    return None


def _immutable_effects(ctx: _Ctx, cd: ClusterDiff) -> None:
    """Updates the API server refuses (``fluxgraph.immutable``), for every object both
    revisions apply through the same Kustomization: the owner's dry-run apply fails, or, where
    the object is force-applied, the object is deleted and created again."""
    for ref in sorted(set(ctx.base_objs) & set(ctx.head_objs), key=lambda r: (r.namespace, r.kind, r.name)):
        for ho in ctx.head_objs[ref]:
            if ho.owner in ctx.carried:
                continue  # not applied at head: compared as unchanged
            bo = next((b for b in ctx.base_objs[ref] if b.owner == ho.owner), None)
            if bo is None or bo.data == ho.data:
                continue
            base_owner = ctx.base.kustomizations.get(ho.owner)
            if base_owner is None or base_owner.spec.suspend:
                continue  # suspended at base: the cluster holds what was applied before, or nothing
            changes = immutable.immutable_changes(ref.group, ref.kind, bo.data, ho.data)
            if not changes:
                continue
            if gc.metadata_match(ho.data, gc.APPLY_EXCLUSIONS) or gc.metadata_match(bo.data, gc.APPLY_EXCLUSIONS):
                continue  # kustomize-controller skips the object
            if gc.metadata_match(ho.data, gc.IF_NOT_PRESENT):
                continue  # applied only when the object does not exist
            owner = ctx.head.kustomizations.get(ho.owner)
            spec = owner.spec.spec if owner is not None else {}
            forced = (
                "spec.force: true of " + ho.owner
                if spec.get("force") is True
                else gc.metadata_match(ho.data, gc.FORCE_SELECTOR) or gc.metadata_match(bo.data, gc.FORCE_SELECTOR)
            )
            fields = ", ".join(dict.fromkeys(c.field for c in changes))
            first = changes[0]
            location = ho.resource.position(first.path)
            ignored = next((p for p in (_ignore_covers(spec, ho, c.path) for c in changes) if p), None)
            ignore_note = (
                f"; spec.ignore's {ignored} does not prevent it: the dry-run sends the whole object" if ignored else ""
            )
            shrink = next((c for c in changes if c.shrink), None)
            ttl = as_dict(bo.data.get("spec")).get("ttlSecondsAfterFinished") if ref.kind == "Job" and ref.group == "batch" else None
            if ttl is not None and not forced:
                # the TTL controller deletes a finished Job after ttlSecondsAfterFinished: the
                # apply fails only while the old one exists (running, or finished less long ago)
                cd.effects.append(
                    Effect(
                        IMMUTABLE_FIELD_IF_PRESENT,
                        ref,
                        ho.owner,
                        ho.owner,
                        f"{ref} changes {fields}, which an update may not change ({first.message}): if the Job of the "
                        f"previous revision still exists (running, or finished less than its ttlSecondsAfterFinished {ttl}s "
                        f"ago), the dry-run apply of {ho.owner} fails and it applies nothing of this revision{ignore_note}",
                        location,
                        reason=f"immutable {fields} while the previous Job exists",
                    )
                )
                continue
            if forced:
                data = ref.kind == "PersistentVolumeClaim" or (
                    ref.kind == "StatefulSet" and ref.group == "apps" and immutable.retention_deletes_claims(ho.data)
                )
                what = (
                    "the claim is deleted and created again, bound to a new volume: its data is lost"
                    if ref.kind == "PersistentVolumeClaim"
                    else "the StatefulSet is deleted and created again, and its persistentVolumeClaimRetentionPolicy "
                    "whenDeleted: Delete deletes its claims: their data is lost"
                    if data
                    else "kustomize-controller deletes it (background propagation: what it owns goes with it) and creates "
                    "it again"
                )
                cd.effects.append(
                    Effect(
                        FORCED_RECREATE_DATA if data else FORCED_RECREATE,
                        ref,
                        ho.owner,
                        ho.owner,
                        f"{ref} changes {fields}, which an update may not change ({first.message}); it is force-applied "
                        f"({forced}): {what}",
                        location,
                        reason=f"force-applied change of {fields}",
                    )
                )
                continue
            if shrink is not None:
                cd.effects.append(
                    Effect(
                        PVC_SHRINK,
                        ref,
                        ho.owner,
                        ho.owner,
                        f"{ref} shrinks its storage request from {shrink.before} to {shrink.after}: the API server refuses "
                        f"({shrink.message}), so the dry-run apply of {ho.owner} fails and it applies nothing of this "
                        f"revision{ignore_note}",
                        ho.resource.position(shrink.path),
                        reason="storage request shrinks",
                    )
                )
                continue
            cd.effects.append(
                Effect(
                    IMMUTABLE_FIELD,
                    ref,
                    ho.owner,
                    ho.owner,
                    f"{ref} changes {fields}, which an update may not change: the API server refuses ({first.message}), "
                    f"so the dry-run apply of {ho.owner} fails and it applies nothing of this revision{ignore_note}",
                    location,
                    reason=f"immutable {fields}",
                )
            )


_MAJOR = re.compile(r"^[v=]?(\d+)(?:\.(?:\d+|x|\*))*(?:[-+][0-9A-Za-z.-]*)?$")


def _major(version: str | None) -> int | None:
    """The major of a version or tag (``1.4.2``, ``v2``, ``3.x``), None for a range or a name."""
    m = _MAJOR.match(version.strip()) if version else None
    return int(m.group(1)) if m else None


def _pod_specs(data: dict[str, Any]) -> list[dict[str, Any]]:
    spec = as_dict(data.get("spec"))
    for path in (("template", "spec"), ("jobTemplate", "spec", "template", "spec")):
        cur: Any = spec
        for p in path:
            cur = as_dict(cur).get(p)
        if isinstance(cur, dict):
            return [cur]
    return [spec] if data.get("kind") == "Pod" else []


def _images(data: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pod in _pod_specs(data):
        for sect in ("initContainers", "containers"):
            for c in as_list(pod.get(sect)):
                c = as_dict(c)
                if isinstance(c.get("name"), str) and isinstance(c.get("image"), str):
                    out[c["name"]] = c["image"]
    return out


def _review_effects(ctx: _Ctx, cd: ClusterDiff) -> None:
    """Changes a reviewer should see listed (info): Kustomizations and HelmReleases suspended or
    resumed, workloads scaled to zero, a major version of a chart or an image."""
    for k in sorted(set(ctx.base.kustomizations) & set(ctx.head.kustomizations)):
        if k in ctx.carried:
            continue
        sb, sh = ctx.base.kustomizations[k].spec.suspend, ctx.head.kustomizations[k].spec.suspend
        if sb != sh:
            node = ctx.head.kustomizations[k]
            ref = ObjRef("Kustomization", k.partition("/")[0], k.partition("/")[2], flux.KUSTOMIZE_GROUP, node.home)
            cd.effects.append(
                Effect(
                    SUSPENDED if sh else RESUMED,
                    ref,
                    node.parent,
                    node.parent,
                    f"Kustomization {k} is suspended: it stops applying and pruning, and its objects stay as they are"
                    if sh
                    else f"Kustomization {k} is resumed: it applies the current revision and prunes what left it meanwhile",
                    node.declared_at or node.spec.location,
                    reason="suspended" if sh else "resumed",
                )
            )
    for hid in sorted(set(ctx.base.helm_releases) & set(ctx.head.helm_releases)):
        hb, hh = ctx.base.helm_releases[hid], ctx.head.helm_releases[hid]
        if hh.owner in ctx.carried:
            continue
        ref = hh.obj.ref
        if hb.spec.suspend != hh.spec.suspend:
            cd.effects.append(
                Effect(
                    SUSPENDED if hh.spec.suspend else RESUMED,
                    ref,
                    hh.owner,
                    hh.owner,
                    f"HelmRelease {hid} is suspended: helm-controller stops upgrading and remediating it"
                    if hh.spec.suspend
                    else f"HelmRelease {hid} is resumed: helm-controller upgrades it to its current spec",
                    hh.obj.resource.position(("spec", "suspend")),
                    reason="suspended" if hh.spec.suspend else "resumed",
                )
            )
        mb, mh = _major(hb.spec.chart_version), _major(hh.spec.chart_version)
        if mb is not None and mh is not None and mb != mh and hb.spec.chart_name == hh.spec.chart_name:
            cd.effects.append(
                Effect(
                    MAJOR_VERSION,
                    ref,
                    hh.owner,
                    hh.owner,
                    f"HelmRelease {hid} moves chart {hh.spec.chart_name} from {hb.spec.chart_version} to "
                    f"{hh.spec.chart_version}: a major version, read its upgrade notes",
                    hh.obj.resource.position(("spec", "chart", "spec", "version")),
                    reason=f"chart {hh.spec.chart_name} {hb.spec.chart_version} -> {hh.spec.chart_version}",
                )
            )
    for oc in cd.modified + cd.moved:
        b, h = ctx.base_objs.get(oc.ref, []), ctx.head_objs.get(oc.ref, [])
        if not b or not h or h[0].owner in ctx.carried:
            continue
        bd, hd = b[0].data, h[0].data
        if oc.ref.kind in REPLICA_KINDS and oc.ref.group in ("apps", ""):
            rb, rh = as_dict(bd.get("spec")).get("replicas", 1), as_dict(hd.get("spec")).get("replicas", 1)
            if rh == 0 and rb != 0:
                cd.effects.append(
                    Effect(
                        SCALED_TO_ZERO,
                        oc.ref,
                        h[0].owner,
                        h[0].owner,
                        f"{oc.ref} is scaled to zero (replicas {rb} -> 0): its pods are stopped",
                        h[0].resource.position(("spec", "replicas")),
                        reason="scaled to zero",
                    )
                )
        ib, ih = _images(bd), _images(hd)
        for name in sorted(set(ib) & set(ih)):
            (rb_, tb, _), (rh_, th, _) = split_image(ib[name]), split_image(ih[name])
            mb, mh = _major(tb), _major(th)
            if rb_ == rh_ and mb is not None and mh is not None and mb != mh:
                cd.effects.append(
                    Effect(
                        MAJOR_VERSION,
                        oc.ref,
                        h[0].owner,
                        h[0].owner,
                        f"{oc.ref} moves container {name} from {ib[name]} to {ih[name]}: a major version, read its "
                        "upgrade notes",
                        h[0].location,
                        reason=f"image {rh_} {tb} -> {th}",
                    )
                )


def _kustomization_changes(ctx: _Ctx, cd: ClusterDiff) -> None:
    base, head = ctx.base, ctx.head
    gone = sorted(set(base.kustomizations) - set(head.kustomizations) - ctx.carried)
    new = sorted(set(head.kustomizations) - set(base.kustomizations))
    renamed: dict[str, str] = {}
    for old in gone:
        ob = base.kustomizations[old]
        refs = {o.ref for o in ob.objects}
        best, score = None, 0.0
        for n in new:
            if n in renamed.values():
                continue
            nh = head.kustomizations[n]
            s = 0.0
            if ob.build_dir is not None and ob.build_dir == nh.build_dir:
                s = 1.0
            if refs:
                s = max(s, len(refs & {o.ref for o in nh.objects}) / len(refs))
            if s > score:
                best, score = n, s
        if best is not None and score >= 0.5:
            renamed[old] = best
    for old in gone:
        ob = base.kustomizations[old]
        fate = ctx.fate(old)
        if fate.deleted:
            if gc.finalizer_deletes(ob.spec):
                tail = f"its finalizer ({gc.deletion_policy_text(ob.spec)}) deletes the {len(ob.objects)} object(s) still labelled with it"
            else:
                tail = f"its finalizer keeps its objects ({'suspended' if ob.spec.suspend else gc.deletion_policy_text(ob.spec)})"
            fate_text = f"deleted: {fate.reason}; {tail}"
        else:
            fate_text = f"stays in the cluster: {fate.reason}"
        cd.kustomizations.append(
            KsChange(
                old,
                "renamed" if old in renamed else "removed",
                renamed.get(old),
                objects_before=len(ob.objects),
                objects_after=len(head.kustomizations[renamed[old]].objects) if old in renamed else 0,
                fate=fate_text,
                location=ob.declared_at,
            )
        )
    for n in new:
        if n in renamed.values():
            continue
        nh = head.kustomizations[n]
        cd.kustomizations.append(
            KsChange(
                n,
                "added",
                objects_after=len(nh.objects),
                fate=f"applied by {nh.parent}" if nh.parent else "",
                location=nh.declared_at,
            )
        )
    for k in sorted(set(base.kustomizations) & set(head.kustomizations)):
        fb = _ks_fields(base, base.kustomizations[k])
        fh = _ks_fields(head, head.kustomizations[k])
        changed = [(name, fb[name], fh[name]) for name in fb if fb[name] != fh[name]]
        nb, nh_ = len(base.kustomizations[k].objects), len(head.kustomizations[k].objects)
        if changed:
            cd.kustomizations.append(
                KsChange(
                    k,
                    "changed",
                    fields=changed,
                    objects_before=nb,
                    objects_after=nh_,
                    location=head.kustomizations[k].declared_at,
                )
            )


def _edges(model: ClusterModel) -> set[tuple[str, str, str]]:
    """The ``dependsOn`` edges of the model (those of ``ClusterModel.graph``, dangling ones
    included, read from the specs): (kind, dependent, dependency)."""
    return {("Kustomization", ks.id, str(dep)) for ks in model.kustomizations.values() for dep in ks.spec.depends_on} | {
        ("HelmRelease", hr.id, str(dep)) for hr in model.helm_releases.values() for dep in hr.spec.depends_on
    }


def _helm_changes(ctx: _Ctx, cd: ClusterDiff) -> None:
    b = ctx.base.helm_releases
    h = dict(ctx.head.helm_releases)
    h.update({hid: hb for hid, hb in b.items() if hb.owner in ctx.carried and hid not in h})
    for hid in sorted(set(b) | set(h)):
        hb, hh = b.get(hid), h.get(hid)
        if hb is None and hh is not None:
            cd.helm_releases.append(HrChange(hid, "added", None, hh.owner))
        elif hh is None and hb is not None:
            cd.helm_releases.append(HrChange(hid, "removed", hb.owner, None))
        elif hb is not None and hh is not None:
            fields = []
            for name, vb, vh in (
                ("chart", hb.spec.chart_name, hh.spec.chart_name),
                ("version", hb.spec.chart_version, hh.spec.chart_version),
                (
                    "source",
                    hb.spec.chart_source.id if hb.spec.chart_source else None,
                    hh.spec.chart_source.id if hh.spec.chart_source else None,
                ),
                ("targetNamespace", hb.spec.target_namespace, hh.spec.target_namespace),
                ("suspend", str(hb.spec.suspend).lower(), str(hh.spec.suspend).lower()),
            ):
                if vb != vh:
                    fields.append((name, str(vb or ""), str(vh or "")))
            if hb.owner != hh.owner:
                cd.helm_releases.append(HrChange(hid, "moved", hb.owner, hh.owner, fields))
            elif fields:
                cd.helm_releases.append(HrChange(hid, "changed", hb.owner, hh.owner, fields))


def _substitution_changes(ctx: _Ctx, cd: ClusterDiff) -> None:
    for k in sorted(set(ctx.base.kustomizations) & set(ctx.head.kustomizations)):
        nb, nh = ctx.base.kustomizations[k], ctx.head.kustomizations[k]
        pb, ph = nb.spec.post_build, nh.spec.post_build
        if (pb is None) != (ph is None):
            cd.substitution.append(SubstitutionChange(k, "added" if pb is None else "removed", "postBuild"))
        sfb = {f"substituteFrom {s.kind}/{s.name}" for s in (pb.substitute_from if pb else ())}
        sfh = {f"substituteFrom {s.kind}/{s.name}" for s in (ph.substitute_from if ph else ())}
        sb = {f"substitute {key}" for key, _ in (pb.substitute if pb else ())}
        sh = {f"substitute {key}" for key, _ in (ph.substitute if ph else ())}
        for w in sorted((sfh | sh) - (sfb | sb)):
            cd.substitution.append(SubstitutionChange(k, "added", w))
        for w in sorted((sfb | sb) - (sfh | sh)):
            cd.substitution.append(SubstitutionChange(k, "removed", w))
        if k in ctx.frozen:
            continue  # not built at head: its variables are not known there
        vb, vh = dict(nb.variables), dict(nh.variables)
        ob, oh = nb.variable_origin, nh.variable_origin
        for name in sorted(set(vb) | set(vh)):
            if name not in vb:
                cd.variables.append(
                    VariableChange(
                        k, name, "added", None, f"{oh.get(name, '?')}: {_show_value(vh[name], oh.get(name))}"
                    )
                )
            elif name not in vh:
                cd.variables.append(
                    VariableChange(
                        k,
                        name,
                        "removed",
                        f"{ob.get(name, '?')}: {_show_value(vb[name], ob.get(name))}",
                        None,
                    )
                )
            elif vb[name] != vh[name] or ob.get(name) != oh.get(name):
                secret = _secret_origin(ob.get(name)) or _secret_origin(oh.get(name))
                change = "changed" if vb[name] != vh[name] else "source"
                cd.variables.append(
                    VariableChange(
                        k,
                        name,
                        change,
                        f"{ob.get(name, '?')}: {'(secret)' if secret else _show_value(vb[name], ob.get(name))}",
                        f"{oh.get(name, '?')}: {'(secret)' if secret else _show_value(vh[name], oh.get(name))}",
                    )
                )


def _key(f: Finding) -> tuple[str, str]:
    return (f.rule, f.fingerprint)


def _pair_moved(new: list[Finding], fixed: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """A finding whose fingerprint changed only because its object's file moved (same rule,
    cluster, object and severity on both sides) is neither new nor fixed."""
    pool: dict[tuple[str, str, str, str], int] = {}
    for f in fixed:
        if f.obj is not None:
            k = (f.rule, f.cluster, str(f.obj), f.severity.value)
            pool[k] = pool.get(k, 0) + 1
    kept_new = []
    matched: dict[tuple[str, str, str, str], int] = {}
    for f in new:
        k = (f.rule, f.cluster, str(f.obj), f.severity.value)
        if f.obj is not None and pool.get(k, 0) > matched.get(k, 0):
            matched[k] = matched.get(k, 0) + 1
            continue
        kept_new.append(f)
    kept_fixed = []
    for f in fixed:
        k = (f.rule, f.cluster, str(f.obj), f.severity.value)
        if f.obj is not None and matched.get(k, 0) > 0:
            matched[k] -= 1
            continue
        kept_fixed.append(f)
    return kept_new, kept_fixed


def diff_clusters(
    base: ClusterModel | None,
    head: ClusterModel | None,
    *,
    base_findings: Iterable[Finding] = (),
    head_findings: Iterable[Finding] = (),
    noise: bool = False,
    full: bool = False,
) -> ClusterDiff:
    """Compare one cluster at two revisions (either side may be missing); ``noise`` keeps the
    annotation and label changes ``contentdiff.NOISE`` leaves out of the content diffs; ``full``
    gives added and removed objects their content too."""
    name = (head or base).name if (head or base) is not None else "?"  # type: ignore[union-attr]
    bf = list(base_findings)
    hf = list(head_findings)
    bkeys = {_key(f) for f in bf}
    hkeys = {_key(f) for f in hf}
    new_f, fixed_f = _pair_moved(
        sorted(f for f in hf if _key(f) not in bkeys), sorted(f for f in bf if _key(f) not in hkeys)
    )
    if base is None or head is None:
        only = head if base is None else base
        assert only is not None
        cd = ClusterDiff(name, "added" if base is None else "removed")
        for ref, objs in sorted(_by_ref(only).items(), key=lambda kv: str(kv[0])):
            oc = ObjectChange(
                ref,
                [] if base is None else _owners(objs),
                _owners(objs) if base is None else [],
                _first_location(objs),
            )
            (cd.added if base is None else cd.removed).append(oc)
        for k in sorted(only.kustomizations):
            cd.kustomizations.append(
                KsChange(
                    k,
                    "added" if base is None else "removed",
                    objects_before=0 if base is None else len(only.kustomizations[k].objects),
                )
            )
        if head is None:
            cd.effects.append(
                Effect(
                    ORPHANED_KUSTOMIZATION,
                    None,
                    only.root_id,
                    None,
                    f"cluster {name} is no longer found at head: its root Kustomization {only.root_id} is not deleted by a "
                    "commit (it syncs itself); if its path is gone it fails and keeps everything",
                )
            )
        cd.new_findings, cd.fixed_findings = new_f, fixed_f
        return cd
    ctx = _Ctx(base, head)
    if ctx.carried:
        # findings about what a failing Kustomization (and its children) applies are not
        # fixed: the model just cannot see those objects at head any more
        frozen_files = set().union(*(base.kustomizations[k].files for k in ctx.carried))
        fixed_f = [
            f for f in fixed_f if f.kustomization not in ctx.carried and f.location.file not in frozen_files
        ]
    cd = ClusterDiff(name, "changed")
    for ref in sorted(set(ctx.base_objs) | set(ctx.head_objs), key=lambda r: (r.namespace, r.kind, r.name)):
        b = ctx.base_objs.get(ref, [])
        h = ctx.head_objs.get(ref, [])
        ob, oh = _owners(b), _owners(h)
        if not b:
            content = contentdiff.object_fields(ref.kind, ref.group, h[0].data, "added", noise=noise) if full else []
            cd.added.append(ObjectChange(ref, [], oh, _first_location(h), content))
        elif not h:
            content = contentdiff.object_fields(ref.kind, ref.group, b[0].data, "removed", noise=noise) if full else []
            cd.removed.append(ObjectChange(ref, ob, [], _first_location(b), content))
        elif ob != oh:
            cd.moved.append(ObjectChange(ref, ob, oh, _first_location(h), _content(ref, b, h, noise)))
        elif [o.data for o in b] != [o.data for o in h]:
            cd.modified.append(ObjectChange(ref, ob, oh, _first_location(h), _content(ref, b, h, noise)))
    _object_effects(ctx, cd)
    _immutable_effects(ctx, cd)
    _kustomization_changes(ctx, cd)
    _review_effects(ctx, cd)
    _helm_changes(ctx, cd)
    eb, eh = _edges(base), _edges(head)
    eh |= {
        e for e in eb if e[0] == "Kustomization" and e[1] in ctx.carried and e[1] not in head.kustomizations
    }
    eh |= {e for e in eb if e[0] == "HelmRelease" and base.helm_releases[e[1]].owner in ctx.carried}
    cd.depends_on = [EdgeChange(k, s, t, "added") for k, s, t in sorted(eh - eb)] + [
        EdgeChange(k, s, t, "removed") for k, s, t in sorted(eb - eh)
    ]
    _substitution_changes(ctx, cd)
    cd.new_findings, cd.fixed_findings = new_f, fixed_f
    cd.effects.sort(key=lambda e: (-e.severity.rank, str(e.ref), e.code, e.old_owner or ""))
    if cd.empty:
        cd.status = "unchanged"
    return cd


def diff_repositories(
    base: Repository,
    head: Repository,
    *,
    base_findings: Iterable[Finding] = (),
    head_findings: Iterable[Finding] = (),
    base_label: str = "base",
    head_label: str = "head",
    base_commit: str | None = None,
    head_commit: str | None = None,
    reused: Iterable[str] = (),
    noise: bool = False,
    full: bool = False,
) -> DiffReport:
    bf, hf = list(base_findings), list(head_findings)
    bmap = {c.name: c for c in base.clusters}
    hmap = {c.name: c for c in head.clusters}
    reused_set = set(reused)
    clusters = []
    for name in sorted(set(bmap) | set(hmap)):
        cd = diff_clusters(
            bmap.get(name),
            hmap.get(name),
            base_findings=[f for f in bf if f.cluster == name],
            head_findings=[f for f in hf if f.cluster == name],
            noise=noise,
            full=full,
        )
        cd.reused = name in reused_set
        clusters.append(cd)
    bkeys = {_key(f) for f in bf if not f.cluster}
    hkeys = {_key(f) for f in hf if not f.cluster}
    new_g, fixed_g = _pair_moved(
        sorted(f for f in hf if not f.cluster and _key(f) not in bkeys),
        sorted(f for f in bf if not f.cluster and _key(f) not in hkeys),
    )
    return DiffReport(
        base=base_label,
        head=head_label,
        base_commit=base_commit,
        head_commit=head_commit,
        clusters=clusters,
        new_findings=new_g,
        fixed_findings=fixed_g,
    )


# The verdicts a change may mean and say so (diff.acknowledge): deletions and re-creations. A
# race, a refused update or a Kustomization that stops applying is never what a change means.
ACKNOWLEDGEABLE = frozenset(
    {DATA_LOSS, NAMESPACE_CASCADE, CRD_CASCADE, KUSTOMIZATION_CASCADE, FORCED_RECREATE, FORCED_RECREATE_DATA, gc.REFUSED}
)


def acknowledge(report: DiffReport, acks: Iterable[Any]) -> None:
    """Mark the verdicts ``acks`` (``config.Acknowledgement``) name: each names an object; every
    acknowledgeable verdict about it is reported as acknowledged and not counted. An entry that
    matches none is a note (a stale acknowledgement must not wait for the next deletion)."""
    acks = list(acks)
    used: set[int] = set()
    for _, e in report.effects():
        if e.ref is None or e.code not in ACKNOWLEDGEABLE:
            continue
        for i, a in enumerate(acks):
            if a.object == str(e.ref):
                e.acknowledged = a.reason
                used.add(i)
                break
    for i, a in enumerate(acks):
        if i not in used:
            report.notes.append(f"diff.acknowledge names {a.object}, but no deletion or re-creation of it is in this change")


def _head_config(tree: Any) -> Any:
    """The configuration file at the top of a revision's tree, parsed; None without one."""
    from fluxgraph.config import CONFIG_NAMES, parse_config

    for name in CONFIG_NAMES:
        data = tree.files.get(name)
        if data is not None:
            return parse_config(data.decode("utf-8", "replace"), Path(name))
    return None


def diff_revisions(
    path: str | os.PathLike[str],
    base_rev: str,
    head_rev: str | None = None,
    *,
    settings: Settings | None = None,
    load_kwargs: dict[str, Any] | None = None,
    checks: Callable[[Repository], list[Finding]] | None = None,
    noise: bool = False,
    full: bool = False,
    share_builds: bool = True,
) -> DiffReport:
    """Compare ``base_rev`` with ``head_rev`` (default: the working tree) of the folder ``path``
    of a git repository. ``settings`` (``config.resolve_settings``) decide how both revisions
    are loaded and which findings count, as for ``check``; ``load_kwargs`` and ``checks``
    replace either part."""
    from fluxgraph import gitrev

    if settings is None:
        from fluxgraph.config import Settings

        settings = Settings()
    load_kwargs = dict(load_kwargs if load_kwargs is not None else settings.load_kwargs())
    if checks is None:
        from fluxgraph.engine import run_checks

        check_kwargs = settings.check_kwargs()

        def checks(repo: Repository) -> list[Finding]:
            return run_checks(repo, **check_kwargs).findings

    gitrev.toplevel(path)
    base_tree = gitrev.read_tree(path, base_rev)
    head: Side
    if head_rev is not None:
        head_tree = gitrev.read_tree(path, head_rev)
        head, head_commit, head_label = head_tree, head_tree.commit, head_rev
    else:
        head, head_commit, head_label = Path(path), None, "working tree"
    changed = gitrev.changed_paths(path, base_tree.commit, head_rev)
    # both revisions parse each unchanged file once (documents are never modified)
    load_kwargs.setdefault("document_memo", {})
    base_l, head_l = load_pair(
        base_tree, head, load_kwargs=load_kwargs, checks=checks, changed=changed, share_builds=share_builds
    )
    report = diff_repositories(
        base_l.repo,
        head_l.repo,
        base_findings=base_l.findings,
        head_findings=head_l.findings,
        base_label=base_rev,
        head_label=head_label,
        base_commit=base_tree.commit,
        head_commit=head_commit,
        reused=base_l.reused,
        noise=noise,
        full=full,
    )
    # what the change acknowledges is read from the change itself: the head revision's
    # configuration (the working tree's when head is the working tree)
    head_cfg = _head_config(head) if head_rev is not None else None
    acknowledge(report, head_cfg.acknowledge if head_cfg is not None else settings.config.acknowledge)
    if not base_l.repo.clusters:
        report.notes.append(f"no Flux cluster found at {base_rev}: everything at head is new")
    for s in base_tree.skipped:
        report.notes.append(f"{base_rev}: skipped {s}")
    return report
