"""The view of the reconcile graph that diagrams draw: nodes, edges and groups, selected once.

``build_view()`` turns cluster models (and the findings of ``engine.run_checks``) into a
``GraphView``: which Kustomizations, HelmReleases, sources and substitution objects are shown
(``--focus``/``--depth``), how they are grouped (``--group-by``), their status and worst
severity, and the edges between them. The DOT and Mermaid renderers only draw a GraphView, so
the two formats never disagree about what is in the graph.

Every edge points the way things happen: parent -> child (the parent applies it), dependency ->
dependent (``dependsOn``: the dependent waits for it), source -> consumer, ConfigMap/Secret ->
the Kustomization that substitutes from it. Everything is sorted and node IDs are derived from
object identities, so the same repository gives byte-identical diagrams.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from fluxgraph import ownership
from fluxgraph.cluster import ClusterModel, KustomizationNode
from fluxgraph.findings import Finding, Severity
from fluxgraph.model import FluxgraphError
from fluxgraph.repofs import secure_join

GROUP_BY = ("none", "namespace", "folder", "parent")
SOURCES = ("other", "all", "none")
LAYOUTS = ("auto", "full", "ranked")
# Above this many Kustomizations drawn in one cluster, ``auto`` draws the ranked layout: the full
# picture of a bigger cluster is a fan-out of "applies" arrows from its root that no screen shows
# at a readable size (docs/diagrams.md, "Big clusters", has the measurements behind the number).
RANKED_ABOVE = 30
LIST_LINES = 20  # lines of names a compact list shows before "and N more"

# draw order of edge kinds; also the order of the legend
EDGE_KINDS = ("applies", "dependsOn", "sourceRef", "chartSource", "substituteFrom", "valuesFrom")
EDGE_MEANING = {
    "applies": "applies (parent -> child)",
    "dependsOn": "dependsOn (dependency -> dependent)",
    "sourceRef": "sourceRef (source -> Kustomization)",
    "chartSource": "chart source (source -> HelmRelease)",
    "substituteFrom": "substituteFrom (ConfigMap/Secret -> Kustomization)",
    "valuesFrom": "valuesFrom (ConfigMap/Secret -> HelmRelease)",
}
# list: the ranked layout's compact list of the Kustomizations with no finding and no dependsOn
NODE_KINDS = ("kustomization", "helmrelease", "source", "object", "list")
# ok: built; failed: the build failed; external: built from a source outside this repository;
# missing: path, source or dependency not found; suspended: spec.suspend
STATUSES = ("ok", "failed", "external", "missing", "suspended")
STATUS_MEANING = {
    "ok": "built",
    "failed": "build failed",
    "external": "external (not in this repository)",
    "missing": "not found (path, source or object)",
    "suspended": "suspended",
}
SEVERITIES = ("error", "warning", "info")
LABEL_WIDTH = 60
_ID_MAX = 60


@dataclass(frozen=True)
class ViewOptions:
    focus: str | None = None  # a Kustomization id (ns/name) or bare name
    depth: int | None = None  # hops from the focus, in each direction
    group_by: str = "none"  # none | namespace | folder
    helmreleases: bool = False
    substitution: bool = False
    sources: str = "other"  # other | all | none
    legend: bool = True
    layout: str = "auto"  # auto | full | ranked (see RANKED_ABOVE)


@dataclass
class ViewNode:
    id: str  # safe ID: [A-Za-z0-9_], unique in the view
    key: str  # model key: ks:<ns>/<name>, hr:<ns>/<name>, src:<Kind>/<ns>/<name>, cfg:<Kind>/<ns>/<name>
    kind: str  # one of NODE_KINDS
    title: str
    details: tuple[str, ...]
    status: str  # one of STATUSES
    namespace: str = ""
    severity: str | None = None  # worst severity of its findings
    findings: int = 0
    focus: bool = False
    group: str | None = None
    tooltip: str = ""

    @property
    def lines(self) -> list[str]:
        """The label, one entry a line, each at most LABEL_WIDTH characters."""
        out = [self.title, *self.details]
        if self.findings:
            out.append(f"{self.findings} finding{'s' if self.findings != 1 else ''} ({self.severity})")
        return [shorten(x) for x in out]

    @property
    def style(self) -> str:
        """Style class: severity (or ``none``), status, and ``focus`` when focused."""
        return f"{self.severity or 'none'}_{self.status}{'_focus' if self.focus else ''}"


@dataclass(frozen=True)
class ViewEdge:
    src: str  # node IDs
    dst: str
    kind: str  # one of EDGE_KINDS


@dataclass
class ViewGroup:
    id: str
    label: str
    nodes: list[ViewNode]


@dataclass
class ClusterView:
    id: str
    name: str
    label: tuple[str, ...]
    nodes: list[ViewNode]  # drawn at cluster level
    groups: list[ViewGroup]
    edges: list[ViewEdge]
    ranked: bool = False  # drawn in the ranked layout (dependsOn in ranks, applies as boxes)

    def all_nodes(self) -> list[ViewNode]:
        return [*self.nodes, *(n for g in self.groups for n in g.nodes)]


@dataclass
class GraphView:
    clusters: list[ClusterView]
    options: ViewOptions
    models: list[ClusterModel] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what a renderer left out, for stderr
    findings: list[Finding] = field(default_factory=list)  # those given to build_view (the HTML report lists them)

    def nodes(self) -> list[ViewNode]:
        return [n for c in self.clusters for n in c.all_nodes()]

    def edges(self) -> list[ViewEdge]:
        return [e for c in self.clusters for e in c.edges]

    def used_styles(self) -> list[str]:
        return sorted({n.style for n in self.nodes()}, key=_style_order)

    def used_edge_kinds(self) -> list[str]:
        kinds = {e.kind for e in self.edges()}
        return [k for k in EDGE_KINDS if k in kinds]

    def used_node_kinds(self) -> list[str]:
        kinds = {n.kind for n in self.nodes()}
        return [k for k in NODE_KINDS if k in kinds]

    def legend_items(self) -> tuple[list[str], list[str], list[str], bool]:
        """(severities, statuses, edge kinds, focus) that appear in the view, in legend order."""
        nodes = self.nodes()
        sevs = [s for s in SEVERITIES if any(n.severity == s for n in nodes)]
        stats = [s for s in STATUSES if s != "ok" and any(n.status == s for n in nodes)]
        return sevs, stats, self.used_edge_kinds(), any(n.focus for n in nodes)


def _style_order(style: str) -> tuple[int, int, str]:
    sev, _, rest = style.partition("_")
    status = rest.split("_")[0]
    sev_rank = SEVERITIES.index(sev) if sev in SEVERITIES else len(SEVERITIES)
    return (sev_rank, STATUSES.index(status) if status in STATUSES else len(STATUSES), style)


def pack_names(names: Sequence[str], width: int = LABEL_WIDTH, lines: int = LIST_LINES) -> list[str]:
    """``names`` as lines of at most ``width`` characters, comma-separated, at most ``lines``
    of them and then ``and N more``."""
    out: list[str] = []
    line = ""
    for i, name in enumerate(names):
        name = shorten(name, width)
        if line and len(line) + 2 + len(name) > width:
            if len(out) == lines - 1:
                out.append(f"and {len(names) - i} more")
                return out
            out.append(line + ",")
            line = name
        else:
            line = f"{line}, {name}" if line else name
    if line:
        out.append(line)
    return out


def shorten(text: str, width: int = LABEL_WIDTH) -> str:
    """One label line: control characters become spaces; long text keeps its start and end."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


