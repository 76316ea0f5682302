"""The changed part of the reconcile graph of a ``fluxgraph diff``, as Mermaid or Graphviz DOT.

Nodes are the Kustomizations and HelmReleases that changed (added, removed, renamed, spec
changed, losing or gaining objects) plus the unchanged ends of changed edges, for context.
Edges: ``dependsOn`` (added green, removed red dashed, unchanged grey, between shown nodes),
``applies`` for added/removed Kustomizations, and one ``moves`` edge per pair of owners that
objects move between, labelled with the count and the worst verdict.

Node IDs are generated (``n0``, ``n1``...: only ``[A-Za-z0-9_]``); every label is escaped
(Mermaid entity codes, DOT quoted strings), so names from the repository cannot break out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fluxgraph import gc
from fluxgraph.diff import ClusterDiff, DiffReport
from fluxgraph.findings import Severity

ADDED, REMOVED, CHANGED, CONTEXT = "added", "removed", "changed", "context"
_STYLE = {
    ADDED: ("#e6ffed", "#1a7f37"),
    REMOVED: ("#ffebe9", "#cf222e"),
    CHANGED: ("#fff8c5", "#9a6700"),
    CONTEXT: ("#f6f8fa", "#8c959f"),
}
_EDGE_COLOR = {ADDED: "#1a7f37", REMOVED: "#cf222e", CHANGED: "#9a6700", CONTEXT: "#8c959f"}
_SEV_COLOR = {Severity.ERROR: "#cf222e", Severity.WARNING: "#9a6700", Severity.INFO: "#1a7f37"}


@dataclass
class _Graph:
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (label, state)
    edges: list[tuple[str, str, str, str, bool, str]] = field(
        default_factory=list
    )  # (src, dst, label, color, dashed, state)

    def node(self, key: str, label: str, state: str) -> None:
        cur = self.nodes.get(key)
        if cur is None or cur[1] == CONTEXT:
            self.nodes[key] = (label, state)


def _cluster_graph(cd: ClusterDiff) -> _Graph:
    g = _Graph()
    for k in cd.kustomizations:
        key = f"ks:{k.id}"
        if k.change == "added":
            g.node(key, f"Kustomization {k.id}\n+ added", ADDED)
        elif k.change in ("removed", "renamed"):
            g.node(key, f"Kustomization {k.id}\n- {k.change}", REMOVED)
            if k.renamed_to:
                g.node(f"ks:{k.renamed_to}", f"Kustomization {k.renamed_to}\n+ added (rename)", ADDED)
                g.edges.append((key, f"ks:{k.renamed_to}", "renamed", _EDGE_COLOR[CHANGED], True, CHANGED))
        else:
            fields = ", ".join(f for f, _, _ in k.fields[:4])
            g.node(key, f"Kustomization {k.id}\n~ {fields}", CHANGED)
    for h in cd.helm_releases:
        key = f"hr:{h.id}"
        state = {"added": ADDED, "removed": REMOVED}.get(h.change, CHANGED)
        g.node(key, f"HelmRelease {h.id}\n{h.change}", state)
    for d in cd.depends_on:
        prefix = "ks" if d.kind == "Kustomization" else "hr"
        a, b = f"{prefix}:{d.source}", f"{prefix}:{d.target}"
        g.node(a, f"{d.kind} {d.source}", CONTEXT)
        g.node(b, f"{d.kind} {d.target}", CONTEXT)
        state = ADDED if d.change == "added" else REMOVED
        g.edges.append((a, b, f"dependsOn ({d.change})", _EDGE_COLOR[state], d.change == "removed", state))
    moves: dict[tuple[str, str], list[str]] = {}
    marks: dict[str, list[str]] = {}  # owner -> the verdicts about its own objects, and new findings
    for e in cd.effects:
        if e.old_owner and e.new_owner and e.ref is not None and e.old_owner != e.new_owner:
            moves.setdefault((e.old_owner, e.new_owner), []).append(e.code)
        elif e.old_owner and e.severity.rank >= Severity.WARNING.rank and not e.acknowledged:
            marks.setdefault(e.old_owner, []).append(f"{e.severity.value} {e.code}")
    for f in cd.new_findings:
        if f.kustomization and f.severity.rank >= Severity.WARNING.rank:
            marks.setdefault(f.kustomization, []).append(f"new {f.severity.value} {f.rule}")
    touched: dict[str, dict[str, int]] = {}  # owner -> what happens to its objects (moves are edges)
    for what, changes in (("added", cd.added), ("removed", cd.removed), ("modified", cd.modified)):
        for o in changes:
            for owner in o.after or o.before:
                counts = touched.setdefault(owner, {})
                counts[what] = counts.get(what, 0) + 1
    for owner, counts in sorted(touched.items()):
        key = f"ks:{owner}"
        label, state = g.nodes.get(key, (f"Kustomization {owner}", CHANGED))
        text = ", ".join(f"{n} {w}" for w, n in counts.items())
        g.nodes[key] = (f"{label}\n{text} object(s)", state if state != CONTEXT else CHANGED)
    for owner, items in sorted(marks.items()):
        key = f"ks:{owner}"
        label, state = g.nodes.get(key, (f"Kustomization {owner}", CHANGED))
        shown = sorted(set(items))
        extra = "\n".join(f"! {x}" for x in shown[:3]) + (f"\n! {len(shown) - 3} more" if len(shown) > 3 else "")
        g.nodes[key] = (f"{label}\n{extra}", state if state != CONTEXT else CHANGED)
    for (old, new), codes in sorted(moves.items()):
        worst = gc.SAFE
        for c in codes:
            if c in gc.VERDICT_SEVERITY:
                worst = gc.worse(worst, c)
        a, b = f"ks:{old}", f"ks:{new}"
        g.node(a, f"Kustomization {old}", CONTEXT)
        g.node(b, f"Kustomization {new}", CONTEXT)
        color = _SEV_COLOR[gc.VERDICT_SEVERITY[worst]]
        g.edges.append((a, b, f"moves {len(codes)} object(s): {worst}", color, False, CHANGED))
    for k in cd.kustomizations:
        if k.change == "added" and k.fate.startswith("applied by "):
            parent = k.fate[len("applied by ") :]
            if f"ks:{parent}" in g.nodes:
                g.edges.append((f"ks:{parent}", f"ks:{k.id}", "applies", _EDGE_COLOR[ADDED], False, ADDED))
    return g


def _mermaid_text(s: str) -> str:
    """Mermaid entity codes for everything but plain characters; newlines become <br/>."""
    out = []
    for ch in s:
        if ch == "\n":
            out.append("<br/>")
        elif ch.isascii() and (ch.isalnum() or ch in " _./:-+,()~"):
            out.append(ch)
        else:
            out.append(f"#{ord(ch)};")
    return "".join(out)


def render_mermaid(r: DiffReport) -> str:
    lines = ["flowchart LR"]
    ids: dict[tuple[int, str], str] = {}
    link_styles: list[str] = []
    edge_no = 0
    for ci, cd in enumerate(r.clusters):
        if cd.status == "unchanged":
            continue
        g = _cluster_graph(cd)
        lines.append(f'  subgraph c{ci}["{_mermaid_text("cluster " + cd.cluster)}"]')
        for key, (label, state) in g.nodes.items():
            nid = f"n{len(ids)}"
            ids[(ci, key)] = nid
            lines.append(f'    {nid}["{_mermaid_text(label)}"]:::{state}')
        lines.append("  end")
        for a, b, label, color, dashed, _state in g.edges:
            arrow = "-.->" if dashed else "-->"
            lines.append(f'  {ids[(ci, a)]} {arrow}|"{_mermaid_text(label)}"| {ids[(ci, b)]}')
            link_styles.append(f"  linkStyle {edge_no} stroke:{color},stroke-width:2px")
            edge_no += 1
    if len(lines) == 1:
        lines.append('  nochange["no change"]')
    lines.extend(link_styles)
    for state, (fill, stroke) in _STYLE.items():
        dash = ",stroke-dasharray: 5 5" if state == REMOVED else ""
        lines.append(f"  classDef {state} fill:{fill},stroke:{stroke}{dash}")
    return "\n".join(lines) + "\n"


def _dot_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def render_dot(r: DiffReport) -> str:
    return dot_and_nodes(r)[0]


def dot_and_nodes(r: DiffReport) -> tuple[str, dict[str, tuple[str, str, str]]]:
    """The DOT text and, per DOT node ID, (cluster, key, label) of what it draws."""
    drawn: dict[str, tuple[str, str, str]] = {}
    lines = [
        "digraph fluxgraph_diff {",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
        f"  label={_dot_str('fluxgraph diff ' + r.base + ' -> ' + r.head)};",
    ]
    n = 0
    for ci, cd in enumerate(r.clusters):
        if cd.status == "unchanged":
            continue
        g = _cluster_graph(cd)
        ids: dict[str, str] = {}
        lines.append(f"  subgraph cluster_{ci} {{")
        lines.append(f"    label={_dot_str('cluster ' + cd.cluster)};")
        for key, (label, state) in g.nodes.items():
            ids[key] = f"n{n}"
            drawn[ids[key]] = (cd.cluster, key, label)
            n += 1
            fill, stroke = _STYLE[state]
            style = '"rounded,filled,dashed"' if state == REMOVED else '"rounded,filled"'
            lines.append(
                f"    {ids[key]} [label={_dot_str(label)}, fillcolor={_dot_str(fill)}, color={_dot_str(stroke)}, style={style}];"
            )
        lines.append("  }")
        for a, b, label, color, dashed, _state in g.edges:
            style = ", style=dashed" if dashed else ""
            lines.append(
                f"  {ids[a]} -> {ids[b]} [label={_dot_str(label)}, color={_dot_str(color)}, fontcolor={_dot_str(color)}{style}];"
            )
    lines.append("}")
    return "\n".join(lines) + "\n", drawn
