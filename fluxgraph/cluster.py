"""The reconcile model of one cluster: what Flux would apply, from the repository alone.

Starting at the cluster's root Kustomization, every Flux Kustomization is built as
kustomize-controller builds it (``fluxgraph.kustomize.build`` with the Flux spec written into
the kustomization, then postBuild substitution, then ``commonMetadata``), and the objects it
applies are walked for more Kustomizations, HelmReleases and sources.

Ordering matters only for substitution: a Kustomization whose ``substituteFrom`` names a
ConfigMap/Secret that another Kustomization applies is built after the others, so that the
values are known (Flux reads them from the live cluster; the repo is the best static stand-in).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from fluxgraph import envsubst, flux, resourceset, substitution
from fluxgraph.admission import KUSTOMIZATIONS, Mutator
from fluxgraph.flux import FluxHelmRelease, FluxKustomization, SubstituteFrom
from fluxgraph.fluxrelease import FluxRelease
from fluxgraph.kustomize.build import Builder, BuildResult, find_kustomization_file, is_remote
from fluxgraph.kustomize.resource import Origin, Resource
from fluxgraph.materialize import Made, MadeIndex
from fluxgraph.model import Location, ObjRef, Problem, as_dict, as_list, string_values
from fluxgraph.repofs import PathEscape, join, norm_rel, secure_join
from fluxgraph.scope import CRD_GROUP, CRD_KIND, Scope, ScopeTable

if TYPE_CHECKING:
    import networkx as nx

UNKNOWN = envsubst.UNKNOWN
ROOT_SOURCE_KINDS = ("GitRepository", "OCIRepository", "Bucket", "ExternalArtifact")


class OpenVariables(dict[str, Any]):
    """Variables of a Kustomization whose substituteFrom names an object that is not in the
    repository: any name not known here may be defined there, so its value is UNKNOWN."""

    def __missing__(self, key: str) -> Any:
        return UNKNOWN


@dataclass
class AppliedObject:
    resource: Resource
    owner: str  # id of the Kustomization that applies it
    ref: ObjRef  # Flux's identity (cluster-scoped kinds have no namespace: fluxgraph.scope)
    raw: dict[str, Any] | None = None  # the object before substitution, when substitution changed it
    substitution: str = "none"  # none | applied | disabled | skipped
    # what functions of the object's content (``resource`` and ``raw``, never its owner, identity
    # or cluster) computed of it, by function: shared with the same object's copy at the other
    # revision of a diff (``ClusterWalker._take``): ``dollar_strings``, the parsed Flux spec, and
    # the checks' per-object helpers (``checks._memo.per_object``)
    content_memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def data(self) -> dict[str, Any]:
        return self.resource.data

    @property
    def location(self) -> Location:
        return self.resource.origin.location

    @property
    def operator_applied(self) -> str | None:
        """The Flux Operator ResourceSet that generates this object (``fluxgraph.resourceset``),
        or None. Such an object is applied, copied into (``fluxcd.controlplane.io/copyFrom``) and
        garbage-collected by flux-operator for the ResourceSet, not by the Kustomization that
        applies the ResourceSet (``owner``): the ownership and prune rules leave it to the
        ResourceSet."""
        g = self.resource.origin.generated_by
        return g if g is not None and g.startswith("ResourceSet ") else None

    @property
    def pre_substitution(self) -> dict[str, Any]:
        return self.raw if self.raw is not None else self.resource.data

    def dollar_strings(self) -> list[tuple[tuple[Any, ...], str]]:
        """The string values of ``pre_substitution`` that contain ``$``, with their paths, in
        document order: what every substitution rule looks at, walked once per object."""
        hit = self.content_memo.get("dollar_strings")
        if hit is None:
            hit = self.content_memo["dollar_strings"] = string_values(self.pre_substitution, contains="$")
        return hit


@dataclass(frozen=True)
class WalkRecord:
    """What the walk of one revision made of a Kustomization's remembered build (``fluxgraph
    diff``: ``SharedBuilds.walks``): its objects after substitution and ``commonMetadata``. The
    other revision's walk takes them again, instead of copying the build and substituting it,
    only where everything that step reads is equal: the same remembered build (the same
    object), the same spec, clusters, strictness, admission and variables (``_reusable``).
    Identities, the CRDs learned, the index and the Flux objects found are computed again."""

    built: Any  # kustomize.build._Built
    spec: FluxKustomization
    home: str
    target: str
    strict: bool
    mutated_by: tuple[Mutator, ...]
    variables: dict[str, Any]
    objects: tuple[AppliedObject, ...]
    errors: tuple[tuple[int, tuple[Any, ...], Exception], ...]  # substitution errors, by object index


@dataclass
class SourceNode:
    kind: str
    namespace: str
    name: str
    url: str | None = None
    repo_base: str | None = None  # repo-relative root when the source is this repository
    path_map: tuple[tuple[str, str], ...] = ()  # ExternalArtifact: (artifact prefix, repo prefix)
    location: Location | None = None
    owner: str | None = None
    synthesized: bool = False

    @property
    def id(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    @property
    def in_repo(self) -> bool:
        return self.repo_base is not None or bool(self.path_map)

    def spec_path_for(self, repo_dir: str) -> str | None:
        """The ``spec.path`` (without ``./``) that reaches the repo-relative ``repo_dir`` in what
        this source copies; None when it copies no such folder. The inverse of ``resolve``."""
        d = norm_rel(repo_dir)
        if self.path_map:
            for art, repo in sorted(self.path_map, key=lambda m: -len(m[1])):
                if repo == "" or d == repo or d.startswith(repo + "/"):
                    rest = d[len(repo) :].lstrip("/") if repo else d
                    return norm_rel(f"{art}/{rest}" if art else rest)
            return None
        if self.repo_base is None:
            return None
        if self.repo_base and not (d == self.repo_base or d.startswith(self.repo_base + "/")):
            return None
        return norm_rel(d[len(self.repo_base) :].lstrip("/")) if self.repo_base else d

    def resolve(self, path: str) -> tuple[str | None, bool]:
        """Map a Kustomization ``spec.path`` to a repo-relative directory (securejoin)."""
        rel, climbed = secure_join(path)
        if self.path_map:
            for art, repo in sorted(self.path_map, key=lambda m: -len(m[0])):
                if art == "" or rel == art or rel.startswith(art + "/"):
                    rest = rel[len(art) :].lstrip("/") if art else rel
                    return norm_rel(f"{repo}/{rest}" if repo else rest), climbed
            return None, climbed
        if self.repo_base is None:
            return None, climbed
        return norm_rel(f"{self.repo_base}/{rel}" if self.repo_base else rel), climbed


@dataclass
class KustomizationNode:
    spec: FluxKustomization
    parent: str | None
    declared_at: Location | None
    status: str = "pending"  # built | failed | external | missing-source | missing-path | suspended-not-built
    build_dir: str | None = None
    source_id: str | None = None
    objects: list[AppliedObject] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    incomplete: bool = False
    files: set[str] = field(default_factory=set)
    variables: dict[str, Any] = field(default_factory=dict)
    variable_origin: dict[str, str] = field(default_factory=dict)
    missing_substitute_from: list[SubstituteFrom] = field(default_factory=list)
    substitution_errors: list[tuple[AppliedObject, tuple[Any, ...], Exception]] = field(default_factory=list)
    substituted: bool = False
    other_declarations: list[tuple[str, Location]] = field(default_factory=list)
    # the applied object of the parent's build this node was made from; for the root, the
    # first object of the walk that declares it again (flux-system/gotk-sync.yaml), if any
    declared_by: AppliedObject | None = None
    # the cluster the Kustomization object lives in (its controller's, read by substituteFrom)
    # and the one its objects are applied to: "" for the cluster being modelled, else a
    # spec.kubeConfig reference (``target_of``); they differ only when spec.kubeConfig is set
    home: str = ""
    target: str = ""
    # admission in the cluster that may change this Kustomization as it is applied
    # (``fluxgraph.admission``): verdicts on the fields it may change are not evaluated
    mutated_by: list[Mutator] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.spec.id

    def mutation(self, spec_field: str) -> Mutator | None:
        """The first admission that may change ``spec.<spec_field>`` of this Kustomization
        without the repository saying how (a known injection of variables excepted)."""
        return next((m for m in self.mutated_by if m.may_change(spec_field) and not m.known), None)


@dataclass
class HelmReleaseNode:
    spec: FluxHelmRelease
    owner: str
    obj: AppliedObject
    target: str = ""  # the cluster the release is installed in (``target_of``)

    @property
    def id(self) -> str:
        return self.spec.id


@dataclass
class ClusterModel:
    name: str
    root_dir: str
    root_id: str
    strict: bool = True
    kustomizations: dict[str, KustomizationNode] = field(default_factory=dict)
    helm_releases: dict[str, HelmReleaseNode] = field(default_factory=dict)
    sources: dict[str, SourceNode] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    discovered_by: str = ""
    # further root Kustomizations of the same cluster (one cluster reached from two roots:
    # a legacy root and the one a FluxInstance the cluster applies creates), ids
    extra_roots: list[str] = field(default_factory=list)
    # the root was made up for --cluster (no declaration of it in the repository): what only
    # the Kustomization that really applies the folder decides (its targetNamespace, patches)
    # is unknown
    synthesized_root: bool = False
    scopes: ScopeTable = field(default_factory=ScopeTable, repr=False)  # scope of (group, kind)
    flux: FluxRelease = field(default_factory=FluxRelease)  # the Flux the cluster runs (fluxgraph.fluxrelease)
    _graph: nx.MultiDiGraph | None = field(default=None, repr=False)  # built on first use
    # what helpers computed from this model, by helper (fluxgraph.checks._memo,
    # fluxgraph.ordering's reaches): models are not modified after api.load
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # admission the cluster installs that may change Flux objects (``fluxgraph.admission``)
    mutators: list[Mutator] = field(default_factory=list)

    def objects(self) -> Iterable[AppliedObject]:
        for ks in self.kustomizations.values():
            yield from ks.objects

    def chart_name(self, hr: HelmReleaseNode) -> str | None:
        """The name of the chart a HelmRelease installs: ``spec.chart.spec.chart``'s last path
        segment, else the last segment of its OCIRepository's URL (``spec.chartRef``)."""
        name = hr.spec.chart_name
        if isinstance(name, str) and name:
            return name.rstrip("/").rsplit("/", 1)[-1] or None
        src = self.sources.get(hr.spec.chart_source.id) if hr.spec.chart_source is not None else None
        if src is not None and src.kind == "OCIRepository" and src.url:
            return src.url.rstrip("/").rsplit("/", 1)[-1] or None
        return None

    def scope_of(self, ref: ObjRef) -> Scope:
        """Whether the kind of ``ref`` is cluster-scoped, and whether that is known or taken as
        namespaced for want of a source (``fluxgraph.scope``)."""
        return self.scopes.of(ref)

    def find_objects(self, kind: str, namespace: str, name: str, target: str = "") -> list[AppliedObject]:
        return [
            o
            for o in self.objects()
            if o.ref.kind == kind and o.ref.namespace == namespace and o.ref.name == name and o.ref.target == target
        ]

    @property
    def roots(self) -> list[str]:
        """The ids of the root Kustomizations: ``root_id``, then ``extra_roots``."""
        return [self.root_id, *self.extra_roots]

    @property
    def graph(self) -> nx.MultiDiGraph:
        if self._graph is None:
            self._graph = build_graph(self)
        return self._graph

    def depends_on_graph(self, kind: str = "ks") -> nx.DiGraph:
        """The ``dependsOn`` edges of ``graph`` between the Kustomizations (``kind="ks"``) or
        HelmReleases (``kind="hr"``) of this cluster, dangling ones left out, as a frozen
        ``DiGraph`` built once per model. Nodes keep their ``ks:``/``hr:`` prefix. (A filtered
        view of ``graph`` calls its filters on every step of every traversal: on a chain of
        10,000 Kustomizations, finding its strongly connected components took seconds.)

        Built from the specs, without ``graph`` (whose objects and sources the checks do not
        need: 10 to 15 % of them on 10,000 Kustomizations), in ``graph``'s order: its nodes in
        the order ``build_graph`` first names them, each node's dependencies in the order its
        first edge of any kind to them was added there (a parent's ``applies`` edge to a child
        it also depends on comes at the child's turn). A cycle's shortest path breaks ties by
        that order; ``tests/test_depends_on_graph.py`` holds the two constructions equal."""
        key = f"depends_on_graph:{kind}"
        if key not in self.memo:
            import networkx as nx

            order: dict[str, dict[str, bool]] = {}  # node -> neighbours, first edge first; True: a dependsOn
            if kind == "ks":
                for ks in self.kustomizations.values():
                    order.setdefault(f"ks:{ks.id}", {})
                for ks in self.kustomizations.values():
                    if ks.parent and f"ks:{ks.parent}" in order:
                        order[f"ks:{ks.parent}"].setdefault(f"ks:{ks.id}", False)
                    adj = order[f"ks:{ks.id}"]
                    for dep in ks.spec.depends_on:
                        adj[f"ks:{dep}"] = True
            else:
                seen: dict[str, None] = {}
                for hr in self.helm_releases.values():
                    adj = order.setdefault(f"hr:{hr.id}", {})
                    seen.setdefault(f"hr:{hr.id}")
                    for dep in hr.spec.depends_on:
                        adj[f"hr:{dep}"] = True
                        seen.setdefault(f"hr:{dep}")
                order = {n: order[n] for n in seen if n in order}
            g = nx.DiGraph()
            g.add_nodes_from(order)
            g.add_edges_from((u, v) for u, adj in order.items() for v, dep in adj.items() if dep and v in order)
            self.memo[key] = nx.freeze(g)
        return self.memo[key]

    def ancestors(self, ks_id: str) -> list[str]:
        chain = []
        cur = self.kustomizations.get(ks_id)
        seen = set()
        while cur is not None and cur.parent and cur.parent not in seen:
            seen.add(cur.parent)
            chain.append(cur.parent)
            cur = self.kustomizations.get(cur.parent)
        return chain


