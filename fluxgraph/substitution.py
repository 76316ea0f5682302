"""Applying a Kustomization's postBuild substitution to its built objects.

kustomize-controller (``build()`` in ``internal/controller/kustomization_controller.go``) runs
fluxcd/pkg ``kustomize.SubstituteVariables`` on every object when ``spec.postBuild`` is set:
the object is serialised to YAML, envsubst runs over the text, the text is parsed back. Here
the same is done scalar by scalar: every string (keys included) that contains ``$`` is
rendered with ``fluxgraph.envsubst``; a plain single-line scalar whose text changed is
re-resolved as YAML would re-read it (``replicas: ${N}`` becomes an int; a blank result becomes
``null``, flux2#5245). Objects labelled or annotated
``kustomize.toolkit.fluxcd.io/substitute: disabled`` (exact value) are left alone.

Variables: ``substituteFrom`` in list order, later entries overwriting earlier ones, then the
inline ``substitute`` overwriting all (fluxcd/pkg ``kustomize/kustomize_varsub.go``
``LoadVariables``). With ``substituteStrategy: WithVariables`` (the default) nothing is
substituted when no variable resolved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fluxgraph import envsubst
from fluxgraph.model import linked_path
from fluxgraph.yamlio import plain_scalar_tag, resolve_scalar

DISABLE_KEY = "kustomize.toolkit.fluxcd.io/substitute"


def substitution_disabled(data: dict[str, Any]) -> bool:
    md = data.get("metadata")
    if not isinstance(md, dict):
        return False
    for sect in ("labels", "annotations"):
        m = md.get(sect)
        if isinstance(m, dict) and m.get(DISABLE_KEY) == "disabled":
            return True
    return False


@dataclass
class SubstResult:
    data: dict[str, Any]
    changed: bool = False
    unknown: bool = False  # an UNKNOWN (encrypted / cluster-only) value flowed into the object
    errors: list[tuple[tuple[Any, ...], Exception]] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    unset: set[str] = field(default_factory=set)


def _reresolve(original: str, rendered: str) -> Any:
    """How YAML re-reads a substituted plain scalar."""
    if "\n" in original or "\n" in rendered:
        return rendered
    s = rendered.strip()
    if s == "":
        return None
    if s in ("null", "Null", "NULL", "~"):
        return None
    if s in ("true", "True", "TRUE"):
        return True
    if s in ("false", "False", "FALSE"):
        return False
    if s[0] in "-+.0123456789":
        tag = plain_scalar_tag(s)
        if tag != "tag:yaml.org,2002:str":
            return resolve_scalar(tag, s)
    return rendered


def apply(data: dict[str, Any], variables: dict[str, Any], *, strict: bool) -> SubstResult:
    """Substitute every string of ``data`` (a deep copy is made only where something changes)."""
    result = SubstResult(data=data)

    # ``where`` is a linked list (parent, key) turned into a path only for an error: most
    # strings have no "$" and a path tuple per node was a fifth of the walk
    def render(text: str, where: Any) -> tuple[Any, bool]:
        r = envsubst.render(text, variables, strict=strict)
        for ref in r.used:
            result.used.add(ref.name)
        for ref in r.unset:
            result.unset.add(ref.name)
        if r.error is not None:
            result.errors.append((linked_path(where), r.error))
            return text, False
        if r.text is None:
            result.unknown = True
            return text, False
        if r.text == text:
            return text, False
        return r.text, True

    def walk(node: Any, where: Any) -> tuple[Any, bool]:
        t = type(node)
        if t is str or (t is not dict and t is not list and isinstance(node, str)):
            if "$" not in node:
                return node, False
            out, changed = render(node, where)
            if changed:
                return _reresolve(node, out), True
            return node, False
        if t is dict or isinstance(node, dict):
            new: dict[Any, Any] | None = None
            for k, v in node.items():
                nk, kchanged = render(k, where) if type(k) is str and "$" in k else (k, False)
                tv = type(v)
                if tv is str and "$" not in v or tv is int or tv is bool or v is None:
                    nv, vchanged = v, False
                else:
                    nv, vchanged = walk(v, (where, k))
                if kchanged or vchanged:
                    if new is None:
                        new = {}
                        for k2, v2 in node.items():
                            if k2 == k:
                                break
                            new[k2] = v2
                    new[nk] = nv
                elif new is not None:
                    new[k] = v
            return (new, True) if new is not None else (node, False)
        if t is list or isinstance(node, list):
            newl: list[Any] | None = None
            for i, v in enumerate(node):
                tv = type(v)
                if tv is str and "$" not in v or tv is int or tv is bool or v is None:
                    nv, changed = v, False
                else:
                    nv, changed = walk(v, (where, i))
                if changed and newl is None:
                    newl = list(node[:i])
                if newl is not None:
                    newl.append(nv)
            return (newl, True) if newl is not None else (node, False)
        return node, False

    out, changed = walk(data, None)
    result.data = out
    result.changed = changed
    return result
