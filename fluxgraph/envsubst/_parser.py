"""Parsing with lark (LALR + contextual lexer) into the ``_model`` classes."""

from __future__ import annotations

import re
from contextvars import ContextVar
from functools import lru_cache
from importlib import resources
from typing import Any, Final, cast

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ._model import EnvsubstSyntaxError, Kind, Part, Template, Text, VarRef

__all__ = ["parse_uncached"]

# Flux's messages (fluxcd/pkg envsubst/parse/parse.go).
ERR_BAD_SUBSTITUTION: Final = "bad substitution"
ERR_MISSING_CLOSING_BRACE: Final = "missing closing brace"
ERR_PARSE_VARIABLE_NAME: Final = "unable to parse variable name"
ERR_PARSE_FUNC_SUBSTITUTION: Final = "unable to parse substitution within function"

# Terminals that start a parseParam argument: failing where one of them was
# acceptable is parseParam's ErrParseFuncSubstitution.
_PARAM_TERMINALS: Final = frozenset({"ARG_TEXT", "SUBSTR_OFF", "REPL_PAT", "REPL_TEXT"})
_SKIP_TOKENS: Final = frozenset({"COLONS", "SLASHES"})
_REPL_UNESCAPE: Final = re.compile(r"\$\$|\\[/\\]")


def _unescape_all(raw: str) -> str:
    """scanEscape with escapeAll: ``$$`` -> ``$``, ``\\/`` -> ``/``, ``\\\\`` -> ``\\``."""
    if "$$" not in raw and "\\" not in raw:
        return raw
    return _REPL_UNESCAPE.sub(lambda m: m.group()[1], raw)


# The source text being parsed, for the Template objects the transformer builds.
# lark calls the transformer synchronously inside parse(), so a ContextVar set
# around that call is enough to make the shared parser thread- and async-safe.
_SOURCE: ContextVar[str] = ContextVar("fluxgraph_envsubst_source", default="")


def _span(tok: Token) -> tuple[int, int]:
    # Positions are always set by lark's lexer; the Optional is only in its types.
    return cast(int, tok.start_pos), cast(int, tok.end_pos)


_KIND_BY_OP_TERMINAL: Final[dict[str, Kind]] = {
    "DEFAULT_OP": "default",
    "CASE_OP": "case",
    "SUBSTR_COLON": "substr",
    "TRIM_OP": "trim",
    "REPL_OP": "replace",
}


class _Build(Transformer[Token, Any]):
    """Runs inside the LALR parser (``transformer=``), so no parse tree is built."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)

    @staticmethod
    def _arg(c: Token | VarRef) -> Part:
        if isinstance(c, VarRef):
            return c
        if c.type == "REPL_PAT" or c.type == "REPL_TEXT":
            value = _unescape_all(str(c))
        else:  # ARG_TEXT, SUBSTR_OFF: no escape processing
            value = str(c)
        return Text(value, *_span(c))

    def start(self, children: list[Token | VarRef]) -> Template:
        parts: list[Part] = []
        for c in children:
            if isinstance(c, VarRef):
                parts.append(c)
            else:  # TEXT: "$$" pairs, left to right
                parts.append(Text(str(c).replace("$$", "$"), *_span(c)))
        return Template(_SOURCE.get(), tuple(parts))

    def func_top(self, c: list[Any]) -> VarRef:
        # c = [LBRACE, <body tokens and nested VarRefs>, RBRACE]
        start = _span(c[0])[0]
        end = _span(c[-1])[1]
        first: Token = c[1]
        if first.type == "LEN_HASH":
            name_tok: Token = c[2]
            return VarRef(str(name_tok), "#", start, end, *_span(name_tok), "length")
        name_tok = first
        ns, ne = _span(name_tok)
        if len(c) == 3:
            return VarRef(str(name_tok), None, start, end, ns, ne, "plain")
        op_tok: Token = c[2]
        kind = _KIND_BY_OP_TERMINAL[op_tok.type]
        args = tuple(self._arg(x) for x in c[3:-1] if not (isinstance(x, Token) and x.type in _SKIP_TOKENS))
        default = Template(_SOURCE.get(), args) if kind == "default" else None
        return VarRef(str(name_tok), str(op_tok), start, end, ns, ne, kind, args, default)

    func_dflt = func_top
    func_arg = func_top


@lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = resources.files(__package__).joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        transformer=_Build(),
        propagate_positions=False,
        maybe_placeholders=False,
    )


def _message(expected: set[str]) -> str:
    """Map "what the parser could have accepted here" to the Flux function that failed."""
    if "NAME" in expected:  # parseFunc: scanning the variable name
        return ERR_PARSE_VARIABLE_NAME
    if "CASE_OP" in expected:  # parseFunc: after the name, expecting "}"
        return ERR_MISSING_CLOSING_BRACE
    if expected & _PARAM_TERMINALS:  # parseParam: the argument's first token
        return ERR_PARSE_FUNC_SUBSTITUTION
    return ERR_BAD_SUBSTITUTION  # consumeRbrack, delimiters, parseLenFunc


def _open_exprs(text: str, limit: int) -> list[int]:
    """Offsets of the ``${`` still open at ``limit`` (only called on the error path)."""
    stack: list[int] = []
    ip = _lark().parse_interactive(text)
    try:
        for tok in ip.iter_parse():
            if tok.start_pos is not None and tok.start_pos >= limit:
                break
            if tok.type == "LBRACE":
                stack.append(tok.start_pos)  # type: ignore[arg-type]
            elif tok.type == "RBRACE" and stack:
                stack.pop()
    except UnexpectedInput:
        pass
    return stack


def _syntax_error(text: str, e: UnexpectedInput) -> EnvsubstSyntaxError:
    offset: int
    if isinstance(e, UnexpectedCharacters):
        expected = set(e.allowed)
        offset = cast(int, e.pos_in_stream)
    elif isinstance(e, UnexpectedToken):
        expected = set(e.expected)
        offset = len(text) if e.token.type == "$END" else _span(e.token)[0]
    elif isinstance(e, UnexpectedEOF):
        expected = set(e.expected)
        offset = len(text)
    else:  # pragma: no cover - lark has no other UnexpectedInput subclasses
        raise e
    message = _message(expected)
    if "SUBSTR_OFF" in expected and (offset >= len(text) or not text[offset].isascii()):
        # right after "${name:" (see SUBSTR_OFF in grammar.lark): Go's scanner
        # rewinds to the wrong byte and fails in parseSubstrFunc's first scan
        message = ERR_BAD_SUBSTITUTION
    opened = _open_exprs(text, offset)
    return EnvsubstSyntaxError(message, offset, opened[0] if opened else None)


def parse_uncached(text: str) -> Template:
    """Parse without the cache; raises :class:`EnvsubstSyntaxError`."""
    if "${" not in text:  # nothing but text: the grammar would give a single TEXT
        parts: tuple[Part, ...] = (Text(text.replace("$$", "$"), 0, len(text)),) if text else ()
        return Template(text, parts)
    token = _SOURCE.set(text)
    try:
        result = _lark().parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(text, e) from None
    finally:
        _SOURCE.reset(token)
    assert isinstance(result, Template)
    return result
