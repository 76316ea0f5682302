"""Rendering of ``fluxgraph explain``: text, Markdown and JSON (schema in docs/explain-and-diff.md)."""

from __future__ import annotations

import json
from typing import Any

from fluxgraph import __version__, gc
from fluxgraph.explain import ChainLink, ClusterExplanation, Explanation, MovePlan, OverrideView
from fluxgraph.findings import Finding
from fluxgraph.model import Location
from fluxgraph.render.json_report import finding_json

SCHEMA = "https://fluxgraph.dev/schemas/explain-v1.json"
MAX_LISTED = 8


def _loc(loc: Location | None) -> str:
    return loc.file_line if loc is not None else "?"


def _b(v: bool) -> str:
    return "true" if v else "false"


def _link_text(link: ChainLink) -> str:
    bits = [f"prune: {_b(link.prune)}", f"wait: {_b(link.wait)}", f"timeout: {link.timeout}"]
    if link.target_namespace:
        bits.append(f"targetNamespace: {link.target_namespace}")
    if link.target:
        bits.append(f"applies to the cluster of kubeConfig {link.target}")
    if link.suspend:
        bits.append("suspend: true")
    if link.deletion_policy != "MirrorPrune":
        bits.append(f"deletionPolicy: {link.deletion_policy}")
    bits.append(f"postBuild: {link.post_build}" if link.post_build else "no postBuild")
    out = f"{link.id}  ({link.path or '.'})  " + ", ".join(bits)
    if link.from_parent:
        out += f"  [set by the parent: {', '.join(link.from_parent)}]"
    if link.overridden:
        out += f"  [overridden by the parent's patches: {_overrides_text(link.overridden)}]"
    if link.status != "built":
        out += f"  [{link.status}]"
    return out


def _overrides_text(ovs: tuple[OverrideView, ...]) -> str:
    """``prune: false -> true (clusters/lab/apps.yaml:15)``, one per declared value."""
    return "; ".join(f"{o.field}: {o.written} -> {o.applied} ({_loc(o.patch_location)})" for o in ovs)


def _override_json(o: OverrideView) -> dict[str, Any]:
    return {
        "field": o.field,
        "written": o.written,
        "applied": o.applied,
        "patch": o.patch,
        "file": o.location.file,
        "line": o.location.line,
        "patchFile": o.patch_location.file,
        "patchLine": o.patch_location.line,
        "blanket": o.blanket,
    }


def _listing(items: list[str], limit: int = MAX_LISTED) -> str:
    if len(items) > limit:
        return ", ".join(items[:limit]) + f", … ({len(items) - limit} more)"
    return ", ".join(items)


def _cascade_lines(c: gc.Cascade, indent: str) -> list[str]:
    lines = []
    if c.victims:
        by_owner: dict[str, list[str]] = {}
        for owner, ref in c.victims:
            by_owner.setdefault(owner, []).append(str(ref))
        parts = [f"{owner}: {_listing(refs, 4)}" for owner, refs in sorted(by_owner.items())]
        lines.append(
            f"{indent}deleting {c.cause} also deletes {len(c.victims)} object(s) — " + "; ".join(parts)
        )
    if c.helm_releases:
        lines.append(f"{indent}and the Helm releases installed into it by {_listing(c.helm_releases, 4)}")
    if c.note and not c.victims:
        lines.append(f"{indent}{c.cause}: {c.note}")
    return lines


