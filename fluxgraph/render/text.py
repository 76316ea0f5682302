"""Human text report: findings grouped by file, a fix hint per finding, a summary line."""

from __future__ import annotations

from itertools import groupby

from fluxgraph.catalog import load_catalog
from fluxgraph.engine import Report

_COLORS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_RESET = "\x1b[0m"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(report: Report) -> str:
    c = report.counts()
    hazards = len(report.findings)
    parts = [
        _plural(len(report.clusters), "cluster"),
        _plural(report.kustomizations, "Kustomization"),
        _plural(report.assertions, "assertion"),
        _plural(hazards, "hazard") + (f" ({c['error']} error, {c['warning']} warning, {c['info']} info)" if hazards else ""),
        f"{len(report.not_evaluated)} not evaluated",
    ]
    if report.suppressed:
        parts.append(f"{len(report.suppressed)} suppressed")
    return ", ".join(parts)


def render_text(report: Report, color: bool = False) -> str:
    catalog = load_catalog()
    lines: list[str] = report.flux_lines()
    if lines:
        lines.append("")
    for file, group in groupby(report.findings, key=lambda f: f.location.file):
        lines.append(file)
        for f in group:
            sev = f.severity.value
            sev_txt = f"{_COLORS[sev]}{sev}{_RESET}" if color else sev
            where = f" [{f.kustomization}]" if f.kustomization else ""
            lines.append(f"  {f.location.line}:{f.location.column}  {sev_txt}  {f.rule}  {f.message}{where}")
            spec = catalog.get(f.rule)
            if spec is not None:
                lines.append(f"      fix: {spec.fix}")
        lines.append("")
    if report.not_evaluated:
        lines.append("not evaluated:")
        for p in report.not_evaluated:
            lines.append(f"  {p.location.file_line}  {p.message}")
        lines.append("")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