def build_graph(model: ClusterModel) -> nx.MultiDiGraph:
    """Nodes: ``ks:<ns>/<name>``, ``hr:<ns>/<name>``, ``src:<Kind>/<ns>/<name>``,
    ``obj:<Kind>/<ns>/<name>[@<target>]`` (attribute ``ref``: its ``ObjRef``). Edges are keyed
    by their kind (also their ``kind`` attribute; substituteFrom and valuesFrom carry ``optional``):
    applies, dependsOn, sourceRef, substituteFrom, valuesFrom, chartSource; two nodes may be
    joined by edges of several kinds (a parent that also dependsOn its child). The object a
    substituteFrom or valuesFrom names is the one of the cluster its Flux object lives in
    (``fluxgraph.ownership``); ``missing`` marks one no Kustomization applies (a controller may
    still make it: ``ownership.producers``)."""
    import networkx as nx  # imported on first use: it costs a noticeable part of start-up

    g = nx.MultiDiGraph()
    for ks in model.kustomizations.values():
        g.add_node(f"ks:{ks.id}", type="Kustomization", id=ks.id)
    for src in model.sources.values():
        g.add_node(f"src:{src.id}", type="Source", id=src.id)
    for ks in model.kustomizations.values():
        n = f"ks:{ks.id}"
        if ks.parent:
            g.add_edge(f"ks:{ks.parent}", n, key="applies", kind="applies")
        for dep in ks.spec.depends_on:
            g.add_edge(n, f"ks:{dep}", key="dependsOn", kind="dependsOn")
        if ks.spec.source_ref is not None:
            g.add_edge(n, f"src:{ks.spec.source_ref.id}", key="sourceRef", kind="sourceRef")
        for obj in ks.objects:
            on = f"obj:{obj.ref.key}"
            if not g.has_node(on):
                g.add_node(on, type="Object", id=obj.ref.key, ref=obj.ref)
            g.add_edge(n, on, key="applies", kind="applies")
        if ks.spec.post_build is not None:
            for sf in ks.spec.post_build.substitute_from:
                ref = ObjRef(sf.kind, ks.spec.namespace, sf.name, target=ks.home)
                on = f"obj:{ref.key}"
                if not g.has_node(on):
                    g.add_node(on, type="Object", id=ref.key, ref=ref, missing=True)
                g.add_edge(n, on, key="substituteFrom", kind="substituteFrom", optional=sf.optional)
    for hr in model.helm_releases.values():
        n = f"hr:{hr.id}"
        g.add_node(n, type="HelmRelease", id=hr.id)
        g.add_edge(f"ks:{hr.owner}", n, key="applies", kind="applies")
        for dep in hr.spec.depends_on:
            g.add_edge(n, f"hr:{dep}", key="dependsOn", kind="dependsOn")
        if hr.spec.chart_source is not None:
            g.add_edge(n, f"src:{hr.spec.chart_source.id}", key="chartSource", kind="chartSource")
        for kind, name, optional in hr.spec.values_from:
            ref = ObjRef(kind, hr.spec.namespace, name, target=hr.obj.ref.target)
            on = f"obj:{ref.key}"
            if not g.has_node(on):
                g.add_node(on, type="Object", id=ref.key, ref=ref, missing=True)
            g.add_edge(n, on, key="valuesFrom", kind="valuesFrom", optional=optional)
    return g


