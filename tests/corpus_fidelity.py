"""Fidelity of fluxgraph's static build against the reference kustomize (kubectl kustomize).

For every Flux Kustomization fluxgraph builds in a corpus repository, the reference build is
made from a wrapper kustomization that lists the Kustomization's path (or, for a directory
without a kustomization file, the files Flux's generator would list) and carries the
Kustomization's own ``targetNamespace``, ``patches``, ``images``, ``components``,
``namePrefix``/``nameSuffix``, as kustomize-controller writes them. The identities (kind,
namespace, name) of both builds, before postBuild substitution, are compared.

Run as a script for a report: ``python tests/corpus_fidelity.py [REPO ...]``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgraph.api import load
from fluxgraph.cluster import KustomizationNode
from fluxgraph.kustomize.build import find_kustomization_file
from fluxgraph.yamlio import load_text

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
KUBECTL = shutil.which("kubectl")

Identity = tuple[str, str, str]


@dataclass
class Comparison:
    repo: str
    cluster: str
    ks: str
    build_dir: str
    ours: Counter[Identity]
    ref: Counter[Identity] | None
    ref_error: str | None = None
    our_failed: bool = False

    @property
    def equal(self) -> bool:
        return self.ref is not None and self.ours == self.ref

    def diff(self) -> tuple[list[Identity], list[Identity]]:
        ref = self.ref or Counter()
        return sorted((self.ours - ref).elements()), sorted((ref - self.ours).elements())


@dataclass
class Summary:
    comparisons: list[Comparison] = field(default_factory=list)

    @property
    def comparable(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.ref is not None]

    @property
    def ratio(self) -> float:
        comp = self.comparable
        return sum(c.equal for c in comp) / len(comp) if comp else 1.0


def _wrapper(repo_root: Path, ks: KustomizationNode, cache: Any) -> dict[str, Any]:
    d = ks.build_dir or ""
    base = repo_root / d
    resources: list[str] = []
    if find_kustomization_file(cache, d) is not None:
        resources.append(str(base))
    else:
        for root, dirs, files in os.walk(base):
            dirs.sort()
            rel_root = Path(root).relative_to(repo_root).as_posix()
            keep = []
            for sub in dirs:
                sub_rel = f"{rel_root}/{sub}"
                if not cache.visible(sub_rel, True):
                    continue
                if find_kustomization_file(cache, sub_rel) is not None:
                    resources.append(str(Path(root) / sub))
                else:
                    keep.append(sub)
            dirs[:] = keep
            for f in sorted(files):
                rel = f"{rel_root}/{f}"
                if f.endswith((".yaml", ".yml")) and cache.visible(rel, False):
                    resources.append(str(Path(root) / f))
    s = ks.spec
    k: dict[str, Any] = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": resources}
    if s.target_namespace:
        k["namespace"] = s.target_namespace
    if s.patches:
        k["patches"] = list(s.patches)
    if s.images:
        k["images"] = list(s.images)
    if s.components:
        k["components"] = [str(base / c) for c in s.components]
    if s.name_prefix:
        k["namePrefix"] = s.name_prefix
    if s.name_suffix:
        k["nameSuffix"] = s.name_suffix
    return k


def reference_build(wrapper: dict[str, Any]) -> tuple[Counter[Identity] | None, str | None]:
    assert KUBECTL is not None
    with tempfile.TemporaryDirectory() as td:
        # kustomize refuses absolute resource paths: make them relative to the wrapper
        w = dict(wrapper)
        for key in ("resources", "components"):
            if key in w:
                w[key] = [os.path.relpath(p, td) for p in w[key]]
        Path(td, "kustomization.yaml").write_text(json.dumps(w))
        proc = subprocess.run(
            [KUBECTL, "kustomize", "--load-restrictor", "LoadRestrictionsNone", td],
            capture_output=True,
            text=True,
            timeout=120,
        )
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
    ids: Counter[Identity] = Counter()
    for doc in load_text(proc.stdout):
        if isinstance(doc, dict):
            md = doc.get("metadata") or {}
            ids[(str(doc.get("kind")), str(md.get("namespace") or ""), str(md.get("name") or ""))] += 1
    return ids, None


def our_identities(ks: KustomizationNode) -> Counter[Identity]:
    out: Counter[Identity] = Counter()
    for o in ks.objects:
        data = o.pre_substitution
        md = data.get("metadata") or {}
        out[(str(data.get("kind")), str(md.get("namespace") or ""), str(md.get("name") or ""))] += 1
    return out


def compare_repo(name: str, workers: int = 4) -> list[Comparison]:
    from fluxgraph.filecache import FileCache
    from fluxgraph.repofs import RepoFS

    root = CORPUS / name
    repo = load(root)
    cache = FileCache(RepoFS(root))
    from fluxgraph.api import _ignore_matcher

    cache.ignore = _ignore_matcher(cache.fs)
    jobs: list[tuple[str, KustomizationNode]] = []
    seen: set[tuple[str, str, str]] = set()
    for c in repo.clusters:
        for ks in c.kustomizations.values():
            if ks.build_dir is None or ks.status not in ("built", "failed"):
                continue
            key = (ks.build_dir, json.dumps(_wrapper(root, ks, cache), sort_keys=True), ks.id)
            if key in seen:
                continue
            seen.add(key)
            jobs.append((c.name, ks))

    def one(job: tuple[str, KustomizationNode]) -> Comparison:
        cluster, ks = job
        ref, err = reference_build(_wrapper(root, ks, cache))
        return Comparison(name, cluster, ks.id, ks.build_dir or "", our_identities(ks), ref, err, ks.status == "failed")

    with ThreadPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(one, jobs))


def main(argv: list[str]) -> int:
    names = argv or sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    summary = Summary()
    for name in names:
        comps = compare_repo(name)
        summary.comparisons.extend(comps)
        ok = sum(c.equal for c in comps if c.ref is not None)
        n = sum(c.ref is not None for c in comps)
        print(f"{name:40s} {ok}/{n} equal, {len(comps) - n} not built by the reference")
        for c in comps:
            if c.ref is None:
                print(f"    reference failed: {c.cluster} {c.ks} ({c.build_dir}): {c.ref_error}  [ours: {'failed' if c.our_failed else 'built'}]")
            elif not c.equal:
                extra, missing = c.diff()
                print(f"    DIFF {c.cluster} {c.ks} ({c.build_dir}): only ours {extra[:5]} only reference {missing[:5]}")
    print(f"total: {sum(c.equal for c in summary.comparable)}/{len(summary.comparable)} = {summary.ratio:.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
