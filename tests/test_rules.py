"""Every rule fires on its bad fixture (golden findings) and the good fixture is silent."""

import json

import pytest

from fluxgraph.checks import registry

from .conftest import check_golden, fixture_report

RULES = sorted(registry())


def _fix_data(f):
    if f.fix is None:
        return None
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(f.fix).items() if v not in (None, "")}


def _findings(rule: str, kind: str):
    return fixture_report(rule, kind)


@pytest.mark.parametrize("rule", RULES)
def test_bad_fixture_fires(rule):
    report = _findings(rule, "bad")
    mine = [f for f in report.findings if f.rule == rule]
    assert mine, f"{rule} did not fire on fixtures/{rule}/bad"
    doc = [
        {
            "rule": f.rule,
            "severity": f.severity.value,
            "file": f.location.file,
            "line": f.location.line,
            "column": f.location.column,
            "kustomization": f.kustomization,
            "message": f.message,
            "fingerprint": f.fingerprint,
            "related": [str(r) for r in f.related],
            "fix": _fix_data(f),
        }
        for f in report.findings
    ]
    check_golden(f"rules/{rule}.json", json.dumps(doc, indent=2) + "\n")


@pytest.mark.parametrize("rule", RULES)
def test_good_fixture_is_silent(rule):
    report = _findings(rule, "good")
    assert [(f.rule, str(f.location), f.message) for f in report.findings] == []


def test_every_recorded_problem_names_its_subject():
    """A build, read or parse problem becomes a finding whose fingerprint comes from its code and
    subject (``checks.problem_subject``), never from its message (issue 22): every problem the
    model records on the fixtures, not-evaluated ones aside, names one."""
    from fluxgraph.api import load
    from fluxgraph.model import FluxgraphError

    from .conftest import FIXTURES

    missing = []
    for repo in sorted(p for p in [*FIXTURES.glob("*/*"), *(FIXTURES / "repos").glob("*")] if p.is_dir()):
        try:
            model = load(repo)
        except FluxgraphError:
            continue
        problems = list(model.problems)
        for c in model.clusters:
            problems += [*c.problems, *(p for ks in c.kustomizations.values() for p in ks.problems)]
        missing += [(str(repo.relative_to(FIXTURES)), p.code, p.message) for p in problems if not p.not_evaluated and not p.subject]
    assert missing == []
