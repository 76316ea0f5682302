"""``fluxgraph explain``: what a folder, file, Kustomization or object is in the reconcile model,
and what moving it to another Kustomization would do.

Pure functions over loaded models (``fluxgraph.load``) returning dataclasses; rendering lives in
``fluxgraph.render.explain_report``. The move plan of ``--to`` is ``fluxgraph.moveplan``'s; the
Flux facts behind its verdicts, ``fluxgraph.gc`` and ``fluxgraph.ordering``.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgraph import envsubst, flux, gc, ordering, overrides, ownership
from fluxgraph.api import Repository
from fluxgraph.cluster import AppliedObject, ClusterModel, KustomizationNode, OpenVariables
from fluxgraph.findings import Finding
from fluxgraph.model import FluxgraphError, Location, ObjRef, as_dict, dotted, string_values
from fluxgraph.substitution import substitution_disabled

_OBJ_RE = re.compile(r"^[A-Z][A-Za-z0-9]*(?:\.[a-z0-9.-]+)?/[^/]+(?:/[^/]+)?$")
_PREFIXES = {
    "ks:": "kustomization",
    "kustomization:": "kustomization",
    "path:": "path",
    "obj:": "object",
    "object:": "object",
}


# -- the target -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What the user asked about. ``kind``: path | kustomization | object."""

    kind: str
    text: str
    path: str | None = None  # repo-relative file or folder ("" = the repository root)
    is_file: bool = False
    ks_id: str | None = None
    obj_kind: str | None = None
    obj_namespace: str | None = None
    obj_name: str | None = None

    def describe(self) -> str:
        if self.kind == "path":
            return f"{'file' if self.is_file else 'folder'} {self.path or '.'}"
        if self.kind == "kustomization":
            return f"Kustomization {self.ks_id}"
        ns = f"{self.obj_namespace}/" if self.obj_namespace else ""
        return f"{self.obj_kind}/{ns}{self.obj_name}"


# a Kustomization's name, or namespace/name: DNS-1123 labels (Kubernetes object names)
KS_NAME = re.compile(r"^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?/)?[a-z0-9](?:[-.a-z0-9]*[a-z0-9])?$")


def under(file: str, path: str) -> bool:
    return path == "" or file == path or file.startswith(path + "/")


def _repo_rel(repo: Repository, text: str, cwd: Path | None) -> str | None:
    """``text`` as a repo-relative path when it names something in the repository."""
    root = Path(repo.root).resolve()
    raw = text.strip()
    candidates: list[Path] = []
    p = Path(raw)
    if p.is_absolute():
        candidates.append(p)
    else:
        candidates.append(root / raw)
        candidates.append((cwd or Path.cwd()) / raw)
    for c in candidates:
        try:
            rel = os.path.relpath(os.path.abspath(c), root)
        except ValueError:
            continue
        if rel == ".":
            rel = ""
        if rel.startswith(".."):
            continue
        rel = rel.replace(os.sep, "/")
        if (root / rel).exists():
            return rel
    return None


