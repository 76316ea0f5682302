"""Parsing front door: a fast path for the common simple texts, lark for everything else.

Most substituted strings are literal text with plain ``${NAME}`` references and ``$$``
escapes. Those are parsed here with one regular-expression scan, giving exactly the
Template the lark grammar gives (a test compares both on random texts); anything else
(operators, nesting, errors) goes to the grammar in ``_parser``, which is only imported
then: importing lark is a noticeable part of fluxgraph's start-up.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ._model import EnvsubstSyntaxError, Part, Template, Text, VarRef

_TOKEN = re.compile(r"\$(?:\$|\{([A-Za-z0-9_]+)\}|(\{))?")


def fast_parse(text: str) -> Template | None:
    """The Template of a simple text, or None when the full grammar is needed."""
    parts: list[Part] = []
    buf: list[str] = []
    run_start = 0
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.group(2) is not None:
            return None  # "${" that is not a plain reference
        buf.append(text[pos : m.start()])
        if m.group(1) is not None:
            if buf and any(buf):
                parts.append(Text("".join(buf), run_start, m.start()))
            buf = []
            parts.append(VarRef(m.group(1), None, m.start(), m.end(), m.start() + 2, m.end() - 1, "plain"))
            run_start = m.end()
        else:
            buf.append("$")  # "$$" -> "$", and a lone "$" stays
        pos = m.end()
    buf.append(text[pos:])
    if any(buf):
        parts.append(Text("".join(buf), run_start, len(text)))
    return Template(text, tuple(parts))


@lru_cache(maxsize=8192)
def _parse_cached(text: str) -> Template | EnvsubstSyntaxError:
    t = fast_parse(text)
    if t is not None:
        return t
    from ._parser import parse_uncached as _full

    try:
        return _full(text)
    except EnvsubstSyntaxError as e:
        return e


def parse(text: str) -> Template:
    """Parse ``text`` like Flux's ``envsubst.Parse``; raises :class:`EnvsubstSyntaxError`.

    Results (and errors) are cached by text.
    """
    r = _parse_cached(text)
    if isinstance(r, EnvsubstSyntaxError):
        raise EnvsubstSyntaxError(r.message, r.offset, r.expr_start)
    return r


def parse_uncached(text: str) -> Template:
    """The full grammar, without the fast path or the cache (for tests and comparisons)."""
    from ._parser import parse_uncached as _full

    return _full(text)
