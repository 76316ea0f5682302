"""kustomize ``replacements`` (api/filters/replacement): copy a field of one resource into
fields of others. Field paths use kyaml's syntax: dot-separated names, ``[key=value]`` list
selectors, ``*`` wildcards, numeric list indexes.
"""

from __future__ import annotations

from typing import Any

from fluxgraph.kustomize import selector
from fluxgraph.kustomize._copy import CopyBudget
from fluxgraph.kustomize.errors import KustomizeError
from fluxgraph.model import as_dict

# Bounds on untrusted input (docs/security.md): a replacement copies its source value into
# every target, and a later replacement may copy that again, so values are copied (never
# shared) and the copies of one ``apply_replacements`` call, and the depth of field paths,
# are capped. kustomize shares the nodes and runs out of memory instead.
MAX_COPIED_NODES = 1_000_000
MAX_FIELD_PATH_DEPTH = 256


def _budget() -> CopyBudget:
    """What the copies of one ``apply_replacements`` call may make."""
    return CopyBudget(MAX_COPIED_NODES, "replacements")


def _list(v: Any, what: str) -> list[Any]:
    """A list field of a replacement (kustomize cannot decode anything else)."""
    if v is None:
        return []
    if not isinstance(v, list):
        raise KustomizeError(f"{what} must be a list, not {type(v).__name__}")
    return v


def parse_field_path(path: str) -> list[str]:
    parts: list[str] = []
    cur = ""
    depth = 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "." and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = [p for p in parts if p != ""]
    if len(out) > MAX_FIELD_PATH_DEPTH:
        raise KustomizeError(f"field path {path[:60]!r}... has more than {MAX_FIELD_PATH_DEPTH} parts")
    return out


def _matches_item(item: Any, seg: str) -> bool:
    body = seg[1:-1]
    if "=" not in body or not isinstance(item, dict):
        return False
    k, v = body.split("=", 1)
    return str(item.get(k)) == v


def _get(node: Any, parts: list[str]) -> list[Any]:
    nodes = [node]
    for seg in parts:
        nxt: list[Any] = []
        for n in nodes:
            if seg == "*":
                if isinstance(n, dict):
                    nxt.extend(n.values())
                elif isinstance(n, list):
                    nxt.extend(n)
            elif seg.startswith("[") and seg.endswith("]"):
                if isinstance(n, list):
                    nxt.extend(x for x in n if _matches_item(x, seg))
            elif isinstance(n, dict):
                if seg in n:
                    nxt.append(n[seg])
            elif isinstance(n, list) and seg.isdigit() and int(seg) < len(n):
                nxt.append(n[int(seg)])
        nodes = nxt
    return nodes


def _set(node: Any, parts: list[str], value: Any, options: dict[str, Any], budget: CopyBudget | None = None) -> int:
    """Set every match of parts under node (a copy of value each time); returns how many were set."""
    budget = budget or _budget()
    if not parts:
        return 0
    seg, rest = parts[0], parts[1:]
    create = bool(options.get("create"))
    count = 0
    children: list[tuple[Any, Any]] = []  # (container, key)
    if seg == "*":
        if isinstance(node, dict):
            children = [(node, k) for k in node]
        elif isinstance(node, list):
            children = [(node, i) for i in range(len(node))]
    elif seg.startswith("[") and seg.endswith("]"):
        if isinstance(node, list):
            children = [(node, i) for i, x in enumerate(node) if _matches_item(x, seg)]
            if not children and create and "=" in seg:
                k, v = seg[1:-1].split("=", 1)
                node.append({k: v})
                children = [(node, len(node) - 1)]
    elif isinstance(node, dict):
        if seg in node:
            children = [(node, seg)]
        elif create:
            node[seg] = {} if rest else None
            children = [(node, seg)]
    elif isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
        children = [(node, int(seg))]
    for container, key in children:
        if not rest:
            container[key] = _with_delimiter(container[key], budget.copy(value), options)
            count += 1
        else:
            if container[key] is None and create:
                container[key] = [] if rest[0].startswith("[") else {}
            count += _set(container[key], rest, value, options, budget)
    return count


