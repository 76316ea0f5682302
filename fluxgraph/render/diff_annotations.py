"""``diff`` as annotations: SARIF 2.1.0 and GitHub workflow commands, so that a pull request's
verdicts and new findings mark the changed lines. Verdict codes are SARIF rules of their own
(``diff.EFFECT_SUMMARY``), new findings keep their rule's catalog entry; an acknowledged verdict
is a result with an external suppression (its reason), and GitHub annotations leave it out."""

from __future__ import annotations

from typing import Any

from fluxgraph.catalog import load_verdicts
from fluxgraph.diff import EFFECT_SEVERITY, EFFECT_SUMMARY, DiffReport, Effect
from fluxgraph.findings import Finding
from fluxgraph.render.github import _CMD, _escape_data, _escape_prop, finding_annotation
from fluxgraph.render.sarif import (
    _LEVEL,
    _PROBLEM,
    INFO_URI,
    _location,
    catalog_rule,
    finding_result,
    sarif_document,
)

DOC_URI = f"{INFO_URI}/blob/main/docs/explain-and-diff.md#verdicts-and-what-counts-as-an-error"


def _effects(r: DiffReport) -> list[tuple[str, Effect]]:
    return r.effects()


def render_sarif(r: DiffReport) -> str:
    findings: list[Finding] = r.all_new_findings()
    codes = sorted({e.code for _, e in _effects(r)})
    rule_ids = sorted({f.rule for f in findings})
    rules: list[dict[str, Any]] = []
    verdicts = load_verdicts()
    for code in codes:
        doc = verdicts.get(code)
        rules.append(
            {
                "id": f"diff/{code}",
                "name": "Diff" + "".join(w.capitalize() for w in code.split("-")),
                "shortDescription": {"text": doc.summary if doc else EFFECT_SUMMARY[code]},
                **({"help": {"text": doc.fix, "markdown": doc.body}} if doc else {}),
                "helpUri": f"{INFO_URI}/blob/main/rules/diff/{code}.md" if doc else DOC_URI,
                "defaultConfiguration": {"level": _LEVEL[EFFECT_SEVERITY[code]]},
                "properties": {"tags": ["diff"], "problem.severity": _PROBLEM[EFFECT_SEVERITY[code]]},
            }
        )
    rules.extend(catalog_rule(rid) for rid in rule_ids)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results: list[dict[str, Any]] = []
    for cluster, e in _effects(r):
        rid = f"diff/{e.code}"
        res: dict[str, Any] = {
            "ruleId": rid,
            "ruleIndex": index[rid],
            "level": _LEVEL[e.severity],
            "message": {"text": e.message},
            "properties": {"cluster": cluster},
        }
        if e.location is not None:
            res["locations"] = [_location(e.location)]
        if e.ref is not None:
            res["properties"]["object"] = str(e.ref)
            res["partialFingerprints"] = {"fluxgraph-diff/v1": f"{cluster}|{e.code}|{e.ref}|{e.old_owner or ''}|{e.new_owner or ''}"}
        if e.acknowledged:
            res["suppressions"] = [{"kind": "external", "justification": e.acknowledged}]
        results.append(res)
    for f in findings:
        res = finding_result(f, index[f.rule])
        res["properties"]["new"] = True
        results.append(res)
    properties = {
        "base": {"rev": r.base, "commit": r.base_commit},
        "head": {"rev": r.head, "commit": r.head_commit},
        "notes": list(r.notes),
    }
    return sarif_document(rules, results, f"fluxgraph-diff/{r.base}..{r.head}", properties)


def render_github(r: DiffReport) -> str:
    from fluxgraph.render.diff_report import summary

    lines = []
    for _, e in _effects(r):
        if e.acknowledged:
            continue
        props = [f"title={_escape_prop(f'fluxgraph diff {e.code}')}"]
        if e.location is not None:
            props = [f"file={_escape_prop(e.location.file)}", f"line={e.location.line}", *props]
        lines.append(f"::{_CMD[e.severity.value]} {','.join(props)}::{_escape_data(e.message)}")
    lines.extend(finding_annotation(f, f"{f.headline} (new)") for f in r.all_new_findings())
    lines.append(summary(r))
    return "\n".join(lines) + "\n"