def _normalize_url(url: str | None) -> str | None:
    if not url:
        return None
    u = url.strip().rstrip("/")
    if u.endswith(".git"):
        u = u[:-4]
    for prefix in ("https://", "http://", "ssh://", "oci://", "git@"):
        if u.startswith(prefix):
            u = u[len(prefix) :]
    u = u.replace(":", "/", 1) if "/" in u and ":" in u.split("/")[0] else u
    if u.startswith("git@"):
        u = u[4:]
    return u.lower()


def target_of(home: str, kube_config: str | None) -> str:
    """Where an object with ``spec.kubeConfig`` = ``kube_config`` that lives in cluster ``home``
    applies to: ``home`` itself without a kubeConfig, else the kubeConfig reference (read in
    ``home``, so qualified by it when ``home`` is another cluster already)."""
    if kube_config is None:
        return home
    return f"{home} > {kube_config}" if home else kube_config


class ClusterWalker:
    def __init__(
        self,
        builder: Builder,
        model: ClusterModel,
        root: FluxKustomization,
        root_source: SourceNode,
        *,
        extra_vars: dict[str, str] | None = None,
        extra_roots: list[tuple[FluxKustomization, SourceNode]] | None = None,
        mutators: list[Mutator] | None = None,
        prior: ClusterModel | None = None,
    ):
        self.builder = builder
        self.model = model
        self.root = root
        self.extra_vars = extra_vars or {}
        self.model.sources[root_source.id] = root_source
        self.root_url = _normalize_url(root_source.url)
        self.extra_roots = [(spec, src) for spec, src in extra_roots or () if spec.id != root.id]
        for _, src in self.extra_roots:
            self.model.sources.setdefault(src.id, src)
        # (target cluster, kind, ns, name) -> object: what substituteFrom finds in a cluster
        self.index: dict[tuple[str, str, str, str], AppliedObject] = {}
        # what the cluster's controllers create from the objects applied so far
        self.made = MadeIndex()
        self.mutators = mutators or []
        self.model.mutators = list(self.mutators)
        # the objects an earlier walk of the same cluster applied: what a mutator reads comes
        # from the cluster as a whole, whatever Kustomization this walk reaches first
        self.prior: dict[tuple[str, str, str, str], AppliedObject] = (
            {(o.ref.target, o.ref.kind, o.ref.namespace, o.ref.name): o for o in prior.objects()} if prior is not None else {}
        )
        self.prior_made = MadeIndex.build(prior.objects()) if prior is not None else MadeIndex()

    # -- the walk -----------------------------------------------------------------------
    def run(self) -> ClusterModel:
        root_node = KustomizationNode(self.root, None, self.root.location, target=target_of("", self.root.kube_config))
        self.model.kustomizations[self.root.id] = root_node
        queue: list[KustomizationNode] = [root_node]
        for spec, _ in self.extra_roots:
            if spec.id not in self.model.kustomizations:
                node = KustomizationNode(spec, None, spec.location, target=target_of("", spec.kube_config))
                self.model.kustomizations[spec.id] = node
                self.model.extra_roots.append(spec.id)
                queue.append(node)
        # A Kustomization whose source or substituteFrom object the walk has not reached yet is
        # held back until the walk has applied what it can (the cluster converges to that
        # state: kustomize-controller retries). Held-back ones are tried again after each pass;
        # only a pass that reconciles nothing forces one (the first) to build without what it
        # waits for, and the others are held back again, so that what the forced one applies
        # still reaches them.
        deferred: list[KustomizationNode] = []
        progressed = True  # something was reconciled since the held-back ones were last queued
        force = False
        while queue or deferred:
            if not queue:
                queue, deferred = deferred, []
                force, progressed = not progressed, False
            node = queue.pop(0)
            if not force and self._should_defer(node):
                deferred.append(node)
                continue
            force, progressed = False, True
            self._reconcile(node, queue)
        self._rescope()
        self._link_sources()
        return self.model

    def _rescope(self) -> None:
        """Identities again, now that every CRD the walk applies is known: a CRD applied by a
        Kustomization reconciled later still decides the scope of an earlier object (the
        cluster has it either way once both have applied)."""
        if not self.model.scopes.applied:
            return
        for obj in self.model.objects():
            obj.ref = self._flux_ref(obj.resource, obj.ref.target)

    def _should_defer(self, node: KustomizationNode) -> bool:
        if node.spec.source_ref is not None and node.spec.source_ref.id not in self.model.sources:
            return True
        pb = node.spec.post_build
        if pb is None:
            return False
        return any(
            (node.home, sf.kind, node.spec.namespace, sf.name) not in self.index
            and not self.made.find(sf.kind, node.spec.namespace, sf.name, node.home)
            for sf in pb.substitute_from
        )

    def _reconcile(self, node: KustomizationNode, queue: list[KustomizationNode]) -> None:
        spec = node.spec
        sref = spec.source_ref
        if sref is None:
            node.status = "missing-source"
            return
        node.source_id = sref.id
        src = self.model.sources.get(sref.id)
        if src is None:
            node.status = "missing-source"
            return
        if not src.in_repo:
            node.status = "external"
            node.incomplete = True
            node.problems.append(
                Problem(
                    "not-evaluated-source",
                    f"Kustomization {spec.id} builds from {src.id}, which is not this repository; its objects are not analysed",
                    spec.location,
                    not_evaluated=True,
                    kustomization=spec.id,
                )
            )
            return
        build_dir, climbed = src.resolve(spec.path)
        if climbed:
            node.problems.append(
                Problem(
                    "path-escape",
                    f"spec.path {spec.path!r} of Kustomization {spec.id} climbs above the source root; Flux clamps it to {build_dir or '.'!r}",
                    spec.location,
                    kustomization=spec.id,
                    subject=f"{spec.id}:spec.path",
                )
            )
        if build_dir is None:
            node.status = "missing-path"
            node.problems.append(
                Problem("missing-path", f"spec.path {spec.path!r} of {spec.id} is outside what {src.id} copies", spec.location, kustomization=spec.id, subject=f"{spec.id}:spec.path")
            )
            return
        node.build_dir = build_dir
        cache = self.builder.cache
        if not cache.is_dir(build_dir):
            node.status = "missing-path"
            what = "is a file, not a directory" if cache.is_file(build_dir) else "does not exist"
            node.problems.append(
                Problem(
                    "missing-path",
                    f"spec.path {spec.path!r} of Kustomization {spec.id} {what} in {src.id} (kustomization path not found)",
                    spec.location,
                    kustomization=spec.id,
                    subject=f"{spec.id}:spec.path",
                )
            )
            return
        if self._components_escape(node, build_dir):
            node.status = "failed"
            return
        if spec.ignore_missing_components and spec.components:
            # fluxcd/pkg kustomize_generator.go: a component whose path does not exist under the
            # build directory is skipped instead of failing the build
            spec = replace(spec, components=tuple(c for c in spec.components if self.builder.cache.fs.exists(join(build_dir, c))))
        # borrowed: _apply copies the resources unless it takes the other revision's walk of them
        result = self.builder.build(build_dir, _flux_overlay(spec) if _needs_overlay(spec) else None, copy=False)
        node.files = result.files
        node.incomplete = result.incomplete
        for p in result.problems:
            node.problems.append(_with_ks(p, spec.id))
        if result.failed:
            node.status = "failed"
            return
        node.status = "built"
        self._apply(node, result, queue)

    def _components_escape(self, node: KustomizationNode, build_dir: str) -> bool:
        """``spec.components`` entries join the build dir's kustomization, so kustomize's secure
        file system refuses one that leaves the source root and the whole build fails. Reported
        here, at the entry of the Flux object, not at the (possibly generated) kustomization file
        the build would name."""
        escaped = False
        for i, c in enumerate(node.spec.components):
            if not isinstance(c, str) or is_remote(c):
                continue  # the build reports these
            try:
                p = join(build_dir, c)
            except PathEscape as e:
                why = str(e)
            else:
                if not self.builder.cache.fs.escapes(p):
                    continue
                why = f"{c!r} is a symlink that leaves the repository root"
            escaped = True
            node.problems.append(
                Problem(
                    "path-escape",
                    f"spec.components[{i}] of Kustomization {node.spec.id}: {why}; kustomize refuses it and the build fails",
                    self._spec_position(node, ("spec", "components", i)),
                    kustomization=node.spec.id,
                    subject=f"{node.spec.id}:spec.components[{i}]",
                )
            )
        return escaped

    # -- post-build: substitution, identities, children -----------------------------------
    def _apply(self, node: KustomizationNode, result: BuildResult, queue: list[KustomizationNode]) -> None:
        spec = node.spec
        pb = spec.post_build
        node.mutated_by = [
            m for m in self.mutators if m.admits(KUSTOMIZATIONS, spec.namespace, self.made.labels_of(node.home, spec.namespace))
        ]
        if pb is None and any(m.may_change("postBuild") for m in node.mutated_by):
            pb = flux.PostBuild()  # the admission gives it one
        variables: dict[str, Any] = {}
        if pb is not None:
            variables = self._variables(node, pb, result.resources)
        do_subst = pb is not None and (bool(variables) or isinstance(variables, OpenVariables) or pb.strategy == "Always")
        node.substituted = do_subst
        shared = self.builder.shared
        key = (self.model.name, spec.id)
        record = shared.walks.get(key) if shared is not None and shared.second else None
        if record is not None and self._reusable(record, node, result, variables):
            self._take(node, record)
        else:
            self._substitute(node, result.owned(), pb, variables, do_subst)
            if shared is not None and not shared.second and result.memo is not None:
                shared.walks[key] = self._record(node, result, variables)
        self._resource_sets(node)
        for obj in node.objects:
            if obj.ref.kind == CRD_KIND and obj.ref.group == CRD_GROUP:
                self.model.scopes.learn_crd(obj.data, obj.location, spec.id)
        for obj in node.objects:
            self.index.setdefault((obj.ref.target, obj.ref.kind, obj.ref.namespace, obj.ref.name), obj)
            self.made.add(obj)
            self._visit(node, obj, queue)

    def _substitute(
        self, node: KustomizationNode, result: BuildResult, pb: flux.PostBuild | None, variables: dict[str, Any], do_subst: bool
    ) -> None:
        """``node``'s objects from its build's resources: postBuild substitution, then
        ``commonMetadata`` (kustomize-controller's order), then Flux's identity."""
        spec = node.spec
        common = spec.common_metadata or {}
        for r in result.resources:
            obj = AppliedObject(r, spec.id, r.ref)
            if do_subst:
                if substitution.substitution_disabled(r.data):
                    obj.substitution = "disabled"
                else:
                    sres = substitution.apply(r.data, variables, strict=self.model.strict)
                    for path, err in sres.errors:
                        node.substitution_errors.append((obj, path, err))
                    if sres.changed:
                        obj.raw = r.data
                        r.data = sres.data
                    obj.substitution = "applied"
            elif pb is not None:
                obj.substitution = "skipped"
            if common:
                _apply_common_metadata(r.data, common)
            obj.ref = self._flux_ref(r, node.target)
            node.objects.append(obj)

    def _record(self, node: KustomizationNode, result: BuildResult, variables: dict[str, Any]) -> WalkRecord:
        index = {id(o): i for i, o in enumerate(node.objects)}
        return WalkRecord(
            result.memo,
            node.spec,
            node.home,
            node.target,
            self.model.strict,
            tuple(node.mutated_by),
            variables,
            tuple(node.objects),
            tuple((index[id(o)], path, err) for o, path, err in node.substitution_errors),
        )

    def _reusable(self, record: WalkRecord, node: KustomizationNode, result: BuildResult, variables: dict[str, Any]) -> bool:
        """Whether substituting ``result`` for ``node`` gives what ``record`` holds: the same
        remembered build, and equal everything else ``_substitute`` reads."""
        return (
            result.memo is not None
            and result.memo is record.built
            and record.spec == node.spec
            and record.home == node.home
            and record.target == node.target
            and record.strict == self.model.strict
            and record.mutated_by == tuple(node.mutated_by)
            and type(record.variables) is type(variables)
            and record.variables == variables
        )

    def _take(self, node: KustomizationNode, record: WalkRecord) -> None:
        """``node``'s objects from the other revision's walk: the resources (never modified once
        walked) are shared, each object's identity is this walk's (the CRDs known so far)."""
        shared = self.builder.shared
        assert shared is not None
        shared.walks_reused += 1
        for o in record.objects:
            obj = AppliedObject(o.resource, node.id, self._flux_ref(o.resource, node.target), o.raw, o.substitution)
            obj.content_memo = o.content_memo
            node.objects.append(obj)
        node.substitution_errors.extend((node.objects[i], path, err) for i, path, err in record.errors)

    def _resource_sets(self, node: KustomizationNode) -> None:
        """The objects the Flux Operator's ResourceSets among ``node``'s objects generate
        (``fluxgraph.resourceset``), added to ``node``'s objects: the operator applies them in
        the cluster ``node`` applies the ResourceSet to. What cannot be rendered from the
        repository is a not-evaluated problem naming why."""
        rsets = [o for o in node.objects if o.ref.kind == "ResourceSet" and o.ref.group == resourceset.GROUP]
        if not rsets:
            return
        providers = {
            (o.ref.namespace, o.ref.name): o.data
            for o in [*node.objects, *self.index.values()]
            if o.ref.kind == "ResourceSetInputProvider" and o.ref.group == resourceset.GROUP and o.ref.target == node.target
        }
        for rs in rsets:
            what = f"ResourceSet {rs.ref.namespace}/{rs.ref.name}"
            try:
                generated = resourceset.build(rs.data, providers)
            except resourceset.NotEvaluated as e:
                reason = f"{e}: the objects it generates are not evaluated"
            except resourceset.TemplateError as e:
                reason = f"its templates do not render ({e}), as the operator's would not: the objects it generates are not evaluated"
            else:
                o = rs.resource.origin
                origin = Origin(o.file, o.line, o.doc_index, o.via, generated_by=what, home=o.home)
                for data in generated:
                    self._copy_from(node, data)
                    r = Resource(data, origin)
                    node.objects.append(AppliedObject(r, node.spec.id, self._flux_ref(r, node.target)))
                continue
            node.problems.append(
                Problem(
                    "not-evaluated-resourceset",
                    f"{what} (applied by Kustomization {node.id}): {reason}",
                    rs.location,
                    not_evaluated=True,
                    kustomization=node.id,
                    subject=f"resourceset:{rs.ref.key}",
                )
            )

    def _copy_from(self, node: KustomizationNode, data: dict[str, Any]) -> None:
        """A ConfigMap or Secret a ResourceSet generates with ``fluxcd.controlplane.io/copyFrom:
        <namespace>/<name>``: flux-operator writes the source object's data into it when it
        applies it (``internal/controller/resourceset_controller_configs.go`` ``copyResources``),
        so it holds the source's values where the repository applies the source."""
        if data.get("kind") not in ("ConfigMap", "Secret"):
            return
        src = as_dict(as_dict(as_dict(data.get("metadata")).get("annotations"))).get("fluxcd.controlplane.io/copyFrom")
        if not isinstance(src, str) or "/" not in src:
            return
        ns, _, name = src.partition("/")
        source = self.index.get((node.target, str(data["kind"]), ns, name)) or next(
            (o for o in node.objects if (o.ref.target, o.ref.kind, o.ref.namespace, o.ref.name) == (node.target, data["kind"], ns, name)), None
        )
        if source is None:
            return
        for key in ("data", "stringData", "binaryData"):
            if isinstance(source.data.get(key), dict):
                data[key] = dict(source.data[key])

    def _flux_ref(self, r: Resource, target: str) -> ObjRef:
        """Flux's inventory identity: the API server clears the namespace of a cluster-scoped
        object (``fluxgraph.scope``); a namespaced one, or one of an unknown kind, keeps it.
        ``target`` is the cluster it is applied to (``target_of``)."""
        ns = r.namespace
        group = r.group
        if ns and self.model.scopes.is_cluster_scoped(group, r.kind):
            ns = ""
        return ObjRef(r.kind, ns, r.name, group, target)

    def _variables(self, node: KustomizationNode, pb: flux.PostBuild, own: list[Resource]) -> dict[str, Any]:
        """substituteFrom in order (later wins), then inline substitute (wins over all).

        Flux reads the objects live from the cluster; the repository's copy stands in for
        them, including one the Kustomization applies itself (the live copy is then the
        previous revision's: substitute-from-race reports that). An object that is not in the
        repository may define any variable: those are UNKNOWN and reported as not evaluated.
        """
        variables: dict[str, Any] = {}
        origin: dict[str, str] = {}
        open_keys = False  # a made object whose keys are not known
        ns = node.spec.namespace
        # substituteFrom reads the cluster the Kustomization lives in (r.Client), not its kubeConfig
        own_index = {(r.kind, r.namespace or ns, r.name): r for r in own} if node.target == node.home else {}
        for i, sf in enumerate(pb.substitute_from):
            obj = self.index.get((node.home, sf.kind, ns, sf.name))
            source: tuple[str, dict[str, Any]] | None = (obj.ref.kind, obj.data) if obj is not None else None
            where = f"{sf.kind}/{ns}/{sf.name}"
            if source is None and (sf.kind, ns, sf.name) in own_index:
                source = (sf.kind, own_index[(sf.kind, ns, sf.name)].data)
                where += " (applied by this Kustomization)"
            made = self.made.find(sf.kind, ns, sf.name, node.home) if source is None else []
            if made:
                m = made[0]
                values = _made_values(sf.kind, m)
                unknown = values is None or any(v is UNKNOWN for v in values.values())
                if values is None:
                    open_keys = True
                    values = {}
                if unknown:
                    node.problems.append(
                        Problem(
                            "not-evaluated-variables",
                            f"substituteFrom {where} of Kustomization {node.id} is made in the cluster ({m.how}): "
                            "the values it holds are not evaluated",
                            self._spec_position(node, ("spec", "postBuild", "substituteFrom", i)),
                            not_evaluated=True,
                            kustomization=node.id,
                        )
                    )
                for k, v in values.items():
                    variables[k] = v
                    origin[k] = f"{where} ({m.how})"
                continue
            if source is None:
                node.missing_substitute_from.append(sf)
                for k, v in self.extra_vars.items():
                    variables[k] = v
                    origin[k] = "command line"
                if not self.extra_vars:
                    node.problems.append(
                        Problem(
                            "not-evaluated-variables",
                            f"substituteFrom {sf.kind}/{ns}/{sf.name} of Kustomization {node.id} is not in the repository: "
                            "the variables it defines are not evaluated (give them with --substitute or .fluxgraph.yaml)",
                            self._spec_position(node, ("spec", "postBuild", "substituteFrom", i)),
                            not_evaluated=True,
                            kustomization=node.id,
                        )
                    )
                continue
            for k, v in object_values(*source).items():
                variables[k] = v
                origin[k] = where
        for k, v in pb.substitute:
            variables[k] = v
            origin[k] = "substitute"
        for mut in node.mutated_by:
            if not mut.may_change("postBuild"):
                continue
            if not mut.known:
                open_keys = True
                node.problems.append(
                    Problem(
                        "not-evaluated-admission",
                        f"{mut.how} may change the spec ({'any field' if mut.fields is None else ', '.join(sorted(mut.fields))}) "
                        "of the Kustomizations it admits as they are applied: their variables, and every verdict on "
                        "what it may change, are not evaluated",
                        mut.location,
                        not_evaluated=True,
                    )
                )
            # a JSON patch add of /spec/postBuild/substitute/<key>: it replaces a key written there
            for kind, src_ns, name in mut.sources:
                found = self._lookup_values(kind, src_ns, name, node.home)
                if found is None:
                    open_keys = True
                    node.problems.append(
                        Problem(
                            "not-evaluated-variables",
                            f"{mut.how} adds the keys of {kind}/{src_ns}/{name} to the variables of the Kustomizations it "
                            "admits, and nothing in the repository puts that object there: those variables are not evaluated",
                            mut.location,
                            not_evaluated=True,
                        )
                    )
                    continue
                values, how = found
                if values is None:
                    open_keys = True
                    values = {}
                for k, v in values.items():
                    variables[k] = v
                    origin[k] = f"{kind}/{src_ns}/{name} ({mut.how}{', ' + how if how else ''})"
            for k, v in mut.substitute:
                variables[k] = v
                origin[k] = mut.how
        if (node.missing_substitute_from and not self.extra_vars) or open_keys:
            # a source that only exists in the cluster may define any variable
            variables = OpenVariables(variables)
        for k, v in list(variables.items()):
            if isinstance(v, str) and "\n" in v:
                variables[k] = v.replace("\n", "")
        node.variables = variables
        node.variable_origin = origin
        return variables

    def _lookup_values(self, kind: str, namespace: str, name: str, home: str) -> tuple[dict[str, Any] | None, str] | None:
        """The variables the object ``kind`` ``namespace``/``name`` of cluster ``home``
        provides, with what makes it ("" when the repository applies it): None when nothing
        in the repository puts it there; values None when not even its keys are known."""
        key = (home, kind, namespace, name)
        obj = self.index.get(key) or self.prior.get(key)
        if obj is not None:
            return object_values(obj.ref.kind, obj.data), ""
        made = self.made.find(kind, namespace, name, home) or self.prior_made.find(kind, namespace, name, home)
        if made:
            return _made_values(kind, made[0]), made[0].how
        return None

    def _spec_position(self, node: KustomizationNode, path: tuple[Any, ...]) -> Location:
        """Position of a field of a Kustomization's declaration (its document in the repo)."""
        if node.parent is not None and node.declared_by is not None:
            return node.declared_by.resource.position(path)
        return node.declared_at or node.spec.location

    def _visit(self, node: KustomizationNode, obj: AppliedObject, queue: list[KustomizationNode]) -> None:
        r = obj.resource
        group = r.group
        if group == flux.KUSTOMIZE_GROUP and r.kind == "Kustomization":
            parsed = obj.content_memo.get("flux")
            if parsed is None:
                problems: list[Problem] = []
                parsed = obj.content_memo["flux"] = (flux.parse_kustomization(r, problems), problems)
            child, problems = parsed
            node.problems.extend(_with_ks(p, node.id) for p in problems)
            if child is None:
                return
            existing = self.model.kustomizations.get(child.id)
            if existing is not None:
                if existing.parent is None and child.id in self.model.roots:
                    existing.other_declarations.append((node.id, r.origin.location))
                    if existing.declared_by is None:
                        existing.declared_by = obj
                    if existing.declared_at is None or existing.spec.location.file.endswith("<synthesized>"):
                        existing.declared_at = r.origin.location
                else:
                    existing.other_declarations.append((node.id, r.origin.location))
                return
            child_node = KustomizationNode(
                child, node.id, r.origin.location, declared_by=obj, home=node.target, target=target_of(node.target, child.kube_config)
            )
            self.model.kustomizations[child.id] = child_node
            queue.append(child_node)
        elif group == flux.HELM_GROUP and r.kind == "HelmRelease":
            parsed = obj.content_memo.get("flux")
            if parsed is None:
                problems = []
                parsed = obj.content_memo["flux"] = (flux.parse_helmrelease(r, problems), problems)
            hr, problems = parsed
            node.problems.extend(_with_ks(p, node.id) for p in problems)
            if hr is not None and hr.id not in self.model.helm_releases:
                self.model.helm_releases[hr.id] = HelmReleaseNode(hr, node.id, obj, target_of(node.target, hr.kube_config))
        elif group in (flux.SOURCE_GROUP, flux.SOURCE_EXT_GROUP) or r.kind in flux.SOURCE_KINDS:
            self._source(node, obj)

    def _source(self, node: KustomizationNode, obj: AppliedObject) -> None:
        r = obj.resource
        spec = as_dict(r.data.get("spec"))
        if r.kind == "ArtifactGenerator":
            self._artifact_generator(node, obj, spec)
            return
        if r.kind not in flux.SOURCE_KINDS:
            return
        sid = f"{r.kind}/{r.namespace}/{r.name}"
        existing = self.model.sources.get(sid)
        if existing is not None:
            if existing.synthesized:
                existing.location = r.origin.location
                existing.owner = node.id
                existing.synthesized = False
                existing.url = existing.url or (spec.get("url") if isinstance(spec.get("url"), str) else None)
            return
        url = spec.get("url") if isinstance(spec.get("url"), str) else None
        src = SourceNode(r.kind, r.namespace, r.name, url, location=r.origin.location, owner=node.id)
        if r.kind in ("GitRepository", "OCIRepository", "Bucket") and url and _normalize_url(url) == self.root_url:
            root_src = self.model.sources.get(self.root.source_ref.id) if self.root.source_ref else None
            src.repo_base = root_src.repo_base if root_src is not None and root_src.repo_base is not None else ""
        self.model.sources[sid] = src

    def _artifact_generator(self, node: KustomizationNode, obj: AppliedObject, spec: dict[str, Any]) -> None:
        """ArtifactGenerator (source-watcher): ``copy`` from an in-repo source into an
        ExternalArtifact; resolvable where it copies ``@alias/<dir>/**`` to ``@artifact/<dir>/``."""
        r = obj.resource
        aliases: dict[str, str] = {}
        for s in as_list(spec.get("sources")):
            if isinstance(s, dict) and isinstance(s.get("alias"), str) and isinstance(s.get("name"), str):
                kind = s.get("kind") if isinstance(s.get("kind"), str) else "GitRepository"
                ns = s.get("namespace") if isinstance(s.get("namespace"), str) else r.namespace
                aliases[s["alias"]] = f"{kind}/{ns}/{s['name']}"
        for art in as_list(spec.get("artifacts")):
            if not isinstance(art, dict) or not isinstance(art.get("name"), str):
                continue
            mapping: list[tuple[str, str]] = []
            resolvable = True
            for c in as_list(art.get("copy")):
                if not isinstance(c, dict):
                    continue
                frm, to = str(c.get("from", "")), str(c.get("to", ""))
                if not frm.startswith("@") or not to.startswith("@artifact"):
                    resolvable = False
                    continue
                alias, _, rest = frm[1:].partition("/")
                src = self.model.sources.get(aliases.get(alias, ""))
                if src is None or src.repo_base is None:
                    resolvable = False
                    continue
                rest = rest.removesuffix("/**").removesuffix("**").rstrip("/")
                if any(ch in rest for ch in "*?["):
                    resolvable = False
                    continue
                dest = to[len("@artifact") :].strip("/")
                mapping.append((dest, norm_rel(f"{src.repo_base}/{rest}" if src.repo_base else rest)))
            sid = f"ExternalArtifact/{r.namespace}/{art['name']}"
            if sid not in self.model.sources:
                self.model.sources[sid] = SourceNode(
                    "ExternalArtifact",
                    r.namespace,
                    art["name"],
                    None,
                    path_map=tuple(mapping) if resolvable or mapping else (),
                    location=r.origin.location,
                    owner=node.id,
                )

    def _link_sources(self) -> None:
        for ks in self.model.kustomizations.values():
            if ks.status == "missing-source" and ks.spec.source_ref is not None:
                ks.problems.append(
                    Problem(
                        "missing-source",
                        f"Kustomization {ks.id} references {ks.spec.source_ref.id}, which nothing in the cluster declares",
                        ks.declared_at or ks.spec.location,
                        kustomization=ks.id,
                        subject=f"{ks.id}:sourceRef",
                    )
                )


