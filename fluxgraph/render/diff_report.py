"""Rendering of ``fluxgraph diff``: text, Markdown (a pull-request comment) and JSON (schema in
docs/explain-and-diff.md). Graph formats are in ``fluxgraph.render.diff_graph``."""

from __future__ import annotations

import json
from typing import Any

from fluxgraph import __version__, contentdiff
from fluxgraph.diff import REVIEW_CODES, ClusterDiff, DiffReport, Effect, ObjectChange
from fluxgraph.findings import Finding, Severity
from fluxgraph.model import Location
from fluxgraph.render.explain_report import cascade_json, finding_head
from fluxgraph.render.json_report import finding_json

SCHEMA = "https://fluxgraph.dev/schemas/diff-v1.json"
MAX_TEXT = 25
MAX_CHANGE_LINES = 30  # content-diff lines per object in text and Markdown
GITHUB_COMMENT_LIMIT = 65536  # characters of a GitHub comment body


def _loc(loc: Location | None) -> str:
    return loc.file_line if loc is not None else ""


def _title(r: DiffReport) -> str:
    b = f"{r.base} ({r.base_commit[:10]})" if r.base_commit else r.base
    h = f"{r.head} ({r.head_commit[:10]})" if r.head_commit else r.head
    return f"{b} -> {h}"


def _oc(o: ObjectChange) -> str:
    if o.before and o.after:
        return f"{o.ref}  {', '.join(o.before)} -> {', '.join(o.after)}"
    return f"{o.ref}  ({', '.join(o.after or o.before)})  {_loc(o.location)}"


def _cascade_text(e: Effect, indent: str) -> list[str]:
    c = e.cascade
    if c is None:
        return []
    by_owner: dict[str, list[str]] = {}
    for owner, ref in c.victims:
        by_owner.setdefault(owner, []).append(str(ref))
    out = []
    for owner, refs in sorted(by_owner.items()):
        shown = ", ".join(refs[:6]) + (f", … ({len(refs) - 6} more)" if len(refs) > 6 else "")
        out.append(f"{indent}{owner}: {shown}")
    for h in c.helm_releases:
        out.append(f"{indent}HelmRelease {h}")
    return out


def _limited(items: list[str], indent: str) -> list[str]:
    out = [indent + s for s in items[:MAX_TEXT]]
    if len(items) > MAX_TEXT:
        out.append(f"{indent}… {len(items) - MAX_TEXT} more (--format json lists all)")
    return out


def _change_text(o: ObjectChange, indent: str) -> list[str]:
    out = [line for c in o.changes for line in contentdiff.change_lines(c)]
    if len(out) > MAX_CHANGE_LINES:
        out = out[:MAX_CHANGE_LINES] + [f"… {len(out) - MAX_CHANGE_LINES} more lines (--format json lists every change)"]
    return [indent + line for line in out]


def _change_block(o: ObjectChange) -> list[str]:
    """A modified object's content diff for Markdown: a heading line and a ``diff`` block."""
    body = [line for c in o.changes for line in contentdiff.diff_block_lines(c)]
    if len(body) > MAX_CHANGE_LINES:
        body = body[:MAX_CHANGE_LINES] + [f"# … {len(body) - MAX_CHANGE_LINES} more lines (--format json lists every change)"]
    return [f"`{o.ref}` ({_md(', '.join(o.after or o.before))})", "", "```diff", *body, "```", ""]


def _finding_line(f: Finding) -> str:
    return f"{finding_head(f)}  {f.headline}"


