"""The library entry point: ``load()`` a repository into cluster models.

The CLI is a thin layer over this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from fluxgraph import admission, flux, fluxapi, fluxrelease
from fluxgraph.cluster import ClusterModel, ClusterWalker, SourceNode
from fluxgraph.discovery import (
    FLUX_DIRECTORY,
    FLUX_OBJECT_GROUPS,
    MAX_LISTED,
    ClusterRoot,
    bootstrap_charts,
    bootstrap_objects,
    declares,
    discover,
    helmfile_releases,
    overlay_candidates,
    repository_kinds,
    somebodys_child,
    unapplied,
)
from fluxgraph.filecache import FileCache
from fluxgraph.fluxrelease import FluxRelease
from fluxgraph.kustomize.build import Builder, SharedBuilds
from fluxgraph.kustomize.resource import Origin, Resource
from fluxgraph.model import FluxgraphError, Location, Problem, kind_plural
from fluxgraph.repofs import PathEscape, RepoFS, join, norm_rel
from fluxgraph.scope import RepositoryCRDs, ScopeTable
from fluxgraph.sourceignore import Matcher, Pattern, artifact_matcher, read_patterns
from fluxgraph.yamlio import LoadResult

LATEST_FLUX = f"{fluxrelease.LATEST[0]}.{fluxrelease.LATEST[1]}"


@dataclass
class Repository:
    root: Path
    clusters: list[ClusterModel]
    problems: list[Problem] = field(default_factory=list)
    cache: FileCache | None = field(default=None, repr=False)
    # Helm releases the repository's helmfiles install outside Flux (a bootstrap step), by
    # release and chart name (``discovery.helmfile_releases``), and the charts of a kustomize
    # helmCharts bootstrap Flux does not build (``discovery.bootstrap_charts``)
    helmfile_releases: dict[str, Location] = field(default_factory=dict)
    bootstrap_charts: dict[str, Location] = field(default_factory=dict)
    # ConfigMaps, Secrets and Namespaces a bootstrap step of the repository creates before Flux,
    # by (kind, namespace or "", name) (``discovery.bootstrap_objects``, ``discovery.bootstrapped``)
    bootstrap_objects: dict[tuple[str, str, str], Location] = field(default_factory=dict)


def flux_is_strict(version: str | None) -> bool:
    """Strict postBuild substitution is the default from Flux 2.9 (kustomize-controller v1.9,
    feature gate StrictPostBuildSubstitutions, KC#1671); see ``fluxgraph.fluxrelease``."""
    if not version or version.strip() == fluxrelease.NEXT:
        return True  # ``next`` is resolved per cluster, once its own version is read
    if not re.match(r"^v?\d+(\.(\d+|x))?", version.strip()):
        raise FluxgraphError(f"--flux-version {version!r} is not a version like 2.9")
    return FluxRelease(version).strict


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


def _root_of(root: ClusterRoot, problems: list[Problem], cache: FileCache) -> tuple[flux.FluxKustomization, SourceNode]:
    """The root Kustomization of ``root`` and the source it builds from."""
    spec = _root_spec(root, problems, cache)
    sref = spec.source_ref or flux.SourceRef(root.source_kind, root.source_name, root.namespace)
    src = SourceNode(sref.kind, sref.namespace, sref.name, root.url, repo_base=root.repo_base, location=root.location, synthesized=True)
    return spec, src


def _named_root(name: str, discovered: list[ClusterRoot], cache: FileCache, where: object) -> ClusterRoot:
    """The root of a cluster named with ``--cluster`` or the configuration's ``clusters:``:
    the discovered one of that directory, else one made up for it."""
    try:
        cdir = norm_rel(join("", name.strip()))
    except PathEscape as e:
        raise FluxgraphError(f"--cluster {name}: {e}") from None
    if not cache.is_dir(cdir):
        raise FluxgraphError(f"{name}: no such cluster directory in {where}")
    match = [r for r in discovered if r.dir == cdir]
    return match[0] if match else ClusterRoot(dir=cdir, location=Location(cdir), how="--cluster")


def _judge_roots(
    walked: list[tuple[ClusterRoot, ClusterModel]],
    cache: FileCache,
    builder: Builder,
    walk: Callable[[ClusterRoot, Sequence[ClusterRoot]], ClusterModel],
) -> tuple[list[ClusterModel], list[Problem], tuple[str, ...]]:
    """Which discovered roots are clusters, the problems that say why a folder is not, and
    the folders reported so. A root found by a layout heuristic is a cluster
    only when it is nobody's child (``somebodys_child``), and a directory of Flux
    Kustomizations whose build fails at the root is a cluster folder not yet bootstrapped.
    One cluster reached from two roots (one root applies, into its own cluster, the
    document that declares the other: a FluxInstance over a folder of its tree) is one
    cluster, walked again from both roots (``declares``)."""
    problems: list[Problem] = []
    not_clusters: list[str] = []
    kept: list[tuple[ClusterRoot, ClusterModel]] = []
    for r, m in walked:
        if r.weak:
            others = [o for _, o in walked if o is not m]
            if somebodys_child(r, m, others, cache) is not None:
                continue  # its Kustomizations are reported by unapplied() if no cluster applies them
            root = m.kustomizations.get(m.root_id)
            if r.how == FLUX_DIRECTORY and root is not None and root.status == "failed":
                why = next((p.message for p in root.problems if not p.not_evaluated), "its build fails")
                problems.append(
                    Problem(
                        "not-a-cluster",
                        f"{r.dir} holds Flux Kustomizations like a cluster folder, but its own build fails ({why}): "
                        "taken as a folder not yet bootstrapped, not as a cluster; not analysed (name it with --cluster "
                        "or the configuration's clusters: to judge it)",
                        r.location or Location(r.dir),
                        not_evaluated=True,
                    )
                )
                not_clusters.append(r.dir)
                continue
        kept.append((r, m))
    merged: dict[int, list[ClusterRoot]] = {}
    into: set[int] = set()
    for i, (ra, ma) in enumerate(kept):
        for j, (rb, mb) in enumerate(kept):
            if i == j or j in into or i in into or j in merged:
                continue
            if rb.dir != ra.dir and mb.root_id != ma.root_id and declares(ma, rb) and not declares(mb, ra):
                merged.setdefault(i, []).append(rb)
                into.add(j)
    out: list[ClusterModel] = []
    for i, (r, m) in enumerate(kept):
        if i in into:
            continue
        if i in merged:
            # what both roots apply is object-applied-twice's to report
            m = walk(r, merged[i])
        out.append(m)
    return out, problems, tuple(not_clusters)


def _no_cluster_message(cache: FileCache, builder: Builder, fs: RepoFS, where: object) -> str:
    """Why nothing can be analysed, and what the repository looks like: an Argo CD
    repository, a tenant repository that a fleet's Flux Kustomizations pull in (with the
    folders ``--cluster`` could take), or neither."""
    looked = (
        "looked for flux-system/gotk-sync.yaml, FluxInstance sync paths, self-applying root Kustomizations and "
        "clusters/<name> directories"
    )
    extra = ""
    limits = [p for p in fs.problems if p.code == "input-limit"]
    if limits:
        extra += f" ({limits[0].location.file}: {limits[0].message})"
    if fs.escaping:
        extra += f" ({fs.escaping[0]} is a symlink that leaves the repository root; not read)"
    kinds = repository_kinds(cache)
    argo = sum(n for (group, _), n in kinds.items() if group == "argoproj.io")
    flux_objects = sum(n for (group, _), n in kinds.items() if group in FLUX_OBJECT_GROUPS)
    if argo and not kinds.get(("kustomize.toolkit.fluxcd.io", "Kustomization")):
        return (
            f"{where}: no Flux cluster found ({looked}): it looks like an Argo CD repository ({argo} argoproj.io "
            f"object{'s' if argo != 1 else ''} and no Flux Kustomization); fluxgraph reads Flux repositories" + extra
        )
    if flux_objects:
        counts = ", ".join(
            f"{n} {kind_plural(kind, n)}"
            for (group, kind), n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
            if group in FLUX_OBJECT_GROUPS
        )
        tops = overlay_candidates(cache, builder)
        shown = ", ".join(tops[:MAX_LISTED]) + (f" and {len(tops) - MAX_LISTED} more" if len(tops) > MAX_LISTED else "")
        return (
            f"{where}: no Flux cluster found ({looked}): it looks like a tenant repository that a fleet's Flux "
            f"Kustomizations build ({counts}, and no root Kustomization); judge one of its folders with "
            f"--cluster DIR" + (f", e.g. {shown}" if tops else "") + " (what only the fleet's Kustomization decides, "
            "such as its targetNamespace, is then not evaluated)" + extra
        )
    return f"{where}: no Flux cluster found ({looked}), and no Flux object at all; name one with --cluster DIR" + extra


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
    clusters: list[str] | None = None,
    env: str | None = None,
    flux_version: str | None = None,
    strict: bool | None = None,
    extra_vars: dict[str, str] | None = None,
    document_memo: dict[tuple[str, bytes], LoadResult] | None = None,
    shared_builds: SharedBuilds | None = None,
) -> Repository:
    """Build the reconcile model of every cluster in the repository at ``path`` (a directory, or
    a ``RepoFS`` such as a git revision served from memory by ``gitrev.Tree.fs()``).

    ``cluster`` is the repo-relative directory of a cluster's root Kustomization; ``env`` is
    shorthand for ``clusters/<env>``; ``clusters`` lists the clusters' directories (the
    configuration's ``clusters:``, for layouts discovery cannot read: entrypoints set in
    Terraform, stale bootstrap folders kept in the tree), instead of discovering them. ``document_memo`` shares parsed files between loads
    (keyed by path and content); ``shared_builds`` shares kustomize builds between two revisions
(``kustomize.build.SharedBuilds``). Raises FluxgraphError when nothing can be analysed.
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
    # the second revision of a diff takes the first's .sourceignore matcher (none differs, or
    # nothing is shared: revisions.load_pair) and, where no changed file is one discovery
    # reads, its discovered roots
    shared = shared_builds
    second = shared is not None and shared.second
    ignore = shared.ignore if shared is not None and second and shared.ignore is not None else _ignore_matcher(fs)
    cache = FileCache(fs, ignore, document_memo)
    builder = Builder(cache, shared_builds)
    is_strict = strict if strict is not None else flux_is_strict(flux_version)
    # what the command line says of the Flux that runs wins over what the repository pins
    user_flux = (
        FluxRelease(flux_version, "--flux-version", strict, "--strict" if strict is not None else "")
        if flux_version is not None or strict is not None
        else None
    )
    problems: list[Problem] = []

    if env is not None and cluster is not None:
        raise FluxgraphError("give either --cluster or --env, not both")
    if env is not None:
        cluster = f"clusters/{env}"
    if shared is not None and second and shared.discovered is not None and shared.discovery_same:
        discovered = list(shared.discovered)
    else:
        with _note_last_file(fs):
            discovered = discover(cache)
    if shared is not None and not second:
        shared.ignore, shared.discovered = ignore, list(discovered)
    wanted = [cluster] if cluster is not None else list(clusters or [])
    if wanted:
        roots = [_named_root(c, discovered, cache, where) for c in wanted]
    else:
        roots = discovered
    if not roots:
        raise FluxgraphError(_no_cluster_message(cache, builder, fs, where))

    crds = RepositoryCRDs(cache)  # scope of custom kinds, from CRD files anywhere in the repo

    def walk(
        root: ClusterRoot,
        extra: Sequence[ClusterRoot] = (),
        strict_as: bool | None = None,
        mutators: list[admission.Mutator] | None = None,
        prior: ClusterModel | None = None,
    ) -> ClusterModel:
        """The model of the cluster at ``root`` (and ``extra`` roots). Without --flux-version
        or --strict, strictness follows the Flux the cluster runs (``fluxrelease.detect``):
        the cluster is walked again when that is not the latest's."""
        root_problems: list[Problem] = []
        with _note_last_file(fs):
            spec, src = _root_of(root, root_problems, cache)
            model = ClusterModel(
                name=root.dir or ".",
                root_dir=root.dir,
                root_id=spec.id,
                strict=is_strict if strict_as is None else strict_as,
                discovered_by=root.how,
                scopes=ScopeTable(crds),
                synthesized_root=root.root_doc is None and root.how == "--cluster",
            )
            model.problems.extend(root_problems)
            if model.synthesized_root:
                model.problems.append(
                    Problem(
                        "not-evaluated-root",
                        f"--cluster {root.dir or '.'} names no root the repository declares: fluxgraph builds the folder "
                        "as a root of its own, so what the Kustomization that applies it in the cluster decides (its "
                        "targetNamespace, patches, postBuild) is not evaluated",
                        Location(root.dir or "."),
                        not_evaluated=True,
                        kustomization=spec.id,
                    )
                )
            more = [_root_of(r, model.problems, cache) for r in extra]
            ClusterWalker(
                builder, model, spec, src, extra_vars=extra_vars, extra_roots=more, mutators=mutators, prior=prior
            ).run()
            if mutators is None:
                # admission that changes Flux objects: walked again with it known
                found = admission.mutators(model.objects(), admission.releases(model))
                if found:
                    return walk(root, extra, strict_as, found, model)
            if user_flux is None or user_flux.version == fluxrelease.NEXT:
                model.flux = fluxrelease.detect(model, cache)
                if user_flux is not None:
                    # --flux-version next: the release after the one this cluster runs
                    model.flux = fluxrelease.next_release(model.flux)
                    if user_flux.strict_gate is not None:
                        model.flux = replace(model.flux, strict_gate=user_flux.strict_gate, gate_where=user_flux.gate_where)
                if strict_as is None and model.flux.strict != model.strict:
                    return walk(root, extra, model.flux.strict, mutators, prior)
            else:
                model.flux = user_flux
            unchecked = fluxapi.unevaluated(model)
            if unchecked is not None:
                model.problems.append(unchecked)
        return model

    walked = [(root, walk(root)) for root in roots]
    if wanted:
        kept = [m for _, m in walked]
    else:
        kept, dropped, not_clusters = _judge_roots(walked, cache, builder, walk)
        problems.extend(dropped)
        # Flux Kustomizations no discovered cluster applies (a ks.yaml left out of its parent),
        # and what a failed build would apply
        problems.extend(unapplied(cache, kept, builder, not_clusters))
    # limits the file system walk hit and file names it could not read (repofs.RepoFS.problems)
    # concern every cluster: what they hide may belong to any of them
    for m in kept:
        m.problems.extend(fs.problems)
    built = {f for m in kept for ks in m.kustomizations.values() for f in ks.files}
    # what runs before Flux reads the whole tree, not the artifact: a GitRepository's
    # spec.ignore (or .sourceignore) that leaves out bootstrap/ and scripts/ hides them from
    # Flux, not from the person who runs them
    whole = cache if cache.ignore is None else FileCache(fs, memo=document_memo)
    return Repository(
        root=fs.root,
        clusters=sorted(kept, key=lambda c: c.root_dir),
        problems=problems,
        cache=cache,
        helmfile_releases=helmfile_releases(whole),
        bootstrap_charts=bootstrap_charts(whole, built),
        bootstrap_objects=bootstrap_objects(whole, built),
    )
