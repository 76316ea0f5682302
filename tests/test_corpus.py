"""fluxgraph against real public Flux repositories (../shared/corpus).

Skipped cleanly where the corpus is absent. The kubectl-based fidelity test is skipped where
kubectl is absent (kubectl embeds kustomize v5.5: the reference, never a runtime dependency).
"""

import shutil

import pytest

import fluxgraph
from fluxgraph.engine import analyze

from .conftest import CORPUS

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")

# The cluster entrypoints listed in the corpus README, braces expanded.
ENTRYPOINTS = {
    "fluxcd__flux2-kustomize-helm-example": ["clusters/production", "clusters/staging"],
    "fluxcd__flux2-multi-tenancy": ["clusters/production", "clusters/staging"],
    "fluxcd__flux2-monitoring-example": ["clusters/test"],
    "Azure__gitops-flux2-kustomize-helm-mt": ["clusters/production", "clusters/staging"],
    "onedr0p__home-ops": ["kubernetes/flux/cluster"],
    "bjw-s-labs__home-ops": ["kubernetes/flux/cluster"],
    "joryirving__home-ops": ["kubernetes/clusters/main", "kubernetes/clusters/test", "kubernetes/clusters/utility"],
    "haraldkoch__kochhaus-home": [
        "kubernetes/main/flux/cluster",
        "kubernetes/network/flux/cluster",
        "kubernetes/registry/flux/cluster",
    ],
    "xunholy__k8s-gitops": ["kubernetes/clusters/cluster-00"],
    "toboshii__home-ops": ["cluster/flux"],
    "Aviator-Coding__home-ops": ["kubernetes/flux/cluster"],
}


@pytest.fixture(scope="module")
def repos():
    return {name: fluxgraph.load(CORPUS / name) for name in ENTRYPOINTS if (CORPUS / name).is_dir()}


@pytest.mark.parametrize("name", sorted(ENTRYPOINTS))
def test_discovers_the_readme_entrypoints(repos, name):
    if name not in repos:
        pytest.skip(f"{name} not in this corpus")
    assert sorted(c.root_dir for c in repos[name].clusters) == sorted(ENTRYPOINTS[name])


@pytest.mark.parametrize("name", sorted(ENTRYPOINTS))
def test_every_applied_kustomization_is_walked(repos, name):
    """Each Flux Kustomization object that a build applies becomes a node of the graph."""
    if name not in repos:
        pytest.skip(f"{name} not in this corpus")
    missing = [
        (c.name, str(o.ref))
        for c in repos[name].clusters
        for ks in c.kustomizations.values()
        for o in ks.objects
        if o.ref.kind == "Kustomization"
        and o.ref.group == "kustomize.toolkit.fluxcd.io"
        and f"{o.ref.namespace}/{o.ref.name}" not in c.kustomizations
    ]
    assert missing == []


@pytest.mark.parametrize("name", sorted(ENTRYPOINTS))
def test_check_runs_without_error(name):
    if not (CORPUS / name).is_dir():
        pytest.skip(f"{name} not in this corpus")
    report = analyze(CORPUS / name)
    assert report.assertions > 0


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (reference kustomize) not installed")
def test_inventories_match_reference_kustomize():
    """Identities built by fluxgraph equal kubectl kustomize's for >= 98% of Kustomizations."""
    from .corpus_fidelity import Summary, compare_repo

    summary = Summary()
    for name in sorted(ENTRYPOINTS):
        if (CORPUS / name).is_dir():
            summary.comparisons.extend(compare_repo(name))
    comparable = summary.comparable
    assert len(comparable) > 600
    diffs = [(c.repo, c.ks, c.diff()) for c in comparable if not c.equal]
    assert summary.ratio >= 0.98, diffs