def resolve_target(repo: Repository, text: str, *, cwd: Path | None = None) -> Target:
    """Read TARGET: an explicit ``ks:``/``path:``/``obj:`` prefix wins; otherwise an object
    (``Kind/namespace/name``), then a file or folder of the repository, then a Kustomization
    (``namespace/name`` or a unique bare name)."""
    forced = None
    for prefix, kind in _PREFIXES.items():
        if text.startswith(prefix):
            forced, text = kind, text[len(prefix) :]
            break
    if not text:
        raise FluxgraphError("explain: empty target")
    if forced in (None, "object") and _OBJ_RE.match(text):
        parts = text.split("/")
        kind = parts[0].split(".", 1)[0]
        if len(parts) == 3:
            return Target("object", text, obj_kind=kind, obj_namespace=parts[1], obj_name=parts[2])
        return Target("object", text, obj_kind=kind, obj_namespace=None, obj_name=parts[1])
    if forced == "object":
        raise FluxgraphError(f"explain: {text!r} is not Kind/namespace/name or Kind/name")
    if forced in (None, "path"):
        rel = _repo_rel(repo, text, cwd)
        if rel is not None:
            is_file = (Path(repo.root) / rel).is_file()
            return Target("path", text, path=rel, is_file=is_file)
        if forced == "path":
            raise FluxgraphError(f"explain: {text}: no such file or folder in {repo.root}")
    ids = {ks_id for c in repo.clusters for ks_id in c.kustomizations}
    if "/" in text and text in ids:
        return Target("kustomization", text, ks_id=text)
    if "/" not in text:
        named = sorted({ks_id for ks_id in ids if ks_id.split("/", 1)[1] == text})
        if len(named) == 1:
            return Target("kustomization", text, ks_id=named[0])
        if len(named) > 1:
            raise FluxgraphError(
                f"explain: {text!r} names several Kustomizations ({', '.join(named)}); give namespace/name"
            )
    raise FluxgraphError(
        f"explain: {text!r} is not a file or folder of {repo.root}, a Kustomization (namespace/name) "
        "or an object (Kind/namespace/name)"
    )


# -- the explanation ------------------------------------------------------------------------


@dataclass(frozen=True)
class OverrideView:
    """A value the object's own document declares that a ``spec.patches`` entry of the
    Kustomization applying it replaces (``fluxgraph.overrides``, the logic of the rule
    parent-patch-overrides-child)."""

    field: str
    written: str  # as declared
    applied: str  # as Flux applies it
    patch: str  # the entry, and where its text is written
    location: Location  # the declared field
    patch_location: Location
    blanket: bool  # a patch of every object of a kind (what the rule reports)


def override_views(model: ClusterModel, obj: AppliedObject | None) -> tuple[OverrideView, ...]:
    if obj is None:
        return ()
    return tuple(
        OverrideView(o.field, overrides.show(o.written), overrides.show(o.applied), o.site.describe(), o.location, o.site.location, o.site.blanket)
        for o in overrides.object_overrides(model, obj)
    )


@dataclass
class ChainLink:
    """One Kustomization on the way from the cluster root to an owner, with its effective spec."""

    id: str
    path: str
    build_dir: str | None
    source: str | None
    prune: bool
    wait: bool
    timeout: str
    interval: str | None
    target_namespace: str | None
    post_build: str | None  # one-line summary
    suspend: bool
    deletion_policy: str
    declared_at: Location | None
    status: str
    # fields whose value differs from the declaration (set by a parent's patches or substitution)
    from_parent: tuple[str, ...] = ()
    # declared values the parent's spec.patches replace: written, applied, and the patch
    overridden: tuple[OverrideView, ...] = ()
    # the cluster its objects are applied to: "" for this one, else its spec.kubeConfig
    target: str = ""


@dataclass
class ObjectView:
    ref: ObjRef
    owner: str
    location: Location
    via: tuple[str, ...]
    substitution: str
    protection: str | None
    # declared values the owner's spec.patches replace (Kustomizations and HelmReleases)
    overridden: tuple[OverrideView, ...] = ()


@dataclass
class OwnerView:
    ks_id: str
    how: str
    chain: list[ChainLink]
    objects: list[ObjectView]
    children: list[str] = field(default_factory=list)  # Kustomizations among the objects


@dataclass
class NamespaceView:
    name: str
    declared_here: bool  # the target declares it
    declarations: list[tuple[str, Location, str | None]]  # (owner, where, protection) of every declaration
    residents: dict[str, list[ObjRef]]  # objects in it outside the target, by owner
    helm_targets: list[str]  # HelmReleases of others installing into it
    immortal: bool


@dataclass
class VariableUse:
    ref: ObjRef
    field: str
    has_default: bool


