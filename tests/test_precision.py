"""The precision budget of docs/precision.md: a fixed repository is silent, the official Flux
examples pass the default gate, and each corpus (../shared/corpus and, marked ``corpus_wide``,
../shared/corpus-wide) stays within one warning per 20 Kustomizations with every error class
explained in docs/precision.md. The reports are the ones tests/corpora.py builds once per
session (with the configuration's ``clusters:`` where its table gives one), shared with
tests/test_corpus.py. (tests/bench/noise.py prints the figures.)"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from fluxgraph.engine import analyze
from fluxgraph.findings import Severity

from .conftest import FIXTURES, ROOT
from .corpora import names, report

BUDGET = 1 / 20


def test_the_demo_with_its_hazards_fixed_prints_no_warning():
    report = analyze(FIXTURES / "repos" / "homelab-fixed")
    loud = [(f.rule, str(f.location), f.message) for f in report.findings if f.severity is not Severity.INFO]
    assert loud == []
    # advice is allowed only about a namespace the API server never deletes
    assert all(f.rule == "prunable-shared-namespace" for f in report.findings)


def test_the_demo_itself_fails_the_gate_on_its_planted_errors():
    report = analyze(FIXTURES / "repos" / "homelab")
    assert report.exit_code(Severity.ERROR) == 1
    assert {f.rule for f in report.findings} == {
        "prunable-shared-namespace",  # hazard 1, latent: a warning
        "unescaped-shell-variable",  # hazard 2
        "hook-fails-on-success",  # hazard 3
        "substitute-from-race",  # hazard 4, a timing: a warning
        "unsubstituted-flux-variable",  # hazard 5
    }


CORPORA = [
    pytest.param("corpus", "## Errors on the corpus", id="corpus", marks=pytest.mark.corpus),
    pytest.param("corpus-wide", "## Errors on the wide corpus", id="corpus-wide", marks=pytest.mark.corpus_wide),
]


def _reports(corpus: str) -> dict:
    present = names(corpus)
    if not present:
        pytest.skip(f"{corpus} not present")
    return {n: out.report for n in present if (out := report(corpus, n)).report is not None}


@pytest.mark.corpus
def test_official_examples_pass_the_default_gate():
    official = {n: r for n, r in _reports("corpus").items() if n.startswith("fluxcd__")}
    assert official, "no official Flux example in the corpus"
    failing = {n: [(f.rule, str(f.location)) for f in r.findings if f.severity is Severity.ERROR] for n, r in official.items()}
    assert {n: f for n, f in failing.items() if f} == {}


@pytest.mark.parametrize(("corpus", "heading"), CORPORA)
def test_corpus_warnings_within_budget(corpus, heading):
    reports = _reports(corpus)
    kustomizations = sum(r.kustomizations for r in reports.values())
    warnings = sum(1 for r in reports.values() for f in r.findings if f.severity is Severity.WARNING)
    assert warnings <= BUDGET * kustomizations, f"{corpus}: {warnings} warnings for {kustomizations} Kustomizations"


@pytest.mark.parametrize(("corpus", "heading"), CORPORA)
def test_every_corpus_error_class_is_explained(corpus, heading):
    """Each (rule, repository) pair that has errors is a row of the corpus's error table."""
    errors = Counter(
        (f.rule, name) for name, r in _reports(corpus).items() for f in r.findings if f.severity is Severity.ERROR
    )
    text = (ROOT / "docs" / "precision.md").read_text()
    assert heading in text, f"docs/precision.md has no section {heading!r}"
    section = text.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    explained = set(re.findall(r"^\| `([a-z-]+)` \| `?([\w.-]+)`? \|", section, re.M))
    missing = sorted(set(errors) - explained)
    assert missing == [], f"{corpus}: error classes not explained in docs/precision.md: {missing}"
