"""Shared helpers for rules about containers: finding lifecycle hooks in applied objects and
HelmRelease values, and mapping an offset inside a hook script back to the repository."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fluxgraph.checks._memo import per_object
from fluxgraph.cluster import AppliedObject
from fluxgraph.model import Location

HOOKS = ("postStart", "preStop")
MAX_DEPTH = 64


@dataclass(frozen=True)
class Hook:
    hook: str  # postStart | preStop
    container: str  # the container's name, or the values key that holds it
    path: tuple[Any, ...]  # path of the exec command list inside the object
    command: list[Any]


def find_hooks(data: dict[str, Any]) -> list[Hook]:
    """Every ``lifecycle.<postStart|preStop>.exec.command`` list under ``spec``: container specs
    in pod templates of any kind (Deployment, StatefulSet, DaemonSet, Job, CronJob, Pod,
    ReplicaSet, custom resources embedding pod templates) and the same shape anywhere in a
    HelmRelease's ``spec.values`` (charts such as bjw-s app-template pass it through)."""
    out: list[Hook] = []
    spec = data.get("spec")
    if isinstance(spec, dict):
        _walk(spec, ("spec",), None, 0, out)
    return out


@per_object
def hooks_of(obj: AppliedObject) -> list[Hook]:
    """``find_hooks`` of the object as applied, once per object's content (callers must not
    modify the list)."""
    return find_hooks(obj.data)


def _walk(node: Any, path: tuple[Any, ...], key: Any, depth: int, out: list[Hook]) -> None:
    # every object of a cluster goes through here: plain recursion appending to one list
    # (nested generators cost twice as much), children that are not collections skipped early
    if depth > MAX_DEPTH:
        return
    if isinstance(node, dict):
        lc = node.get("lifecycle")
        if isinstance(lc, dict):
            raw_name = node.get("name")
            name = raw_name if isinstance(raw_name, str) else (str(key) if key is not None else "?")
            for hook in HOOKS:
                h = lc.get(hook)
                ex = h.get("exec") if isinstance(h, dict) else None
                cmd = ex.get("command") if isinstance(ex, dict) else None
                if isinstance(cmd, list):
                    out.append(Hook(hook, name, (*path, "lifecycle", hook, "exec", "command"), cmd))
        for k, v in node.items():
            t = type(v)
            if (t is dict or t is list or isinstance(v, dict | list)) and k != "lifecycle":
                _walk(v, (*path, k), k, depth + 1, out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            t = type(v)
            if t is dict or t is list or isinstance(v, dict | list):
                _walk(v, (*path, i), key, depth + 1, out)


def source_text(obj: AppliedObject, path: tuple[Any, ...]) -> str | None:
    """The string scalar at ``path`` as written in the source file (before patches and
    substitution), or None when the document has no string there."""
    doc = obj.resource.doc
    if doc is None:
        return None
    node = doc.scalar_node(path)
    if node is None or not isinstance(node.value, str):
        return None
    return str(node.value)


def text_location(obj: AppliedObject, path: tuple[Any, ...], offset: int) -> Location:
    """Position of character ``offset`` of the string scalar at ``path`` in its source file."""
    doc = obj.resource.doc
    if doc is None:
        return obj.resource.position(path)
    line, col = doc.text_position(path, offset)
    return Location(obj.resource.origin.file, line, col)
