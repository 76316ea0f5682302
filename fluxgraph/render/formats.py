"""Report formats are registry entries: adding one never touches a check."""

from __future__ import annotations

from collections.abc import Callable

from fluxgraph.engine import Report
from fluxgraph.render.github import render_github
from fluxgraph.render.json_report import render_json
from fluxgraph.render.junit import render_junit
from fluxgraph.render.sarif import render_sarif
from fluxgraph.render.text import render_text

Renderer = Callable[[Report, bool], str]

FORMATS: dict[str, Renderer] = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "junit": render_junit,
    "github": render_github,
}
