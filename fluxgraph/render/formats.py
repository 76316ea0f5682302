"""Report formats are registry entries: adding one never touches a check.

Each entry imports its renderer on first use: a run writes one or two formats, and the SARIF
and JUnit writers are not small.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fluxgraph.engine import Report

# ``render(report, color, **options)``: the text format reads ``width`` and ``verbose``; the
# machine formats ignore every option
Renderer = Callable[..., str]


def _lazy(module: str, function: str, options: tuple[str, ...] = ()) -> Renderer:
    def render(report: Report, color: bool, **given: Any) -> str:
        fn: Renderer = getattr(importlib.import_module(f"fluxgraph.render.{module}"), function)
        return fn(report, color, **{k: v for k, v in given.items() if k in options})

    render.__name__ = render.__qualname__ = function
    return render


FORMATS: dict[str, Renderer] = {
    "text": _lazy("text", "render_text", ("width", "verbose")),
    "json": _lazy("json_report", "render_json"),
    "sarif": _lazy("sarif", "render_sarif"),
    "junit": _lazy("junit", "render_junit"),
    "github": _lazy("github", "render_github"),
    "html": _lazy("html_report", "render_check_html"),
}
