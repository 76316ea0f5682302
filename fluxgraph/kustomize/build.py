"""A static ``kustomize build``, as kustomize-controller runs it, without any binary.

Follows kustomize v5 ``api/krusty`` and ``api/internal/target/kusttarget.go``:

* ``accumulateTarget``: resources (files, directories with a kustomization file, nested
  builds), then components (each runs its own generators and transformers over everything
  accumulated so far), then generators (``configMapGenerator``, ``secretGenerator``), then the
  builtin transformers in kustomize's fixed order (``configureBuiltinTransformers``):
  patchesStrategicMerge, patches, namespace, namePrefix/nameSuffix, labels/commonLabels,
  commonAnnotations, patchesJson6902, replicas, images, replacements.
* At the top level only: the content-hash suffix of generated ConfigMaps/Secrets, then
  ``FixBackReferences`` (references to renamed objects are rewritten).

A directory without a kustomization file gets the one Flux generates (fluxcd/pkg
``kustomize/kustomize_generator.go`` ``generateKustomization``): every ``.yaml``/``.yml`` file
below it, a subdirectory holding a kustomization file as one unit. That only happens at the
top of a Flux Kustomization's path; a kustomize ``resources`` entry naming a directory without a
kustomization file is an error in kustomize too.

Nothing is executed or fetched: remote resources, ``helmCharts`` and generator/transformer
plugins are reported as not evaluated and the build is marked incomplete.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from fluxgraph.filecache import FileCache
from fluxgraph.kustomize import generators, json6902, namereference, selector, smp
from fluxgraph.kustomize.builtins import (
    BUILTIN_TRANSFORMERS,
    COMMON_ANNOTATIONS,
    REPLICA_KINDS,
    apply_field_specs,
    apply_images,
    apply_labels,
    set_namespace,
)
from fluxgraph.kustomize.errors import KustomizeError
from fluxgraph.kustomize.replacements import apply_replacements
from fluxgraph.kustomize.resource import Origin, Resource, copy_data
from fluxgraph.model import Location, Problem, as_dict, as_list, as_str
from fluxgraph.repofs import FileTooLarge, PathEscape, join
from fluxgraph.yamlio import load_text

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_REMOTE_RE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@|github\.com/|gitlab\.com/|bitbucket\.org/)", re.I)
MAX_BUILD_DEPTH = 64


@dataclass
class BuildResult:
    resources: list[Resource]
    problems: list[Problem] = field(default_factory=list)
    incomplete: bool = False
    files: set[str] = field(default_factory=set)  # every file the build read
    # the remembered build this result is (``Builder._memo``, shared between revisions by
    # ``SharedBuilds``): the same object at both sides means the same build
    memo: _Built | None = None
    # ``resources`` are the remembered build's own (``Builder.build(copy=False)``): read them,
    # take ``owned()`` to change them
    borrowed: bool = False

    @property
    def failed(self) -> bool:
        return any(not p.not_evaluated for p in self.problems)

    def owned(self) -> BuildResult:
        """This result with resources of its own (a copy of borrowed ones)."""
        if not self.borrowed:
            return self
        return replace(self, resources=[r.copy() for r in self.resources], borrowed=False)


class _Fail(Exception):
    """Aborts one kustomization build with a located problem (a kustomize build error)."""

    def __init__(self, problem: Problem):
        super().__init__(problem.message)
        self.problem = problem


def find_kustomization_file(cache: FileCache, d: str) -> str | None:
    for name in KUSTOMIZATION_FILES:
        p = f"{d}/{name}" if d else name
        if cache.is_file(p):
            return p
    return None


def is_remote(ref: str) -> bool:
    return bool(_REMOTE_RE.match(ref)) or ref.startswith(("https:", "http:", "ssh:", "oci:"))


@dataclass
class _Ctx:
    """State of one top-level build."""

    problems: list[Problem]
    files: set[str]
    incomplete: bool = False
    stack: list[str] = field(default_factory=list)
    name_ref_config: list[Any] = field(default_factory=list)


_Built = tuple[list[Resource], list[Problem], bool, set[str]]  # resources, problems, incomplete, files read


@dataclass
class SharedBuilds:
    """Builds shared between two revisions of one repository (``fluxgraph diff``): the first
    load records its top-level builds in ``memo``; the second, given ``changed`` (the paths that
    differ between the revisions), reuses one whose inputs cannot have changed. A build is
    reused only when it succeeded completely and no changed path is a file it read or lies in a
    folder it read from or below its build directory (Flux's generated kustomization lists
    those folders, and a file added there would join the build); its key already holds the
    kustomization content with the Flux Kustomization's overlay (patches, images, components...).

    The second load also takes the first's walk of a reused build (``walks``), its
    ``.sourceignore`` matcher and, where discovery cannot see the change, its cluster roots."""

    memo: dict[str, tuple[_Built, str]] = field(default_factory=dict)  # key -> (build, build dir)
    changed: frozenset[str] | None = None  # None: this side records
    reused: int = 0
    # what the first side's walk made of a remembered build, by (cluster, Kustomization id):
    # ``cluster.WalkRecord``, taken again by the second side's walk where its inputs are equal
    walks: dict[tuple[str, str], Any] = field(default_factory=dict)
    walks_reused: int = 0
    # the first side's .sourceignore matcher and discovered cluster roots (``api.load``); the
    # roots are taken again only where ``discovery_same`` (``revisions.discovery_same``)
    ignore: Any = None
    discovered: list[Any] | None = None
    discovery_same: bool = False

    @property
    def second(self) -> bool:
        """This is the second load, which takes what the first recorded (``changed`` is set)."""
        return self.changed is not None

    def lookup(self, key: str) -> _Built | None:
        if self.changed is None:
            return None
        hit = self.memo.get(key)
        if hit is None:
            return None
        (res, probs, incomplete, files), path = hit
        if probs or incomplete:
            return None
        dirs = {path} | {posixpath.dirname(f) for f in files}
        if "" in dirs:
            return None  # a build that reads the repository root: any change may reach it
        for c in self.changed:
            if c in files or any(c.startswith(d + "/") for d in dirs):
                return None
        self.reused += 1
        return hit[0]

    def record(self, key: str, built: _Built, path: str) -> None:
        if not self.second:
            self.memo[key] = (built, path)


def _from_memo(memo: _Built, copy: bool) -> BuildResult:
    res, probs, incomplete, files = memo
    if copy:
        return BuildResult([r.copy() for r in res], list(probs), incomplete, set(files), memo)
    return BuildResult(res, list(probs), incomplete, set(files), memo, borrowed=True)


class Builder:
    def __init__(self, cache: FileCache, shared: SharedBuilds | None = None):
        self.cache = cache
        self.shared = shared
        self._memo: dict[str, _Built] = {}
        self._inline: dict[str, list[Any]] = {}  # inline YAML text -> its documents' data

    def _remembered(self, key: str) -> _Built | None:
        memo = self._memo.get(key)
        if memo is None and self.shared is not None:
            memo = self.shared.lookup(key)
            if memo is not None:
                self._memo[key] = memo
        return memo

    # -- public -----------------------------------------------------------------------
    def build(
        self,
        path: str,
        overlay: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        *,
        generate: bool = True,
        kustomization_label: str | None = None,
        copy: bool = True,
    ) -> BuildResult:
        """Build the directory ``path`` (repo-relative) and finish it as a top-level build.

        ``overlay`` may rewrite the kustomization content first (kustomize-controller writes
        ``targetNamespace``, ``patches``, ``images``, ``components``, ``namePrefix``... of the
        Flux Kustomization into it). ``generate`` makes a directory without a kustomization
        file build like Flux's generated one. ``copy=False``: a remembered build is returned
        with its own resources, ``borrowed`` (read only).
        """
        ctx = _Ctx(problems=[], files=set())
        key: str | None = path if generate else None
        if overlay is None and key is not None:
            memo = self._remembered(key)
            if memo is not None:
                return _from_memo(memo, copy)
        try:
            kfile, kdata = self._kustomization_for(path, ctx, generate=generate)
            if overlay is not None:
                kdata = overlay(kdata)
                # the same directory with the same overlaid kustomization builds the same: a
                # cluster walked again (admission, strictness, a second root) reuses it
                key = f"{path}\0{json.dumps(kdata, sort_keys=True, default=str)}" if generate else None
                memo = self._remembered(key) if key is not None else None
                if memo is not None:
                    return _from_memo(memo, copy)
            resources = self._build_kustomization(path, kfile, kdata, ctx, is_component=False)
            resources = self._finish(resources, ctx)
            # local configuration is the build's input only: kustomize leaves it out of what it
            # prints, and Flux applies what it prints. Its bases' local objects stay readable
            # until here (a replacement's source), as kustomize v5.5 does (`kubectl kustomize`)
            resources = [r for r in resources if not r.local_config]
        except _Fail as f:
            ctx.problems.append(f.problem)
            resources = []
        result = BuildResult(resources, ctx.problems, ctx.incomplete, ctx.files)
        if key is not None:
            built: _Built = ([r.copy() for r in resources], list(ctx.problems), ctx.incomplete, set(ctx.files))
            self._memo[key] = built
            result.memo = built
            if self.shared is not None:
                self.shared.record(key, built, path)
        return result

    def reach(self, path: str, limit: int = 20_000) -> set[str]:
        """The resource files a build of ``path`` would read, found without building: the
        files its kustomization (or Flux's generated one) lists under ``resources``, ``bases``
        and ``components``, directories followed, whatever would make the build fail. What a
        Kustomization whose build fails would have applied comes from these files."""
        out: set[str] = set()
        seen: set[str] = set()
        stack: list[tuple[str, bool]] = [(path, True)]
        while stack and len(seen) < limit:
            d, top = stack.pop()
            if d in seen:
                continue
            seen.add(d)
            kfile = find_kustomization_file(self.cache, d)
            entries: list[str] = []
            if kfile is None:
                if not top:
                    continue  # kustomize refuses a listed directory without one
                try:
                    entries = self._generated_resources(d, _Ctx(problems=[], files=set()))
                except _Fail:
                    continue
            else:
                docs, _ = self.cache.documents(kfile)
                k = docs[0].data if len(docs) == 1 and isinstance(docs[0].data, dict) else {}
                for key in ("resources", "bases", "components"):
                    entries.extend(e for e in as_list(k.get(key)) if isinstance(e, str) and not is_remote(e))
            for e in entries:
                try:
                    p = join(d, e)
                except PathEscape:
                    continue
                if self.cache.fs.escapes(p):
                    continue
                if self.cache.is_dir(p):
                    stack.append((p, False))
                elif self.cache.is_file(p):
                    out.add(p)
        return out

    # -- kustomization files ----------------------------------------------------------
    def _kustomization_for(self, d: str, ctx: _Ctx, *, generate: bool) -> tuple[str, dict[str, Any]]:
        kfile = find_kustomization_file(self.cache, d)
        if kfile is not None:
            return kfile, self._load_kustomization(kfile, ctx)
        if not generate:
            raise _Fail(
                Problem(
                    "missing-kustomization",
                    f"directory {d or '.'} has no kustomization.yaml, kustomization.yml or Kustomization",
                    Location(d or ".", 1, 1),
                    subject="no-kustomization-file",
                )
            )
        return (d + "/" if d else "") + "<generated>", {"resources": self._generated_resources(d, ctx)}

    def _load_kustomization(self, kfile: str, ctx: _Ctx) -> dict[str, Any]:
        ctx.files.add(kfile)
        docs, problems = self.cache.documents(kfile)
        if problems:
            raise _Fail(problems[0])
        if not docs:
            return {}
        if len(docs) > 1:
            raise _Fail(Problem("kustomize-build", f"{kfile} holds more than one document", Location(kfile, docs[1].line), subject="documents"))
        data = docs[0].data
        if not isinstance(data, dict):
            raise _Fail(Problem("kustomize-build", f"{kfile} is not a mapping", Location(kfile, docs[0].line), subject="not-a-mapping"))
        return data

    def _generated_resources(self, d: str, ctx: _Ctx) -> list[str]:
        """Flux's scan: every .yaml/.yml below d (lexical walk order); subdirs with their own
        kustomization file are one unit. Each file must decode as Kubernetes objects."""
        out: list[str] = []
        if not self.cache.is_dir(d):
            raise _Fail(Problem("missing-path", f"directory {d or '.'} does not exist", Location(d or "."), subject=f"directory:{d or '.'}"))
        # lexical pre-order with an explicit stack of listings, as Go's filepath.Walk; like
        # Walk (which lstats), a symlinked directory is not descended into
        stack: list[tuple[str, Iterator[str]]] = [(d, iter(self.cache.fs.listdir(d)))]
        while stack:
            cur, names = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                continue
            child = f"{cur}/{name}" if cur else name
            if self.cache.fs.is_symlink(child) and self.cache.fs.is_dir(child):
                continue
            if self.cache.is_dir(child):
                if find_kustomization_file(self.cache, child) is not None:
                    out.append(posixpath.relpath(child, d or "."))
                else:
                    stack.append((child, iter(self.cache.fs.listdir(child))))
            elif self.cache.is_file(child) and name.endswith((".yaml", ".yml")):
                out.append(posixpath.relpath(child, d or "."))
            elif self.cache.visible(child, False) and self.cache.fs.escapes(child):
                ctx.problems.append(
                    Problem("path-escape", f"{child} is a symlink that leaves the repository root; not read", Location(child), subject=f"symlink:{child}")
                )
        return out

    # -- the build itself -------------------------------------------------------------
    def _build_kustomization(
        self,
        d: str,
        kfile: str,
        k: dict[str, Any],
        ctx: _Ctx,
        *,
        is_component: bool,
        acc: list[Resource] | None = None,
    ) -> list[Resource]:
        if d in ctx.stack:
            cycle = " -> ".join([*ctx.stack[ctx.stack.index(d) :], d])
            raise _Fail(Problem("resource-cycle", f"kustomize resource cycle: {cycle}", Location(kfile), subject=f"cycle:{cycle}"))
        if len(ctx.stack) > MAX_BUILD_DEPTH:
            raise _Fail(Problem("input-limit", f"kustomization nesting deeper than {MAX_BUILD_DEPTH}", Location(kfile), subject="nesting"))
        ctx.stack.append(d)
        try:
            return self._build_inner(d, kfile, k, ctx, is_component=is_component, acc=acc)
        finally:
            ctx.stack.pop()

    def _loc(self, kfile: str, k: dict[str, Any], *path: Any) -> Location:
        docs, _ = self.cache.documents(kfile) if not kfile.endswith("<generated>") else ([], [])
        if docs:
            line, col = docs[0].position(path)
            return Location(kfile, line, col)
        return Location(kfile.replace("/<generated>", "").replace("<generated>", ".") or ".")

    def _build_inner(
        self,
        d: str,
        kfile: str,
        k: dict[str, Any],
        ctx: _Ctx,
        *,
        is_component: bool,
        acc: list[Resource] | None,
    ) -> list[Resource]:
        kind = k.get("kind")
        if is_component and kind != "Component":
            raise _Fail(Problem("kustomize-build", f"{kfile} is used as a component but its kind is {kind or 'Kustomization'}", self._loc(kfile, k), subject="component-kind"))
        if not is_component and kind == "Component":
            raise _Fail(Problem("kustomize-build", f"{kfile} is a Component and cannot be used as a resource", self._loc(kfile, k), subject="component-as-resource"))
        resources: list[Resource] = acc if acc is not None else []

        for key in ("helmCharts", "helmChartInflationGenerator", "generators", "validators"):
            if k.get(key):
                ctx.incomplete = True
                ctx.problems.append(
                    Problem(
                        "not-evaluated-plugin",
                        f"{key} in {kfile} is not evaluated: fluxgraph never runs generators, transformers or Helm charts",
                        self._loc(kfile, k, key),
                        not_evaluated=True,
                    )
                )

        # 1. resources (and the legacy bases)
        ids: dict[tuple[str, str, str, str], Resource] = {r.id_key(): r for r in resources}
        for key in ("bases", "resources"):
            entries = k.get(key) or []
            if not isinstance(entries, list):
                raise _Fail(Problem("kustomize-build", f"{key} in {kfile} must be a list", self._loc(kfile, k, key), subject=f"{key}:not-a-list"))
            for i, entry in enumerate(entries):
                if not isinstance(entry, str):
                    raise _Fail(Problem("kustomize-build", f"{key}[{i}] in {kfile} must be a string", self._loc(kfile, k, key, i), subject=f"{key}[{i}]:not-a-string"))
                for r in self._accumulate_entry(d, kfile, k, key, i, entry, ctx):
                    self._add(resources, ids, r, kfile, k, key, i)

        # 2. components
        comps = k.get("components") or []
        if not isinstance(comps, list):
            raise _Fail(Problem("kustomize-build", f"components in {kfile} must be a list", self._loc(kfile, k, "components"), subject="components:not-a-list"))
        for i, entry in enumerate(comps):
            if not isinstance(entry, str):
                raise _Fail(Problem("kustomize-build", f"components[{i}] must be a string", self._loc(kfile, k, "components", i), subject=f"components[{i}]:not-a-string"))
            if is_remote(entry):
                self._remote(kfile, k, "components", i, entry, ctx)
                continue
            cdir = self._join(d, entry, kfile, k, "components", i)
            ckfile = find_kustomization_file(self.cache, cdir)
            if ckfile is None:
                raise _Fail(
                    Problem("missing-file", f"component {entry!r} of {kfile} has no kustomization file", self._loc(kfile, k, "components", i), subject=f"components[{i}]:{entry}")
                )
            ck = self._load_kustomization(ckfile, ctx)
            before = {id(r) for r in resources}
            resources = self._build_kustomization(cdir, ckfile, ck, ctx, is_component=True, acc=resources)
            for r in resources:  # what the component brought joins this kustomization's build
                if id(r) in before:
                    continue
                if r.origin.home == ckfile:
                    r.origin = replace(r.origin, home=kfile)
                else:  # from a directory the component lists: entered through this kustomization
                    r.origin = replace(r.origin, via=(kfile, *r.origin.via))

        # 3. configurations (nameReference specs) are collected for the back-reference fix
        cfgs = k.get("configurations") or []
        if not isinstance(cfgs, list):
            raise _Fail(Problem("kustomize-build", f"configurations in {kfile} must be a list", self._loc(kfile, k, "configurations"), subject="configurations:not-a-list"))
        for i, cfg in enumerate(cfgs):
            if isinstance(cfg, str):
                cpath = self._join(d, cfg, kfile, k, "configurations", i)
                docs, probs = self.cache.documents(cpath)
                ctx.files.add(cpath)
                if probs:
                    raise _Fail(probs[0])
                for doc in docs:
                    if isinstance(doc.data, dict):
                        try:
                            ctx.name_ref_config.extend(namereference.parse_name_reference_config(doc.data))
                        except KustomizeError as e:
                            raise _Fail(Problem("kustomize-build", f"{cpath}: {e}", Location(cpath, doc.line), subject="configurations")) from None

        # 4. generators
        self._run_generators(d, kfile, k, resources, ctx)

        # 5. transformers in kustomize's order: those of the kustomization's fields, then the
        # ``transformers:`` entries (api/internal/target/kusttarget.go ``runTransformers``)
        self._run_transformers(d, kfile, k, resources, ctx)
        if k.get("transformers"):
            self._run_transformer_configs(d, kfile, k, resources, ctx)
        return resources

    def _run_transformer_configs(self, d: str, kfile: str, k: dict[str, Any], resources: list[Resource], ctx: _Ctx) -> None:
        """The ``transformers:`` entries: inline YAML (an entry with a newline), files, or
        kustomization directories whose built objects are the configurations
        (kusttarget.go ``configureExternalTransformers``). The builtin ones that
        ``BUILTIN_TRANSFORMERS`` models run (kustomize-controller always allows builtin
        plugins); any other configuration is not evaluated."""
        entries = k.get("transformers")
        if not isinstance(entries, list):
            raise _Fail(Problem("kustomize-build", f"transformers in {kfile} must be a list", self._loc(kfile, k, "transformers"), subject="transformers:not-a-list"))
        for i, entry in enumerate(entries):
            loc = self._loc(kfile, k, "transformers", i)
            if not isinstance(entry, str):
                raise _Fail(Problem("kustomize-build", f"transformers[{i}] in {kfile} must be a string", loc, subject=f"transformers[{i}]:not-a-string"))
            if "\n" in entry:
                try:
                    configs = [x for x in self._load_text(entry) if x is not None]
                except Exception as e:  # noqa: BLE001 - any parse error is a build error
                    raise _Fail(Problem("kustomize-build", f"transformers[{i}] in {kfile}: {e}", loc, subject=f"transformers[{i}]")) from None
            else:
                configs = [r.data for r in self._accumulate_entry(d, kfile, k, "transformers", i, entry, ctx)]
            for cfg in configs:
                kind = as_str(cfg.get("kind")) if isinstance(cfg, dict) else ""
                fn = BUILTIN_TRANSFORMERS.get(kind) if isinstance(cfg, dict) and cfg.get("apiVersion") == "builtin" else None
                if fn is None:
                    ctx.incomplete = True
                    ctx.problems.append(
                        Problem(
                            "not-evaluated-plugin",
                            f"transformers[{i}] in {kfile} ({kind or 'not a transformer configuration'}) is not evaluated: "
                            f"fluxgraph runs only the builtin {', '.join(sorted(BUILTIN_TRANSFORMERS))}",
                            loc,
                            not_evaluated=True,
                        )
                    )
                    continue
                try:
                    fn(resources, cfg)
                except KustomizeError as e:
                    raise _Fail(Problem("kustomize-build", f"transformers[{i}] in {kfile}: {e}", loc, subject=f"transformers[{i}]")) from None

    def _join(self, d: str, entry: str, kfile: str, k: dict[str, Any], key: str, i: int) -> str:
        try:
            p = join(d, entry)
        except PathEscape as e:
            raise _Fail(Problem("path-escape", f"{key}[{i}] in {kfile}: {e}; not read", self._loc(kfile, k, key, i), subject=f"{key}[{i}]:escape")) from None
        if self.cache.fs.escapes(p):
            raise _Fail(
                Problem("path-escape", f"{key}[{i}] in {kfile}: {entry!r} is a symlink that leaves the repository root; not read", self._loc(kfile, k, key, i), subject=f"{key}[{i}]:symlink")
            )
        return p

    def _remote(self, kfile: str, k: dict[str, Any], key: str, i: int, entry: str, ctx: _Ctx) -> None:
        ctx.incomplete = True
        ctx.problems.append(
            Problem(
                "not-evaluated-remote",
                f"remote {key[:-1] if key.endswith('s') else key} {entry!r} in {kfile} is not fetched; its objects are not analysed",
                self._loc(kfile, k, key, i),
                not_evaluated=True,
            )
        )

    def _accumulate_entry(
        self, d: str, kfile: str, k: dict[str, Any], key: str, i: int, entry: str, ctx: _Ctx
    ) -> list[Resource]:
        if is_remote(entry):
            self._remote(kfile, k, key, i, entry, ctx)
            return []
        p = self._join(d, entry, kfile, k, key, i)
        if self.cache.is_dir(p):
            sub_kfile = find_kustomization_file(self.cache, p)
            if sub_kfile is None:
                if kfile.endswith("<generated>"):
                    raise _Fail(Problem("kustomize-build", f"{p} has no kustomization file", Location(p), subject="no-kustomization-file"))
                raise _Fail(
                    Problem(
                        "missing-kustomization",
                        f"{key}[{i}] {entry!r} in {kfile} is a directory without a kustomization file",
                        self._loc(kfile, k, key, i),
                        subject=f"{key}[{i}]:no-kustomization-file",
                    )
                )
            sub = self._load_kustomization(sub_kfile, ctx)
            built = self._build_kustomization(p, sub_kfile, sub, ctx, is_component=False)
            for r in built:
                r.origin = replace(r.origin, via=(kfile, *r.origin.via))
            return built
        if self.cache.is_file(p):
            return self._read_resource_file(p, ctx, strict=not kfile.endswith("<generated>"), kfile=kfile, kloc=self._loc(kfile, k, key, i))
        if self.cache.fs.exists(p):
            raise _Fail(Problem("missing-file", f"{key}[{i}] {entry!r} in {kfile} is not a regular file", self._loc(kfile, k, key, i), subject=f"{key}[{i}]:not-a-file"))
        raise _Fail(
            Problem(
                "missing-file",
                f"{key}[{i}] {entry!r} in {kfile} does not exist",
                self._loc(kfile, k, key, i),
                subject=f"{key}[{i}]:missing",
            )
        )

    def _read_resource_file(
        self, p: str, ctx: _Ctx, *, strict: bool, kfile: str, kloc: Location
    ) -> list[Resource]:
        ctx.files.add(p)
        docs, problems = self.cache.documents(p)
        if problems:
            raise _Fail(problems[0])
        out: list[Resource] = []
        for doc in docs:
            data = doc.data
            if not isinstance(data, dict):
                raise _Fail(
                    Problem(
                        "not-kubernetes-object",
                        f"document {doc.index + 1} of {p} is a {type(data).__name__}, not a Kubernetes object",
                        Location(p, doc.line),
                        subject=f"document-{doc.index}:not-an-object",
                    )
                )
            kind = data.get("kind")
            if data.get("apiVersion") in ("kustomize.config.k8s.io/v1beta1", "kustomize.config.k8s.io/v1alpha1") and kind in (
                "Kustomization",
                "Component",
            ):
                raise _Fail(
                    Problem(
                        "kustomize-build",
                        f"{p} is a kustomize {kind} and cannot be listed as a resource file (list its directory)",
                        Location(p, doc.line),
                        subject=f"document-{doc.index}:kustomize-{kind}",
                    )
                )
            if not isinstance(kind, str) or not kind or not isinstance(data.get("apiVersion"), str):
                missing = "kind" if not isinstance(kind, str) or not kind else "apiVersion"
                raise _Fail(
                    Problem(
                        "not-kubernetes-object",
                        f"document {doc.index + 1} of {p} has no {missing}: not a Kubernetes object",
                        Location(p, doc.line),
                        subject=f"document-{doc.index}:no-{missing}",
                    )
                )
            if kind == "List" or (kind.endswith("List") and isinstance(data.get("items"), list)):
                for j, item in enumerate(data.get("items") or []):
                    if isinstance(item, dict):
                        out.append(Resource(copy_data(item), Origin(p, doc.line, doc.index, (), home=kfile), None))
                    else:
                        raise _Fail(Problem("not-kubernetes-object", f"items[{j}] of {p} is not an object", Location(p, doc.line), subject=f"items[{j}]"))
                continue
            md = data.get("metadata")
            if not isinstance(md, dict) or not md.get("name"):
                if not (isinstance(md, dict) and md.get("generateName")):
                    raise _Fail(
                        Problem(
                            "not-kubernetes-object",
                            f"{kind} in document {doc.index + 1} of {p} has no metadata.name",
                            Location(p, doc.line),
                            subject=f"document-{doc.index}:no-name",
                        )
                    )
            # documents are shared through the file cache; transformers mutate, so copy
            out.append(Resource(copy_data(data), Origin(p, doc.line, doc.index, (), home=kfile), doc))
        return out

    def _add(
        self,
        resources: list[Resource],
        ids: dict[tuple[str, str, str, str], Resource],
        r: Resource,
        kfile: str,
        k: dict[str, Any],
        key: str,
        i: int,
    ) -> None:
        rid = r.id_key()
        other = ids.get(rid)
        if other is not None:
            raise _Fail(
                    Problem(
                        "kustomize-build",
                        f"may not add resource with an already registered id: {r.ref} "
                        f"(from {r.origin.file}:{r.origin.line} and {other.origin.file}:{other.origin.line})",
                        self._loc(kfile, k, key, i),
                        subject=f"{key}[{i}]:duplicate:{r.ref}",
                        related=(other.origin.location,),
                    )
                )
        ids[rid] = r
        resources.append(r)

    # -- generators -------------------------------------------------------------------
    def _run_generators(self, d: str, kfile: str, k: dict[str, Any], resources: list[Resource], ctx: _Ctx) -> None:
        opts = k.get("generatorOptions") if isinstance(k.get("generatorOptions"), dict) else None

        def read(rel: str) -> bytes:
            if generators.is_url(rel):
                raise generators.RemoteInput(rel)
            p = join(d, rel)
            if self.cache.fs.escapes(p):
                raise PathEscape(f"{rel!r} is a symlink that leaves the repository root")
            ctx.files.add(p)
            try:
                return self.cache.read_bytes(p)
            except OSError as e:
                raise KustomizeError(f"cannot read {p}: {e.strerror or e}") from None

        for key, fn in (("configMapGenerator", generators.configmap_from_args), ("secretGenerator", generators.secret_from_args)):
            entries = k.get(key) or []
            if not isinstance(entries, list):
                raise _Fail(Problem("kustomize-build", f"{key} in {kfile} must be a list", self._loc(kfile, k, key), subject=f"{key}:not-a-list"))
            for i, args in enumerate(entries):
                loc = self._loc(kfile, k, key, i)
                if not isinstance(args, dict):
                    raise _Fail(Problem("kustomize-build", f"{key}[{i}] in {kfile} must be a mapping", loc, subject=f"{key}[{i}]:not-a-mapping"))
                ns = args.get("namespace") if isinstance(args.get("namespace"), str) else None
                remote: list[tuple[str, str]] = []
                try:
                    obj = fn(args, ns, read, opts, remote)
                except PathEscape as e:
                    raise _Fail(Problem("path-escape", f"{key}[{i}] in {kfile}: {e}; not read", loc, subject=f"{key}[{i}]:escape")) from None
                except KustomizeError as e:
                    code = "missing-file" if "cannot read" in str(e) else "kustomize-build"
                    raise _Fail(Problem(code, f"{key}[{i}] in {kfile}: {e}", loc, subject=f"{key}[{i}]")) from None
                try:
                    behavior = generators.generator_behavior(args)
                    wants_hash = generators.needs_hash(args, opts)
                except KustomizeError as e:
                    raise _Fail(Problem("kustomize-build", f"{key}[{i}] in {kfile}: {e}", loc, subject=f"{key}[{i}]")) from None
                for data_key, url in remote:
                    made = f"{obj['kind']} {obj['metadata']['name']}"
                    what = f"the keys and values of {made} are" if not data_key else f"the value of key {data_key} of {made} is"
                    ctx.incomplete = True
                    ctx.problems.append(
                        Problem(
                            "not-evaluated-remote",
                            f"{key}[{i}] in {kfile} reads {url}, a remote input: fluxgraph never fetches it, so {what} "
                            f"not evaluated{f' (nor the name suffix of {made})' if wants_hash else ''}",
                            loc,
                            not_evaluated=True,
                        )
                    )
                line = loc.line
                r = Resource(obj, Origin(kfile, line, 0, (), key, home=kfile), None, needs_hash=wants_hash)
                r.behavior = behavior
                self._merge_generated(resources, r, kfile, loc)

    def _merge_generated(self, resources: list[Resource], r: Resource, kfile: str, loc: Location) -> None:
        rid = r.id_key()
        idx = next((n for n, o in enumerate(resources) if o.id_key() == rid or _same_generated(o, r)), None)
        if r.behavior == "create":
            if idx is not None:
                raise _Fail(Problem("kustomize-build", f"{r.ref} generated by {kfile} already exists (behavior: create)", loc, subject=f"{r.ref}:exists"))
            resources.append(r)
            return
        if idx is None:
            raise _Fail(Problem("kustomize-build", f"{r.ref} to {r.behavior} in {kfile} does not exist", loc, subject=f"{r.ref}:{r.behavior}:missing"))
        old = resources[idx]
        try:
            merged = generators.merge_generated(old.data, r.data, r.behavior)
        except KustomizeError as e:
            raise _Fail(Problem("kustomize-build", f"{r.behavior} {r.ref} in {kfile}: {e}", loc, subject=f"{r.ref}:{r.behavior}")) from None
        # kustomize: the result gets a hash suffix only if both entries wanted one
        new = Resource(merged, old.origin, old.doc, needs_hash=old.needs_hash and r.needs_hash)
        new.prev_names = old.prev_names
        resources[idx] = new

    # -- transformers -----------------------------------------------------------------
    def _run_transformers(self, d: str, kfile: str, k: dict[str, Any], resources: list[Resource], ctx: _Ctx) -> None:
        # patchesStrategicMerge (legacy)
        for i, p in enumerate(as_list(k.get("patchesStrategicMerge"))):
            loc = self._loc(kfile, k, "patchesStrategicMerge", i)
            for patch in self._patch_documents(d, p, loc, ctx):
                self._apply_smp_by_identity(resources, patch, loc)
        # patches
        for i, p in enumerate(as_list(k.get("patches"))):
            loc = self._loc(kfile, k, "patches", i)
            if not isinstance(p, dict):
                raise _Fail(Problem("kustomize-build", f"patches[{i}] in {kfile} must be a mapping", loc, subject=f"patches[{i}]:not-a-mapping"))
            self._apply_patch_entry(d, p, resources, loc, ctx)
        # namespace
        ns = k.get("namespace")
        if isinstance(ns, str) and ns:
            set_namespace(resources, ns)
        # prefix / suffix
        prefix = k.get("namePrefix") if isinstance(k.get("namePrefix"), str) else ""
        suffix = k.get("nameSuffix") if isinstance(k.get("nameSuffix"), str) else ""
        if prefix or suffix:
            for r in resources:
                # kustomize's prefixFieldSpecsToSkip / suffixFieldSpecsToSkip
                if r.kind in ("CustomResourceDefinition", "Namespace") or not r.name:
                    continue
                if r.kind == "APIService" and r.group == "apiregistration.k8s.io":
                    continue
                r.set_name(f"{prefix}{r.name}{suffix}")
        # labels
        apply_labels(resources, k)
        ann = k.get("commonAnnotations")
        if isinstance(ann, dict) and ann:
            apply_field_specs(resources, COMMON_ANNOTATIONS, ann)
        # patchesJson6902 (legacy)
        for i, p in enumerate(as_list(k.get("patchesJson6902"))):
            loc = self._loc(kfile, k, "patchesJson6902", i)
            if not isinstance(p, dict) or not isinstance(p.get("target"), dict):
                raise _Fail(Problem("kustomize-build", f"patchesJson6902[{i}] needs a target", loc, subject=f"patchesJson6902[{i}]:no-target"))
            ops: Any = p.get("patch")
            if ops is None and isinstance(p.get("path"), str):
                ops = self._read_text(d, p["path"], loc, ctx)
            self._apply_json_to_targets(resources, ops, p["target"], loc)
        # replicas: kustomize's ReplicaCountTransformer matches the original or current name
        # among the replicas fieldSpec kinds, and fails when an entry matches nothing
        for i, rep in enumerate(as_list(k.get("replicas"))):
            if isinstance(rep, dict) and isinstance(rep.get("name"), str):
                name = rep["name"]
                matched = [
                    r
                    for r in resources
                    if r.kind in REPLICA_KINDS and (r.name == name or (r.prev_names and r.prev_names[0][2] == name))
                ]
                if not matched:
                    gvks = " ".join(f"{kd}.[noVer].[noGrp]" for kd in REPLICA_KINDS)
                    raise _Fail(
                        Problem(
                            "kustomize-build",
                            f"replicas in {kfile}: resource with name {name} does not match a config with the following GVK [{gvks}]",
                            self._loc(kfile, k, "replicas", i),
                            subject=f"replicas[{i}]:no-match",
                        )
                    )
                for r in matched:
                    spec = r.data.setdefault("spec", {}) if isinstance(r.data.get("spec", {}), dict) else None
                    if spec is not None:
                        spec["replicas"] = rep.get("count", 0)
        # images
        imgs = [im for im in as_list(k.get("images")) if isinstance(im, dict)]
        if imgs:
            for r in resources:
                apply_images(r.data, imgs)
        # replacements
        reps = as_list(k.get("replacements"))
        if reps:
            expanded: list[Any] = []
            for i, rep in enumerate(reps):
                if isinstance(rep, dict) and isinstance(rep.get("path"), str) and "source" not in rep:
                    loc = self._loc(kfile, k, "replacements", i)
                    text = self._read_text(d, rep["path"], loc, ctx)
                    try:
                        for doc in self._load_text(text):
                            expanded.extend(doc if isinstance(doc, list) else [doc])
                    except Exception as e:  # noqa: BLE001 - any parse error is a build error
                        raise _Fail(Problem("kustomize-build", f"replacements file {rep['path']}: {e}", loc, subject=f"replacements:{rep['path']}")) from None
                else:
                    expanded.append(rep)
            try:
                apply_replacements([r.data for r in resources], expanded, [r.prev_names for r in resources])
            except KustomizeError as e:
                raise _Fail(Problem("kustomize-build", f"replacements in {kfile}: {e}", self._loc(kfile, k, "replacements"), subject="replacements")) from None

    def _load_text(self, text: str) -> list[Any]:
        """``load_text`` (raises on invalid YAML), parsed once per text: a parent's inline
        patches are applied to every child Kustomization (haraldkoch: 235 patch texts, 5
        different). Each caller gets its own copy."""
        docs = self._inline.get(text)
        if docs is None:
            docs = load_text(text)
            if len(self._inline) < 10_000:
                self._inline[text] = docs
        return [copy_data(x) for x in docs]

    def _read_text(self, d: str, rel: str, loc: Location, ctx: _Ctx) -> str:
        try:
            p = join(d, rel)
        except PathEscape as e:
            raise _Fail(Problem("path-escape", f"{e}; not read", loc, subject=f"patch-file:{rel}:escape")) from None
        if self.cache.fs.escapes(p):
            raise _Fail(Problem("path-escape", f"{rel!r} is a symlink that leaves the repository root; not read", loc, subject=f"patch-file:{rel}:symlink"))
        ctx.files.add(p)
        try:
            return self.cache.read_bytes(p).decode("utf-8", "replace")
        except (OSError, FileTooLarge) as e:
            raise _Fail(Problem("missing-file", f"patch file {rel!r} cannot be read: {getattr(e, 'strerror', None) or e}", loc, subject=f"patch-file:{rel}")) from None

    def _patch_documents(self, d: str, p: Any, loc: Location, ctx: _Ctx) -> list[Any]:
        """A patchesStrategicMerge entry is a file path or an inline YAML string/mapping."""
        if isinstance(p, dict):
            return [p]
        if not isinstance(p, str):
            raise _Fail(Problem("kustomize-build", "patch must be a path or inline YAML", loc, subject="patch:not-a-path-or-yaml"))
        text = p
        if "\n" not in p and not p.lstrip().startswith(("{", "apiVersion")):
            text = self._read_text(d, p, loc, ctx)
        try:
            return [x for x in self._load_text(text) if x is not None]
        except Exception as e:  # noqa: BLE001
            raise _Fail(Problem("kustomize-build", f"invalid patch: {e}", loc, subject="patch:invalid")) from None

    def _apply_patch_entry(self, d: str, p: dict[str, Any], resources: list[Resource], loc: Location, ctx: _Ctx) -> None:
        body: Any = p.get("patch")
        if body is None and isinstance(p.get("path"), str):
            body = self._read_text(d, p["path"], loc, ctx)
        if body is None:
            raise _Fail(Problem("kustomize-build", "patch has neither patch nor path", loc, subject="patch:empty"))
        target = p.get("target")
        try:
            docs = self._load_text(body) if isinstance(body, str) else [body]
        except Exception as e:  # noqa: BLE001
            raise _Fail(Problem("kustomize-build", f"invalid patch: {e}", loc, subject="patch:invalid")) from None
        docs = [x for x in docs if x is not None]
        is_json = len(docs) == 1 and isinstance(docs[0], list)
        if is_json:
            if not isinstance(target, dict):
                raise _Fail(Problem("kustomize-build", "a JSON 6902 patch needs a target", loc, subject="patch:no-target"))
            self._apply_json_to_targets(resources, docs[0], target, loc)
            return
        for doc in docs:
            if not isinstance(doc, dict):
                raise _Fail(Problem("kustomize-build", "patch is neither a strategic merge patch nor a JSON 6902 list", loc, subject="patch:unknown-kind"))
            if isinstance(target, dict):
                try:
                    matched = [r for r in resources if selector.matches(r.data, target)]
                except KustomizeError as e:
                    raise _Fail(Problem("kustomize-build", f"patch target: {e}", loc, subject="patch:target")) from None
                for r in matched:
                    self._smp_one(resources, r, doc, loc, keep_identity=True)
            else:
                self._apply_smp_by_identity(resources, doc, loc)

    def _apply_smp_by_identity(self, resources: list[Resource], patch: dict[str, Any], loc: Location) -> None:
        md = as_dict(patch.get("metadata"))
        name, kind = md.get("name"), patch.get("kind")
        ns = md.get("namespace")
        matched = [
            r
            for r in resources
            if r.kind == kind
            and (r.name == name or any(pn[2] == name for pn in r.prev_names))
            and (ns is None or r.namespace == ns)
            and (not patch.get("apiVersion") or r.group == _group_of(patch.get("apiVersion")))
        ]
        if not matched:
            raise _Fail(Problem("kustomize-build", f"patch target {kind}/{name} not found", loc, subject=f"target:{kind}/{name}:missing"))
        if len(matched) > 1:
            raise _Fail(Problem("kustomize-build", f"patch target {kind}/{name} matches {len(matched)} resources", loc, subject=f"target:{kind}/{name}:ambiguous"))
        self._smp_one(resources, matched[0], patch, loc, keep_identity=False)

    def _smp_one(self, resources: list[Resource], r: Resource, patch: dict[str, Any], loc: Location, *, keep_identity: bool) -> None:
        if keep_identity:  # a targeted patch's own name/kind are placeholders (e.g. `name: _`)
            patch = dict(patch)
            md = dict(patch.get("metadata") or {}) if isinstance(patch.get("metadata"), dict) else {}
            md.pop("name", None)
            md.pop("namespace", None)
            patch["metadata"] = md
            patch.pop("kind", None)
            patch.pop("apiVersion", None)
        try:
            out = smp.apply_smp(r.data, patch)
        except KustomizeError as e:
            raise _Fail(Problem("kustomize-build", f"patch {r.ref}: {e}", loc, subject=f"smp:{r.ref}")) from None
        if out is None:
            resources.remove(r)
            return
        r.data = out

    def _apply_json_to_targets(self, resources: list[Resource], ops: Any, target: dict[str, Any], loc: Location) -> None:
        try:
            matched = [r for r in resources if selector.matches(r.data, target)]
            for r in matched:
                r.data = json6902.apply_json6902(r.data, ops)
        except KustomizeError as e:
            raise _Fail(Problem("kustomize-build", f"JSON 6902 patch: {e}", loc, subject="json6902")) from None

    # -- top-level finish -------------------------------------------------------------
    def _finish(self, resources: list[Resource], ctx: _Ctx) -> list[Resource]:
        """kustomize's last steps: hash suffixes on generated objects, then FixBackReferences."""
        for r in resources:
            if r.needs_hash and r.kind in ("ConfigMap", "Secret"):
                old = r.name
                try:
                    r.data = generators.apply_hash_suffix(r.data)
                except KustomizeError as e:
                    ctx.problems.append(Problem("kustomize-build", f"hashing {r.ref}: {e}", r.origin.location, subject=f"hash:{r.ref}"))
                    continue
                if r.name != old:
                    r.prev_names.append((r.kind, r.namespace, old))
        renames: dict[tuple[str, str | None, str], str] = {}
        for r in resources:
            for kind, _ns, old in r.prev_names:
                if old != r.name:
                    # keyed by the object's current namespace (kustomize matches referrers there)
                    renames[(kind, r.namespace or None, old)] = r.name
        if renames:
            try:
                datas = namereference.rewrite_references([r.data for r in resources], renames, extra=ctx.name_ref_config)
            except KustomizeError as e:
                ctx.problems.append(Problem("kustomize-build", f"name references: {e}", resources[0].origin.location, subject="name-references"))
            else:
                for r, dd in zip(resources, datas, strict=True):
                    r.data = dd
        return resources


def _same_generated(a: Resource, b: Resource) -> bool:
    return a.kind == b.kind and a.name == b.name and (a.namespace or "") == (b.namespace or "")


def _group_of(api_version: Any) -> str:
    if not isinstance(api_version, str):
        return ""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""