def _move_text(m: MovePlan) -> list[str]:
    lines: list[str] = []
    state = "existing" if m.exists else "new"
    where = f", path ./{m.new_path}" if m.new_path else ""
    lines.append(f"Moving it to {m.new_owner} ({state}{where})")
    lines.append(f"  leaves the inventory of {', '.join(m.old_owners)}: {len(m.objects)} object(s)")
    for mo in m.objects:
        lines.append(f"  {mo.verdict:<8} {mo.ref}  ({_loc(mo.location)})")
        lines.append(f"           {mo.reason}")
    for c in m.cascades:
        lines.extend(_cascade_lines(c, "  ! "))
    if m.missing_variables:
        lines.append(f"  variables {m.new_owner} does not provide:")
        for v in m.missing_variables:
            src = v.origin or "no source"
            prov = f", applied by {', '.join(v.provider)}" if v.provider else ""
            dflt = " (has a default: it would silently take it)" if v.has_default else ""
            lines.append(f"    {v.name}  from {src}{prov}{dflt}")
    if m.escapes:
        lines.append(
            f"  $${{...}} escapes stay doubled without postBuild in: {_listing([str(r) for r in m.escapes], 4)}"
        )
    if m.newly_substituted:
        lines.append(f"  newly substituted by {m.new_owner}: {', '.join(m.newly_substituted)}")
    if m.needs:
        lines.append(f"  applied before the objects today (so {m.new_owner} must wait for them):")
        for n in m.needs:
            lines.append(f"    {n.provider}  ({n.what}){'  ✓ already' if n.covered else ''}")
    for dep, why in m.dependents:
        lines.append(f"  {dep} dependsOn the old owner and uses {why}: it must dependsOn {m.new_owner}")
    for d in m.differences:
        lines.append(f"  difference: {d}")
    for note in m.notes:
        lines.append(f"  note: {note}")
    for b in m.blocked:
        lines.append(f"  blocked: {b}")
    if m.blocked:
        return lines
    lines.append("  Safe procedure (Flux FAQ: How can I safely move resources from one dir to another?):")
    for i, s in enumerate(m.steps, 1):
        lines.append(f"    {i}. {s}")
        for step, alt in m.alternatives:
            if step == i:
                lines.append(f"       alternative to step {i}: {alt}")
    return lines


def _cluster_text(ce: ClusterExplanation) -> list[str]:
    lines: list[str] = [f"cluster {ce.cluster}"]
    prefixes = {tuple(link.id for link in ov.chain[:-1]) for ov in ce.owners}
    shared = len(ce.owners) > 2 and len(prefixes) == 1
    if shared:
        lines.append(f"  Applied by {len(ce.owners)} Kustomizations, all through")
        for link in ce.owners[0].chain[:-1]:
            lines.append(f"      {_link_text(link)}")
    else:
        lines.append("  Applied by")
    for ov in ce.owners:
        lines.append(f"    {ov.ks_id} — {ov.how}")
        for link in ov.chain[-1:] if shared else ov.chain:
            lines.append(f"      {_link_text(link)}")
    objs = [o for ov in ce.owners for o in ov.objects]
    lines.append(f"  Objects ({len(objs)})")
    for o in objs:
        extra = []
        if o.protection:
            extra.append(o.protection)
        if o.substitution not in ("none", "applied"):
            extra.append(f"substitution {o.substitution}")
        if o.overridden:
            extra.append(f"overridden by {o.owner}'s patches: {_overrides_text(o.overridden)}")
        tail = f"  [{'; '.join(extra)}]" if extra else ""
        lines.append(f"    {o.ref}  {_loc(o.location)}  ({o.owner}){tail}")
    for ns in ce.namespaces:
        head = f"  Namespace {ns.name}: " + ("declared here" if ns.declared_here else "used here")
        decl = [
            f"{owner} at {_loc(loc)}{' (' + prot + ')' if prot else ''}"
            for owner, loc, prot in ns.declarations
        ]
        lines.append(head)
        lines.append(f"    declared by: {', '.join(decl) if decl else 'nothing in the repository'}")
        if ns.residents and (ns.declared_here or len(ns.residents) <= 3):
            for owner, refs in ns.residents.items():
                lines.append(f"    also holds, of {owner}: {_listing([str(r) for r in refs], 5)}")
        elif ns.residents:
            total = sum(len(v) for v in ns.residents.values())
            lines.append(
                f"    also holds {total} other object(s), of {len(ns.residents)} Kustomization(s): {_listing(list(ns.residents), 6)}"
            )
        if ns.helm_targets:
            lines.append(f"    HelmReleases installing into it: {_listing(ns.helm_targets, 5)}")
        if ns.immortal:
            lines.append("    (the API server refuses to delete it: NamespaceLifecycle)")
    if ce.variables:
        lines.append(f"  Variables ({len(ce.variables)})")
        for v in ce.variables:
            uses = _listing([f"{u.ref} {u.field}" for u in v.uses], 3)
            lines.append(f"    ${{{v.name}}}{' (with default)' if v.has_default else ''}  in {uses}")
            for s in v.sources:
                if not s.substituted:
                    lines.append(f"      {s.owner}: no postBuild, not substituted")
                elif s.origin:
                    prov = f", applied by {', '.join(s.provider)}" if s.provider else ""
                    lines.append(f"      {s.owner}: {s.origin}{prov}")
                elif s.open:
                    lines.append(
                        f"      {s.owner}: not in the repository; maybe from a substituteFrom object that only exists in the cluster"
                    )
                else:
                    lines.append(f"      {s.owner}: undefined")
    for dv in ce.dependencies:
        lines.append(f"  Dependencies of {dv.owner}")
        lines.append(
            "    dependsOn: "
            + (
                ", ".join(
                    f"{k}{' (via)' if d > 1 else ''}"
                    for k, d in sorted(dv.depends_on.items(), key=lambda x: (x[1], x[0]))
                )
                or "nothing"
            )
        )
        lines.append(
            "    depended on by: "
            + (
                ", ".join(
                    f"{k}{' (via)' if d > 1 else ''}"
                    for k, d in sorted(dv.dependents.items(), key=lambda x: (x[1], x[0]))
                )
                or "nothing"
            )
        )
        for h in dv.helm:
            lines.append(
                f"    HelmRelease {h.id}: dependsOn {', '.join(h.depends_on) or 'nothing'}; depended on by {', '.join(h.dependents) or 'nothing'}"
            )
    if ce.findings:
        lines.append(f"  Findings ({len(ce.findings)})")
        for f in ce.findings:
            lines.append(f"    {finding_head(f)}")
            lines.append(f"            {f.headline}")
    else:
        lines.append("  Findings: none")
    for n in ce.notes:
        lines.append(f"  note: {n}")
    if ce.move is not None:
        lines.extend("  " + ln for ln in _move_text(ce.move))
    return lines