@dataclass
class VariableSource:
    owner: str
    substituted: bool  # the owner runs postBuild substitution at all
    origin: str | None  # substitute | ConfigMap/ns/name | Secret/ns/name | command line | None
    provider: list[str]  # Kustomizations that apply that ConfigMap/Secret
    open: bool = False  # a substituteFrom object is not in the repository: may define it


@dataclass
class VariableView:
    name: str
    uses: list[VariableUse]
    sources: list[VariableSource]

    @property
    def has_default(self) -> bool:
        return all(u.has_default for u in self.uses)


@dataclass
class HelmDeps:
    id: str
    owner: str
    depends_on: list[str]
    dependents: list[str]  # HelmReleases that dependsOn it


@dataclass
class DependencyView:
    owner: str
    depends_on: dict[str, int]  # transitive, with distance
    dependents: dict[str, int]
    helm: list[HelmDeps] = field(default_factory=list)


@dataclass
class MoveObject:
    ref: ObjRef
    old_owner: str
    verdict: str
    reason: str
    location: Location


@dataclass
class MissingVariable:
    name: str
    origin: str | None  # where the old owner takes it from
    provider: list[str]
    has_default: bool


@dataclass
class Need:
    """Something the moved objects need applied first, and who applies it."""

    provider: str
    what: str
    covered: bool  # the new owner already waits for it


@dataclass
class MovePlan:
    new_owner: str
    exists: bool
    new_path: str | None
    old_owners: list[str]
    objects: list[MoveObject]
    cascades: list[gc.Cascade]
    missing_variables: list[MissingVariable]
    escapes: list[ObjRef]  # objects with $${...} escapes that a non-substituting owner would keep doubled
    newly_substituted: list[str]  # variables the new owner would substitute that the old one left alone
    needs: list[Need]
    dependents: list[tuple[str, str]]  # (Kustomization, why it must now dependsOn the new owner)
    differences: list[str]
    steps: list[str]
    notes: list[str] = field(default_factory=list)
    # (the 1-based step it replaces, what to do instead): never numbered as a step
    alternatives: list[tuple[int, str]] = field(default_factory=list)
    # why the plan cannot be followed as it stands (the new owner does not build...): no steps
    blocked: list[str] = field(default_factory=list)

    @property
    def worst(self) -> str:
        v = gc.SAFE
        for o in self.objects:
            v = gc.worse(v, o.verdict)
        return v


@dataclass
class ClusterExplanation:
    cluster: str
    owners: list[OwnerView]
    namespaces: list[NamespaceView]
    variables: list[VariableView]
    dependencies: list[DependencyView]
    findings: list[Finding]
    move: MovePlan | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Explanation:
    target: Target
    clusters: list[ClusterExplanation]
    not_in: list[str]  # clusters that do not apply the target


# -- building blocks ------------------------------------------------------------------------


def _fmt_duration(s: float | None) -> str | None:
    return flux.format_duration(s) if s is not None else None


def post_build_summary(spec: flux.FluxKustomization) -> str | None:
    pb = spec.post_build
    if pb is None:
        return None
    parts = []
    if pb.substitute:
        parts.append("substitute " + ", ".join(k for k, _ in pb.substitute))
    if pb.substitute_from:
        parts.append(
            "substituteFrom "
            + ", ".join(
                f"{sf.kind}/{sf.name}{' (optional)' if sf.optional else ''}" for sf in pb.substitute_from
            )
        )
    if pb.strategy != "WithVariables":
        parts.append(f"substituteStrategy {pb.strategy}")
    return "; ".join(parts) or "postBuild: {}"


def declaration_object(model: ClusterModel, ks_id: str) -> AppliedObject | None:
    node = model.kustomizations.get(ks_id)
    if node is None or node.parent is None:
        return None
    parent = model.kustomizations.get(node.parent)
    if parent is None:
        return None
    ns, _, name = ks_id.partition("/")
    for obj in parent.objects:
        if gc.is_flux_ks(obj.ref) and obj.ref.name == name and (obj.ref.namespace or ns) == ns:
            return obj
    return None


