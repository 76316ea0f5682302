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
