"""Two revisions of one repository, loaded for ``fluxgraph diff``: the trees' contents, which
files changed, which clusters read a changed file (``affected_by``: only those are built and
checked again at head, the others reused), and ``load_pair``, which loads both sides sharing
the parses of unchanged files.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fluxgraph.api import Repository, load
from fluxgraph.cluster import ClusterModel
from fluxgraph.findings import Finding
from fluxgraph.gitrev import Tree
from fluxgraph.kustomize.build import SharedBuilds
from fluxgraph.model import FluxgraphError
from fluxgraph.repofs import FileTooLarge, PathEscape, RepoFS


def _tree(root: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every file and symlink below ``root`` (``.git`` excluded): rel -> ("f", bytes) or ("l", target)."""
    out: dict[str, tuple[str, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [n for n in dirnames if n != ".git"]
        for n in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root).replace(os.sep, "/")
            try:
                out[rel] = ("l", os.readlink(p)) if os.path.islink(p) else ("f", Path(p).read_bytes())
            except OSError:
                continue
    return out


#: one side of a comparison: a folder on disk, or a git revision in memory
Side = Path | Tree


def _contents(side: Side) -> dict[str, tuple[str, bytes | str]]:
    if isinstance(side, Tree):
        return {**{r: ("f", b) for r, b in side.files.items()}, **{r: ("l", t) for r, t in side.links.items()}}
    return _tree(side)


def _open(side: Side) -> Path | RepoFS:
    """What ``api.load`` reads: the folder, or a fresh file system over the revision."""
    return side.fs() if isinstance(side, Tree) else side


def _fs(side: Side) -> RepoFS:
    opened = _open(side)
    return opened if isinstance(opened, RepoFS) else RepoFS(opened)


def changed_paths(base: Side, head: Side) -> set[str]:
    """Paths added, removed or modified between two trees."""
    a, b = _contents(base), _contents(head)
    return {rel for rel in set(a) | set(b) if a.get(rel) != b.get(rel)}


def cluster_inputs(model: ClusterModel) -> tuple[set[str], set[str], set[str]]:
    """What building ``model`` read: files, the folders whose listing mattered (the folders of
    those files), and the build dirs (a generated kustomization lists everything below)."""
    files: set[str] = set()
    build_dirs: set[str] = set()
    for ks in model.kustomizations.values():
        files |= ks.files
        for loc in (ks.declared_at, ks.spec.location):
            if loc is not None:
                files.add(loc.file)
        for _, loc in ks.other_declarations:
            files.add(loc.file)
        if ks.build_dir is not None:
            build_dirs.add(ks.build_dir)
    for src in model.sources.values():
        if src.location is not None:
            files.add(src.location.file)
    files = {f for f in files if f and "<" not in f}
    dirs = {posixpath.dirname(f) for f in files}
    return files, dirs, build_dirs


def affected_by(model: ClusterModel, changed: set[str]) -> set[str]:
    """The changed paths that ``model`` (built at one side) may have read at either side: a
    file it read, a file next to one (a folder listing), anything below a build dir, a
    ``.sourceignore``."""
    files, dirs, build_dirs = cluster_inputs(model)
    hit = set()
    for p in changed:
        p = p.rstrip("/")
        if p in files or posixpath.dirname(p) in dirs or _ignore_file(p):
            hit.add(p)
        elif any(bd == "" or p == bd or p.startswith(bd + "/") for bd in build_dirs):
            hit.add(p)
    return hit


_DISCOVERY_NEEDLES = (b"kustomize.toolkit.fluxcd.io", b"sync:")
_DISCOVERY_DIRS = ("clusters/", "kubernetes/clusters/", "cluster/")


def _may_hold_a_cluster(fs: RepoFS, rel: str) -> bool:
    """Whether the file ``rel`` of ``fs`` is one ``discovery.discover`` looks into: a
    ``gotk-sync.yaml``, a YAML file under the folders it lists, or one holding the words it
    parses a file for. One it cannot read (absent, too large) it passes over."""
    if not rel.endswith((".yaml", ".yml")):
        return False
    if rel.startswith(_DISCOVERY_DIRS) or posixpath.basename(rel) == "gotk-sync.yaml":
        return True
    try:
        data = fs.read_bytes(rel)
    except (OSError, PathEscape, FileTooLarge):
        return False
    return any(n in data for n in _DISCOVERY_NEEDLES)


def discovery_same(base: RepoFS, head: RepoFS, changed: set[str]) -> bool:
    """Whether ``discovery.discover`` finds the same roots at both revisions: every changed path
    is a file (not a link) at both, so the listing is the same, and one it looks into at neither.
    (The ``.sourceignore`` files are the same: ``load_pair`` shares nothing otherwise.)"""
    for rel in changed:
        for fs in (base, head):
            if not fs.is_file(rel) or fs.is_symlink(rel) or _may_hold_a_cluster(fs, rel):
                return False
    return True


def _ignore_file(rel: str) -> bool:
    """A file ``api._ignore_matcher`` reads patterns from."""
    return rel.endswith(".sourceignore")


@dataclass
class Loaded:
    repo: Repository
    findings: list[Finding]
    reused: list[str]


def load_pair(
    base: Side,
    head: Side,
    *,
    load_kwargs: dict[str, Any],
    checks: Callable[[Repository], list[Finding]],
    changed: set[str] | None = None,
    share_builds: bool = True,
) -> tuple[Loaded, Loaded]:
    """Load head, then only what base needs. Each side is a folder or a ``gitrev.Tree``.

    A cluster none of whose inputs changed (``affected_by``) is not rebuilt at base: its head
    model stands for it, and the checks do not run on it at either side (their findings would
    be the same). The base is loaded in full when a changed file that no head cluster reads
    could hold a cluster at base (``_may_hold_a_cluster``) or when --cluster/--env narrow the
    load anyway. ``changed``: the paths that differ (from git); compared file by file when
    not given."""
    # head records its kustomize builds; base reuses those whose inputs the change cannot reach
    # (SharedBuilds.lookup). A changed .sourceignore changes what every build sees: no sharing.
    shared = SharedBuilds() if share_builds else None
    head_repo = load(_open(head), **load_kwargs, shared_builds=shared)
    if changed is None:
        changed = changed_paths(base, head)
    if shared is not None:
        shared.changed = frozenset(changed)
        if any(_ignore_file(c) for c in changed):
            shared = None
    base_kwargs = {**load_kwargs, "shared_builds": shared}
    claimed: set[str] = set()
    affected: list[ClusterModel] = []
    for c in head_repo.clusters:
        hit = affected_by(c, changed)
        claimed |= hit
        if hit:
            affected.append(c)
    probe = _fs(base)
    unclaimed_yaml = any(_may_hold_a_cluster(probe, p) for p in changed - claimed)
    if shared is not None:
        shared.discovery_same = discovery_same(probe, _fs(head), changed)
    narrowed = bool(load_kwargs.get("cluster") or load_kwargs.get("env"))
    base_models: dict[str, ClusterModel] = {}
    base_cache = None
    full = unclaimed_yaml or narrowed
    if full:
        try:
            base_full = load(_open(base), **base_kwargs)
            base_models = {c.name: c for c in base_full.clusters}
            base_cache = base_full.cache
        except FluxgraphError:
            base_models = {}
        affected = list(head_repo.clusters)
        compared_base = list(base_models.values())
        base_clusters = compared_base
        reused: list[str] = []
    else:
        kw = {k: v for k, v in base_kwargs.items() if k not in ("cluster", "env")}
        for c in affected:
            try:
                part = load(_open(base), cluster=c.root_dir, **kw)
            except FluxgraphError:
                continue  # the cluster's folder does not exist at base: it is new
            base_cache = base_cache or part.cache
            for m in part.clusters:
                if m.name == c.name:
                    base_models[c.name] = m
        names = {c.name for c in affected}
        reused = [c.name for c in head_repo.clusters if c.name not in names]
        compared_base = list(base_models.values())
        base_clusters = sorted(
            compared_base + [c for c in head_repo.clusters if c.name in reused], key=lambda m: m.root_dir
        )
    base_root = base if isinstance(base, Path) else Path(f"/git/{base.commit}")
    base_repo = Repository(root=base_root, clusters=base_clusters, cache=base_cache)
    head_checked = Repository(root=head_repo.root, clusters=affected, cache=head_repo.cache)
    base_checked = Repository(root=base_root, clusters=compared_base, cache=base_cache)
    head_findings = checks(head_checked) if affected else []
    base_findings = checks(base_checked) if compared_base else []
    return Loaded(base_repo, base_findings, reused), Loaded(head_repo, head_findings, reused)


