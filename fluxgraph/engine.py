"""The check engine: run every enabled check over every cluster, stamp rule, severity and
suppression, deduplicate and sort. ``analyze()`` is the library entry point behind
``fluxgraph check``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgraph.api import Repository, load
from fluxgraph.catalog import RuleSpec, load_catalog
from fluxgraph.checks import CheckContext, registry
from fluxgraph.findings import Finding, Severity
from fluxgraph.model import FluxgraphError, Problem


@dataclass
class Report:
    repo: Repository
    findings: list[Finding]
    not_evaluated: list[Problem]
    assertions: int
    rules_run: list[str]
    suppressed: list[Finding] = field(default_factory=list)

    @property
    def clusters(self) -> list[str]:
        return [c.name for c in self.repo.clusters]

    @property
    def kustomizations(self) -> int:
        return sum(len(c.kustomizations) for c in self.repo.clusters)

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        return out

    def exit_code(self, fail_on: Severity) -> int:
        return 1 if any(f.severity.rank >= fail_on.rank for f in self.findings) else 0


def run_checks(
    repo: Repository,
    *,
    enabled: set[str] | None = None,
    disabled: set[str] | None = None,
    severities: dict[str, Severity] | None = None,
    options: dict[str, Any] | None = None,
) -> Report:
    catalog = load_catalog()
    checks = registry()
    unknown = [r for r in (enabled or set()) | (disabled or set()) if r not in catalog]
    if unknown:
        raise FluxgraphError(f"unknown rule(s): {', '.join(sorted(unknown))} (see `fluxgraph rules`)")
    # a check runs only with its catalog entry (tests/test_catalog.py keeps the two in step)
    rule_ids = [
        rid
        for rid in sorted(checks)
        if rid in catalog and ((enabled is None and catalog[rid].default) or (enabled is not None and rid in enabled))
    ]
    rule_ids = [r for r in rule_ids if r not in (disabled or set())]
    findings: dict[tuple[Any, ...], Finding] = {}
    not_evaluated: dict[tuple[Any, ...], Problem] = {}
    assertions = 0
    for cluster in repo.clusters:
        for rid in rule_ids:
            spec: RuleSpec = catalog[rid]
            ctx = CheckContext(cluster=cluster, repo=repo, options=dict(options or {}))
            for raw in checks[rid](ctx):
                sev = (severities or {}).get(rid) or raw.severity or spec.severity
                key = (rid, raw.location, raw.message)
                if key in findings:
                    continue
                findings[key] = Finding(
                    location=raw.location,
                    rule=rid,
                    severity=sev,
                    message=raw.message,
                    cluster=cluster.name,
                    obj=raw.obj,
                    kustomization=raw.kustomization,
                    related=raw.related,
                    fingerprint=Finding.fingerprint_of(rid, raw),
                    details=raw.details,
                )
            assertions += ctx.assertions
        for p in [*cluster.problems, *(p for ks in cluster.kustomizations.values() for p in ks.problems)]:
            if p.not_evaluated:
                not_evaluated.setdefault((p.code, p.location, p.message), p)
    ordered = sorted(findings.values())
    return Report(
        repo=repo,
        findings=ordered,
        not_evaluated=sorted(not_evaluated.values(), key=lambda p: p.sort_key()),
        assertions=assertions,
        rules_run=rule_ids,
    )


def analyze(path: str | Path, **kwargs: Any) -> Report:
    """Load the repository and run the checks. Keyword arguments are those of ``api.load``
    plus ``enabled``, ``disabled``, ``severities`` and ``options`` of ``run_checks``."""
    check_keys = ("enabled", "disabled", "severities", "options")
    check_kwargs = {k: kwargs.pop(k) for k in check_keys if k in kwargs}
    repo = load(path, **kwargs)
    return run_checks(repo, **check_kwargs)
