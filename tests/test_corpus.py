"""fluxgraph against real public Flux repositories: the two shared corpora (tests/corpora.py).

Every repository: discovery finds the clusters of the entrypoint table, every Flux
Kustomization a build applies is walked, and check runs without an internal error. Skipped
cleanly where a corpus is absent; the wide corpus's tests are marked ``corpus_wide``. The
kubectl-based fidelity test is skipped where kubectl is absent (kubectl embeds kustomize v5.5:
the reference, never a runtime dependency).
"""

import shutil

import pytest

from .corpora import CORPUS, ENTRYPOINTS, TABLES, WIDE_ENTRYPOINTS, names, report

pytestmark = pytest.mark.corpus  # the wide corpus's cases are corpus_wide too (tests.corpora)


def _params(corpus: str) -> list:
    marks = [pytest.mark.corpus_wide] if corpus == "corpus-wide" else []
    present = set(names(corpus))
    return [
        pytest.param(corpus, name, marks=marks, id=f"{corpus}:{name}")
        for name in sorted(TABLES[corpus])
        if name in present
    ]


ALL = _params("corpus") + _params("corpus-wide")


def test_every_repository_is_in_the_entrypoint_table():
    for corpus, table in TABLES.items():
        assert set(names(corpus)) <= set(table), f"{corpus}: add the new repositories to tests/corpora.py"


@pytest.mark.parametrize(("corpus", "name"), ALL)
def test_discovery_finds_the_entrypoints(corpus, name):
    entry = TABLES[corpus][name]
    out = report(corpus, name)
    if not entry.entrypoints:
        assert out.report is None, f"a cluster found in {name}"
        expected = {"tenant": "it looks like a tenant repository", "argocd": "it looks like an Argo CD repository",
                    "none": "and no Flux object at all"}[entry.none_kind]
        assert expected in out.error
        return
    assert out.report is not None, out.error
    assert sorted(c.root_dir or "." for c in out.report.repo.clusters) == sorted(entry.entrypoints)


@pytest.mark.parametrize(("corpus", "name"), ALL)
def test_every_applied_kustomization_is_walked(corpus, name):
    """Each Flux Kustomization object that a build applies becomes a node of the graph."""
    out = report(corpus, name)
    if out.report is None:
        pytest.skip("no cluster")
    missing = [
        (c.name, str(o.ref))
        for c in out.report.repo.clusters
        for ks in c.kustomizations.values()
        for o in ks.objects
        if o.ref.kind == "Kustomization"
        and o.ref.group == "kustomize.toolkit.fluxcd.io"
        and f"{o.ref.namespace}/{o.ref.name}" not in c.kustomizations
    ]
    assert missing == []


@pytest.mark.parametrize(("corpus", "name"), ALL)
def test_check_runs_without_internal_error(corpus, name):
    out = report(corpus, name)  # an internal error raises here; a FluxgraphError is a message
    if out.report is None:
        assert out.error and "Traceback" not in out.error
    else:
        assert out.report.assertions > 0


def test_the_tables_say_why_a_configuration_is_needed():
    """A repository whose clusters only the configuration can name has a comment in the table
    saying what tells its live folders from the stale ones (tests/corpora.py)."""
    configured = sorted(n for n, e in WIDE_ENTRYPOINTS.items() if e.clusters)
    assert configured == ["h3mmy__bloopySphere", "samip5__k8s-cluster", "sulibot__home-ops"]
    assert all(e.clusters is None for e in ENTRYPOINTS.values())


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (reference kustomize) not installed")
@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
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
