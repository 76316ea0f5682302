"""Formats of ``fluxgraph graph``: a registry from format name to renderer.

``text`` and ``json`` export the whole model (``fluxgraph.export``); the diagram formats
(``dot``, ``mermaid``, ``svg``, ``png``) draw a ``GraphView``, so ``--focus``, ``--group-by``
and the findings apply to them alone. SVG and PNG run Graphviz's ``dot`` — the only program
fluxgraph starts besides ``git`` — with a fixed argument list, no shell, the DOT text on stdin
and a timeout.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fluxgraph.export import to_json, to_text
from fluxgraph.model import FluxgraphError

if TYPE_CHECKING:
    from fluxgraph.render.graph_view import GraphView

DOT_TIMEOUT = 120.0  # seconds; a 250-Kustomization graph lays out in about a second
INSTALL_HINT = (
    "install Graphviz to render SVG/PNG: `apt-get install graphviz` (Debian/Ubuntu), "
    "`dnf install graphviz` (Fedora), `brew install graphviz` (macOS), `choco install graphviz` (Windows)"
)


class GraphvizError(FluxgraphError):
    """Graphviz's ``dot`` is missing, failed or timed out."""


class GraphvizMissing(GraphvizError):
    pass


def dot_binary() -> str | None:
    return shutil.which("dot")


def run_dot(dot_text: str, fmt: str, timeout: float = DOT_TIMEOUT) -> bytes:
    """``dot -T<fmt>`` of ``dot_text`` (fmt: svg or png)."""
    if fmt not in ("svg", "png"):
        raise ValueError(f"unsupported Graphviz output format {fmt!r}")
    exe = dot_binary()
    if exe is None:
        raise GraphvizMissing(f"Graphviz's `dot` program is not on PATH; {INSTALL_HINT}")
    try:
        proc = subprocess.run(  # fixed argument list, no shell
            [exe, f"-T{fmt}"],
            input=dot_text.encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GraphvizError(f"`dot -T{fmt}` did not finish within {timeout:.0f}s") from None
    except OSError as e:
        raise GraphvizError(f"cannot run {exe}: {e.strerror or e}") from None
    if proc.returncode != 0 or not proc.stdout:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = "; ".join(err[:5]) or f"exit status {proc.returncode}"
        raise GraphvizError(f"`dot -T{fmt}` failed: {detail}")
    return proc.stdout


@dataclass(frozen=True)
class GraphFormat:
    name: str
    render: Callable[[GraphView], str | bytes]
    suffixes: tuple[str, ...]
    diagram: bool = True  # draws a GraphView (focus, grouping, findings apply)
    binary: bool = False
    graphviz: bool = False  # needs Graphviz's dot


def _text(view: GraphView) -> str:
    return to_text(view.models)


def _json(view: GraphView) -> str:
    return json.dumps(to_json(view.models), indent=2, sort_keys=False) + "\n"


# the diagram renderers (and pydot) are imported when used: `graph` and `check` in text or
# JSON never need them, and start-up time is part of every run


def _dot(view: GraphView) -> str:
    from fluxgraph.render.graph_dot import render_dot

    return render_dot(view)


def _mermaid(view: GraphView) -> str:
    from fluxgraph.render.graph_mermaid import render_mermaid

    return render_mermaid(view)


def _svg(view: GraphView) -> bytes:
    return run_dot(_dot(view), "svg")


def _png(view: GraphView) -> bytes:
    return run_dot(_dot(view), "png")


def _html(view: GraphView) -> str:
    from fluxgraph.render.html_report import render_html

    names = ", ".join(c.name for c in view.clusters)
    return render_html(view, view.findings, title=f"fluxgraph graph: {names}", summary=f"{len(view.findings)} findings")


GRAPH_FORMATS: dict[str, GraphFormat] = {
    "text": GraphFormat("text", _text, (".txt",), diagram=False),
    "json": GraphFormat("json", _json, (".json",), diagram=False),
    "dot": GraphFormat("dot", _dot, (".dot", ".gv")),
    "svg": GraphFormat("svg", _svg, (".svg",), binary=True, graphviz=True),
    "png": GraphFormat("png", _png, (".png",), binary=True, graphviz=True),
    "mermaid": GraphFormat("mermaid", _mermaid, (".mmd", ".mermaid")),
    # the picture needs Graphviz; without it the page is written without it and says so
    "html": GraphFormat("html", _html, (".html", ".htm")),
}


def format_for_output(output: str | None) -> str | None:
    """The format an ``--output`` file name asks for by its suffix, if any."""
    if not output:
        return None
    suffix = Path(output).suffix.lower()
    for name, spec in GRAPH_FORMATS.items():
        if suffix in spec.suffixes:
            return name
    return None


def dot_fallback_path(output: str) -> str:
    """Where the DOT goes when an SVG/PNG cannot be rendered: ``--output`` with ``.dot``."""
    p = Path(output)
    return str(p.with_suffix(".dot")) if p.suffix.lower() != ".dot" else str(p) + ".dot"
