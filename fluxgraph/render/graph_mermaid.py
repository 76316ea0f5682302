"""Mermaid ``flowchart LR`` of a GraphView, for GitHub pull-request comments and Markdown.

- Node IDs come from the view (``[A-Za-z0-9_]``, prefixed by kind, so never a keyword like
  ``end`` and never starting with ``o``/``x`` right after an arrow).
- Labels are always ``"..."`` strings with Mermaid entity codes for every character that can
  end a string, open a tag or a comment, or be read as an entity (``# " < > [ ] { } | % ` &``),
  lines joined with ``<br>``.
- ``subgraph`` per cluster and per group, ``classDef`` per style used (severity fill + status
  outline), ``linkStyle`` per edge kind (edges are counted in emission order).
- GitHub renders Mermaid with its default limits (``maxTextSize`` 50,000 characters and
  ``maxEdges`` 500, per the Mermaid configuration schema and checked with Mermaid 11.17; GitHub
  does not document its settings, so this is an assumption). A diagram over either limit is
  reduced (text first: short IDs, compact labels, no legend, no groups; then nodes: sources,
  substitution objects, HelmReleases, ``applies`` edges), and the reduction is stated in a
  ``%%`` comment and in ``view.warnings``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fluxgraph.render.graph_view import EDGE_MEANING, STATUS_MEANING, GraphView, ViewEdge, ViewNode

MAX_TEXT = 50_000
MAX_EDGES = 500

SEV_FILL = {"error": "#f8d7da", "warning": "#fff3cd", "info": "#dbeafe", "none": "#ffffff"}
SEV_LINE = {"error": "#b91c1c", "warning": "#b45309", "info": "#1d4ed8", "none": "#374151"}
STATUS_FILL = {"external": "#eeeeee", "suspended": "#e5e7eb"}
SHAPES = {
    "kustomization": ('("', '")'),
    "helmrelease": ('[["', '"]]'),
    "source": ('[("', '")]'),
    "object": ('>"', '"]'),
    "list": ('["', '"]'),
}
ARROWS = {
    "applies": "==>",
    "dependsOn": "-.->",
    "sourceRef": "-->",
    "chartSource": "-->",
    "substituteFrom": "-->",
    "valuesFrom": "-->",
}
LINK_STYLE = {
    "applies": "stroke:#374151,stroke-width:2px",
    "dependsOn": "stroke:#2563eb,stroke-width:1.5px,stroke-dasharray:5 4",
    "sourceRef": "stroke:#9ca3af,stroke-width:1px,stroke-dasharray:2 3",
    "chartSource": "stroke:#9ca3af,stroke-width:1px,stroke-dasharray:2 3",
    "substituteFrom": "stroke:#d97706,stroke-width:1.5px,stroke-dasharray:6 3",
    "valuesFrom": "stroke:#d97706,stroke-width:1.5px,stroke-dasharray:2 3",
}
_ENTITIES = {
    "#": "#35;",
    "&": "#38;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "[": "#91;",
    "]": "#93;",
    "{": "#123;",
    "}": "#125;",
    "|": "#124;",
    "%": "#37;",
    "`": "#96;",
    "\\": "#92;",
}


def escape(text: str) -> str:
    """Text safe inside a Mermaid ``"..."`` label (entity codes; no line breaks)."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return "".join(_ENTITIES.get(ch, ch) for ch in text)


def label(lines: list[str]) -> str:
    return "<br>".join(escape(x) for x in lines)


def class_def(style: str) -> str:
    sev, _, rest = style.partition("_")
    parts = rest.split("_")
    status, focus = parts[0], "focus" in parts[1:]
    fill = SEV_FILL[sev] if sev != "none" else STATUS_FILL.get(status, SEV_FILL["none"])
    props = [f"fill:{fill}", f"stroke:{SEV_LINE[sev]}", "color:#111827"]
    width = 1
    if status == "failed":
        width = 3
    elif status == "external":
        props.append("stroke-dasharray:6 4")
    elif status == "missing":
        props.append("stroke-dasharray:2 3")
        props[2] = "color:#6b7280"
    elif status == "suspended":
        props[2] = "color:#6b7280"
    if focus:
        width = 4
    props.append(f"stroke-width:{width}px")
    return f"classDef {style} {','.join(props)}"


@dataclass(frozen=True)
class _Plan:
    short_ids: bool = False  # n0, n1 ... instead of the view's IDs (invisible in the diagram)
    compact: bool = False
    legend: bool = True
    groups: bool = True
    drop_kinds: frozenset[str] = frozenset()  # node kinds left out; "applies": those edges

    def describe(self) -> list[str]:
        out = []
        if self.short_ids:
            out.append("short node IDs")
        if self.compact:
            out.append("labels shortened to the id")
        if not self.legend:
            out.append("no legend")
        if not self.groups:
            out.append("no group subgraphs")
        names = {"source": "sources", "object": "substitution objects", "helmrelease": "HelmReleases"}
        out.extend(f"no {names[k]}" for k in ("source", "object", "helmrelease") if k in self.drop_kinds)
        if "applies" in self.drop_kinds:
            out.append("no applies edges")
        return out


# What a too-big diagram gives up, least first. Dropping nodes or edges (outer loop) loses more
# than shortening text (inner loop), so every text reduction is tried before the next drop.
_DROPS = [
    frozenset(),
    frozenset({"source"}),
    frozenset({"source", "object"}),
    frozenset({"source", "object", "helmrelease"}),
    frozenset({"source", "object", "helmrelease", "applies"}),
]
_TEXT_STEPS = [
    {},
    {"short_ids": True},
    {"short_ids": True, "compact": True},
    {"short_ids": True, "compact": True, "legend": False},
    {"short_ids": True, "compact": True, "legend": False, "groups": False},
]
_PLANS = [_Plan(drop_kinds=d, **t) for d in _DROPS for t in _TEXT_STEPS]


