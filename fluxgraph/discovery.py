"""Finding the clusters of a repository and their root Kustomizations.

A cluster is identified by the directory its root Kustomization builds. Recognised layouts:

* ``flux bootstrap``: ``<dir>/flux-system/gotk-sync.yaml`` holds the ``GitRepository`` and the
  root ``Kustomization flux-system`` whose ``spec.path`` is the cluster dir. When the file is a
  placeholder (comment-only, as in fluxcd/flux2-kustomize-helm-example) the cluster dir is the
  parent of ``flux-system/`` and the root is the one bootstrap would create.
* flux-operator: a ``FluxInstance`` (or the ``instance:`` values of the flux-instance chart)
  with ``spec.sync.path``; the root is the ``flux-system`` Kustomization the operator creates.
  For an OCI sync whose path is relative to a pushed sub-directory, the artifact root is the
  ancestor of the FluxInstance's file under which the path exists.
* A root Kustomization that applies its own directory (``path`` = the dir of its file, or its
  parent for a ``flux-system/`` folder).
* ``clusters/<name>`` directories that hold only Flux objects (no flux-system folder).

The last two are layout heuristics (``ClusterRoot.weak``). A weak root is a real root only when
it is nobody's child (``somebodys_child``): no other cluster applies its Kustomization, builds
its directory, or reads a kustomization file in its file's directory or above. A ``ks.yaml``
commented out of its parent's ``kustomization.yaml`` is such a child: Flux never applies it, so
it is reported as not applied (``unapplied``), never analysed as a cluster of its own.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fluxgraph.filecache import FileCache
from fluxgraph.kustomize.build import KUSTOMIZATION_FILES, Builder
from fluxgraph.model import Location, Problem, as_dict, as_str
from fluxgraph.repofs import norm_rel, secure_join

if TYPE_CHECKING:
    from fluxgraph.cluster import ClusterModel, KustomizationNode

FLUX_OBJECT_GROUPS = (
    "kustomize.toolkit.fluxcd.io",
    "source.toolkit.fluxcd.io",
    "helm.toolkit.fluxcd.io",
    "notification.toolkit.fluxcd.io",
    "image.toolkit.fluxcd.io",
    "source.extensions.fluxcd.io",
)


@dataclass(frozen=True)
class ClusterRoot:
    """Where a cluster starts. ``root_doc`` is the declared root Kustomization, if any."""

    dir: str  # repo-relative cluster dir (the root Kustomization's resolved path)
    source_kind: str = "GitRepository"
    source_name: str = "flux-system"
    namespace: str = "flux-system"
    name: str = "flux-system"
    url: str | None = None
    repo_base: str = ""  # repo-relative root of the source artifact
    location: Location | None = None
    root_doc: dict[str, Any] | None = None
    how: str = ""
    weak: bool = False  # found by a layout heuristic: dropped when another cluster builds its dir


def _root_of_ks(
    ks: dict[str, Any], path: str, location: Location, how: str, *, url: str | None = None, weak: bool = False
) -> ClusterRoot:
    """The root of a cluster that the Flux Kustomization ``ks`` (building ``path``) starts:
    its identity and sourceRef, flux bootstrap's defaults where it leaves them out."""
    sref = as_dict(as_dict(ks.get("spec")).get("sourceRef"))
    md = as_dict(ks.get("metadata"))
    return ClusterRoot(
        dir=path,
        source_kind=as_str(sref.get("kind")) or "GitRepository",
        source_name=as_str(sref.get("name")) or "flux-system",
        namespace=as_str(md.get("namespace")) or "flux-system",
        name=as_str(md.get("name")) or "flux-system",
        url=url,
        location=location,
        root_doc=ks,
        how=how,
        weak=weak,
    )


def _yaml_files(cache: FileCache) -> list[str]:
    return [f for f in cache.fs.walk_files("") if f.endswith((".yaml", ".yml")) and cache.visible(f, False)]


def _contains(cache: FileCache, f: str, needle: bytes) -> bool:
    """Cheap pre-filter before parsing a file for discovery."""
    try:
        return needle in cache.read_bytes(f)
    except Exception:  # noqa: BLE001 - unreadable files are reported by the build that needs them
        return False


def _docs(cache: FileCache, f: str) -> list[tuple[Any, int]]:
    docs, _ = cache.documents(f)
    return [(d.data, d.line) for d in docs]


def _is_flux_ks(d: Any) -> bool:
    return (
        isinstance(d, dict)
        and d.get("kind") == "Kustomization"
        and isinstance(d.get("apiVersion"), str)
        and d["apiVersion"].startswith("kustomize.toolkit.fluxcd.io/")
    )