_FIELDS = (
    ("prune", "prune"),
    ("wait", "wait"),
    ("timeout", "timeout"),
    ("interval", "interval"),
    ("targetNamespace", "target_namespace"),
    ("postBuild", "post_build"),
    ("suspend", "suspend"),
    ("deletionPolicy", "deletion_policy"),
    ("dependsOn", "depends_on"),
    ("path", "path"),
)


def fields_from_parent(model: ClusterModel, ks_id: str) -> tuple[str, ...]:
    """Spec fields whose effective value differs from what the Kustomization's own document
    says (a parent's ``patches`` or substitution set them)."""
    obj = declaration_object(model, ks_id)
    node = model.kustomizations.get(ks_id)
    if obj is None or node is None or obj.resource.doc is None or not isinstance(obj.resource.doc.data, dict):
        return ()
    written = as_dict(obj.resource.doc.data.get("spec"))
    effective = as_dict(obj.data.get("spec"))
    out = []
    for key, _attr in _FIELDS:
        if written.get(key) != effective.get(key):
            out.append(key)
    return tuple(out)


def chain_link(model: ClusterModel, ks_id: str) -> ChainLink:
    node = model.kustomizations[ks_id]
    s = node.spec
    return ChainLink(
        id=ks_id,
        path=s.path,
        build_dir=node.build_dir,
        source=ordering.source_of(s),
        prune=s.prune,
        wait=s.wait,
        timeout=flux.format_duration(s.effective_timeout),
        interval=_fmt_duration(s.interval),
        target_namespace=s.target_namespace,
        post_build=post_build_summary(s),
        suspend=s.suspend,
        deletion_policy=s.deletion_policy,
        declared_at=node.declared_at,
        status=node.status,
        from_parent=fields_from_parent(model, ks_id),
        target=node.target,
        overridden=override_views(model, declaration_object(model, ks_id)),
    )


def chain(model: ClusterModel, ks_id: str) -> list[ChainLink]:
    ids = list(reversed(model.ancestors(ks_id))) + [ks_id]
    return [chain_link(model, k) for k in ids if k in model.kustomizations]


def _object_view(model: ClusterModel, obj: AppliedObject) -> ObjectView:
    return ObjectView(
        obj.ref,
        obj.owner,
        obj.location,
        obj.resource.origin.via,
        obj.substitution,
        gc.protection(obj.data),
        override_views(model, obj),
    )


def ordered_objects(objs: Iterable[AppliedObject]) -> list[AppliedObject]:
    return sorted(
        objs, key=lambda o: (not gc.is_namespace(o.ref), o.owner, o.ref.kind, o.ref.namespace, o.ref.name)
    )


def target_objects(model: ClusterModel, target: Target) -> tuple[list[AppliedObject], list[str]]:
    """The objects the target contributes in this cluster, and the Kustomizations that build
    it (their ``build_dir`` is the folder or inside it) even when they apply nothing."""
    if target.kind == "kustomization":
        node = model.kustomizations.get(target.ks_id or "")
        if node is None:
            return [], []
        return list(node.objects), [node.id]
    if target.kind == "object":
        kind = (target.obj_kind or "").lower()
        out = [
            o
            for o in model.objects()
            if o.ref.kind.lower() == kind
            and o.ref.name == target.obj_name
            and (target.obj_namespace is None or o.ref.namespace == target.obj_namespace)
        ]
        if target.obj_namespace is None and len({o.ref.namespace for o in out}) > 1:
            cluster_scoped = [o for o in out if o.ref.namespace == ""]
            if cluster_scoped:
                out = cluster_scoped
        return out, []
    path = target.path or ""
    objs = []
    for o in model.objects():
        origin = o.resource.origin
        # the folder holds the file, or a kustomization of the folder brought it into the build
        # (a directory it entered, or a component it includes: origin.home)
        if under(origin.file, path) or any(
            under(posixpath.dirname(v) if v.endswith("<generated>") else v, path)
            for v in (*origin.via, *((origin.home,) if origin.home else ()))
        ):
            objs.append(o)
    builders = sorted(
        ks.id
        for ks in model.kustomizations.values()
        if ks.build_dir is not None and under(ks.build_dir, path) and not target.is_file
    )
    return objs, builders


