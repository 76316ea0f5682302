"""``ClusterModel.depends_on_graph`` is built from the specs, without the model's full graph
(``ClusterModel.graph``): it must be the subgraph of that graph's ``dependsOn`` edges between
known Kustomizations (or HelmReleases), nodes and each node's successors in the same order (a
cycle's shortest path breaks ties by it), on every fixture and corpus repository."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from fluxgraph.api import load
from fluxgraph.cluster import ClusterModel
from fluxgraph.model import FluxgraphError
from tests.corpora import names, report

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
KINDS = ("ks", "hr")


def from_the_full_graph(model: ClusterModel, kind: str) -> nx.DiGraph:
    """The construction ``depends_on_graph`` replaced, as it was."""
    prefix = "ks:" if kind == "ks" else "hr:"
    known = {f"{prefix}{i}" for i in (model.kustomizations if kind == "ks" else model.helm_releases)}
    g = nx.DiGraph()
    g.add_nodes_from(n for n in model.graph if n in known)
    g.add_edges_from((u, v) for u, v, k in model.graph.edges(keys=True) if k == "dependsOn" and u in known and v in known)
    return g


def shape(g: nx.DiGraph) -> tuple[list[str], list[tuple[str, list[str]]]]:
    return list(g.nodes), [(n, list(g.successors(n))) for n in g.nodes]


def assert_same(model: ClusterModel) -> None:
    for kind in KINDS:
        assert shape(model.depends_on_graph(kind)) == shape(from_the_full_graph(model, kind)), (model.name, kind)


def _fixture_repos() -> list[Path]:
    out = [p for p in sorted((FIXTURES / "repos").iterdir()) if p.is_dir()]
    out += [p for p in sorted(FIXTURES.glob("*/bad")) if p.is_dir()]
    return out


@pytest.mark.parametrize("root", _fixture_repos(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_same_graph_on_the_fixtures(root):
    try:
        repo = load(root)
    except FluxgraphError as e:  # a folder of scenarios (repos/moves), not one repository
        pytest.skip(str(e)[:80])
    for model in repo.clusters:
        assert_same(model)


def test_dependencies_keep_the_order_of_the_first_edge(tmp_path):
    """A parent that depends on its children, in the other order than it applies them, and a
    dependency listed twice, dangling ones and a self-dependency."""
    ks = (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\n"
        "spec: {{interval: 10m, path: {path}, prune: true, sourceRef: {{kind: GitRepository, name: flux-system}}, dependsOn: [{deps}]}}\n"
    )
    files = {
        "clusters/prod/flux-system/gotk-sync.yaml": (
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\n"
            "spec: {interval: 1m, url: 'ssh://git@example.com/r', ref: {branch: main}}\n---\n"
            + ks.format(name="flux-system", path="./clusters/prod", deps="")
        ),
        "clusters/prod/flux-system/kustomization.yaml": "resources: [gotk-sync.yaml]\n",
        "clusters/prod/kustomization.yaml": "resources: [flux-system, parent.yaml]\n",
        "clusters/prod/parent.yaml": ks.format(name="parent", path="./apps", deps="{name: b}, {name: a}, {name: gone}, {name: b}"),
        "apps/kustomization.yaml": "resources: [a.yaml, b.yaml, c.yaml]\n",
        "apps/a.yaml": ks.format(name="a", path="./apps/a", deps="{name: c}, {name: a}"),
        "apps/b.yaml": ks.format(name="b", path="./apps/b", deps="{name: parent}"),
        "apps/c.yaml": ks.format(name="c", path="./apps/c", deps="{name: b}"),
    }
    for app in "abc":
        files[f"apps/{app}/cm.yaml"] = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {app}, namespace: default}}\n"
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (model,) = load(tmp_path).clusters
    assert set(model.kustomizations) >= {"flux-system/parent", "flux-system/a"}
    assert_same(model)
    g = model.depends_on_graph()
    assert list(g.successors("ks:flux-system/parent")) == ["ks:flux-system/b", "ks:flux-system/a"]
    assert g.has_edge("ks:flux-system/a", "ks:flux-system/a")


CORPUS_CASES = [
    pytest.param(corpus, name, marks=getattr(pytest.mark, corpus.replace("-", "_")), id=f"{corpus}/{name}")
    for corpus in ("corpus", "corpus-wide")
    for name in names(corpus)
]


@pytest.mark.parametrize(("corpus", "name"), CORPUS_CASES)
def test_the_same_graph_on_the_corpora(corpus, name):
    out = report(corpus, name)
    for model in out.report.repo.clusters if out.report else ():
        assert_same(model)