def find_syncs(node: Any, depth: int = 0) -> list[dict[str, Any]]:
    """Mappings that look like a FluxInstance ``sync`` block (a ``sync`` mapping with a ``kind``),
    anywhere in a document: a FluxInstance spec, or the ``instance:`` values of its chart."""
    out: list[dict[str, Any]] = []
    if depth > 12:
        return out
    if isinstance(node, dict):
        s = node.get("sync")
        if isinstance(s, dict) and isinstance(s.get("kind"), str):
            out.append(s)
        for v in node.values():
            if isinstance(v, (dict, list)):
                out.extend(find_syncs(v, depth + 1))
    elif isinstance(node, list):
        for v in node:
            out.extend(find_syncs(v, depth + 1))
    return out


_SYNC_KINDS = ("GitRepository", "OCIRepository", "Bucket")


def _only_cluster_objects(cache: FileCache, yamls: list[str]) -> bool:
    """Whether the files hold only Flux objects and the ConfigMaps/Secrets they substitute
    from (kustomization files aside), among them a Flux Kustomization: what ``flux bootstrap
    --path=clusters/<name>`` syncs before its ``flux-system/`` is committed. Stops at the
    first other object: an application directory is not parsed whole for this."""
    has_ks = False
    for f in yamls:
        for x, _ in _docs(cache, f):
            api = x.get("apiVersion") if isinstance(x, dict) else None
            if isinstance(api, str) and api.startswith("kustomize.config.k8s.io"):
                continue
            if api == "v1" and isinstance(x, dict) and x.get("kind") in ("ConfigMap", "Secret"):
                continue
            if not (isinstance(api, str) and api.startswith(FLUX_OBJECT_GROUPS)):
                return False
            has_ks = has_ks or _is_flux_ks(x)
    return has_ks


def discover(cache: FileCache) -> list[ClusterRoot]:
    roots: dict[str, ClusterRoot] = {}

    def add(root: ClusterRoot) -> None:
        if root.dir not in roots and cache.is_dir(root.dir):
            roots[root.dir] = root

    files = _yaml_files(cache)
    # 1. flux bootstrap
    for f in files:
        if posixpath.basename(f) != "gotk-sync.yaml" or posixpath.basename(posixpath.dirname(f)) != "flux-system":
            continue
        parent = posixpath.dirname(posixpath.dirname(f))
        docs = _docs(cache, f)
        ks = next((d for d, _ in docs if _is_flux_ks(d)), None)
        repo = next(
            (d for d, _ in docs if isinstance(d, dict) and d.get("kind") in ("GitRepository", "OCIRepository", "Bucket")), None
        )
        # the documents are untrusted: every field may have any type (invalid ones are
        # reported by flux.parse_kustomization when the root is parsed)
        ks_spec = as_dict(ks.get("spec")) if ks is not None else {}
        if ks is not None and isinstance(ks_spec.get("path"), str):
            path, _ = secure_join(ks_spec["path"])
            line = next(ln for d, ln in docs if d is ks)
            url = as_dict(repo.get("spec")).get("url") if isinstance(repo, dict) else None
            add(
                _root_of_ks(
                    ks, path, Location(f, line), "flux bootstrap (gotk-sync.yaml)", url=url if isinstance(url, str) else None
                )
            )
        else:
            add(ClusterRoot(dir=parent, location=Location(f), how="flux bootstrap (placeholder gotk-sync.yaml)"))
    # 2. flux-operator FluxInstance sync
    for f in files:
        if not _contains(cache, f, b"sync:") or not any(_contains(cache, f, k.encode()) for k in _SYNC_KINDS):
            continue
        for data, line in _docs(cache, f):
            for s in find_syncs(data):
                if not isinstance(s.get("path"), str) or s.get("kind") not in _SYNC_KINDS:
                    continue
                rel, _ = secure_join(s["path"])
                base = ""
                if not cache.is_dir(rel):
                    anc = posixpath.dirname(f)
                    while anc:
                        cand = norm_rel(f"{anc}/{rel}")
                        if cache.is_dir(cand):
                            base = anc
                            break
                        anc = posixpath.dirname(anc)
                    if not base:
                        continue
                full = norm_rel(f"{base}/{rel}" if base else rel)
                add(
                    ClusterRoot(
                        dir=full,
                        source_kind=str(s.get("kind")),
                        source_name=as_str(s.get("name")) or "flux-system",
                        url=s.get("url") if isinstance(s.get("url"), str) else None,
                        repo_base=base,
                        location=Location(f, line),
                        how="flux-operator FluxInstance sync.path",
                    )
                )
    # 3. a Kustomization that applies its own directory (or its parent, flux-system style)
    for f in files:
        if not _contains(cache, f, b"kustomize.toolkit.fluxcd.io"):
            continue
        for data, line in _docs(cache, f):
            if not _is_flux_ks(data):
                continue
            spec = data.get("spec") or {}
            if not isinstance(spec, dict) or not isinstance(spec.get("path"), str):
                continue
            path, _ = secure_join(spec["path"])
            d = posixpath.dirname(f)
            if path and (path == d or path == posixpath.dirname(d)) and path not in roots:
                add(_root_of_ks(data, path, Location(f, line), SELF_APPLYING, weak=True))
    # 4. clusters/<name> holding only Flux objects
    for top in ("clusters", "kubernetes/clusters", "cluster"):
        if not cache.is_dir(top):
            continue
        for name in cache.fs.listdir(top):
            d = f"{top}/{name}"
            if d in roots or not cache.is_dir(d) or any(r.startswith(d + "/") or d.startswith(r + "/") for r in roots):
                continue
            yamls = [f for f in files if f.startswith(d + "/")]
            if not yamls:
                continue
            if _only_cluster_objects(cache, yamls):
                add(ClusterRoot(dir=d, location=Location(yamls[0]), how=FLUX_DIRECTORY, weak=True))
    return sorted(roots.values(), key=lambda r: r.dir)


