"""JSON findings report (schema: docs/output-formats.md)."""

from __future__ import annotations

import json
from typing import Any

from fluxgraph import __version__
from fluxgraph.engine import Report
from fluxgraph.findings import Finding

SCHEMA = "https://fluxgraph.dev/schemas/findings-v1.json"


def finding_json(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "file": f.location.file,
        "line": f.location.line,
        "column": f.location.column,
        "cluster": f.cluster,
        "kustomization": f.kustomization,
        "kustomizations": list(f.kustomizations) or ([f.kustomization] if f.kustomization else []),
        "object": str(f.obj) if f.obj else None,
        "headline": f.headline,
        "notes": [n.as_json() for n in f.notes],
        "message": f.message,
        "related": [{"file": r.file, "line": r.line, "column": r.column} for r in f.related],
        "fingerprint": f.fingerprint,
    }


def summary_json(report: Report) -> dict[str, Any]:
    return {
        "clusters": report.clusters,
        "kustomizations": report.kustomizations,
        "assertions": report.assertions,
        "findings": report.counts(),
        "notEvaluated": len(report.not_evaluated),
        "suppressed": len(report.suppressed),
        "rules": report.rules_run,
        "flux": report.flux(),
    }


def render_json(report: Report, color: bool = False) -> str:
    doc = {
        "$schema": SCHEMA,
        "fluxgraphVersion": __version__,
        "findings": [finding_json(f) for f in report.findings],
        "notEvaluated": [
            {"code": p.code, "file": p.location.file, "line": p.location.line, "kustomization": p.kustomization, "reason": p.message}
            for p in report.not_evaluated
        ],
        "summary": summary_json(report),
    }
    return json.dumps(doc, indent=2) + "\n"