def _cluster_text(cd: ClusterDiff, *, content: bool = True) -> list[str]:
    lines = [f"cluster {cd.cluster}: {cd.status}{' (nothing it reads changed)' if cd.reused else ''}"]
    if cd.status == "unchanged":
        return lines
    if cd.effects:
        counts = {s: sum(1 for e in cd.effects if e.severity == s and not e.acknowledged) for s in Severity}
        lines.append(
            "  What Flux will do (" + ", ".join(f"{n} {s.value}" for s, n in counts.items() if n) + ")"
        )
        for e in cd.effects:
            ack = f" (acknowledged: {e.acknowledged})" if e.acknowledged else ""
            lines.append(f"    {e.severity.value:<7} {e.code:<21} {e.message}{ack}")
            if e.location is not None:
                lines.append(f"{'':<34}at {_loc(e.location)}")
            lines.extend(_cascade_text(e, " " * 36))
    n = (len(cd.added), len(cd.removed), len(cd.moved), len(cd.modified))
    if any(n):
        lines.append(f"  Objects: {n[0]} added, {n[1]} removed, {n[2]} moved, {n[3]} modified")
        for sign, items in (("+", cd.added), ("-", cd.removed)):
            for o in items[:MAX_TEXT]:
                lines.append(f"    {sign} {_oc(o)}")
                lines.extend(_change_text(o, " " * 8) if content else [])
            if len(items) > MAX_TEXT:
                lines.append(f"    … {len(items) - MAX_TEXT} more (--format json lists all)")
        for o in cd.moved[:MAX_TEXT]:
            lines.append(f"    > {_oc(o)}")
            lines.extend(_change_text(o, " " * 8) if content else [])
        if len(cd.moved) > MAX_TEXT:
            lines.append(f"    … {len(cd.moved) - MAX_TEXT} more (--format json lists all)")
        for o in cd.modified[:MAX_TEXT]:
            lines.append(f"    ~ {o.ref}  ({', '.join(o.after)})")
            lines.extend(_change_text(o, " " * 8) if content else [])
        if len(cd.modified) > MAX_TEXT:
            lines.append(f"    … {len(cd.modified) - MAX_TEXT} more (--format json lists all)")
    if cd.kustomizations:
        lines.append("  Kustomizations")
        for k in cd.kustomizations:
            if k.change == "added":
                lines.append(f"    + {k.id}  ({k.objects_after} objects{', ' + k.fate if k.fate else ''})")
            elif k.change == "removed":
                lines.append(f"    - {k.id}  ({k.objects_before} objects): {k.fate}")
            elif k.change == "renamed":
                lines.append(f"    renamed {k.id} -> {k.renamed_to}: the old one is {k.fate}")
            else:
                lines.append(
                    f"    ~ {k.id}: "
                    + "; ".join(f"{f} {b or '(none)'} -> {a or '(none)'}" for f, b, a in k.fields)
                )
    if cd.helm_releases:
        lines.append("  HelmReleases")
        for h in cd.helm_releases:
            fields = "; ".join(f"{f} {b or '(none)'} -> {a or '(none)'}" for f, b, a in h.fields)
            if h.change == "moved":
                lines.append(
                    f"    > {h.id}  {h.before_owner} -> {h.after_owner}{'; ' + fields if fields else ''}"
                )
            elif h.change == "added":
                lines.append(f"    + {h.id}  ({h.after_owner})")
            elif h.change == "removed":
                lines.append(f"    - {h.id}  ({h.before_owner})")
            else:
                lines.append(f"    ~ {h.id}: {fields}")
    if cd.depends_on:
        lines.append("  dependsOn")
        for d in cd.depends_on:
            lines.append(f"    {'+' if d.change == 'added' else '-'} {d.kind} {d.source} -> {d.target}")
    if cd.substitution:
        lines.append("  Substitution sources")
        for s in cd.substitution:
            lines.append(f"    {'+' if s.change == 'added' else '-'} {s.kustomization}: {s.what}")
    if cd.variables:
        lines.append("  Variables")
        vl = []
        for v in cd.variables:
            sign = {"added": "+", "removed": "-"}.get(v.change, "~")
            vl.append(
                f"{sign} {v.kustomization} {v.name}: {v.before or ''}{' -> ' if v.before and v.after else ''}{v.after or ''}"
            )
        lines.extend(_limited(vl, "    "))
    if cd.new_findings:
        lines.append(f"  New findings ({len(cd.new_findings)})")
        lines.extend("    " + _finding_line(f) for f in cd.new_findings)
    if cd.fixed_findings:
        lines.append(f"  Fixed findings ({len(cd.fixed_findings)})")
        lines.extend("    " + _finding_line(f) for f in cd.fixed_findings)
    return lines


def summary(r: DiffReport) -> str:
    c = r.counts()
    ack = f", {c['acknowledged']} acknowledged" if c.get("acknowledged") else ""
    return f"{c['error']} error, {c['warning']} warning, {c['info']} info{ack} (verdicts and new findings)"