def _ancestors(d: str) -> list[str]:
    """``d`` and every directory above it, up to the repository root (``""``)."""
    out = [d]
    while d:
        d = posixpath.dirname(d)
        out.append(d)
    return out


def _read_kustomization_dirs(models: list[ClusterModel]) -> dict[str, str]:
    """Directory -> the kustomization file in it that some cluster's build read."""
    out: dict[str, str] = {}
    for m in models:
        for ks in m.kustomizations.values():
            for f in ks.files:
                if posixpath.basename(f) in KUSTOMIZATION_FILES:
                    out.setdefault(posixpath.dirname(f), f)
    return out


def somebodys_child(root: ClusterRoot, model: ClusterModel, others: list[ClusterModel], cache: FileCache) -> str | None:
    """Why the weak root ``root`` (built as ``model``) belongs to one of the ``others`` clusters,
    or None when it is nobody's child. Flux applies a Kustomization only from its parent's build:
    one that another cluster applies, whose directory another cluster builds or reads as a
    kustomize base, whose file lies in a directory (or below one) whose kustomization file
    another cluster reads, or that a kustomization file another cluster reads lists in a
    commented-out entry, is reached from there or not at all."""
    for o in others:
        node = o.kustomizations.get(model.root_id)
        if node is not None and node.parent is not None:
            return f"cluster {o.name} applies Kustomization {model.root_id}"
        if any(ks.build_dir == root.dir and ks.parent is not None for ks in o.kustomizations.values()):
            return f"cluster {o.name} builds {root.dir or '.'}"
    read = _read_kustomization_dirs(others)
    if root.dir in read and root.dir != "":
        return f"a cluster reads {read[root.dir]} as part of its build"
    if root.location is None:
        return None
    for kfile in sorted(set(read.values())):
        for line, entry in _commented_entries(_text(cache, kfile)):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(kfile), entry))
            if target in (root.location.file, root.dir):
                return f"{kfile} reads it only in an entry commented out at line {line}"
    if root.how != SELF_APPLYING or root.name == "flux-system":
        return None
    for d in _ancestors(posixpath.dirname(root.location.file)):
        if d in read:
            return f"cluster reads {read[d]}"
    return None


def declares(model: ClusterModel, root: ClusterRoot) -> bool:
    """Whether the cluster ``model`` applies, into itself, the document that declares
    ``root`` (its gotk-sync Kustomization, a FluxInstance, or the HelmRelease whose values
    carry a FluxInstance's sync): ``root`` is then a second root of the same cluster (one
    cluster reached from two roots), not a cluster of its own."""
    where = root.location
    if where is None:
        return False
    return any(
        o.resource.origin.file == where.file and o.resource.origin.line == where.line and o.ref.target == ""
        for o in model.objects()
    )


SELF_APPLYING = "self-applying root Kustomization"
FLUX_DIRECTORY = "directory of Flux Kustomizations"
MAX_LISTED = 5


