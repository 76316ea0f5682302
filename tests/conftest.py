import functools
import json
import os
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
GOLDEN = ROOT / "tests" / "golden"
CORPUS = ROOT.parent / "shared" / "corpus"
UPDATE = os.environ.get("FLUXGRAPH_UPDATE_GOLDEN") == "1"


def check_golden(name: str, actual: str) -> None:
    """Compare ``actual`` with tests/golden/<name>; FLUXGRAPH_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"golden file {path} is missing; run with FLUXGRAPH_UPDATE_GOLDEN=1 and review it")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
        return
    expected = path.read_text()
    assert actual == expected, f"{name} differs from its golden file (FLUXGRAPH_UPDATE_GOLDEN=1 to update after review)"


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (repo-relative path -> text) under ``root``; returns ``root``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def fixture_options(repo: Path) -> dict:
    """Per-fixture analyze() options from an optional fixture.json (not YAML, so Flux and
    fluxgraph's discovery never read it as a manifest)."""
    f = repo / "fixture.json"
    return json.loads(f.read_text()).get("options", {}) if f.exists() else {}


@functools.cache
def fixture_report(rule: str, kind: str):
    """``fixtures/<rule>/<kind>`` analysed once per test run (with its fixture.json options),
    shared by every test that reads it; callers must not modify it."""
    from fluxgraph.engine import analyze

    repo = FIXTURES / rule / kind
    return analyze(repo, **fixture_options(repo))


def flux_ks(
    name: str, path: str, extra: str = "", *, ns: str = "flux-system", source: str = "flux-system", source_ns: str | None = None
) -> str:
    """A Flux Kustomization ``ns/name`` that builds ``path`` (as written: ``./apps``) from the
    GitRepository ``source`` (``sourceRef.namespace: source_ns`` when given) with
    ``prune: true``; ``extra`` (YAML, dedented) is appended under ``spec:``."""
    doc = f"""\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {name}
  namespace: {ns}
spec:
  interval: 10m
  path: {path}
  prune: true
  sourceRef:
    kind: GitRepository
    name: {source}
"""
    if source_ns is not None:
        doc += f"    namespace: {source_ns}\n"
    return doc + textwrap.indent(textwrap.dedent(extra), "  ") if extra else doc


def gotk_sync(cluster: str, repo: str = "fleet") -> str:
    """``flux-system/gotk-sync.yaml`` of a bootstrapped cluster ``clusters/<cluster>``: the
    GitRepository and the root Kustomization (shared by the tests that build repos)."""
    return f"""apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m
  ref:
    branch: main
  url: ssh://git@github.com/example/{repo}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m
  path: ./clusters/{cluster}
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
"""
