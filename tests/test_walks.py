"""Walks over parsed data: the recursive fast paths agree with the explicit-stack reference,
in document order, and data deeper than the recursion limit falls back instead of failing."""

from __future__ import annotations

import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fluxgraph.model import _string_values_iterative, string_values

_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from(["", "$", "a$b", "${X}", "plain", "$$"]))
_data = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "b", "$k", "c"]), inner, max_size=4)),
    max_leaves=40,
)


def _reference(node: Any, path: tuple[Any, ...], needle: str, keys: bool) -> list[tuple[tuple[Any, ...], str]]:
    """The plain recursive walk, for comparison: a key before its value, document order."""
    out: list[tuple[tuple[Any, ...], str]] = []
    if isinstance(node, str):
        if needle in node:
            out.append((path, node))
    elif isinstance(node, dict):
        for k, v in node.items():
            if keys and isinstance(k, str) and needle in k:
                out.append(((*path, k), k))
            out.extend(_reference(v, (*path, k), needle, keys))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_reference(v, (*path, i), needle, keys))
    return out


@settings(max_examples=300, deadline=None)
@given(_data, st.sampled_from(["$", "${", "a", ""]), st.booleans())
def test_string_values_agrees_with_the_iterative_walk(data: Any, needle: str, keys: bool) -> None:
    expected = _reference(data, ("root",), needle, keys)
    assert string_values(data, ("root",), needle, keys=keys) == expected
    assert _string_values_iterative(data, ("root",), needle, keys) == expected


def test_string_values_of_data_deeper_than_the_recursion_limit() -> None:
    depth = sys.getrecursionlimit() + 500
    data: Any = "$deep"
    for i in range(depth):
        data = {"k": data} if i % 2 else [data]
    [(path, value)] = string_values(data, contains="$")
    assert value == "$deep" and len(path) == depth
    deep_key: Any = {"$key": "v"}
    for _ in range(sys.getrecursionlimit() + 500):
        deep_key = [deep_key]
    [(path, value)] = string_values(deep_key, contains="$", keys=True)
    assert value == "$key" and path[-1] == "$key"


def test_string_subclasses_and_mapping_subclasses_are_walked() -> None:
    class S(str):
        pass

    class D(dict):  # type: ignore[type-arg]
        pass

    data = D(a=S("x$"), b=[S("$y"), 1])
    assert string_values(data, contains="$") == [(("a",), "x$"), (("b", 0), "$y")]