def _node_line(n: ViewNode, compact: bool, node_id: str) -> str:
    lines = n.lines
    if compact:
        lines = lines[:1] + ([lines[-1]] if n.findings else [])
    a, b = SHAPES[n.kind]
    return f"{node_id}{a}{label(lines)}{b}"


def _render(view: GraphView, plan: _Plan) -> tuple[str, int]:
    out = ["flowchart LR"]
    kept: set[str] = set()
    styles: dict[str, list[str]] = {}
    links: dict[str, list[int]] = {}
    n_edges = 0
    short: dict[str, str] = {}

    def nid(view_id: str) -> str:
        if not plan.short_ids:
            return view_id
        return short.setdefault(view_id, f"n{len(short)}")

    def keep(n: ViewNode) -> bool:
        return n.kind not in plan.drop_kinds

    def node(n: ViewNode, indent: str) -> None:
        out.append(f"{indent}{_node_line(n, plan.compact, nid(n.id))}")
        kept.add(n.id)
        styles.setdefault(n.style, []).append(nid(n.id))

    for c in view.clusters:
        out.append(f'  subgraph {nid(c.id)}["{escape("; ".join(c.label))}"]')
        # a subgraph without links to the outside is laid out on its own, top-down by default
        out.append("    direction LR")
        for n in c.nodes:
            if keep(n):
                node(n, "    ")
        for g in c.groups:
            members = [n for n in g.nodes if keep(n)]
            if not members:
                continue
            if not plan.groups:
                for n in members:
                    node(n, "    ")
                continue
            out.append(f'    subgraph {nid(g.id)}["{escape(g.label)}"]')
            out.append("      direction LR")
            for n in members:
                node(n, "      ")
            out.append("    end")
        out.append("  end")

    def edge(e: ViewEdge) -> None:
        nonlocal n_edges
        out.append(f"  {nid(e.src)} {ARROWS[e.kind]} {nid(e.dst)}")
        links.setdefault(e.kind, []).append(n_edges)
        n_edges += 1

    for e in view.edges():
        if e.src in kept and e.dst in kept and not (e.kind == "applies" and "applies" in plan.drop_kinds):
            edge(e)
    if plan.legend and view.options.legend:
        sevs, stats, edge_kinds, focus = view.legend_items()
        drawn = kept
        edge_kinds = [
            k
            for k in edge_kinds
            if any(e.kind == k and e.src in drawn and e.dst in drawn for e in view.edges())
        ]
        kinds = [
            k
            for k in ("helmrelease", "source", "object")
            if any(n.kind == k and n.id in drawn for n in view.nodes())
        ]
        if sevs or stats or edge_kinds or focus or kinds:
            out.append('  subgraph legend["Legend"]')
            out.append("    direction LR")
            samples: list[tuple[str, str, str]] = [
                (f"legend_sev_{s}", f"{s} finding", f"{s}_ok") for s in sevs
            ]
            samples += [(f"legend_status_{s}", STATUS_MEANING[s], f"none_{s}") for s in stats]
            if focus:
                samples.append(("legend_focus", "focus", "none_ok_focus"))
            for sample_id, text, style in samples:
                out.append(f'    {sample_id}("{escape(text)}")')
                styles.setdefault(style, []).append(sample_id)
            kind_names = {"helmrelease": "HelmRelease", "source": "source", "object": "ConfigMap / Secret", "list": "Kustomizations listed"}
            for k in kinds:
                a, b = SHAPES[k]
                out.append(f"    legend_kind_{k}{a}{escape(kind_names[k])}{b}")
                styles.setdefault("none_ok", []).append(f"legend_kind_{k}")
            for k in edge_kinds:
                a, b = f"legend_edge_{k}_a", f"legend_edge_{k}_b"
                out.append(f'    {a}[" "] {ARROWS[k]} {b}["{escape(EDGE_MEANING[k])}"]')
                styles.setdefault("legend_text", []).extend([a, b])
                links.setdefault(k, []).append(n_edges)
                n_edges += 1
            out.append("  end")
    for style in sorted(styles):
        out.append(
            f"  {class_def(style)}"
            if style != "legend_text"
            else "  classDef legend_text fill:#ffffff,stroke:#ffffff,color:#111827"
        )
        out.append(f"  class {','.join(styles[style])} {style}")
    for kind in sorted(links, key=lambda k: list(ARROWS).index(k)):
        out.append(f"  linkStyle {','.join(str(i) for i in links[kind])} {LINK_STYLE[kind]}")
    return "\n".join(out) + "\n", n_edges


def text_size(text: str) -> int:
    """Length as Mermaid counts it (a JavaScript string: UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def render_mermaid(view: GraphView, max_text: int = MAX_TEXT, max_edges: int = MAX_EDGES) -> str:
    text, n_edges = "", 0
    for plan in _PLANS:
        text, n_edges = _render(view, plan)
        if plan.describe():
            note = f"reduced to fit Mermaid's limits ({max_text} characters, {max_edges} edges): {', '.join(plan.describe())}"
            text = f"%% fluxgraph: {note}\n{text}"
        if text_size(text) <= max_text and n_edges <= max_edges:
            if plan.describe():
                view.warnings.append(f"mermaid: {note}; use --focus or --format svg for the full graph")
            return text
    view.warnings.append(
        f"mermaid: the diagram has {text_size(text)} characters and {n_edges} edges even when reduced; "
        "GitHub will not render it (use --focus, --cluster or --format svg)"
    )
    return text
