"""What changed inside an object between two revisions, as a reviewer reads it: by field path,
list entries matched by their key (a reorder is not a change), multi-line strings as line
diffs, Secret values never shown.

``object_changes(kind, group, before, after)`` compares the objects as the cluster receives
them (after build and substitution). Noise that carries no decision is left out by default
(``NOISE``: annotations and labels that tools rewrite on every render); ``noise=False`` keeps it.
"""

from __future__ import annotations

import difflib
import fnmatch
from dataclasses import dataclass
from typing import Any

# Keys that identify the entries of a list of mappings, in the order they are tried (the
# merge keys of the Kubernetes API where it has them: containers, ports, volumes, env...).
LIST_KEYS = ("name", "containerPort", "mountPath", "devicePath", "port", "key", "ip", "type", "id", "path")

# metadata.annotations and metadata.labels that change on every render without a decision
# behind them (at any depth: pod templates carry them too)
NOISE = ("helm.sh/chart", "checksum/*", "kubectl.kubernetes.io/last-applied-configuration")

SECRET_SECTIONS = ("data", "stringData", "binaryData")
MAX_VALUE = 120  # characters of a value shown inline in text and Markdown (JSON keeps it whole)


@dataclass(frozen=True)
class FieldChange:
    path: str  # dotted, list entries as [key=value] or [index]
    op: str  # added | removed | changed
    before: Any = None  # None for added; "(secret)" where the value is a Secret's
    after: Any = None
    lines: tuple[str, ...] = ()  # a line diff of a multi-line string (unified, without headers)
    secret: bool = False


def _is_noise(key: str) -> bool:
    return any(fnmatch.fnmatchcase(key, pat) for pat in NOISE)


def _strip_noise(v: Any) -> Any:
    if isinstance(v, dict):
        out: dict[str, Any] = {}
        for k, x in v.items():
            if k in ("annotations", "labels") and isinstance(x, dict):
                x = {a: b for a, b in x.items() if not _is_noise(str(a))}
            out[k] = _strip_noise(x)
        return out
    if isinstance(v, list):
        return [_strip_noise(x) for x in v]
    return v


def _list_key(a: list[Any], b: list[Any]) -> str | None:
    items = a + b
    if not items or not all(isinstance(x, dict) for x in items):
        return None
    for key in LIST_KEYS:
        for side in (a, b):
            vals = [x.get(key) for x in side]
            if any(v is None or isinstance(v, dict | list) for v in vals) or len(set(map(str, vals))) != len(vals):
                break
        else:
            return key
    return None


def _segment(key: Any) -> str:
    if isinstance(key, int):
        return f"[{key}]"
    s = str(key)
    return f"[{s}]" if (not s or any(c in s for c in ".[] ")) else f".{s}"


def _join(path: str, key: Any) -> str:
    seg = _segment(key)
    return (seg[1:] if seg.startswith(".") else seg) if not path else path + seg


def _walk(path: str, a: Any, b: Any, out: list[FieldChange], secret: bool) -> None:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            p = _join(path, k)
            if k not in b:
                out.append(FieldChange(p, "removed", "(secret)" if secret else a[k], None, secret=secret))
            elif k not in a:
                out.append(FieldChange(p, "added", None, "(secret)" if secret else b[k], secret=secret))
            else:
                _walk(p, a[k], b[k], out, secret)
        return
    if isinstance(a, list) and isinstance(b, list):
        key = _list_key(a, b)
        if key is not None:
            ai = {str(x[key]): x for x in a}
            bi = {str(x[key]): x for x in b}
            for name in list(ai) + [n for n in bi if n not in ai]:
                p = f"{path}[{key}={name}]"
                if name not in bi:
                    out.append(FieldChange(p, "removed", ai[name] if not secret else "(secret)"))
                elif name not in ai:
                    out.append(FieldChange(p, "added", None, bi[name] if not secret else "(secret)"))
                else:
                    _walk(p, ai[name], bi[name], out, secret)
            return
        if all(isinstance(x, dict) for x in a + b) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                _walk(f"{path}[{i}]", x, y, out, secret)
            return
    if secret:
        out.append(FieldChange(path, "changed", "(secret)", "(secret)", secret=True))
        return
    if isinstance(a, str) and isinstance(b, str) and ("\n" in a.rstrip("\n") or "\n" in b.rstrip("\n")):
        diff = difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=2)
        lines = tuple(line for line in diff if not line.startswith(("---", "+++")))
        out.append(FieldChange(path, "changed", None, None, lines=lines))
        return
    out.append(FieldChange(path, "changed", a, b))