def unapplied(
    cache: FileCache, models: list[ClusterModel], builder: Builder | None = None, reported: tuple[str, ...] = ()
) -> list[Problem]:
    """The Flux Kustomizations of the repository that no discovered cluster applies, grouped by
    the kustomization file that leaves them out: one a cluster reads where the entry naming them
    is commented out, else the nearest one a cluster reads in their directory or above, else
    the top-level directory nothing reads (``.archive/``). Each group is one not-evaluated
    problem: these objects are not analysed.

    Left out: documents of files some build reads (a Kustomization used as a patch), and
    Kustomizations under the directory of one the model could not build (a failed build, a
    source outside the repository): that Kustomization is reported instead. The Flux
    Kustomizations in the files a failed build would have read (``Builder.reach``) are one
    not-evaluated problem per failed Kustomization: they are what it would apply, not
    Kustomizations no cluster applies. Those under the directories ``reported`` (folders
    already reported as not clusters) are left out too."""
    applied: set[tuple[str, int]] = set()
    read_files: set[str] = set()
    unbuilt: list[str] = []
    failed: list[tuple[ClusterModel, KustomizationNode]] = []
    for m in models:
        for ks in m.kustomizations.values():
            if ks.status == "built":  # a failed build read files it never applied
                read_files |= ks.files
            if ks.declared_at is not None:
                applied.add((ks.declared_at.file, ks.declared_at.line))
            for _, where in ks.other_declarations:
                applied.add((where.file, where.line))
            if ks.status != "built" and ks.build_dir is not None:
                unbuilt.append(ks.build_dir)
            if ks.status == "failed" and ks.build_dir is not None:
                failed.append((m, ks))
    would_apply: dict[str, tuple[ClusterModel, KustomizationNode]] = {}
    if builder is not None:
        for m, ks in failed:
            assert ks.build_dir is not None
            for f in sorted(builder.reach(ks.build_dir)):
                would_apply.setdefault(f, (m, ks))
    read = _read_kustomization_dirs(models)
    commented: dict[str, tuple[str, int]] = {}  # path an entry names -> (kustomization file, line)
    for kfile in sorted(read.values()):
        for line, entry in _commented_entries(_text(cache, kfile)):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(kfile), entry))
            commented.setdefault(target, (kfile, line))
    groups: dict[str, list[tuple[str, str, int, int | None]]] = defaultdict(list)
    blocked: dict[str, list[tuple[str, str, int]]] = defaultdict(list)  # failed Kustomization id -> what it would apply
    blockers: dict[str, tuple[ClusterModel, KustomizationNode]] = {}
    for f in _yaml_files(cache):
        if f in read_files or not _contains(cache, f, b"kustomize.toolkit.fluxcd.io"):
            continue
        for data, line in _docs(cache, f):
            if not _is_flux_ks(data) or (f, line) in applied:
                continue
            md = as_dict(data.get("metadata"))
            ns, name = as_str(md.get("namespace")), as_str(md.get("name"))
            ks_id = f"{ns}/{name}" if ns else name
            if f in would_apply:
                m, node = would_apply[f]
                blocked[f"{m.name}|{node.id}"].append((f, ks_id, line))
                blockers[f"{m.name}|{node.id}"] = (m, node)
                continue
            d = posixpath.dirname(f)
            if any(u == "" or d == u or d.startswith(u + "/") for u in (*unbuilt, *reported)):
                continue
            hit = commented.get(f) or commented.get(d)
            if hit is not None:
                groups[hit[0]].append((f, ks_id, line, hit[1]))
                continue
            excluder = next((read[a] for a in _ancestors(d) if a in read), None)
            groups[excluder or f.split("/", 1)[0] + "/"].append((f, ks_id, line, None))
    out: list[Problem] = []
    for key, found in sorted(blocked.items()):
        m, node = blockers[key]
        n = len(found)
        shown = ", ".join(f"{i} ({f})" for f, i, _ in found[:MAX_LISTED])
        more = f" and {n - MAX_LISTED} more" if n > MAX_LISTED else ""
        out.append(
            Problem(
                "not-evaluated-failed-build",
                f"the build of Kustomization {node.id} (cluster {m.name}) fails, so the {n} Flux "
                f"Kustomization{'s' if n != 1 else ''} it would apply {'is' if n == 1 else 'are'} not evaluated: {shown}{more}",
                node.declared_at or node.spec.location,
                not_evaluated=True,
                kustomization=node.id,
                related=tuple(Location(f, ln) for f, _, ln in found[:MAX_LISTED]),
            )
        )
    for key, items in sorted(groups.items()):
        items.sort(key=lambda i: (i[3] is None, i[3] or 0, i[0], i[2]))
        n = len(items)
        more = f" and {n - MAX_LISTED} more" if n > MAX_LISTED else ""
        if key.endswith("/"):  # a top-level directory no cluster reads
            files = len({i[0] for i in items})
            shown = ", ".join(f"{i} ({f})" for f, i, _, _ in items[:MAX_LISTED])
            message = (
                f"{n} Flux Kustomization{'s' if n != 1 else ''} in {key} ({files} file{'s' if files != 1 else ''}) "
                f"{'is' if n == 1 else 'are'} applied by no cluster; not analysed: {shown}{more}"
            )
            where = Location(items[0][0], items[0][2])
        else:
            parts = [
                f"{i} ({f}{f', commented out at line {c}' if c else ''})" for f, i, _, c in items[:MAX_LISTED]
            ]
            them = "it" if n == 1 else "them"
            message = (
                f"{key} does not include {'this Flux Kustomization' if n == 1 else f'{n} Flux Kustomizations'}, and "
                f"no cluster applies {them}; not analysed: {', '.join(parts)}{more}"
            )
            where = Location(key, items[0][3] or 1)
        out.append(
            Problem(
                "not-applied",
                message,
                where,
                not_evaluated=True,
                related=tuple(Location(f, ln) for f, _, ln, _ in items[:MAX_LISTED] if (f, ln) != (where.file, where.line)),
            )
        )
    return out


