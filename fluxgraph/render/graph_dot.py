"""Graphviz DOT of a GraphView, built with pydot.

Each cluster is a ``cluster_...`` subgraph (with nested ``cluster_...`` subgraphs for
``--group-by``), nodes are filled by their worst finding's severity and outlined by their
status, edge kinds have distinct styles, and a ``cluster_legend`` explains what is used.
Every string attribute is quoted and escaped here (pydot passes a quoted string through), so
names with quotes, backslashes or newlines cannot break out of the DOT syntax.
"""

from __future__ import annotations

import html

import pydot

from fluxgraph.render.graph_view import (
    EDGE_MEANING,
    STATUS_MEANING,
    ClusterView,
    GraphView,
    ViewEdge,
    ViewNode,
)

FONT = "Helvetica"
SEV_FILL = {"error": "#f8d7da", "warning": "#fff3cd", "info": "#dbeafe", "none": "#ffffff"}
SEV_LINE = {"error": "#b91c1c", "warning": "#b45309", "info": "#1d4ed8", "none": "#374151"}
STATUS_FILL = {"external": "#eeeeee", "suspended": "#e5e7eb"}  # used when there is no finding
KIND_SHAPE = {"kustomization": "box", "helmrelease": "component", "source": "cylinder", "object": "note", "list": "box"}
EDGE_ATTRS: dict[str, dict[str, str]] = {
    "applies": {"color": "#374151", "penwidth": "1.6", "style": "solid", "arrowhead": "normal"},
    "dependsOn": {"color": "#2563eb", "penwidth": "1.4", "style": "dashed", "arrowhead": "normal"},
    "sourceRef": {"color": "#9ca3af", "penwidth": "1.0", "style": "dotted", "arrowhead": "empty"},
    "chartSource": {"color": "#9ca3af", "penwidth": "1.0", "style": "dotted", "arrowhead": "empty"},
    "substituteFrom": {"color": "#d97706", "penwidth": "1.2", "style": "dashed", "arrowhead": "vee"},
    "valuesFrom": {"color": "#d97706", "penwidth": "1.2", "style": "dotted", "arrowhead": "vee"},
}
# the legend's text rendering of each edge style (ASCII: every font has it)
EDGE_SAMPLE = {
    "applies": "====>",
    "dependsOn": "- - - >",
    "sourceRef": ". . . . >",
    "chartSource": ". . . . >",
    "substituteFrom": "- - - >",
    "valuesFrom": ". . . . >",
}


