"""Parsing front door: a fast path for the common simple texts, lark for everything else.

Most substituted strings are literal text with plain ``${NAME}`` references, defaults
with a literal value or plain references (``${NAME:=5Gi}``, ``${NAME:-${APP}}``, ``${NAME=x}``,
``:?``, ``:+``), case conversions (``${NAME^^}``) and ``$$`` escapes. Those are parsed here with one regular-expression scan, giving exactly the
Template the lark grammar gives (a test compares both on random texts); anything else
(other operators, nesting, errors) goes to the grammar in ``_parser``, which is only
imported then: importing lark and building its parser costs about 0.1 s.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ._model import EnvsubstSyntaxError, Part, Template, Text, VarRef

# "$$" | "${NAME}" | "${NAME<default op><default>}" | "${NAME<case op>}" | any other "${" | a lone
# "$", where the default is text ("$" allowed unless it starts "${") and plain "${NAME}" references
_TOKEN = re.compile(
    r"\$(?:\$|\{([A-Za-z0-9_]+)(?:\}|(:[-=?+]|=)((?:[^}$]|\$(?!\{)|\$\{[A-Za-z0-9_]+\})*)\}|([,^]{1,2})\})|(\{))?"
)
_NESTED = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def _default_args(body: str, at: int) -> tuple[Part, ...]:
    """The arguments of a default ``body`` starting at offset ``at``: text runs taken as
    written (ARG_TEXT has no escapes) and nested plain references."""
    if "${" not in body:
        return (Text(body, at, at + len(body)),) if body else ()
    args: list[Part] = []
    pos = 0
    for m in _NESTED.finditer(body):
        if m.start() > pos:
            args.append(Text(body[pos : m.start()], at + pos, at + m.start()))
        s, e = at + m.start(), at + m.end()
        args.append(VarRef(m.group(1), None, s, e, s + 2, e - 1, "plain"))
        pos = m.end()
    if pos < len(body):
        args.append(Text(body[pos:], at + pos, at + len(body)))
    return tuple(args)


def fast_parse(text: str) -> Template | None:
    """The Template of a simple text, or None when the full grammar is needed."""
    parts: list[Part] = []
    buf: list[str] = []
    run_start = 0
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.group(5) is not None:
            return None  # "${" that needs the grammar
        buf.append(text[pos : m.start()])
        name = m.group(1)
        if name is not None:
            if buf and any(buf):
                parts.append(Text("".join(buf), run_start, m.start()))
            buf = []
            start, end = m.start(), m.end()
            op = m.group(2)
            if m.group(4) is not None:  # ${v^} ${v^^} ${v,} ${v,,}
                parts.append(VarRef(name, m.group(4), start, end, start + 2, m.start(4), "case"))
            elif op is None:
                parts.append(VarRef(name, None, start, end, start + 2, end - 1, "plain"))
            else:
                args = _default_args(m.group(3), m.start(3))
                parts.append(VarRef(name, op, start, end, start + 2, m.start(2), "default", args, Template(text, args)))
            run_start = end
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