def _how(model: ClusterModel, ks: KustomizationNode, target: Target, objs: list[AppliedObject]) -> str:
    if target.kind == "kustomization":
        return "is the Kustomization"
    if target.kind == "object":
        return f"applies it ({objs[0].location.file}:{objs[0].location.line})" if objs else "applies it"
    path = target.path or ""
    bd = ks.build_dir
    if bd is not None and bd == path:
        return f"builds this folder (spec.path {ks.spec.path})"
    if bd is not None and not target.is_file and under(bd, path):
        return f"builds {bd}, inside this folder"
    if bd is not None and under(path, bd):
        via = next((o.resource.origin.via for o in objs if o.resource.origin.via), ())
        through = " -> ".join(via) if via else f"{bd}'s generated kustomization"
        return f"builds {bd}, which includes it through {through}"
    via = next((o.resource.origin.via for o in objs if o.resource.origin.via), ())
    if via:
        return f"builds {bd or '?'}, which includes it from outside through {' -> '.join(via)}"
    comps = [
        c
        for c in ks.spec.components
        if bd is not None and under(posixpath.normpath(posixpath.join(bd, c)), path)
    ]
    if comps:
        return f"builds {bd}, which includes it through spec.components ({', '.join(comps)})"
    return f"builds {bd or '?'}, which includes it from outside this folder"


def namespace_views(model: ClusterModel, objs: list[AppliedObject]) -> list[NamespaceView]:
    """The Namespaces the objects declare or live in, each in its target cluster (a namespace
    of a cluster that a Kustomization reaches through spec.kubeConfig is another namespace)."""
    mine = {id(o) for o in objs}
    declared = {(o.ref.target, o.ref.name) for o in objs if gc.is_namespace(o.ref)}
    used = {(o.ref.target, o.ref.namespace) for o in objs if o.ref.namespace}
    names = sorted(declared | used, key=lambda n: (n not in declared, n[1], n[0]))
    decls: dict[tuple[str, str], list[AppliedObject]] = {}
    residents: dict[tuple[str, str], dict[str, list[ObjRef]]] = {n: {} for n in names}
    for o in model.objects():
        if gc.is_namespace(o.ref) and (o.ref.target, o.ref.name) in residents:
            decls.setdefault((o.ref.target, o.ref.name), []).append(o)
        elif (o.ref.target, o.ref.namespace) in residents and id(o) not in mine:
            residents[(o.ref.target, o.ref.namespace)].setdefault(o.owner, []).append(o.ref)
    helm: dict[tuple[str, str], list[str]] = {n: [] for n in names}
    target_hrs = {(o.ref.namespace, o.ref.name) for o in objs if gc.is_helmrelease(o.ref)}
    for hr in model.helm_releases.values():
        t = (hr.target, hr.spec.target_namespace or hr.spec.namespace)
        if t in helm and (hr.spec.namespace, hr.spec.name) not in target_hrs and t != (hr.obj.ref.target, hr.spec.namespace):
            helm[t].append(f"{hr.id} (of {hr.owner})")
    out = []
    for n in names:
        out.append(
            NamespaceView(
                name=n[1] + (f" (kubeConfig {n[0]})" if n[0] else ""),
                declared_here=n in declared,
                declarations=[(d.owner, d.location, gc.protection(d.data)) for d in decls.get(n, [])],
                residents={k: sorted(v, key=str) for k, v in sorted(residents[n].items())},
                helm_targets=sorted(helm[n]),
                immortal=n[1] in gc.IMMORTAL_NAMESPACES,
            )
        )
    return out


