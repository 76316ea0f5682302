"""The interactive HTML report (``graph``, ``check`` and ``diff`` with ``--format html``): one
self-contained file, no network at view time. The graph is the Graphviz SVG of the diagram
(``graph_dot``), inlined, with pan, zoom and search; a node's objects, inputs and findings show
on click (from the graph JSON of ``fluxgraph.export`` and the findings JSON of ``json_report``);
the findings table filters by rule and severity. The script and style ship in the package
(``fluxgraph/data/report.js``, ``report.css``); every value from the repository is JSON in a
``<script type="application/json">`` block (``<`` escaped) that the script reads as text and
puts on the page with ``textContent``.

Without Graphviz's ``dot`` the report is still written, without the picture: the findings
table and the panel stay, and the page says why the graph is missing."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from fluxgraph import __version__
from fluxgraph.diff import DiffReport, Effect
from fluxgraph.engine import Report
from fluxgraph.export import to_json
from fluxgraph.findings import Finding
from fluxgraph.render.graph_view import GraphView
from fluxgraph.render.json_report import finding_json


@dataclass(frozen=True)
class Section:
    """A titled block under the findings (``diff`` puts its change summary there): ``text``
    shown preformatted."""

    title: str
    text: str


def _asset(name: str) -> str:
    return resources.files("fluxgraph").joinpath("data", name).read_text(encoding="utf-8")


def _script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: no ``<`` (so no ``</script>``), no U+2028/2029."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _svg(dot: str) -> tuple[str | None, str]:
    """The inline SVG of the DOT text ``dot`` and, when it cannot be drawn, why."""
    from fluxgraph.render.graph_formats import GraphvizError, run_dot

    try:
        svg = run_dot(dot, "svg").decode("utf-8")
    except GraphvizError as e:
        return None, f"The graph is not drawn: {e}"
    start = svg.find("<svg")
    # Graphviz's XML prolog and DOCTYPE are not valid inside HTML; the rest is XML-escaped
    return re.sub(r"<!--.*?-->", "", svg[start:], flags=re.S), ""


def render_html(view: GraphView, findings: list[Finding], *, title: str, summary: str, sections: tuple[Section, ...] = ()) -> str:
    """The report of a diagram (``graph``, ``check``): ``view`` drawn, its models for the
    panel, ``findings`` in the table."""
    from fluxgraph.render.graph_dot import render_dot

    nodes = {
        n.id: {"key": n.key, "kind": n.kind, "title": n.title, "details": list(n.details), "cluster": c.name}
        for c in view.clusters
        for n in c.all_nodes()
    }
    svg, why = _svg(render_dot(view)) if view.clusters else (None, "No cluster to draw.")
    return page(
        title=title,
        summary=summary,
        svg=svg,
        why=why,
        nodes=nodes,
        graph=to_json(view.models),
        rows=[finding_json(f) for f in findings],
        sections=sections,
    )


def page(
    *,
    title: str,
    summary: str,
    svg: str | None,
    why: str,
    nodes: dict[str, dict[str, Any]],
    graph: dict[str, Any],
    rows: list[dict[str, Any]],
    sections: tuple[Section, ...] = (),
) -> str:
    """The page: ``svg`` (or ``why`` there is none) whose DOT node IDs ``nodes`` describes,
    ``graph`` (the graph JSON) for the panel, ``rows`` (findings JSON) for the table."""
    data = {"fluxgraphVersion": __version__, "graph": graph, "nodes": nodes, "findings": rows}
    graph_html = svg if svg is not None else f'<p class="none">{html.escape(why)}</p>'
    extra = "".join(
        f'<section class="extra"><h2>{html.escape(s.title)}</h2><pre>{html.escape(s.text)}</pre></section>' for s in sections
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="fluxgraph {html.escape(__version__)}">
<title>{html.escape(title)}</title>
<style>
{_asset("report.css")}
</style>
</head>
<body>
<header><h1>{html.escape(title)}</h1><span class="summary">{html.escape(summary)}</span></header>
<main>
<div id="graph">
<div id="tools"><input id="search" type="search" placeholder="Search nodes (Enter: go to the first)" aria-label="Search nodes">
<span id="hits"></span><button id="zin" title="Zoom in">+</button><button id="zout" title="Zoom out">&minus;</button><button id="fit" title="Whole graph">fit</button></div>
{graph_html}
</div>
<aside id="panel"></aside>
<section id="findings">
<h2>Findings</h2>
<div id="filters">
<label>Rule <select id="rule"><option value="">all</option></select></label>
<label>Severity <select id="severity"><option value="">all</option><option>error</option><option>warning</option><option>info</option></select></label>
<label>Text <input id="ftext" type="search" aria-label="Filter findings"></label>
<span id="count"></span>
</div>
<table><thead><tr><th>Severity</th><th>Rule</th><th>Location</th><th>Finding</th><th>Kustomization</th></tr></thead>
<tbody id="rows"></tbody></table>
</section>
{extra}
</main>
<script type="application/json" id="fluxgraph-data">{_script_json(data)}</script>
<script>
{_asset("report.js")}
</script>
</body>
</html>
"""