def repository_kinds(cache: FileCache) -> dict[tuple[str, str], int]:
    """(API group, kind) -> how many documents of the repository have it: what the
    repository looks like when no cluster is found in it. Only files whose text names an
    API group of interest are parsed."""
    out: dict[tuple[str, str], int] = defaultdict(int)
    for f in _yaml_files(cache):
        if not (_contains(cache, f, b"fluxcd.io") or _contains(cache, f, b"argoproj.io")):
            continue
        for data, _ in _docs(cache, f):
            if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
                continue
            api = data.get("apiVersion")
            group = api.rsplit("/", 1)[0] if isinstance(api, str) and "/" in api else ""
            if group.endswith(("fluxcd.io", "argoproj.io")):
                out[(group, data["kind"])] += 1
    return dict(out)


def overlay_candidates(cache: FileCache, builder: Builder) -> list[str]:
    """The folders ``--cluster`` could take in a repository without a cluster of its own: the
    directories with a kustomization file that no other kustomization file of the repository
    lists, whose build would read a Flux object (the tenant overlays a fleet pulls in)."""
    dirs = sorted({posixpath.dirname(f) for f in cache.fs.walk_files("") if posixpath.basename(f) in KUSTOMIZATION_FILES})
    listed: set[str] = set()
    for d in dirs:
        listed |= {p for p in builder.reach(d) if posixpath.basename(p) not in KUSTOMIZATION_FILES}
        listed |= {
            posixpath.normpath(posixpath.join(d, e))
            for e in _kustomization_entries(cache, d)
        }
    out = []
    for d in dirs:
        if d in listed or not d:
            continue
        if any(_contains(cache, f, b"fluxcd.io") for f in builder.reach(d)):
            out.append(d)
    return out


def _kustomization_entries(cache: FileCache, d: str) -> list[str]:
    kfile = next((f"{d}/{n}" if d else n for n in KUSTOMIZATION_FILES if cache.is_file(f"{d}/{n}" if d else n)), None)
    if kfile is None:
        return []
    docs = _docs(cache, kfile)
    k = docs[0][0] if len(docs) == 1 and isinstance(docs[0][0], dict) else {}
    return [e for key in ("resources", "bases", "components") for e in (k.get(key) or []) if isinstance(e, str)]


def _text(cache: FileCache, f: str) -> str:
    try:
        return cache.read_bytes(f).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - the build that read it reports an unreadable file
        return ""


def _commented_entries(text: str) -> list[tuple[int, str]]:
    """``(line, path)`` of the list entries of a kustomization file that are commented out
    (``# - ./app/ks.yaml``): entries someone took out of the build."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped.startswith("#"):
            continue
        body = stripped.lstrip("#").strip()
        if not body.startswith("- "):
            continue
        entry = body[2:].split(" #", 1)[0].strip().strip("'\"").rstrip("/")
        if entry and " " not in entry and not entry.startswith(("http:", "https:", "git@")):
            out.append((i, entry))
    return out


_TOP_KEY = re.compile(r"^[A-Za-z_][\w.-]*\s*:")
_RELEASE_NAME = re.compile(r"^\s*-\s*name:\s*[\"']?([A-Za-z0-9][\w.-]*)[\"']?\s*(?:#.*)?$")
_CHART = re.compile(r"^\s*chart:\s*[\"']?([^\s\"'{}]+)[\"']?\s*(?:#.*)?$")


def _is_helmfile(path: str) -> bool:
    parts = path.split("/")
    base = parts[-1]
    if not base.endswith((".yaml", ".yml", ".yaml.gotmpl", ".yml.gotmpl")):
        return False
    return base.startswith("helmfile") or any(p in ("helmfile", "helmfile.d") for p in parts[:-1])


def helmfile_releases(cache: FileCache) -> dict[str, Location]:
    """The Helm releases the repository's helmfiles install outside Flux, by release name and by
    chart name (its last path segment): the ``releases:`` entries of a ``helmfile*.yaml`` or of
    a file under a ``helmfile``/``helmfile.d`` directory, read as text (helmfiles are templates).
    A bootstrap step that installs a chart, or only its CRDs (``--include-crds``), before Flux
    starts makes the chart's CRDs exist on a cold boot that follows it."""
    names: dict[str, Location] = {}
    for f in cache.fs.walk_files(""):
        if not _is_helmfile(f):
            continue
        try:
            text = cache.fs.read_bytes(f).decode("utf-8", "replace")
        except Exception:  # noqa: BLE001 - an unreadable helmfile tells nothing
            continue
        in_releases = False
        for i, line in enumerate(text.splitlines(), 1):
            if _TOP_KEY.match(line):
                in_releases = line.split(":", 1)[0].strip() == "releases"
                continue
            if not in_releases:
                continue
            m = _RELEASE_NAME.match(line)
            if m:
                names.setdefault(m.group(1), Location(f, i))
                continue
            m = _CHART.match(line)
            if m:
                chart = m.group(1).rstrip("/").rsplit("/", 1)[-1]
                if chart:
                    names.setdefault(chart, Location(f, i))
    return names