def variable_refs(obj: AppliedObject) -> Iterator[tuple[str, str, bool]]:
    """(name, field, has_default) of every ``${...}`` in the object before substitution."""
    for path, text in string_values(obj.pre_substitution, contains="${", keys=True):
        try:
            tmpl = envsubst.parse(text)
        except Exception:  # syntax errors are reported by invalid-substitution-syntax
            continue
        for ref in tmpl.refs():
            yield ref.name, dotted(path), ref.has_default


def has_escape(obj: AppliedObject) -> bool:
    return bool(string_values(obj.pre_substitution, contains="$${", keys=True))


def source_ref(origin: str | None) -> str | None:
    """``ConfigMap/ns/name`` of a ``variable_origin`` entry (which may carry a remark after
    the reference, e.g. "(applied by this Kustomization)"); other origins as they are."""
    if origin is None:
        return None
    head = origin.split(" ", 1)[0]
    return head if head.startswith(("ConfigMap/", "Secret/")) and head.count("/") == 2 else origin


def variable_views(model: ClusterModel, objs: list[AppliedObject]) -> list[VariableView]:
    uses: dict[str, list[VariableUse]] = {}
    owners: dict[str, set[str]] = {}
    for o in objs:
        if o.substitution == "disabled" or substitution_disabled(o.pre_substitution):
            continue
        for name, fld, dflt in variable_refs(o):
            uses.setdefault(name, []).append(VariableUse(o.ref, fld, dflt))
            owners.setdefault(name, set()).add(o.owner)
    out = []
    for name in sorted(uses):
        sources = []
        for owner in sorted(owners[name]):
            node = model.kustomizations[owner]
            origin = source_ref(node.variable_origin.get(name))
            provider: list[str] = []
            if origin and origin.startswith(("ConfigMap/", "Secret/")):
                kind, ns, nm = origin.split("/", 2)
                provider = ownership.producer_owners(model, kind, ns, nm, node.home)
            sources.append(
                VariableSource(
                    owner=owner,
                    substituted=node.spec.post_build is not None,
                    origin=origin,
                    provider=provider,
                    open=origin is None and isinstance(node.variables, OpenVariables),
                )
            )
        seen: set[tuple[str, str]] = set()
        deduped = []
        for u in uses[name]:
            key = (str(u.ref), u.field)
            if key not in seen:
                seen.add(key)
                deduped.append(u)
        out.append(VariableView(name, deduped, sources))
    return out


def dependency_views(
    model: ClusterModel, owners: list[str], objs: list[AppliedObject]
) -> list[DependencyView]:
    out = []
    hr_rev: dict[str, list[str]] = {}
    for hr in model.helm_releases.values():
        for d in hr.spec.depends_on:
            hr_rev.setdefault(str(d), []).append(hr.id)
    hrs = [f"{o.ref.namespace}/{o.ref.name}" for o in objs if gc.is_helmrelease(o.ref)]
    for owner in owners:
        dv = DependencyView(
            owner, gc.transitive_depends(model, owner), gc.transitive_dependents(model, owner)
        )
        for hid in hrs:
            node = model.helm_releases.get(hid)
            if node is None or node.owner != owner:
                continue
            dv.helm.append(
                HelmDeps(hid, node.owner, [str(d) for d in node.spec.depends_on], sorted(hr_rev.get(hid, [])))
            )
        out.append(dv)
    return out


def findings_touching(
    findings: Iterable[Finding], cluster: str, target: Target, objs: list[AppliedObject], owners: list[str]
) -> list[Finding]:
    refs = {o.ref for o in objs}
    files = {o.location.file for o in objs}
    out = []
    for f in findings:
        if f.cluster and f.cluster != cluster:
            continue
        hit = False
        if target.kind == "path":
            p = target.path or ""
            hit = under(f.location.file, p) or any(under(r.file, p) for r in f.related)
        else:
            hit = f.location.file in files
        if f.obj is not None and f.obj in refs:
            hit = True
        if target.kind == "kustomization" and f.kustomization in owners:
            hit = True
        if hit:
            out.append(f)
    return sorted(out)


