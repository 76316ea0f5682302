"""SARIF 2.1.0 for GitHub code scanning: rules from the catalog, results with physical
locations relative to the repository root (``%SRCROOT%``) and stable partial fingerprints
(rule + file + subject, independent of the line, so alerts survive edits)."""

from __future__ import annotations

import json
from typing import Any

from fluxgraph import __version__
from fluxgraph.catalog import load_catalog
from fluxgraph.engine import Report
from fluxgraph.findings import Finding, Severity
from fluxgraph.model import Location

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFO_URI = "https://github.com/fluxgraph/fluxgraph"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# GitHub ranks alerts by security-severity when present; these are not security rules, so
# only the problem.severity property is set.
_PROBLEM = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "recommendation"}


def _location(loc: Location, message: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": loc.file, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": loc.line, "startColumn": loc.column},
        }
    }
    if message:
        out["message"] = {"text": message}
    return out


def catalog_rule(rid: str) -> dict[str, Any]:
    """The SARIF rule (reportingDescriptor) of a catalog rule."""
    spec = load_catalog()[rid]
    return {
        "id": rid,
        "name": "".join(w.capitalize() for w in rid.split("-")),
        "shortDescription": {"text": spec.summary},
        "fullDescription": {"text": spec.section("What it does") or spec.summary},
        "help": {"text": spec.fix, "markdown": spec.body},
        "helpUri": f"{INFO_URI}/blob/main/docs/rules/{rid}.md",
        "defaultConfiguration": {"level": _LEVEL[spec.severity]},
        "properties": {"tags": list(spec.tags), "problem.severity": _PROBLEM[spec.severity]},
    }


def finding_result(f: Finding, rule_index: int) -> dict[str, Any]:
    """The SARIF result of a finding."""
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": _LEVEL[f.severity],
        "message": {"text": f.headline, "markdown": notes_markdown(f)},
        "locations": [_location(f.location)],
        "partialFingerprints": {"fluxgraph/v1": f.fingerprint},
        "properties": {"cluster": f.cluster, "notes": [n.as_json() for n in f.notes], "message": f.message},
    }
    if f.kustomization:
        result["properties"]["kustomization"] = f.kustomization
    if f.kustomizations:
        result["properties"]["kustomizations"] = list(f.kustomizations)
    if f.obj is not None:
        result["properties"]["object"] = str(f.obj)
    if f.related:
        result["relatedLocations"] = [dict(_location(r, "evidence"), id=i + 1) for i, r in enumerate(f.related)]
    return result


def _md(text: str) -> str:
    """``text`` safe in Markdown: the characters that would start emphasis or markup escaped."""
    return "".join("\\" + c if c in "\\*_[]<>|" else c for c in text)


def notes_markdown(f: Finding) -> str:
    """The headline and the notes as Markdown: what a viewer of ``message.markdown`` shows."""
    lines = [_md(f.headline), ""]
    for n in f.notes:
        lines.append(f"- **{n.label.value}**: {_md(n.text)}" if n.text else f"- **{n.label.value}**:")
        lines += [f"  - {_md(item)}" for item in n.items]
    return "\n".join(lines)


def sarif_document(
    rules: list[dict[str, Any]],
    results: list[dict[str, Any]],
    automation_id: str,
    properties: dict[str, Any],
    invocations: list[dict[str, Any]] | None = None,
) -> str:
    """One SARIF 2.1.0 run of fluxgraph, as text."""
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "fluxgraph",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFO_URI,
                "rules": rules,
            }
        },
        "automationDetails": {"id": automation_id},
        "properties": properties,
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if invocations is not None:
        run["invocations"] = invocations
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"


def render_sarif(report: Report, color: bool = False) -> str:
    rule_ids = sorted(set(report.rules_run) | {f.rule for f in report.findings})
    index = {rid: i for i, rid in enumerate(rule_ids)}
    rules = [catalog_rule(rid) for rid in rule_ids]
    results = [finding_result(f, index[f.rule]) for f in report.findings]
    invocations = [
        {
            "executionSuccessful": True,
            "toolExecutionNotifications": [
                {
                    "level": "note",
                    "message": {"text": f"not evaluated: {p.message}"},
                    "locations": [_location(p.location)],
                }
                for p in report.not_evaluated
            ],
        }
    ]
    return sarif_document(rules, results, "fluxgraph/" + ",".join(report.clusters), {"flux": report.flux()}, invocations)