def finding_head(f: Finding) -> str:
    """``severity rule  file:line:column``: how explain and diff list a finding in text."""
    return f"{f.severity.value:<7} {f.rule}  {f.location.file}:{f.location.line}:{f.location.column}"


def render_text(ex: Explanation) -> str:
    lines = [f"{ex.target.describe()}"]
    for ce in ex.clusters:
        lines.append("")
        lines.extend(_cluster_text(ce))
    if ex.not_in:
        lines.append("")
        lines.append(f"not applied in: {', '.join(ex.not_in)}")
    if not ex.clusters:
        lines.append("no cluster applies it")
    return "\n".join(lines) + "\n"


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def render_markdown(ex: Explanation) -> str:
    out = [f"### fluxgraph explain: `{ex.target.describe()}`", ""]
    for ce in ex.clusters:
        out.append(f"#### cluster `{ce.cluster}`")
        out.append("")
        out.append("| Kustomization | path | prune | wait | timeout | targetNamespace | postBuild |")
        out.append("|---|---|---|---|---|---|---|")
        seen = set()
        for ov in ce.owners:
            for link in ov.chain:
                if link.id in seen:
                    continue
                seen.add(link.id)
                out.append(
                    f"| `{link.id}` | `{link.path or '.'}` | {_b(link.prune)} | {_b(link.wait)} | {link.timeout} | "
                    f"{link.target_namespace or ''} | {_md_escape(link.post_build or '')} |"
                )
        out.append("")
        out.append("```")
        out.extend(_cluster_text(ce)[1:])
        out.append("```")
        out.append("")
    if ex.not_in:
        out.append(f"Not applied in: {', '.join(f'`{c}`' for c in ex.not_in)}")
        out.append("")
    return "\n".join(out)


def _link_json(link: ChainLink) -> dict[str, Any]:
    return {
        "id": link.id,
        "path": link.path,
        "buildDir": link.build_dir,
        "source": link.source,
        "prune": link.prune,
        "wait": link.wait,
        "timeout": link.timeout,
        "interval": link.interval,
        "targetNamespace": link.target_namespace,
        "postBuild": link.post_build,
        "suspend": link.suspend,
        "deletionPolicy": link.deletion_policy,
        "file": link.declared_at.file if link.declared_at else None,
        "line": link.declared_at.line if link.declared_at else None,
        "status": link.status,
        "setByParent": list(link.from_parent),
        "overriddenByParent": [_override_json(o) for o in link.overridden],
        "targetCluster": link.target or None,
    }


def cascade_json(c: gc.Cascade) -> dict[str, Any]:
    return {
        "cause": c.cause,
        "kind": c.kind,
        "victims": [{"owner": o, "object": str(r)} for o, r in c.victims],
        "helmReleases": c.helm_releases,
        "note": c.note,
    }