def bootstrap_charts(cache: FileCache, built: set[str]) -> dict[str, Location]:
    """The charts a bootstrap step renders with ``kustomize build --enable-helm`` (or
    ``kubectl kustomize --enable-helm``) before Flux runs: the ``helmCharts`` entries (by
    ``name`` and ``releaseName``) of the kustomization files that no cluster's build reads
    (``built``). Flux never inflates ``helmCharts``, so a kustomization that has them and that
    Flux does not build is such a step."""
    out: dict[str, Location] = {}
    for f in cache.fs.walk_files(""):
        if posixpath.basename(f) not in KUSTOMIZATION_FILES or f in built or not _contains(cache, f, b"helmCharts"):
            continue
        docs = _docs(cache, f)
        k = docs[0][0] if len(docs) == 1 and isinstance(docs[0][0], dict) else {}
        for entry in k.get("helmCharts") or [] if isinstance(k.get("helmCharts"), list) else []:
            if not isinstance(entry, dict):
                continue
            for key in ("name", "releaseName"):
                v = entry.get(key)
                if isinstance(v, str) and v:
                    out.setdefault(v, Location(f, docs[0][1]))
    return out


_BOOTSTRAP_DIR = re.compile(r"(^|/)(bootstrap|setup|provision)(/|$)", re.I)
_TEMPLATE_DOC = re.compile(r"^kind:\s*(Secret|ConfigMap|Namespace)\s*$.*?^\s+name:\s*['\"]?([A-Za-z0-9][\w.-]*)", re.M | re.S)
# kubectl [-n NS] create secret generic|tls|docker-registry [-n NS] NAME, configmap NAME,
# namespace|ns NAME (the namespace flag before or after the type)
_KUBECTL_CREATE = re.compile(
    r"kubectl\s+(?:(?:-n|--namespace)(?:=|\s+)\S+\s+)?create\s+(secret|configmap|namespace|ns)\s+"
    r"(?:(?:generic|tls|docker-registry)\s+)?(?:(?:-n|--namespace)(?:=|\s+)\S+\s+)?([A-Za-z0-9][\w.-]*)"
)
# scripts and task runners: a Taskfile and the files it includes (.taskfiles/), justfiles, a
# Makefile, shell scripts
_SCRIPT = re.compile(r"(^|/)(Taskfile[^/]*|justfile|Justfile|Makefile|[^/]*\.(sh|bash|just))$|(^|/)\.taskfiles/.*\.ya?ml$")


