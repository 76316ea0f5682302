"""The library entry point: ``load()`` a repository into cluster models.

The CLI is a thin layer over this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fluxgraph import flux
from fluxgraph.cluster import ClusterModel, ClusterWalker, SourceNode
from fluxgraph.discovery import ClusterRoot, discover, helmfile_releases, somebodys_child, unapplied
from fluxgraph.kustomize.build import Builder, FileCache
from fluxgraph.kustomize.resource import Origin, Resource
from fluxgraph.model import FluxgraphError, Location, Problem
from fluxgraph.repofs import PathEscape, RepoFS, join, norm_rel
from fluxgraph.scope import RepositoryCRDs, ScopeTable
from fluxgraph.sourceignore import Matcher, Pattern, artifact_matcher, read_patterns
from fluxgraph.yamlio import LoadResult

LATEST_FLUX = "2.9"


@dataclass
class Repository:
    root: Path
    clusters: list[ClusterModel]
    problems: list[Problem] = field(default_factory=list)
    cache: FileCache | None = field(default=None, repr=False)
    # Helm releases the repository's helmfiles install outside Flux (a bootstrap step), by
    # release and chart name (``discovery.helmfile_releases``)
    helmfile_releases: dict[str, Location] = field(default_factory=dict)


def flux_is_strict(version: str | None) -> bool:
    """Strict postBuild substitution is the default from Flux 2.9 (kustomize-controller v1.9,
    feature gate StrictPostBuildSubstitutions, KC#1671)."""
    if not version:
        return True
    try:
        parts = [int(x) for x in version.lstrip("v").split(".")[:2]]
    except ValueError:
        raise FluxgraphError(f"--flux-version {version!r} is not a version like 2.9") from None
    major, minor = (parts + [0])[:2]
    return (major, minor) >= (2, 9)


def _ignore_matcher(fs: RepoFS) -> Matcher:
    """What source-controller leaves out of the repository's artifact (``sourceignore``):
    every ``.sourceignore`` file, scoped to its directory (fluxcd/pkg ``LoadIgnorePatterns``).
    A source's ``spec.ignore`` is not modelled."""
    patterns: list[Pattern] = []
    for f in fs.walk_files(""):
        if f.endswith(".sourceignore"):
            try:
                text = fs.read_bytes(f).decode("utf-8", "replace")
            except (OSError, PathEscape):
                continue
            d = f.rsplit("/", 1)[0] if "/" in f else ""
            patterns.extend(read_patterns(text, tuple(d.split("/")) if d else ()))
    return artifact_matcher(patterns)


def _root_spec(root: ClusterRoot, problems: list[Problem], cache: FileCache) -> flux.FluxKustomization:
    if root.root_doc is not None and root.location is not None:
        docs, _ = cache.documents(root.location.file)
        doc = next((d for d in docs if d.line == root.location.line), None)  # for field positions
        res = Resource(root.root_doc, Origin(root.location.file, root.location.line), doc)
        spec = flux.parse_kustomization(res, problems, default_namespace="flux-system")
        if spec is not None:
            return spec
    data = {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": root.name, "namespace": root.namespace},
        "spec": {
            "interval": "10m",
            "path": "./" + (root.dir[len(root.repo_base) :].lstrip("/") if root.repo_base else root.dir),
            "prune": True,
            "sourceRef": {"kind": root.source_kind, "name": root.source_name, "namespace": root.namespace},
        },
    }
    loc = root.location or Location(root.dir or ".")
    res = Resource(data, Origin(loc.file, loc.line))
    spec = flux.parse_kustomization(res, problems)
    assert spec is not None
    return spec


@contextmanager
def _note_last_file(fs: RepoFS) -> Iterator[None]:
    """An unexpected exception (a fluxgraph bug) keeps its type and traceback but notes the
    last file read, so that the CLI's one-line error names it."""
    try:
        yield
    except FluxgraphError:
        raise
    except Exception as e:
        if fs.last_read is not None:
            e.add_note(f"last file read: {fs.last_read}")
        raise


def load(
    path: str | Path | RepoFS,
    *,
    cluster: str | None = None,
    env: str | None = None,
    flux_version: str | None = None,
    strict: bool | None = None,
    extra_vars: dict[str, str] | None = None,
    document_memo: dict[tuple[str, bytes], LoadResult] | None = None,
) -> Repository:
    """Build the reconcile model of every cluster in the repository at ``path`` (a directory, or
    a ``RepoFS`` such as a git revision served from memory by ``gitrev.Tree.fs()``).

    ``cluster`` is the repo-relative directory of a cluster's root Kustomization; ``env`` is
    shorthand for ``clusters/<env>``. ``document_memo`` shares parsed files between loads
    (keyed by path and content). Raises FluxgraphError when nothing can be analysed.
    """
    where: str | Path | RepoFS = path  # as the user named it, for messages
    if isinstance(path, RepoFS):  # e.g. a git revision in memory (fluxgraph.treefs)
        fs = path
        where = path.root
    else:
        root_path = Path(path)
        if not root_path.exists():
            raise FluxgraphError(f"{path}: no such directory")
        if not root_path.is_dir():
            raise FluxgraphError(f"{path}: not a directory")
        fs = RepoFS(root_path)
    cache = FileCache(fs, _ignore_matcher(fs), document_memo)
    builder = Builder(cache)
    is_strict = strict if strict is not None else flux_is_strict(flux_version)
    problems: list[Problem] = []

    if env is not None and cluster is not None:
        raise FluxgraphError("give either --cluster or --env, not both")
    if env is not None:
        cluster = f"clusters/{env}"
    with _note_last_file(fs):
        discovered = discover(cache)
    if cluster is not None:
        try:
            cdir = norm_rel(join("", cluster.strip()))
        except PathEscape as e:
            raise FluxgraphError(f"--cluster {cluster}: {e}") from None
        if not cache.is_dir(cdir):
            raise FluxgraphError(f"{cluster}: no such cluster directory in {where}")
        match = [r for r in discovered if r.dir == cdir]
        roots = match or [ClusterRoot(dir=cdir, location=Location(cdir), how="--cluster")]
    else:
        roots = discovered
    if not roots:
        limits = [p for p in fs.problems if p.code == "input-limit"]
        raise FluxgraphError(
            f"{where}: no Flux cluster found (looked for flux-system/gotk-sync.yaml, FluxInstance sync paths, "
            "self-applying root Kustomizations and clusters/<name> directories); name one with --cluster DIR"
            + (f" ({limits[0].location.file}: {limits[0].message})" if limits else "")
            + (f" ({fs.escaping[0]} is a symlink that leaves the repository root; not read)" if fs.escaping else "")
        )

    crds = RepositoryCRDs(cache)  # scope of custom kinds, from CRD files anywhere in the repo
    clusters: list[tuple[ClusterRoot, ClusterModel]] = []
    for root in roots:
        root_problems: list[Problem] = []
        with _note_last_file(fs):
            spec = _root_spec(root, root_problems, cache)
            model = ClusterModel(
                name=root.dir or ".",
                root_dir=root.dir,
                root_id=spec.id,
                strict=is_strict,
                discovered_by=root.how,
                scopes=ScopeTable(crds),
            )
            model.problems.extend(root_problems)
            sref = spec.source_ref or flux.SourceRef(root.source_kind, root.source_name, root.namespace)
            src = SourceNode(sref.kind, sref.namespace, sref.name, root.url, repo_base=root.repo_base, location=root.location, synthesized=True)
            ClusterWalker(builder, model, spec, src, extra_vars=extra_vars).run()
        clusters.append((root, model))
    # a root found by a layout heuristic is a cluster only when it is nobody's child
    kept = [
        m
        for r, m in clusters
        if not (r.weak and cluster is None and somebodys_child(r, m, [o for _, o in clusters if o is not m]) is not None)
    ]
    if cluster is None:
        # Flux Kustomizations no discovered cluster applies (a ks.yaml left out of its parent)
        problems.extend(unapplied(cache, kept))
    # limits the file system walk hit and file names it could not read (repofs.RepoFS.problems)
    # concern every cluster: what they hide may belong to any of them
    for m in kept:
        m.problems.extend(fs.problems)
    return Repository(
        root=fs.root,
        clusters=sorted(kept, key=lambda c: c.root_dir),
        problems=problems,
        cache=cache,
        helmfile_releases=helmfile_releases(cache),
    )
