"""Core value types shared by every layer: locations, object identities, problems.

Positions are 1-based everywhere in fluxgraph. The YAML layer (``fluxgraph.yamlio``) is the
only place that converts the parser's 0-based marks; ``Location`` refuses line 0 so a slip
shows up at once instead of as an off-by-one in a SARIF report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, order=True)
class Location:
    """A place in the repository: ``file`` is relative to the repo root, POSIX separators."""

    file: str
    line: int = 1
    column: int = 1

    def __post_init__(self) -> None:
        if self.line < 1 or self.column < 1:
            raise ValueError(f"positions are 1-based: {self.file}:{self.line}:{self.column}")

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    @property
    def file_line(self) -> str:
        """``file:line``, as messages name a place."""
        return f"{self.file}:{self.line}"


def api_group(api_version: str) -> str:
    """``apps/v1`` -> ``apps``; ``v1`` -> ``""`` (the core group)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


@dataclass(frozen=True, order=True)
class ObjRef:
    """The identity Flux's inventory uses: group, kind, namespace, name (version ignored), and
    the cluster the object is applied to: ``target`` is ``""`` for the cluster being modelled,
    or the ``spec.kubeConfig`` reference of the Kustomization that applies it to another one
    (``flux.kube_config_target``). Two objects are the same only within one target."""

    kind: str
    namespace: str
    name: str
    group: str = ""
    target: str = ""

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        where = f" (kubeConfig {self.target})" if self.target else ""
        return f"{self.kind}/{ns}{self.name}{where}"

    @property
    def key(self) -> str:
        """``<kind>/<namespace>/<name>`` with an empty namespace kept, for stable JSON ids;
        ``@<target>`` is appended for an object applied to another cluster."""
        return f"{self.kind}/{self.namespace}/{self.name}" + (f"@{self.target}" if self.target else "")


@dataclass(frozen=True)
class Problem:
    """Something fluxgraph found while reading or building the repository.

    ``code`` is a stable identifier (``yaml-syntax``, ``path-escape``, ``remote-resource`` ...)
    that the check engine maps to a rule. ``not_evaluated`` marks things fluxgraph could not
    look at (a remote base, an encrypted value): they are reported apart from what passed.
    """

    code: str
    message: str
    location: Location
    not_evaluated: bool = False
    kustomization: str | None = None
    related: tuple[Location, ...] = field(default=())
    # what the problem is about, stable when the message is reworded: the fingerprint of the
    # finding that reports it (with the code and the file) comes from it
    subject: str = ""

    def sort_key(self) -> tuple[Any, ...]:
        return (self.location, self.code, self.message)


class FluxgraphError(Exception):
    """An input error that stops analysis altogether (exit status 2)."""


def as_dict(v: Any) -> dict[str, Any]:
    """``v`` when it is a mapping, else an empty dict (for tolerant reading of user YAML)."""
    return v if isinstance(v, dict) else {}


def as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def as_str(v: Any, default: str = "") -> str:
    return v if isinstance(v, str) else default


def linked_path(where: Any) -> tuple[Any, ...]:
    """The path of a linked list ``(parent, key)`` (``None`` is the root), outermost key first.

    Walks over parsed data carry such a pair per node instead of a path tuple, and build the
    tuple only for what they keep."""
    keys: list[Any] = []
    while where is not None:
        where, key = where
        keys.append(key)
    return tuple(reversed(keys))


def string_values(
    node: Any, path: tuple[Any, ...] = (), contains: str = "", *, keys: bool = False
) -> list[tuple[tuple[Any, ...], str]]:
    """Every string value of ``node`` that contains ``contains``, with its path, in document
    order. With ``keys``, mapping keys that contain it are yielded too, before their value and
    with the same path (Flux substitutes the YAML text, keys included).

    A value's path is built only when the value is kept: the checks ask for the few strings
    with a ``$`` among the tens of thousands of a large cluster. Recursive, which is twice as
    fast as an explicit stack; data nested deeper than the interpreter's recursion limit (only
    patches stacked on patches can build it) is walked iteratively instead.
    """
    out: list[tuple[tuple[Any, ...], str]] = []
    keep = out.append

    def walk(n: Any, where: Any) -> None:
        if type(n) is dict:
            pairs: Any = n.items()
        elif type(n) is list:
            pairs = enumerate(n)
        elif isinstance(n, str):
            if contains in n:
                keep(((*path, *linked_path(where)), n))
            return
        elif isinstance(n, dict):
            pairs = n.items()
        elif isinstance(n, list):
            pairs = enumerate(n)
        else:
            return
        for k, v in pairs:
            if keys and isinstance(k, str) and contains in k:
                keep(((*path, *linked_path(where), k), k))
            t = type(v)
            if t is str:
                if contains in v:
                    keep(((*path, *linked_path(where), k), v))
            elif t is dict or t is list or isinstance(v, str | dict | list):
                walk(v, (where, k))

    try:
        walk(node, None)
    except RecursionError:
        return _string_values_iterative(node, path, contains, keys)
    return out


_KEY = object()  # marks a mapping key on the iterative walk's stack


def _string_values_iterative(node: Any, path: tuple[Any, ...], contains: str, keys: bool) -> list[tuple[tuple[Any, ...], str]]:
    """``string_values`` with an explicit stack, for data of any depth."""
    out: list[tuple[tuple[Any, ...], str]] = []
    stack: list[tuple[Any, Any]] = [(None, node)]  # (where, value); where = (parent where, key)
    while stack:
        where, n = stack.pop()
        if where is not None and where[0] is _KEY:
            out.append(((*path, *linked_path(where[1])), n))
            continue
        t = type(n)
        if t is str or (t is not dict and t is not list and isinstance(n, str)):
            if contains in n:
                out.append(((*path, *linked_path(where)), n))
        elif t is dict or isinstance(n, dict):
            for k, v in reversed(n.items()):
                stack.append(((where, k), v))
                if keys and isinstance(k, str) and contains in k:
                    stack.append(((_KEY, (where, k)), k))
        elif t is list or isinstance(n, list):
            stack.extend(((where, i), n[i]) for i in range(len(n) - 1, -1, -1))
    return out


def value_at(data: Any, path: tuple[Any, ...], default: Any = None) -> Any:
    """The value at ``path`` (mapping keys and list indexes) in parsed data, or ``default``."""
    cur = data
    for step in path:
        if isinstance(cur, dict) and step in cur:
            cur = cur[step]
        elif isinstance(cur, list) and isinstance(step, int) and 0 <= step < len(cur):
            cur = cur[step]
        else:
            return default
    return cur


def dotted(path: tuple[Any, ...]) -> str:
    """``("spec", "containers", 0, "args")`` -> ``spec.containers[0].args``."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out += ("." if out else "") + str(step)
    return out or "(document)"


def kind_plural(kind: str, n: int) -> str:
    """``kind`` as an English plural when ``n`` is not 1: HelmRelease(s), OCIRepository/ies."""
    if n == 1:
        return kind
    if kind.endswith("y") and kind[-2:-1] not in "aeiou":
        return kind[:-1] + "ies"
    if kind.endswith(("s", "x", "sh", "ch")):
        return kind + "es"
    return kind + "s"