_UNSAFE = re.compile(r"[^A-Za-z0-9]+")


class IdAllocator:
    """Safe, deterministic, collision-free IDs (``[A-Za-z0-9_]``) for arbitrary keys.

    The readable part is the key with every run of other characters turned into ``_``; a short
    hash of the full key is appended where that part is cut or already taken, so two keys never
    share an ID and a key's ID does not depend on which other keys exist unless they clash.
    """

    def __init__(self) -> None:
        self.by_key: dict[str, str] = {}
        self.taken: set[str] = set()

    def get(self, prefix: str, key: str) -> str:
        full = f"{prefix}\x00{key}"
        if full in self.by_key:
            return self.by_key[full]
        body = _UNSAFE.sub("_", key).strip("_")
        cand = f"{prefix}_{body}" if body else prefix
        if len(cand) > _ID_MAX or cand in self.taken:
            digest = hashlib.sha256(full.encode("utf-8", "surrogatepass")).hexdigest()
            base = cand[:_ID_MAX].rstrip("_")
            n = 8
            cand = f"{base}_{digest[:n]}"
            while cand in self.taken and n < len(digest):
                n += 4
                cand = f"{base}_{digest[:n]}"
            i = 2
            while cand in self.taken:
                cand = f"{base}_{digest[:n]}_{i}"
                i += 1
        self.taken.add(cand)
        self.by_key[full] = cand
        return cand