def render_text(r: DiffReport) -> str:
    lines = [f"fluxgraph diff {_title(r)}"]
    for cd in r.clusters:
        lines.append("")
        lines.extend(_cluster_text(cd))
    if r.new_findings:
        lines.append("")
        lines.append(f"New findings ({len(r.new_findings)})")
        lines.extend("  " + _finding_line(f) for f in r.new_findings)
    if r.fixed_findings:
        lines.append(f"Fixed findings ({len(r.fixed_findings)})")
        lines.extend("  " + _finding_line(f) for f in r.fixed_findings)
    for n in r.notes:
        lines.append(f"note: {n}")
    lines.append("")
    lines.append(summary(r))
    return "\n".join(lines) + "\n"


def _md(s: str) -> str:
    return (
        s.replace("&", "&amp;")
        .replace("|", "\\|")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\n", " ")
        .replace("`", "'")
    )


def _code(s: str) -> str:
    return "`" + s.replace("`", "'").replace("|", "\\|").replace("\n", " ") + "`"


_ICON = {Severity.ERROR: "🔴 error", Severity.WARNING: "🟠 warning", Severity.INFO: "⚪ info"}


def render_markdown(r: DiffReport) -> str:
    c = r.counts()
    out = [f"### fluxgraph diff {_code(r.base)} → {_code(r.head)}", ""]
    if c["error"]:
        out.append(
            f"**{c['error']} error(s)** — at this revision Flux would fail to apply, or delete what the change means to keep, or destroy data. Details below."
        )
    elif c["warning"]:
        out.append(f"**{c['warning']} warning(s)**, no errors.")
    else:
        out.append("No hazard found.")
    out.append("")
    groups: dict[tuple[str, str, str, str, str], list[Effect]] = {}
    for cd in r.clusters:
        for e in cd.effects:
            if e.severity == Severity.INFO and e.code not in REVIEW_CODES:
                continue
            reason = e.reason or e.message
            key = (cd.cluster, e.code, e.old_owner or "", e.new_owner or "", f"{reason} (acknowledged: {e.acknowledged})" if e.acknowledged else reason)
            groups.setdefault(key, []).append(e)
    if groups:
        out.append("| | cluster | verdict | objects | what happens |")
        out.append("|---|---|---|---|---|")
        for (cluster, code, old, new, reason), es in sorted(
            groups.items(), key=lambda kv: (-kv[1][0].severity.rank, kv[0])
        ):
            refs = [str(e.ref) for e in es if e.ref is not None]
            shown = ", ".join(_code(x) for x in refs[:5]) + (
                f" and {len(refs) - 5} more" if len(refs) > 5 else ""
            )
            move = f"{old} → {new}: " if old and new and old != new else (f"{old}: " if old and es[0].reason else "")
            icon = "☑️ acknowledged" if es[0].acknowledged else _ICON[es[0].severity]
            out.append(f"| {icon} | {_code(cluster)} | {code} | {shown} | {_md(move + reason)} |")
        out.append("")
    from fluxgraph.render.diff_graph import render_mermaid

    if any(cd.status != "unchanged" for cd in r.clusters):
        out.append("<details><summary>The changed part of the graph</summary>")
        out.append("")
        out.append("```mermaid")
        out.append(render_mermaid(r).rstrip("\n"))
        out.append("```")
        out.append("")
        out.append("</details>")
        out.append("")
    for cd in r.clusters:
        if cd.status == "unchanged":
            continue
        heading = (
            f"{cd.cluster} ({cd.status}): {len(cd.added)} added, {len(cd.removed)} removed, {len(cd.moved)} moved, "
            f"{len(cd.modified)} modified objects; {len(cd.kustomizations)} Kustomization change(s); {len(cd.new_findings)} new finding(s)"
        )
        out.append(f"<details><summary>{_md(heading)}</summary>")
        out.append("")
        out.append("```")
        out.extend(_cluster_text(cd, content=False)[1:])
        out.append("```")
        out.append("")
        changed = [o for o in cd.added + cd.removed + cd.moved + cd.modified if o.changes]
        if changed:
            out.append("**What changes inside the objects**")
            out.append("")
            for o in changed:
                out.extend(_change_block(o))
        out.append("</details>")
        out.append("")
    unchanged = [cd.cluster for cd in r.clusters if cd.status == "unchanged"]
    if unchanged:
        out.append("Unchanged: " + ", ".join(_code(u) for u in unchanged))
        out.append("")
    new_global = r.new_findings
    if new_global:
        out.append("New findings:")
        out.extend(
            f"- {_code(f.rule)} {_code(f.location.file + ':' + str(f.location.line))} {_md(f.headline)}"
            for f in new_global
        )
        out.append("")
    for n in r.notes:
        out.append(f"_note: {_md(n)}_")
    out.append(f"<sub>{_md(summary(r))} · fluxgraph {__version__}</sub>")
    return _fit("\n".join(out) + "\n")