def _move_json(m: MovePlan) -> dict[str, Any]:
    return {
        "to": m.new_owner,
        "exists": m.exists,
        "path": m.new_path,
        "from": m.old_owners,
        "verdict": m.worst,
        "objects": [
            {
                "object": str(o.ref),
                "from": o.old_owner,
                "verdict": o.verdict,
                "severity": gc.VERDICT_SEVERITY[o.verdict].value,
                "reason": o.reason,
                "file": o.location.file,
                "line": o.location.line,
            }
            for o in m.objects
        ],
        "cascades": [cascade_json(c) for c in m.cascades],
        "missingVariables": [
            {"name": v.name, "origin": v.origin, "provider": v.provider, "hasDefault": v.has_default}
            for v in m.missing_variables
        ],
        "escapesKeptDoubled": [str(r) for r in m.escapes],
        "newlySubstituted": m.newly_substituted,
        "needs": [{"kustomization": n.provider, "what": n.what, "covered": n.covered} for n in m.needs],
        "dependentsToUpdate": [{"kustomization": k, "uses": w} for k, w in m.dependents],
        "differences": m.differences,
        "notes": m.notes,
        "steps": m.steps,
        "alternatives": [{"step": i, "text": t} for i, t in m.alternatives],
        "blocked": m.blocked,
    }


def explanation_json(ex: Explanation) -> dict[str, Any]:
    t = ex.target
    clusters = []
    for ce in ex.clusters:
        clusters.append(
            {
                "cluster": ce.cluster,
                "owners": [
                    {
                        "kustomization": ov.ks_id,
                        "how": ov.how,
                        "chain": [_link_json(link) for link in ov.chain],
                        "children": ov.children,
                    }
                    for ov in ce.owners
                ],
                "objects": [
                    {
                        "object": str(o.ref),
                        "kind": o.ref.kind,
                        "namespace": o.ref.namespace,
                        "name": o.ref.name,
                        "owner": o.owner,
                        "file": o.location.file,
                        "line": o.location.line,
                        "via": list(o.via),
                        "substitution": o.substitution,
                        "pruneProtection": o.protection,
                        "overriddenByPatches": [_override_json(x) for x in o.overridden],
                    }
                    for ov in ce.owners
                    for o in ov.objects
                ],
                "namespaces": [
                    {
                        "name": ns.name,
                        "declaredHere": ns.declared_here,
                        "declarations": [
                            {"kustomization": k, "file": loc.file, "line": loc.line, "pruneProtection": p}
                            for k, loc, p in ns.declarations
                        ],
                        "residents": {k: [str(r) for r in v] for k, v in ns.residents.items()},
                        "helmReleases": ns.helm_targets,
                        "immortal": ns.immortal,
                    }
                    for ns in ce.namespaces
                ],
                "variables": [
                    {
                        "name": v.name,
                        "uses": [
                            {"object": str(u.ref), "field": u.field, "hasDefault": u.has_default}
                            for u in v.uses
                        ],
                        "sources": [
                            {
                                "kustomization": s.owner,
                                "substituted": s.substituted,
                                "origin": s.origin,
                                "appliedBy": s.provider,
                                "open": s.open,
                            }
                            for s in v.sources
                        ],
                    }
                    for v in ce.variables
                ],
                "dependencies": [
                    {
                        "kustomization": d.owner,
                        "dependsOn": [k for k, _ in sorted(d.depends_on.items(), key=lambda x: (x[1], x[0]))],
                        "dependents": [
                            k for k, _ in sorted(d.dependents.items(), key=lambda x: (x[1], x[0]))
                        ],
                        "helmReleases": [
                            {"id": h.id, "dependsOn": h.depends_on, "dependents": h.dependents}
                            for h in d.helm
                        ],
                    }
                    for d in ce.dependencies
                ],
                "findings": [finding_json(f) for f in ce.findings],
                "notes": ce.notes,
                "move": _move_json(ce.move) if ce.move is not None else None,
            }
        )
    return {
        "$schema": SCHEMA,
        "fluxgraphVersion": __version__,
        "target": {
            "kind": t.kind,
            "text": t.text,
            "path": t.path,
            "kustomization": t.ks_id,
            "object": t.describe() if t.kind == "object" else None,
        },
        "clusters": clusters,
        "notAppliedIn": ex.not_in,
    }


def render_json(ex: Explanation) -> str:
    return json.dumps(explanation_json(ex), indent=2) + "\n"


FORMATS = {"text": render_text, "markdown": render_markdown, "json": render_json}