# -- selection ----------------------------------------------------------------------------


def match_focus(models: Sequence[ClusterModel], focus: str) -> dict[str, list[str]]:
    """Kustomization ids per cluster name matching ``focus`` (``ns/name`` exactly, or a bare
    name in any namespace). Raises FluxgraphError when nothing matches."""
    focus = focus.strip()
    out: dict[str, list[str]] = {}
    for m in models:
        if "/" in focus:
            ids = [k for k in m.kustomizations if k == focus]
        else:
            ids = [k for k, ks in m.kustomizations.items() if ks.spec.name == focus]
        if ids:
            out[m.name] = sorted(ids)
    if not out:
        known = sorted(
            {k for m in models for k in m.kustomizations}
            | {ks.spec.name for m in models for ks in m.kustomizations.values()}
        )
        close = difflib.get_close_matches(focus, known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise FluxgraphError(f"--focus {focus!r}: no Kustomization with that id or name{hint}")
    return out


def _select(model: ClusterModel, focus: list[str], depth: int | None, substitution: bool) -> set[str]:
    """Focus nodes, their ancestors (parent chain, transitive dependsOn and, with substitution,
    the producers of their substituteFrom objects) and their dependents (what they apply and
    what depends on them, transitively), at most ``depth`` hops away in each direction."""
    up: dict[str, set[str]] = defaultdict(set)
    down: dict[str, set[str]] = defaultdict(set)
    ks_map = model.kustomizations

    def link(dependency: str, dependent: str) -> None:
        if dependency in ks_map and dependent in ks_map and dependency != dependent:
            up[dependent].add(dependency)
            down[dependency].add(dependent)

    # parent links, dependsOn and substituteFrom, read from the model's graph (``ClusterModel.graph``)
    for u, v, key in model.graph.edges(keys=True):
        if u.startswith("ks:") and v.startswith("ks:"):
            if key == "applies":
                link(u[3:], v[3:])
            elif key == "dependsOn":
                link(v[3:], u[3:])
        elif substitution and key == "substituteFrom" and u.startswith("ks:"):
            ref = model.graph.nodes[v]["ref"]
            for p in ownership.producer_owners(model, ref.kind, ref.namespace, ref.name, ref.target):
                link(p, u[3:])
    selected = set(focus)
    for adj in (up, down):
        dist = {f: 0 for f in focus}
        queue = deque(sorted(focus))
        while queue:
            cur = queue.popleft()
            if depth is not None and dist[cur] >= depth:
                continue
            for nxt in sorted(adj.get(cur, ())):
                if nxt not in dist:
                    dist[nxt] = dist[cur] + 1
                    queue.append(nxt)
        selected |= set(dist)
    return selected


# -- grouping -----------------------------------------------------------------------------


def _ks_dir(ks: KustomizationNode) -> list[str]:
    p = ks.build_dir if ks.build_dir is not None else secure_join(ks.spec.path or ".")[0]
    return [x for x in p.split("/") if x]


def folder_groups(model: ClusterModel) -> dict[str, str]:
    """Kustomization id -> folder: its path cut at the depth that gives the most folders holding
    two or more of the cluster's Kustomizations (the shallowest such depth)."""
    parts = {k: _ks_dir(ks) for k, ks in model.kustomizations.items()}
    if not parts:
        return {}
    best_d, best = 1, -1
    for d in range(1, max((len(p) for p in parts.values()), default=1) + 1):
        counts = Counter(tuple(p[:d]) for p in parts.values())
        score = sum(1 for c in counts.values() if c >= 2)
        if score > best:
            best_d, best = d, score
    return {k: "/".join(p[:best_d]) or "." for k, p in parts.items()}


# -- building the view --------------------------------------------------------------------


def _ks_status(ks: KustomizationNode) -> tuple[str, str | None]:
    """(style status, label note)"""
    st = ks.status
    if st == "failed":
        return "failed", "build failed"
    if st == "external":
        return "external", "external source, not analysed"
    if st == "missing-path":
        return "missing", "path not found"
    if st == "missing-source":
        return "missing", "source not found"
    if ks.spec.suspend:
        return "suspended", "suspended"
    if st != "built":
        return "ok", st
    return "ok", "partly evaluated" if ks.incomplete else None


def _ks_node(ks: KustomizationNode) -> tuple[str, tuple[str, ...]]:
    s = ks.spec
    details = [s.path or ".", " ".join(s.flags(suspend=False))]  # the node's style shows suspension
    if ks.target:
        details.append(f"applies to kubeConfig {ks.target}")
    _, note = _ks_status(ks)
    if note:
        details.append(note)
    return ks.id, tuple(details)


class _Builder:
    def __init__(self, model: ClusterModel, cidx: str, ids: IdAllocator, options: ViewOptions):
        self.model = model
        self.cidx = cidx
        self.ids = ids
        self.options = options
        self.nodes: dict[str, ViewNode] = {}
        self.edges: set[ViewEdge] = set()

    def nid(self, prefix: str, key: str) -> str:
        return self.ids.get(f"{self.cidx}{prefix}", key)

    def add(self, node: ViewNode) -> ViewNode:
        return self.nodes.setdefault(node.key, node)

    def edge(self, src: ViewNode, dst: ViewNode, kind: str) -> None:
        if src.id != dst.id:
            self.edges.add(ViewEdge(src.id, dst.id, kind))

    def ks(self, ks_id: str) -> ViewNode:
        key = f"ks:{ks_id}"
        if key in self.nodes:
            return self.nodes[key]
        ks = self.model.kustomizations.get(ks_id)
        ns = ks_id.split("/", 1)[0]
        if ks is None:
            return self.add(
                ViewNode(
                    self.nid("ks", ks_id),
                    key,
                    "kustomization",
                    ks_id,
                    ("not in this cluster",),
                    "missing",
                    ns,
                    tooltip=f"Kustomization {ks_id}",
                )
            )
        title, details = _ks_node(ks)
        status, _ = _ks_status(ks)
        loc = ks.declared_at or ks.spec.location
        return self.add(
            ViewNode(
                self.nid("ks", ks_id),
                key,
                "kustomization",
                title,
                details,
                status,
                ks.spec.namespace,
                tooltip=f"Kustomization {ks_id} ({loc.file_line})",
            )
        )

    def hr(self, hr_id: str) -> ViewNode:
        key = f"hr:{hr_id}"
        if key in self.nodes:
            return self.nodes[key]
        hr = self.model.helm_releases.get(hr_id)
        ns = hr_id.split("/", 1)[0]
        if hr is None:
            return self.add(
                ViewNode(
                    self.nid("hr", hr_id),
                    key,
                    "helmrelease",
                    hr_id,
                    ("HelmRelease not in this cluster",),
                    "missing",
                    ns,
                    tooltip=f"HelmRelease {hr_id}",
                )
            )
        chart = hr.spec.chart_name or ""
        if chart and hr.spec.chart_version:
            chart += f"@{hr.spec.chart_version}"
        details = ("HelmRelease" + (f" {chart}" if chart else ""),)
        status = "suspended" if hr.spec.suspend else "ok"
        loc = hr.obj.location
        return self.add(
            ViewNode(
                self.nid("hr", hr_id),
                key,
                "helmrelease",
                hr_id,
                details,
                status,
                ns,
                tooltip=f"HelmRelease {hr_id} ({loc.file_line})",
            )
        )

    def source(self, src_id: str) -> ViewNode:
        key = f"src:{src_id}"
        if key in self.nodes:
            return self.nodes[key]
        kind, _, rest = src_id.partition("/")
        ns = rest.split("/", 1)[0]
        src = self.model.sources.get(src_id)
        if src is None:
            status, note = "missing", "not declared in this cluster"
        elif src.in_repo:
            status, note = "ok", "this repository"
        else:
            status, note = "external", src.url or "not this repository"
        return self.add(
            ViewNode(
                self.nid("src", src_id),
                key,
                "source",
                f"{kind} {rest}",
                (note,),
                status,
                ns,
                tooltip=f"{kind} {rest}",
            )
        )

    def obj(self, kind: str, ns: str, name: str, optional: bool, home: str) -> ViewNode:
        """A substituteFrom or valuesFrom object, read in the cluster ``home`` the Flux object
        lives in (``fluxgraph.ownership``): found when a Kustomization applies it or a
        controller makes it from an object the repository applies."""
        ref = f"{kind}/{ns}/{name}"
        key = f"cfg:{ref}" + (f"@{home}" if home else "")
        if key in self.nodes:
            return self.nodes[key]
        made = ownership.producers(self.model, kind, ns, name, home)
        if not made:
            status, note = "missing", "optional, not in repository" if optional else "not in repository"
        elif all(p.how for p in made):
            status, note = "ok", "made in the cluster"
        else:
            status, note = "ok", ""
        return self.add(
            ViewNode(
                self.nid("cfg", key[4:]),
                key,
                "object",
                f"{kind} {ns}/{name}",
                (note,) if note else (),
                status,
                ns,
                tooltip=f"{kind} {ns}/{name}",
            )
        )


def _cluster_view(
    model: ClusterModel,
    cidx: str,
    ids: IdAllocator,
    options: ViewOptions,
    findings: list[Finding],
    focus: list[str] | None,
) -> ClusterView:
    b = _Builder(model, cidx, ids, options)
    selected = (
        _select(model, focus, options.depth, options.substitution) if focus else set(model.kustomizations)
    )
    ks_ids = sorted(k for k in selected if k in model.kustomizations)
    root = model.kustomizations.get(model.root_id)
    root_source = root.spec.source_ref.id if root is not None and root.spec.source_ref is not None else None

    for k in ks_ids:
        b.ks(k)
    g = model.graph  # every relation drawn, as the checks read it (``ClusterModel.graph``)

    def out(node: str, kind: str) -> list[tuple[str, dict[str, object]]]:
        return [(v, data) for _, v, key, data in g.out_edges(node, keys=True, data=True) if key == kind]

    def cfg(node: str, data: dict[str, object]) -> ViewNode:
        ref = g.nodes[node]["ref"]
        return b.obj(ref.kind, ref.namespace, ref.name, bool(data.get("optional")), ref.target)

    def producers_of(node: ViewNode, ref_node: str) -> None:
        ref = g.nodes[ref_node]["ref"]
        for p in ownership.producer_owners(model, ref.kind, ref.namespace, ref.name, ref.target):
            if p in selected:
                b.edge(b.ks(p), node, "applies")

    for k in ks_ids:
        ks = model.kustomizations[k]
        node = b.ks(k)
        if ks.parent and ks.parent in selected:
            b.edge(b.ks(ks.parent), node, "applies")
        for dn, _ in out(f"ks:{k}", "dependsOn"):
            d = dn[3:]
            if d in selected or d not in model.kustomizations:
                b.edge(b.ks(d), node, "dependsOn")
        if options.sources != "none":
            for sn, _ in out(f"ks:{k}", "sourceRef"):
                if options.sources == "all" or sn[4:] != root_source or k == model.root_id:
                    b.edge(b.source(sn[4:]), node, "sourceRef")
        if options.substitution:
            for on, data in out(f"ks:{k}", "substituteFrom"):
                o = cfg(on, data)
                b.edge(o, node, "substituteFrom")
                producers_of(o, on)
    if options.helmreleases:
        hr_ids = sorted(h for h, hr in model.helm_releases.items() if hr.owner in selected)
        for h in hr_ids:
            hr = model.helm_releases[h]
            node = b.hr(h)
            b.edge(b.ks(hr.owner), node, "applies")
        for h in hr_ids:
            node = b.hr(h)
            for dn, _ in out(f"hr:{h}", "dependsOn"):
                d = dn[3:]
                if d in hr_ids or d not in model.helm_releases:
                    b.edge(b.hr(d), node, "dependsOn")
            if options.sources != "none":
                for sn, _ in out(f"hr:{h}", "chartSource"):
                    if options.sources == "all" or sn[4:] != root_source:
                        b.edge(b.source(sn[4:]), node, "chartSource")
            if options.substitution:
                for on, data in out(f"hr:{h}", "valuesFrom"):
                    o = cfg(on, data)
                    b.edge(o, node, "valuesFrom")
                    producers_of(o, on)

    # findings: by HelmRelease object when HelmReleases are drawn, else by Kustomization
    per_node: dict[str, list[Severity]] = defaultdict(list)
    loose: list[Finding] = []
    for f in findings:
        key = None
        obj = f.obj
        if (
            obj is not None
            and obj.kind == "HelmRelease"
            and options.helmreleases
            and f"{obj.namespace}/{obj.name}" in model.helm_releases
        ):
            key = f"hr:{obj.namespace}/{obj.name}"
        elif f.kustomization and f.kustomization in model.kustomizations:
            key = f"ks:{f.kustomization}"
        elif (
            obj is not None
            and obj.kind == "Kustomization"
            and f"{obj.namespace}/{obj.name}" in model.kustomizations
        ):
            key = f"ks:{obj.namespace}/{obj.name}"
        elif (
            obj is not None
            and obj.kind == "HelmRelease"
            and f"{obj.namespace}/{obj.name}" in model.helm_releases
        ):
            key = f"ks:{model.helm_releases[f'{obj.namespace}/{obj.name}'].owner}"
        if key is None:
            loose.append(f)
        else:
            per_node[key].append(f.severity)
    for key, sevs in per_node.items():
        vn = b.nodes.get(key)
        if vn is not None:
            vn.findings = len(sevs)
            vn.severity = max(sevs, key=lambda s: s.rank).value
    for k in focus or ():
        b.nodes[f"ks:{k}"].focus = True

    # the ranked layout: "applies" between Kustomizations becomes the boxes (one per parent
    # unless --group-by says otherwise), dependsOn alone ranks the nodes, and the Kustomizations
    # with nothing to show (no finding, no edge left, built) go into one compact list per box
    ranked = options.layout == "ranked" or (options.layout == "auto" and len(ks_ids) > RANKED_ABOVE)
    group_by = options.group_by if not ranked or options.group_by != "none" else "parent"
    if ranked:
        kind_of = {n.id: n.kind for n in b.nodes.values()}
        b.edges = {
            e for e in b.edges
            if not (e.kind == "applies" and kind_of.get(e.src) == kind_of.get(e.dst) == "kustomization")
        }
    folders = folder_groups(model) if group_by == "folder" else {}
    hr_owner = {f"hr:{h}": f"ks:{hr.owner}" for h, hr in model.helm_releases.items()}

    def group_of(n: ViewNode) -> str | None:
        if group_by == "namespace":
            return n.namespace or None
        if group_by == "folder":
            key = hr_owner.get(n.key, n.key)
            return folders.get(key[3:]) if key.startswith("ks:") else None
        if group_by == "parent":
            key = hr_owner.get(n.key, n.key)
            if not key.startswith("ks:") or key[3:] not in model.kustomizations:
                return None
            if n.kind == "helmrelease":
                return key[3:]
            return model.kustomizations[key[3:]].parent
        return None

    for n in b.nodes.values():
        n.group = group_of(n)
    if ranked:
        linked = {e.src for e in b.edges} | {e.dst for e in b.edges}
        quiet = [
            n for n in b.nodes.values()
            if n.kind == "kustomization" and n.id not in linked and not n.findings and not n.focus and n.status == "ok"
        ]
        by_box: dict[str | None, list[ViewNode]] = defaultdict(list)
        for n in quiet:
            by_box[n.group].append(n)
        for box, members in by_box.items():
            if len(members) < 2:
                continue  # one node is its own list
            for n in members:
                del b.nodes[n.key]
            names = sorted(n.key[3:] for n in members)
            packed = pack_names(names)
            key = f"list:{box or ''}"
            b.nodes[key] = ViewNode(
                id=b.nid("list", box or "-"),
                key=key,
                kind="list",
                title=f"{len(names)} Kustomizations without dependsOn or findings",
                details=tuple(packed),
                status="ok",
                group=box,
                tooltip="\n".join(names),
            )
    order = {k: i for i, k in enumerate(NODE_KINDS)}
    nodes = sorted(b.nodes.values(), key=lambda n: (order[n.kind], n.key))
    groups: list[ViewGroup] = []
    by_group: dict[str, list[ViewNode]] = defaultdict(list)
    for n in nodes:
        if n.group is not None:
            by_group[n.group].append(n)
    for g in sorted(by_group):
        what = f"applied by {g}" if group_by == "parent" else f"{group_by}: {g}"
        groups.append(ViewGroup(ids.get(f"{cidx}grp", g), what, by_group[g]))
    edge_order = {k: i for i, k in enumerate(EDGE_KINDS)}
    by_id = {n.id: n for n in nodes}
    edges = sorted(b.edges, key=lambda e: (edge_order[e.kind], by_id[e.src].key, by_id[e.dst].key))

    n_ks = len(model.kustomizations)
    drawn = len(ks_ids)
    stats = f"{n_ks} Kustomizations" if drawn == n_ks else f"{drawn} of {n_ks} Kustomizations"
    if options.helmreleases:
        stats += (
            f", {sum(1 for n in nodes if n.kind == 'helmrelease' and n.status != 'missing')} HelmReleases"
        )
    total = sum(len(v) for v in per_node.values()) + len(loose)
    shown = sum(n.findings for n in nodes)
    stats += f", {total} finding{'s' if total != 1 else ''}"
    if shown != total and focus:
        stats += f" ({shown} on the nodes shown)"
    label = [f"cluster {model.name}", stats]
    if ranked:
        label.append("ranked: dependsOn left to right, a box per " + {"parent": "parent Kustomization"}.get(group_by, group_by))
    if focus:
        label.append(
            f"focus: {', '.join(focus)}" + (f" (depth {options.depth})" if options.depth is not None else "")
        )
    if loose:
        label.append(f"{len(loose)} finding{'s' if len(loose) != 1 else ''} outside any Kustomization")
    return ClusterView(
        id=ids.get("cl", f"{cidx}{model.name}"),
        name=model.name,
        label=tuple(shorten(x, 100) for x in label),
        nodes=[n for n in nodes if n.group is None],
        groups=groups,
        edges=edges,
        ranked=ranked,
    )


def build_view(
    models: Sequence[ClusterModel], findings: Iterable[Finding] = (), options: ViewOptions | None = None
) -> GraphView:
    """Select what a diagram of ``models`` shows. ``findings`` (from ``engine.run_checks``)
    colour the nodes they belong to. Raises FluxgraphError for an unknown ``focus`` or bad option."""
    options = options or ViewOptions()
    if options.group_by not in GROUP_BY:
        raise FluxgraphError(f"--group-by {options.group_by!r}: expected one of {', '.join(GROUP_BY)}")
    if options.layout not in LAYOUTS:
        raise FluxgraphError(f"--layout {options.layout!r}: expected one of {', '.join(LAYOUTS)}")
    if options.sources not in SOURCES:
        raise FluxgraphError(f"--sources {options.sources!r}: expected one of {', '.join(SOURCES)}")
    if options.depth is not None and options.depth < 0:
        raise FluxgraphError("--depth must be 0 or more")
    if options.depth is not None and not options.focus:
        raise FluxgraphError("--depth needs --focus")
    ordered = sorted(models, key=lambda m: (m.root_dir, m.name))
    focus = match_focus(ordered, options.focus) if options.focus else None
    by_cluster: dict[str, list[Finding]] = defaultdict(list)
    findings_list = list(findings)
    for f in sorted(findings_list):
        by_cluster[f.cluster].append(f)
    shown = [m for m in ordered if focus is None or m.name in focus]
    ids = IdAllocator()
    clusters = []
    for i, m in enumerate(shown):
        cidx = f"c{i}" if len(shown) > 1 else ""
        fs = by_cluster.get(m.name, []) + (by_cluster.get("", []) if len(shown) == 1 else [])
        clusters.append(_cluster_view(m, cidx, ids, options, fs, focus.get(m.name) if focus else None))
    return GraphView(clusters=clusters, options=options, models=list(ordered), findings=sorted(findings_list))