def _fit(text: str, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """Keep a Markdown report under GitHub's comment size: cut at a line, close an open
    code block and ``<details>``, and say so."""
    if len(text) <= limit:
        return text
    note = "\n\n_The report was cut to fit a GitHub comment: `fluxgraph diff --format json` has all of it._\n"
    cut = text[: limit - len(note) - 200]
    cut = cut[: cut.rfind("\n")]
    if cut.count("```") % 2:
        cut += "\n```"
    opened = cut.count("<details>") - cut.count("</details>")
    cut += "\n</details>" * max(opened, 0)
    return cut + note


def _objs_json(items: list[ObjectChange]) -> list[dict[str, Any]]:
    return [
        {
            "object": str(o.ref),
            "kind": o.ref.kind,
            "namespace": o.ref.namespace,
            "name": o.ref.name,
            "before": o.before,
            "after": o.after,
            "file": o.location.file if o.location else None,
            "line": o.location.line if o.location else None,
            **({"changes": [contentdiff.to_json(c) for c in o.changes]} if o.changes else {}),
        }
        for o in items
    ]


def _effect_json(e: Effect) -> dict[str, Any]:
    return {
        "code": e.code,
        "severity": e.severity.value,
        "object": str(e.ref) if e.ref else None,
        "from": e.old_owner,
        "to": e.new_owner,
        "message": e.message,
        "file": e.location.file if e.location else None,
        "line": e.location.line if e.location else None,
        "cascade": cascade_json(e.cascade) if e.cascade else None,
        **({"acknowledged": e.acknowledged} if e.acknowledged else {}),
    }


def report_json(r: DiffReport, fail_on: Severity = Severity.ERROR) -> dict[str, Any]:
    return {
        "$schema": SCHEMA,
        "fluxgraphVersion": __version__,
        "base": {"rev": r.base, "commit": r.base_commit},
        "head": {"rev": r.head, "commit": r.head_commit},
        "clusters": [
            {
                "cluster": cd.cluster,
                "status": cd.status,
                "reused": cd.reused,
                "effects": [_effect_json(e) for e in cd.effects],
                "objects": {
                    "added": _objs_json(cd.added),
                    "removed": _objs_json(cd.removed),
                    "moved": _objs_json(cd.moved),
                    "modified": _objs_json(cd.modified),
                },
                "kustomizations": [
                    {
                        "id": k.id,
                        "change": k.change,
                        "renamedTo": k.renamed_to,
                        "fields": [{"field": f, "before": b, "after": a} for f, b, a in k.fields],
                        "objectsBefore": k.objects_before,
                        "objectsAfter": k.objects_after,
                        "fate": k.fate,
                    }
                    for k in cd.kustomizations
                ],
                "helmReleases": [
                    {
                        "id": h.id,
                        "change": h.change,
                        "before": h.before_owner,
                        "after": h.after_owner,
                        "fields": [{"field": f, "before": b, "after": a} for f, b, a in h.fields],
                    }
                    for h in cd.helm_releases
                ],
                "dependsOn": [
                    {"kind": d.kind, "from": d.source, "to": d.target, "change": d.change}
                    for d in cd.depends_on
                ],
                "substitution": [
                    {"kustomization": s.kustomization, "change": s.change, "what": s.what}
                    for s in cd.substitution
                ],
                "variables": [
                    {
                        "kustomization": v.kustomization,
                        "name": v.name,
                        "change": v.change,
                        "before": v.before,
                        "after": v.after,
                    }
                    for v in cd.variables
                ],
                "newFindings": [finding_json(f) for f in cd.new_findings],
                "fixedFindings": [finding_json(f) for f in cd.fixed_findings],
            }
            for cd in r.clusters
        ],
        "newFindings": [finding_json(f) for f in r.new_findings],
        "fixedFindings": [finding_json(f) for f in r.fixed_findings],
        "notes": r.notes,
        "summary": {"counts": r.counts(), "failOn": fail_on.value, "exitCode": r.exit_code(fail_on)},
    }


def render_json(r: DiffReport, fail_on: Severity = Severity.ERROR) -> str:
    return json.dumps(report_json(r, fail_on), indent=2) + "\n"