def _with_delimiter(old: Any, value: Any, options: dict[str, Any]) -> Any:
    delim = options.get("delimiter")
    if not delim or not isinstance(old, str):
        return value
    pieces = old.split(str(delim))
    idx = options.get("index", 0)
    if not isinstance(idx, int):
        raise KustomizeError("options.index must be an integer")
    if idx >= len(pieces):
        pieces.append(str(value))
    elif idx < 0:
        pieces.insert(0, str(value))
    else:
        pieces[idx] = str(value)
    return str(delim).join(pieces)


PrevIds = list[list[tuple[str, str, str]]]


def _with_id(r: dict[str, Any], ident: tuple[str, str, str]) -> dict[str, Any]:
    kind, ns, name = ident
    return {**r, "kind": kind, "metadata": {**as_dict(r.get("metadata")), "name": name, "namespace": ns}}


def _select(resources: list[dict[str, Any]], sel: dict[str, Any], prev_ids: PrevIds | None = None) -> list[dict[str, Any]]:
    """Resources whose current or any previous id (kind, namespace, name) the selector picks
    (kustomize ``utils.MakeResIds``: previous ids are those stored by the namespace and
    prefix/suffix transformers)."""
    target = {k: v for k, v in sel.items() if k in ("group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector")}
    out = []
    for n, r in enumerate(resources):
        prev = prev_ids[n] if prev_ids is not None and n < len(prev_ids) else []
        if selector.matches(r, target) or any(selector.matches(_with_id(r, p), target) for p in prev):
            out.append(r)
    return out


def apply_replacements(resources: list[dict[str, Any]], replacements: list[Any], prev_ids: PrevIds | None = None) -> None:
    """Apply in place (the caller owns ``resources``). ``prev_ids``, parallel to ``resources``,
    lists each one's previous (kind, namespace, name) ids."""
    budget = _budget()
    for i, rep in enumerate(replacements):
        if not isinstance(rep, dict) or not isinstance(rep.get("source"), dict):
            raise KustomizeError(f"replacement {i} has no source")
        src = rep["source"]
        matches = _select(resources, src, prev_ids)
        if len(matches) != 1:
            raise KustomizeError(f"replacement {i}: source selects {len(matches)} resources, expected exactly one")
        fp = src.get("fieldPath") or "metadata.name"
        values = _get(matches[0], parse_field_path(str(fp)))
        if not values:
            raise KustomizeError(f"replacement {i}: source field {fp} not found")
        value = values[0]
        sopts = as_dict(src.get("options"))
        if sopts.get("delimiter") and isinstance(value, str):
            pieces = value.split(str(sopts["delimiter"]))
            idx = sopts.get("index", 0)
            if isinstance(idx, int) and 0 <= idx < len(pieces):
                value = pieces[idx]
        for t in _list(rep.get("targets"), f"replacement {i}: targets"):
            if not isinstance(t, dict) or not isinstance(t.get("select"), dict):
                raise KustomizeError(f"replacement {i}: target without select")
            chosen = _select(resources, t["select"], prev_ids)
            for rej in _list(t.get("reject"), f"replacement {i}: reject"):
                if isinstance(rej, dict):
                    rejected = {id(r) for r in _select(resources, rej, prev_ids)}
                    chosen = [r for r in chosen if id(r) not in rejected]
            topts = as_dict(t.get("options"))
            for r in chosen:
                for path in _list(t.get("fieldPaths"), f"replacement {i}: fieldPaths") or ["metadata.name"]:
                    n = _set(r, parse_field_path(str(path)), value, topts, budget)
                    if n == 0 and not topts.get("create"):
                        raise KustomizeError(f"replacement {i}: unable to find field {path} in {r.get('kind')}/{(r.get('metadata') or {}).get('name')}")