def render_check_html(report: Report, color: bool = False) -> str:
    """``check --format html``: the diagram of every cluster with the report's findings, the
    table, and what was not evaluated."""
    from fluxgraph.render.graph_view import build_view
    from fluxgraph.render.text import summary_line

    view = build_view(report.repo.clusters, report.findings)
    sections: tuple[Section, ...] = ()
    if report.not_evaluated:
        sections = (Section("Not evaluated", "\n".join(f"{p.location.file_line}  {p.message}" for p in report.not_evaluated)),)
    return render_html(view, report.findings, title="fluxgraph check: " + ", ".join(report.clusters), summary=summary_line(report), sections=sections)


def render_diff_html(r: DiffReport) -> str:
    """``diff --format html``: the changed part of the graph (``diff_graph``), the verdicts and
    the findings new at head in the table, the whole text report under it."""
    from fluxgraph.render.diff_graph import dot_and_nodes
    from fluxgraph.render.diff_report import render_text

    dot, drawn = dot_and_nodes(r)
    nodes = {
        nid: {"key": key, "kind": key.partition(":")[0], "title": label.splitlines()[0], "details": label.splitlines()[1:], "cluster": cluster}
        for nid, (cluster, key, label) in drawn.items()
    }
    svg, why = _svg(dot) if drawn else (None, "Nothing in the graph changed.")
    rows = [_effect_row(cluster, e) for cluster, e in r.effects()] + [finding_json(f) for f in r.all_new_findings()]
    c = r.counts()
    summary = f"{c['error']} error, {c['warning']} warning, {c['info']} info" + (f", {c['acknowledged']} acknowledged" if c["acknowledged"] else "")
    return page(
        title=f"fluxgraph diff {r.base} -> {r.head}",
        summary=summary,
        svg=svg,
        why=why,
        nodes=nodes,
        graph={"clusters": []},
        rows=rows,
        sections=(Section("The change", render_text(r)),),
    )


def _effect_row(cluster: str, e: Effect) -> dict[str, Any]:
    """A verdict of the diff as a row of the table (the shape of a finding's JSON)."""
    loc = e.location
    notes = [{"label": "note", "text": f"acknowledged: {e.acknowledged}"}] if e.acknowledged else []
    owner = e.new_owner or e.old_owner
    return {
        "rule": e.code,
        "severity": e.severity.value,
        "file": loc.file if loc else "",
        "line": loc.line if loc else 0,
        "column": loc.column if loc else 0,
        "cluster": cluster,
        "kustomization": owner,
        "kustomizations": [owner] if owner else [],
        "object": str(e.ref) if e.ref else None,
        "headline": e.message,
        "notes": notes,
    }
