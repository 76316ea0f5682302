"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per
finding, escaped as the runner requires (``%``, CR, LF; and ``,``/``:`` in properties)."""

from __future__ import annotations

from fluxgraph.engine import Report
from fluxgraph.findings import Finding
from fluxgraph.render.text import summary_line

_CMD = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotation_body(f: Finding) -> str:
    """The annotation's text under its title: the notes, one per line, and the rule."""
    lines = [f"{n.label.value}: {n.as_text()}" for n in f.notes]
    lines.append(f"rule: {f.rule} ({f.severity.value}; `fluxgraph rules {f.rule}`)")
    return "\n".join(lines)


def finding_annotation(f: Finding, title: str, body: str | None = None) -> str:
    """One workflow command for a finding, located at its file, line and column: ``title``
    (the headline) in bold, ``body`` (default: the notes) under it."""
    props = ",".join(
        [
            f"file={_escape_prop(f.location.file)}",
            f"line={f.location.line}",
            f"col={f.location.column}",
            f"title={_escape_prop(title)}",
        ]
    )
    return f"::{_CMD[f.severity.value]} {props}::{_escape_data(annotation_body(f) if body is None else body)}"


def render_github(report: Report, color: bool = False) -> str:
    lines = [finding_annotation(f, f.headline) for f in report.findings]
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