def _with_ks(p: Problem, ks_id: str) -> Problem:
    if p.kustomization == ks_id:
        return p
    return Problem(p.code, p.message, p.location, p.not_evaluated, ks_id, p.related, p.subject)


def object_values(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """The variables a ConfigMap/Secret provides: fluxcd/pkg ``LoadVariables`` reads
    ``ConfigMap.data`` and ``Secret.data`` (the API server folds ``stringData`` into ``data``);
    ``binaryData`` is not read. SOPS-encrypted values are UNKNOWN."""
    out: dict[str, Any] = {}
    encrypted = isinstance(data.get("sops"), dict)
    sections = ("data",) if kind == "ConfigMap" else ("data", "stringData")
    for sect in sections:
        m = data.get(sect)
        if not isinstance(m, dict):
            continue
        for k, v in m.items():
            key = str(k)
            if encrypted or (isinstance(v, str) and v.startswith("ENC[")):
                out[key] = UNKNOWN
            elif kind == "Secret" and sect == "data":
                try:
                    out[key] = base64.b64decode(str(v), validate=False).decode("utf-8", "replace")
                except (binascii.Error, ValueError):
                    out[key] = UNKNOWN
            else:
                out[key] = substitution_value(v)
    return out


def _made_values(kind: str, made: Made) -> dict[str, Any] | None:
    """The variables an object the cluster makes provides: a copy of an object of the
    repository has its values; a maker that says its keys gives them, their values not
    evaluated; None when not even the keys are known."""
    src = made.maker
    if src.ref.group == "" and src.ref.kind == kind:
        return object_values(kind, src.data)
    if made.data is not None:
        return object_values(kind, {"data": made.data})
    if made.keys is None:
        return None
    return {k: UNKNOWN for k in made.keys}


def substitution_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return str(v)


def _needs_overlay(spec: FluxKustomization) -> bool:
    return bool(spec.target_namespace or spec.patches or spec.images or spec.components or spec.name_prefix or spec.name_suffix)


def _flux_overlay(spec: FluxKustomization) -> Any:
    """What kustomize-controller writes into the kustomization file before building
    (fluxcd/pkg ``kustomize/kustomize_generator.go`` ``WriteFile``)."""

    def overlay(k: dict[str, Any]) -> dict[str, Any]:
        k = dict(k)
        if spec.target_namespace:
            k["namespace"] = spec.target_namespace
        if spec.patches:
            patches = list(k.get("patches") or []) if isinstance(k.get("patches"), list) else []
            patches.extend(spec.patches)
            k["patches"] = patches
        if spec.images:
            imgs = list(k.get("images") or []) if isinstance(k.get("images"), list) else []
            for im in spec.images:
                if not isinstance(im, dict):
                    continue
                idx = next((i for i, x in enumerate(imgs) if isinstance(x, dict) and x.get("name") == im.get("name")), None)
                if idx is None:
                    imgs.append(im)
                else:
                    imgs[idx] = im
            k["images"] = imgs
        if spec.components:
            comps = list(k.get("components") or []) if isinstance(k.get("components"), list) else []
            comps.extend(spec.components)
            k["components"] = comps
        if spec.name_prefix:
            k["namePrefix"] = spec.name_prefix
        if spec.name_suffix:
            k["nameSuffix"] = spec.name_suffix
        return k

    return overlay


def _apply_common_metadata(data: dict[str, Any], common: dict[str, Any]) -> None:
    md = data.get("metadata")
    if not isinstance(md, dict):
        return
    for sect in ("labels", "annotations"):
        extra = common.get(sect)
        if isinstance(extra, dict) and extra:
            cur = as_dict(md.get(sect))
            md[sect] = {**cur, **{str(k): substitution_value(v) for k, v in extra.items()}}


__all__ = [
    "AppliedObject",
    "ClusterModel",
    "ClusterWalker",
    "HelmReleaseNode",
    "KustomizationNode",
    "SourceNode",
    "find_kustomization_file",
]
