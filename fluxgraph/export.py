"""Stable exports of the model: JSON (documented in docs/graph-json.md) and a text tree."""

from __future__ import annotations

from typing import Any

from fluxgraph import __version__
from fluxgraph.cluster import ClusterModel, KustomizationNode
from fluxgraph.flux import format_duration
from fluxgraph.model import Problem

SCHEMA = "https://fluxgraph.dev/schemas/graph-v1.json"


def _problem_json(p: Problem) -> dict[str, Any]:
    return {
        "code": p.code,
        "message": p.message,
        "file": p.location.file,
        "line": p.location.line,
        "column": p.location.column,
        "notEvaluated": p.not_evaluated,
        "kustomization": p.kustomization,
    }


def _ks_json(ks: KustomizationNode) -> dict[str, Any]:
    s = ks.spec
    pb = None
    if s.post_build is not None:
        pb = {
            "substitute": dict(s.post_build.substitute),
            "substituteFrom": [{"kind": f.kind, "name": f.name, "optional": f.optional} for f in s.post_build.substitute_from],
            "substituteStrategy": s.post_build.strategy,
        }
    inventory = []
    for o in sorted(ks.objects, key=lambda o: (o.ref.kind, o.ref.namespace, o.ref.name, o.ref.group)):
        inventory.append(
            {
                "apiVersion": o.resource.api_version,
                "kind": o.ref.kind,
                "namespace": o.ref.namespace,
                "name": o.ref.name,
                "file": o.location.file,
                "line": o.location.line,
                "via": list(o.resource.origin.via),
            }
        )
    loc = ks.declared_at or s.location
    return {
        "id": s.id,
        "path": s.path,
        "buildDir": ks.build_dir,
        "source": s.source_ref.id if s.source_ref else None,
        "dependsOn": [str(d) for d in s.depends_on],
        "prune": s.prune,
        "wait": s.wait,
        "timeout": format_duration(s.effective_timeout),
        "interval": format_duration(s.interval) if s.interval is not None else None,
        "suspend": s.suspend,
        "targetNamespace": s.target_namespace,
        "kubeConfig": ks.target or None,
        "serviceAccountName": s.service_account,
        "postBuild": pb,
        "deletionPolicy": s.deletion_policy,
        "parent": ks.parent,
        "status": ks.status,
        "incomplete": ks.incomplete,
        "file": loc.file,
        "line": loc.line,
        "inventory": inventory,
    }


def _edges_json(model: ClusterModel) -> list[dict[str, str]]:
    """The relations of the model's graph (``ClusterModel.graph``, the one the checks and the
    diagrams read) between Flux objects, sources and the objects a substituteFrom or valuesFrom
    names; a Kustomization's own inventory is in ``inventory``, not repeated here."""
    out = []
    for u, v, key in model.graph.edges(keys=True):
        if key == "applies" and v.startswith("obj:"):
            continue
        out.append({"kind": key, "from": u, "to": v})
    return sorted(out, key=lambda e: (e["kind"], e["from"], e["to"]))


def cluster_json(model: ClusterModel) -> dict[str, Any]:
    problems = [p for ks in model.kustomizations.values() for p in ks.problems] + list(model.problems)
    return {
        "cluster": {
            "name": model.name,
            "path": model.root_dir,
            "root": model.root_id,
            "discoveredBy": model.discovered_by,
            **({"otherRoots": list(model.extra_roots)} if model.extra_roots else {}),
            "strictSubstitution": model.strict,
        },
        "kustomizations": [_ks_json(model.kustomizations[k]) for k in sorted(model.kustomizations)],
        "helmReleases": [
            {
                "id": hr.id,
                "kustomization": hr.owner,
                "chart": hr.spec.chart_name,
                "version": hr.spec.chart_version,
                "source": hr.spec.chart_source.id if hr.spec.chart_source else None,
                "dependsOn": [str(d) for d in hr.spec.depends_on],
                "timeout": format_duration(hr.spec.effective_timeout),
                "valuesFrom": [{"kind": k, "name": n, "optional": o} for k, n, o in hr.spec.values_from],
                "kubeConfig": hr.target or None,
                "file": hr.obj.location.file,
                "line": hr.obj.location.line,
            }
            for _, hr in sorted(model.helm_releases.items())
        ],
        "sources": [
            {
                "id": src.id,
                "kind": src.kind,
                "url": src.url,
                "inRepo": src.in_repo,
                "repoPath": src.repo_base,
                "pathMap": [{"artifact": a, "repo": r} for a, r in src.path_map],
                "file": src.location.file if src.location else None,
                "line": src.location.line if src.location else None,
            }
            for _, src in sorted(model.sources.items())
        ],
        "edges": _edges_json(model),
        "problems": [_problem_json(p) for p in sorted(problems, key=lambda p: p.sort_key())],
    }


def to_json(clusters: list[ClusterModel], problems: list[Problem] | None = None) -> dict[str, Any]:
    """The graph document; ``problems`` are the repository's own (``Repository.problems``: Flux
    Kustomizations no cluster applies), given when the whole repository was loaded."""
    out: dict[str, Any] = {"$schema": SCHEMA, "fluxgraphVersion": __version__, "clusters": [cluster_json(c) for c in clusters]}
    if problems is not None:
        out["problems"] = [_problem_json(p) for p in sorted(problems, key=lambda p: p.sort_key())]
    return out


def _describe(ks: KustomizationNode) -> str:
    s = ks.spec
    flags = s.flags()
    if ks.target:
        flags.append(f"kubeConfig={ks.target}")
    extra = ""
    if ks.status != "built":
        extra = f" [{ks.status}]"
    elif ks.incomplete:
        extra = " [incomplete]"
    deps = f" dependsOn: {', '.join(str(d) for d in s.depends_on)}" if s.depends_on else ""
    return f"{s.id}  {s.path or '.'}  ({', '.join(flags)})  {len(ks.objects)} objects{extra}{deps}"


def _tree(model: ClusterModel, lines: list[str]) -> None:
    children: dict[str | None, list[str]] = {}
    for ks in model.kustomizations.values():
        children.setdefault(ks.parent, []).append(ks.id)
    stack: list[tuple[str, str, bool, bool]] = [(r, "", True, True) for r in reversed(model.roots) if r in model.kustomizations]
    seen: set[str] = set()
    while stack:
        ks_id, prefix, last, top = stack.pop()
        if ks_id in seen:
            continue
        seen.add(ks_id)
        ks = model.kustomizations[ks_id]
        if top:
            lines.append(_describe(ks))
            child_prefix = ""
        else:
            lines.append(f"{prefix}{'└── ' if last else '├── '}{_describe(ks)}")
            child_prefix = prefix + ("    " if last else "│   ")
        kids = [k for k in sorted(children.get(ks_id, [])) if k != ks_id]
        for i, kid in reversed(list(enumerate(kids))):
            stack.append((kid, child_prefix, i == len(kids) - 1, False))


def to_text(clusters: list[ClusterModel]) -> str:
    lines: list[str] = []
    for model in clusters:
        n_obj = sum(len(k.objects) for k in model.kustomizations.values())
        lines.append(
            f"cluster {model.name} ({model.discovered_by}): {len(model.kustomizations)} Kustomizations, "
            f"{len(model.helm_releases)} HelmReleases, {n_obj} objects"
        )
        _tree(model, lines)
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
