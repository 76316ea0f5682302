"""The precision budget of docs/precision.md: a fixed repository is silent, the official Flux
examples pass the default gate, and the shared corpus stays within one warning per 20
Kustomizations with every error class explained. (tests/bench/noise.py prints the figures.)"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from fluxgraph.engine import analyze
from fluxgraph.findings import Severity

from .conftest import CORPUS, FIXTURES, ROOT

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


@pytest.fixture(scope="module")
def corpus_reports():
    if not CORPUS.is_dir():
        pytest.skip("shared corpus not present")
    return {p.name: analyze(p) for p in sorted(CORPUS.iterdir()) if p.is_dir()}


def test_official_examples_pass_the_default_gate(corpus_reports):
    official = {n: r for n, r in corpus_reports.items() if n.startswith("fluxcd__")}
    assert official, "no official Flux example in the corpus"
    failing = {n: [(f.rule, str(f.location)) for f in r.findings if f.severity is Severity.ERROR] for n, r in official.items()}
    assert {n: f for n, f in failing.items() if f} == {}


def test_corpus_warnings_within_budget(corpus_reports):
    kustomizations = sum(r.kustomizations for r in corpus_reports.values())
    warnings = sum(1 for r in corpus_reports.values() for f in r.findings if f.severity is Severity.WARNING)
    assert warnings <= BUDGET * kustomizations, f"{warnings} warnings for {kustomizations} Kustomizations"


def test_every_corpus_error_class_is_explained(corpus_reports):
    errors = Counter(f.rule for r in corpus_reports.values() for f in r.findings if f.severity is Severity.ERROR)
    text = (ROOT / "docs" / "precision.md").read_text()
    section = text.split("## Errors on the corpus", 1)[1].split("\n## ", 1)[0]
    explained = set(re.findall(r"^\| `([a-z-]+)` \|", section, re.M))
    assert set(errors) <= explained, f"unexplained error classes: {sorted(set(errors) - explained)}"