_DOC_FILE = re.compile(r"(^|/)[^/]*\.(md|markdown)$", re.I)
# a variable a script, Taskfile or justfile defines: NAME=value, NAME: value, NAME := value
_VAR_DEF = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::=|:|=)\s*[\"']?([^\"'\n#{}$]*(?:(?:\{\{[^}]*\}\}|\$\{?\w+\}?)[^\"'\n#{}$]*)*)[\"']?\s*$", re.M)
_VAR_USE = re.compile(r"\{\{-?\s*\.?([A-Za-z_][A-Za-z0-9_]*)\s*-?\}\}|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_APPLY_TARGET = re.compile(r"(?:^|\s)(?:-f|--filename|-k|--kustomize)(?:=|\s+)(\S+)")
_PIPED_FROM = re.compile(r"(?:^|\s)(?:sops\s+(?:-d|--decrypt)\b.*?|cat|op\s+inject\s+.*?-i)\s+(\S+)\s*$")


def _resolve(path: str, defs: dict[str, str]) -> tuple[str, re.Pattern[str] | None]:
    """``path`` with the variables its file defines put in (a few rounds, for variables made
    of variables); where some stay unknown, a pattern for the repository paths it can name
    instead: an unknown variable at the head stands for any prefix, one further on for one
    path segment (``${ROOT_DIR}/kubernetes/${CLUSTER}/flux/vars``)."""
    for _ in range(4):
        new = _VAR_USE.sub(lambda m: defs.get(m.group(1) or m.group(2) or m.group(3), m.group(0)), path)
        if new == path:
            break
        path = new
    path = path.strip("\"'")
    parts = _VAR_USE.split(path)
    if len(parts) == 1:
        return path, None
    while parts[0].startswith("./"):
        parts[0] = parts[0][2:]
    # re.split with the pattern's three groups: text, g1, g2, g3, text, ...
    texts = parts[::4]
    rx = "" if texts[0] else "(?:.*/)?"
    for n, text in enumerate(texts):
        if n:
            rx += "[^/]+" if (n > 1 or texts[0]) else ""
        rx += re.escape(text.lstrip("/") if n == 1 and not texts[0] else text)
    return path, re.compile(rx.strip("/") + r"/?\Z")


def _apply_targets(text: str) -> list[tuple[int, str, re.Pattern[str] | None]]:
    """``(line, path, partial)`` of what ``kubectl apply -f/-k`` reads in a script or a
    document: the path given, or for ``-f -`` the file piped in (``sops --decrypt F |``,
    ``cat F |``, ``op inject -i F |``)."""
    defs = {m.group(1): m.group(2).strip() for m in _VAR_DEF.finditer(text)}
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        while line.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line.rstrip()[:-1] + " " + lines[i]
        i += 1
        if "kubectl" not in line or "apply" not in line:
            continue
        segments = re.split(r"\s\|\s", line)
        for n, seg in enumerate(segments):
            if not re.search(r"\bkubectl\b.*\bapply\b", seg):
                continue
            for m in _APPLY_TARGET.finditer(seg):
                target = m.group(1)
                if target == "-":
                    piped = _PIPED_FROM.search(segments[n - 1]) if n else None
                    if piped is None:
                        continue
                    target = piped.group(1)
                path, pattern = _resolve(target, defs)
                if _INDIRECT.fullmatch(path):
                    # a loop variable (`for f in "${files[@]}"; do kubectl apply -f "${f}"`) or
                    # a placeholder (`sops exec-file F "kubectl apply -f {}"`): the script
                    # applies the repository files it lists, each read at its own line
                    out.extend(_listed_files(text, defs))
                elif path and "://" not in path:
                    out.append((start + 1, path, pattern))
    return out


_INDIRECT = re.compile(r"\{\}|\$\{?[A-Za-z_][A-Za-z0-9_]*(\[@\*\])?\}?|\{\{[^}]*\}\}")
_LISTED = re.compile(r"[\"']([^\s\"']+\.ya?ml)[\"']")


def _listed_files(text: str, defs: dict[str, str]) -> list[tuple[int, str, re.Pattern[str] | None]]:
    """The quoted YAML paths a script lists (``"${ROOT_DIR}/kubernetes/${CLUSTER}/.../cluster-settings.yaml"``
    in an array it loops over), with their lines."""
    out = []
    for m in _LISTED.finditer(text):
        path, pattern = _resolve(m.group(1), defs)
        if "/" in path and "://" not in path:
            out.append((text.count("\n", 0, m.start()) + 1, path, pattern))
    return out


def _applied_files(cache: FileCache, f: str, path: str, pattern: re.Pattern[str] | None, files: list[str]) -> list[str]:
    """The repository's YAML files a ``kubectl apply`` target of ``f`` names: a file, or the
    YAML files of a folder (``-f dir`` and ``-k dir`` read the folder itself), relative to the
    file's folder or to the repository's root; a path with variables the file does not define
    by its pattern (``_resolve``), every file or folder of the repository it matches (a step
    run once per cluster applies each cluster's file), up to ``MAX_TEMPLATED_MATCHES``."""
    fs = cache.fs
    path = path.rstrip("/")
    candidates: list[str] = []
    if pattern is not None:
        here = posixpath.dirname(f)

        def named(p: str) -> bool:  # relative to the repository's root or to the file's folder
            return bool(pattern.match(p)) or (bool(here) and p.startswith(here + "/") and bool(pattern.match(p[len(here) + 1 :])))

        dirs = {posixpath.dirname(g) for g in files}
        candidates = sorted({g for g in files if named(g)} | {d for d in dirs if d and named(d)})
        if len(candidates) > MAX_TEMPLATED_MATCHES:
            candidates = []  # a pattern that loose says nothing about which file the step applies
    else:
        for base in (posixpath.dirname(f), ""):
            rel = posixpath.normpath(posixpath.join(base, path)) if not path.startswith("/") else ""
            if rel and not rel.startswith("..") and fs.exists(rel):
                candidates = [rel]
                break
    out = []
    for c in candidates:
        if fs.is_file(c):
            out.append(c)
        elif fs.is_dir(c):
            out.extend(
                g
                for g in files
                if posixpath.dirname(g) == c and g.endswith((".yaml", ".yml")) and posixpath.basename(g) not in KUSTOMIZATION_FILES
            )
    return out


MAX_TEMPLATED_MATCHES = 20


BOOTSTRAP_KINDS = ("Secret", "ConfigMap", "Namespace")
BootKey = tuple[str, str, str]  # (kind, namespace, name); namespace "" where the step does not say


def _doc_key(data: Any) -> BootKey | None:
    if not isinstance(data, dict) or data.get("kind") not in BOOTSTRAP_KINDS:
        return None
    md = as_dict(data.get("metadata"))
    name = as_str(md.get("name"))
    if not name:
        return None
    ns = "" if data["kind"] == "Namespace" else as_str(md.get("namespace")) or ""
    return (str(data["kind"]), ns, name)


_NS_FLAG = re.compile(r"(?:^|\s)(?:-n|--namespace)(?:=|\s+)([A-Za-z0-9][\w.-]*)")


def bootstrap_objects(cache: FileCache, built: set[str]) -> dict[BootKey, Location]:
    """The ConfigMaps, Secrets and Namespaces a bootstrap step of the repository creates before
    Flux, by (kind, namespace, name), the namespace empty where the step does not say it:
    documents in a ``bootstrap``/``setup``/``provision`` folder that no cluster's build reads
    (YAML, or templates such as ``resources.yaml.j2`` read as text);
    ``kubectl create secret|configmap|namespace NAME`` in the repository's scripts and
    Taskfiles; and the files that ``kubectl apply -f/-k`` in its scripts, Taskfiles or its
    documents' bootstrap steps (a README's "kubectl apply -f ./flux/vars/cluster-settings.yaml")
    applies, whether or not Flux applies them too (located at the command). Look one up with
    ``bootstrapped``."""
    out: dict[BootKey, Location] = {}
    files = cache.fs.walk_files("")
    for f in files:
        if (_SCRIPT.search(f) or _DOC_FILE.search(f)) and (text := _text(cache, f)) and "kubectl" in text:
            for line, path, pattern in _apply_targets(text):
                for g in _applied_files(cache, f, path, pattern, files):
                    if not g.endswith((".yaml", ".yml", ".json")):
                        continue
                    for data, _ in _docs(cache, g):
                        if (key := _doc_key(data)) is not None:
                            out.setdefault(key, Location(f, line))
    for f in files:
        if f in built:
            continue
        if _BOOTSTRAP_DIR.search(posixpath.dirname(f) + "/") and not _SCRIPT.search(f):
            if f.endswith((".yaml", ".yml")):
                for data, line in _docs(cache, f):
                    if (key := _doc_key(data)) is not None:
                        out.setdefault(key, Location(f, line))
                continue
            if f.endswith((".j2", ".tmpl", ".tpl", ".gotmpl")):
                text = _text(cache, f)
                for doc in re.split(r"^---\s*$", text, flags=re.M):
                    m = _TEMPLATE_DOC.search(doc)
                    if m:
                        kind = m.group(1)
                        nsm = re.search(r"^\s+namespace:\s*['\"]?([A-Za-z0-9][\w.-]*)", doc, re.M)
                        ns = nsm.group(1) if nsm and kind != "Namespace" else ""
                        out.setdefault((kind, ns, m.group(2)), Location(f, text[: text.find(doc)].count("\n") + 1))
                continue
        if _SCRIPT.search(f):
            text = _text(cache, f)
            for m in _KUBECTL_CREATE.finditer(text):
                what = m.group(1)
                kind = {"secret": "Secret", "configmap": "ConfigMap"}.get(what, "Namespace")
                rest = text[m.end() : text.find("\n", m.end()) if "\n" in text[m.end() :] else len(text)]
                nsm = _NS_FLAG.search(rest) or _NS_FLAG.search(m.group(0))
                ns = nsm.group(1) if nsm and kind != "Namespace" else ""
                out.setdefault((kind, ns, m.group(2)), Location(f, text[: m.start()].count("\n") + 1))
    return out


def bootstrapped(boot: dict[BootKey, Location], kind: str, namespace: str, name: str) -> Location | None:
    """Where the repository's bootstrap creates ``kind namespace/name`` (``bootstrap_objects``):
    in that namespace, or in one the step does not say."""
    if kind == "Namespace":
        return boot.get((kind, "", name))
    return boot.get((kind, namespace, name)) or boot.get((kind, "", name))