def q(text: str) -> str:
    """A DOT double-quoted string: backslash and quote escaped, no raw line breaks."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def label(lines: list[str], left: bool = False) -> str:
    """Quoted multi-line label: lines escaped one by one and joined with DOT's ``\\n`` (centred)
    or ended by ``\\l`` (left-justified)."""
    if left:
        return '"' + "".join(q(line)[1:-1] + "\\l" for line in lines) + '"'
    return '"' + "\\n".join(q(line)[1:-1] for line in lines) + '"'


def node_attrs(severity: str | None, status: str, kind: str, focus: bool) -> dict[str, str]:
    sev = severity or "none"
    styles = ["filled"]
    if kind == "kustomization":
        styles.append("rounded")
    attrs = {
        "shape": KIND_SHAPE[kind],
        "fillcolor": SEV_FILL[sev] if severity else STATUS_FILL.get(status, SEV_FILL["none"]),
        "color": SEV_LINE[sev],
        "penwidth": "1.2",
    }
    if status == "failed":
        styles.append("bold")
        attrs["peripheries"] = "2"
    elif status == "external":
        styles.append("dashed")
    elif status == "missing":
        styles.append("dotted")
        attrs["fontcolor"] = "#6b7280"
    elif status == "suspended":
        attrs["fontcolor"] = "#6b7280"
    if focus:
        attrs["penwidth"] = "3"
        attrs["fontname"] = f"{FONT}-Bold"
    attrs["style"] = ",".join(styles)
    return {k: q(v) for k, v in attrs.items()}


def _mk_node(name: str, attrs: dict[str, str]) -> pydot.Node:
    node = pydot.Node(name)
    for k, v in attrs.items():
        node.set(k, v)
    return node


def _mk_edge(src: str, dst: str, attrs: dict[str, str]) -> pydot.Edge:
    edge = pydot.Edge(src, dst)
    for k, v in attrs.items():
        edge.set(k, v)
    return edge


def _mk_cluster(name: str, attrs: dict[str, str]) -> pydot.Subgraph:
    """A ``cluster_<name>`` subgraph (Graphviz draws subgraphs named cluster* as boxes)."""
    sub = pydot.Subgraph(f"cluster_{name}")
    for k, v in attrs.items():
        sub.set(k, v)
    return sub


def _node(n: ViewNode) -> pydot.Node:
    attrs = node_attrs(n.severity, n.status, n.kind, n.focus)
    if n.kind == "list":  # the ranked layout's compact list: names left-aligned, no frame of its own
        attrs.update(style=q("dashed"), color=q("#9ca3af"), fontsize=q("9"))
        attrs["label"] = label(n.lines, left=True)
    else:
        attrs["label"] = label(n.lines)
    attrs["tooltip"] = q(n.tooltip or n.title)
    return _mk_node(n.id, attrs)


def _edge(e: ViewEdge) -> pydot.Edge:
    return _mk_edge(e.src, e.dst, {k: q(v) for k, v in EDGE_ATTRS[e.kind].items()})


def _cluster(c: ClusterView) -> pydot.Subgraph:
    sub = _mk_cluster(
        c.id,
        {
            "label": label(list(c.label), left=True),
            "style": q("rounded"),
            "color": q("#6b7280"),
            "fontname": q(FONT),
            "labeljust": q("l"),
        },
    )
    for n in c.nodes:
        sub.add_node(_node(n))
    for g in c.groups:
        inner = _mk_cluster(
            g.id,
            {
                "label": label([g.label]),
                "style": q("rounded,filled"),
                "fillcolor": q("#f9fafb"),
                "color": q("#d1d5db"),
                "labeljust": q("l"),
            },
        )
        for n in g.nodes:
            inner.add_node(_node(n))
        sub.add_subgraph(inner)
    return sub


def _legend(view: GraphView) -> pydot.Subgraph | None:
    sevs, stats, edge_kinds, focus = view.legend_items()
    kinds = [k for k in view.used_node_kinds() if k != "kustomization"]
    if not (sevs or stats or edge_kinds or focus or kinds):
        return None
    leg = _mk_cluster(
        "legend",
        {
            "label": q("Legend"),
            "style": q("rounded"),
            "color": q("#9ca3af"),
            "fontname": q(FONT),
            "labeljust": q("l"),
        },
    )
    for s in sevs:
        attrs = node_attrs(s, "ok", "kustomization", False)
        attrs["label"] = q(f"{s} finding")
        leg.add_node(_mk_node(f"legend_sev_{s}", attrs))
    for s in stats:
        attrs = node_attrs(None, s, "kustomization", False)
        attrs["label"] = q(STATUS_MEANING[s])
        leg.add_node(_mk_node(f"legend_status_{s}", attrs))
    if focus:
        attrs = node_attrs(None, "ok", "kustomization", True)
        attrs["label"] = q("focus")
        leg.add_node(_mk_node("legend_focus", attrs))
    names = {"helmrelease": "HelmRelease", "source": "source", "object": "ConfigMap / Secret", "list": "Kustomizations listed"}
    for k in kinds:
        attrs = node_attrs(None, "ok", k, False)
        attrs["label"] = q(names[k])
        leg.add_node(_mk_node(f"legend_kind_{k}", attrs))
    if edge_kinds:
        # one HTML-table node: real sample edges would take the width of the graph's first ranks
        rows = "".join(
            f'<TR><TD ALIGN="LEFT"><FONT COLOR="{EDGE_ATTRS[k]["color"]}"><B>{html.escape(EDGE_SAMPLE[k])}</B></FONT></TD>'
            f'<TD ALIGN="LEFT">{html.escape(EDGE_MEANING[k])}</TD></TR>'
            for k in edge_kinds
        )
        table = f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">{rows}</TABLE>>'
        leg.add_node(_mk_node("legend_edges", {"shape": q("plaintext"), "label": table}))
    return leg


def render_dot(view: GraphView) -> str:
    g = pydot.Dot("fluxgraph", graph_type="digraph", strict=False)
    g.set("rankdir", "LR")
    g.set("newrank", "true")
    g.set("fontname", q(FONT))
    g.set("fontsize", "11")
    g.set("nodesep", "0.25")
    g.set("ranksep", "0.5")
    g.set_node_defaults(fontname=q(FONT), fontsize="10", margin=q("0.12,0.06"))
    g.set_edge_defaults(fontname=q(FONT), fontsize="9")
    for c in view.clusters:
        g.add_subgraph(_cluster(c))
    for c in view.clusters:
        for e in c.edges:
            g.add_edge(_edge(e))
    if view.options.legend:
        leg = _legend(view)
        if leg is not None:
            g.add_subgraph(leg)
    return g.to_string()