def object_changes(kind: str, group: str, before: dict[str, Any], after: dict[str, Any], *, noise: bool = False) -> list[FieldChange]:
    """The field changes from ``before`` to ``after`` (the object's data at each revision)."""
    if not noise:
        before, after = _strip_noise(before), _strip_noise(after)
    out: list[FieldChange] = []
    is_secret = group == "" and kind == "Secret"
    for k in list(before) + [k for k in after if k not in before]:
        a, b = before.get(k), after.get(k)
        secret = is_secret and k in SECRET_SECTIONS
        if k not in after:
            out.append(FieldChange(_join("", k), "removed", "(secret)" if secret else a, secret=secret))
        elif k not in before:
            out.append(FieldChange(_join("", k), "added", None, "(secret)" if secret else b, secret=secret))
        else:
            _walk(_join("", k), a, b, out, secret)
    return out


def object_fields(kind: str, group: str, data: dict[str, Any], op: str, *, noise: bool = False) -> list[FieldChange]:
    """Every leaf of an added (``op`` "added") or removed object as a change, for ``--full``:
    list entries by key where the list has one, Secret values masked."""
    if not noise:
        data = _strip_noise(data)
    out: list[FieldChange] = []
    is_secret = group == "" and kind == "Secret"

    def leaf(path: str, v: Any, secret: bool) -> None:
        shown = "(secret)" if secret else v
        out.append(FieldChange(path, op, shown if op == "removed" else None, shown if op == "added" else None, secret=secret))

    def walk(path: str, v: Any, secret: bool) -> None:
        if isinstance(v, dict) and v:
            for k, x in v.items():
                walk(_join(path, k), x, secret)
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            key = _list_key(v, [])
            for i, x in enumerate(v):
                walk(f"{path}[{key}={x[key]}]" if key else f"{path}[{i}]", x, secret)
        else:
            leaf(path, v, secret)

    for k, v in data.items():
        walk(_join("", k), v, is_secret and k in SECRET_SECTIONS)
    return out


def _inline(v: Any) -> str:
    if isinstance(v, str):
        s = v if v and v.strip() == v and "\n" not in v else repr(v)
        return s if len(s) <= MAX_VALUE else s[: MAX_VALUE - 1] + "…"
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, dict | list):
        import json

        s = json.dumps(v, sort_keys=False, default=str)
        return s if len(s) <= MAX_VALUE else s[: MAX_VALUE - 1] + "…"
    return str(v)


def change_lines(c: FieldChange) -> list[str]:
    """``c`` as lines of a unified-diff-like listing (``+``, ``-``, ``~`` first)."""
    if c.op == "added":
        return [f"+ {c.path}: {_inline(c.after)}"]
    if c.op == "removed":
        return [f"- {c.path}: {_inline(c.before)}"]
    if c.lines:
        return [f"~ {c.path}:", *(f"    {line}" for line in c.lines)]
    if c.secret:
        return [f"~ {c.path}: (a Secret value changed; not shown)"]
    return [f"~ {c.path}: {_inline(c.before)} -> {_inline(c.after)}"]


def diff_block_lines(c: FieldChange) -> list[str]:
    """``c`` for a Markdown ``diff`` block: removed lines ``-``, added ``+``."""
    if c.op == "added":
        return [f"+ {c.path}: {_inline(c.after)}"]
    if c.op == "removed":
        return [f"- {c.path}: {_inline(c.before)}"]
    if c.lines:
        return [f"  {c.path}:", *(f"{line[0]}   {line[1:]}" if line[:1] in "+-" else f"    {line}" for line in c.lines)]
    if c.secret:
        return [f"! {c.path}: (a Secret value changed; not shown)"]
    return [f"- {c.path}: {_inline(c.before)}", f"+ {c.path}: {_inline(c.after)}"]


def to_json(c: FieldChange) -> dict[str, Any]:
    d: dict[str, Any] = {"path": c.path, "op": c.op}
    if c.secret:
        d["secret"] = True
    if c.lines:
        d["diff"] = list(c.lines)
    else:
        if c.op != "added":
            d["before"] = c.before
        if c.op != "removed":
            d["after"] = c.after
    return d
