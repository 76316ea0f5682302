"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per
finding, escaped as the runner requires (``%``, CR, LF; and ``,``/``:`` in properties)."""

from __future__ import annotations

from fluxgraph.engine import Report
from fluxgraph.render.text import summary_line

_CMD = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report, color: bool = False) -> str:
    lines = []
    for f in report.findings:
        props = ",".join(
            [
                f"file={_escape_prop(f.location.file)}",
                f"line={f.location.line}",
                f"col={f.location.column}",
                f"title={_escape_prop(f'fluxgraph {f.rule}')}",
            ]
        )
        lines.append(f"::{_CMD[f.severity.value]} {props}::{_escape_data(f.message)}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