# -- entry point ----------------------------------------------------------------------------


def applies(model: ClusterModel, target: Target) -> bool:
    if target.kind == "kustomization":
        return target.ks_id in model.kustomizations
    objs, builders = target_objects(model, target)
    return bool(objs or builders)


def findings_for(repo: Repository, target: Target, **check_kwargs: Any) -> list[Finding]:
    """The rule findings of the clusters that apply the target (the checks run only there; the
    suppression-hygiene rules, which need every cluster's findings, only when that is all).
    ``check_kwargs`` are ``engine.run_checks``'s (``config.Settings.check_kwargs``: the rules
    the configuration selects, its severities, exclusions and baseline)."""
    from fluxgraph.catalog import load_catalog
    from fluxgraph.checks import phase_of, registry
    from fluxgraph.engine import run_checks

    present = [c for c in repo.clusters if applies(c, target)]
    if not present:
        return []
    if len(present) == len(repo.clusters):
        return run_checks(repo, **check_kwargs).findings
    catalog = load_catalog()
    whole_repo = {r for r in registry() if phase_of(r) == 2 and r in catalog}
    sub = Repository(root=repo.root, clusters=present, problems=repo.problems, cache=repo.cache)
    kwargs = dict(check_kwargs)
    kwargs["disabled"] = set(kwargs.get("disabled") or ()) | whole_repo
    return run_checks(sub, **kwargs).findings


def explain(
    repo: Repository,
    target: Target,
    *,
    findings: Iterable[Finding] = (),
    move_to: str | None = None,
    move_path: str | None = None,
) -> Explanation:
    findings = list(findings)
    clusters: list[ClusterExplanation] = []
    not_in: list[str] = []
    for model in repo.clusters:
        objs, builders = target_objects(model, target)
        if target.kind == "kustomization" and target.ks_id not in model.kustomizations:
            not_in.append(model.name)
            continue
        if not objs and not builders:
            not_in.append(model.name)
            continue
        by_owner: dict[str, list[AppliedObject]] = {}
        for o in objs:
            by_owner.setdefault(o.owner, []).append(o)
        for b in builders:
            by_owner.setdefault(b, [])
        owners: list[OwnerView] = []
        for ks_id in sorted(by_owner, key=lambda k: (len(model.ancestors(k)), k)):
            node = model.kustomizations[ks_id]
            mine = ordered_objects(by_owner[ks_id])
            owners.append(
                OwnerView(
                    ks_id,
                    _how(model, node, target, mine),
                    chain(model, ks_id),
                    [_object_view(model, o) for o in mine],
                    sorted(gc.ks_id_of(o.ref, node.spec.namespace) for o in mine if gc.is_flux_ks(o.ref)),
                )
            )
        owner_ids = [o.ks_id for o in owners]
        ordered = ordered_objects(objs)
        ce = ClusterExplanation(
            cluster=model.name,
            owners=owners,
            namespaces=namespace_views(model, ordered),
            variables=variable_views(model, ordered),
            dependencies=dependency_views(model, owner_ids, ordered),
            findings=findings_touching(findings, model.name, target, ordered, owner_ids),
        )
        for ks_id in owner_ids:
            node = model.kustomizations[ks_id]
            if node.status != "built":
                ce.notes.append(f"{ks_id} is {node.status}: its objects are not (all) known")
            elif node.incomplete:
                ce.notes.append(f"{ks_id}'s build is incomplete (something was not evaluated)")
        if move_to:
            from fluxgraph.moveplan import plan_move

            if not KS_NAME.match(move_to):
                raise FluxgraphError(
                    f"--to {move_to!r} is not a Kustomization name (name, or namespace/name: lower-case letters, digits and '-')"
                )

            if not ordered:
                ce.notes.append("nothing to move: the target contributes no objects in this cluster")
            else:
                ce.move = plan_move(model, target, ordered, move_to, move_path, repo.cache)
        clusters.append(ce)
    return Explanation(target, clusters, not_in)
