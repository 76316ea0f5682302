"""Data model of a parsed substitution template (see ``fluxgraph.envsubst``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias

__all__ = [
    "DEFAULT_OPS",
    "UNKNOWN",
    "EnvsubstRuntimeError",
    "EnvsubstSyntaxError",
    "Kind",
    "Part",
    "Template",
    "Text",
    "Unknown",
    "UnsetVariableError",
    "VarRef",
]

#: Operators that tolerate an unset variable in strict mode
#: (fluxcd/pkg envsubst/template.go ``isDefaultOp``).  The parser can only
#: produce ``=``, ``:=``, ``:-``, ``:?`` and ``:+``; ``-``, ``+`` and ``?``
#: without a colon are syntax errors ("missing closing brace").
DEFAULT_OPS: Final = frozenset({"-", "+", "=", "?", ":-", ":+", ":=", ":?"})

#: What a ``${...}`` does, independent of the exact operator spelling.
Kind: TypeAlias = Literal["plain", "length", "case", "default", "substr", "trim", "replace"]

_FLUX_PREFIX: Final = "envsubst error: variable substitution failed: "


class Unknown:
    """Type of :data:`UNKNOWN`: a variable that exists but whose value can't be known statically."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __reduce__(self) -> str:
        return "UNKNOWN"


#: Sentinel value for a variable known to exist whose value is not known
#: (e.g. a key of a SOPS-encrypted Secret listed in ``substituteFrom``).
UNKNOWN: Final = Unknown()


def go_quote(s: str) -> str:
    """Go's ``%q`` for the strings that can occur as variable names (printable text)."""
    out = ['"']
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif not ch.isprintable():
            cp = ord(ch)
            out.append(f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class EnvsubstSyntaxError(Exception):
    """The text is rejected by Flux's envsubst parser, so the Kustomization build fails.

    ``message`` is Flux's own error text (one of ``bad substitution``,
    ``missing closing brace``, ``unable to parse variable name``,
    ``unable to parse substitution within function``); ``offset`` is the index
    of the character where Flux's scanner gave up (``len(text)`` at end of
    input); ``expr_start`` is the offset of the outermost ``${`` that was still
    open at that point (the expression a finding should point at).
    """

    def __init__(self, message: str, offset: int, expr_start: int | None = None) -> None:
        super().__init__(message, offset, expr_start)
        self.message = message
        self.offset = offset
        self.expr_start = expr_start

    @property
    def flux_message(self) -> str:
        """The condition message kustomize-controller reports for this error."""
        return _FLUX_PREFIX + self.message

    def __str__(self) -> str:
        return f"{self.message} (at offset {self.offset})"


class UnsetVariableError(Exception):
    """Strict mode: ``name`` is referenced without a default-style operator and is not set."""

    def __init__(self, name: str, offset: int, ref: VarRef | None = None) -> None:
        super().__init__(name, offset, ref)
        self.name = name
        self.offset = offset
        self.ref = ref

    @property
    def message(self) -> str:
        """Flux's error text: ``variable not set (strict mode): "NAME"``."""
        return f"variable not set (strict mode): {go_quote(self.name)}"

    @property
    def flux_message(self) -> str:
        return _FLUX_PREFIX + self.message

    def __str__(self) -> str:
        return f"{self.message} (at offset {self.offset})"


class EnvsubstRuntimeError(Exception):
    """Flux's envsubst code panics while evaluating the ``${...}`` at ``offset``.

    The only case: ``${v:pos:len}`` where ``pos + len`` overflows int64 (e.g.
    ``${v:1:9223372036854775807}``); the slice bound wraps negative.
    controller-runtime recovers the panic and the reconcile fails with it.
    """

    def __init__(self, message: str, offset: int, ref: VarRef | None = None) -> None:
        super().__init__(message, offset, ref)
        self.message = message
        self.offset = offset
        self.ref = ref

    @property
    def flux_message(self) -> str:
        return "panic: " + self.message + " [recovered]"

    def __str__(self) -> str:
        return f"{self.message} (at offset {self.offset})"


@dataclass(frozen=True, slots=True)
class Text:
    """Literal text.  ``value`` is after escape processing (``$$`` -> ``$`` where
    Flux does that); ``start``/``end`` span the raw characters in the input."""

    value: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class VarRef:
    """One ``${...}`` expression.

    ``start``/``end`` span the whole expression from ``$`` to the closing ``}``;
    ``name_start``/``name_end`` span the variable name.  ``op`` is Flux's
    function name (``FuncNode.Name``): ``None`` for ``${v}``, ``"#"`` for both
    ``${#v}`` (``kind == "length"``) and ``${v#p}`` (``kind == "trim"``),
    otherwise the operator as written (``":-"``, ``"^^"``, ``"//"``, ``":"`` ...).
    ``args`` are the function arguments, each a :class:`Text` or a nested
    :class:`VarRef`, in Flux's order; for default-style operators ``default`` is
    those arguments as a :class:`Template` (they are concatenated).
    """

    name: str
    op: str | None
    start: int
    end: int
    name_start: int
    name_end: int
    kind: Kind
    args: tuple[Part, ...] = ()
    default: Template | None = field(default=None, compare=False, repr=False)

    @property
    def has_default(self) -> bool:
        """True for the operators that never fail in strict mode (``isDefaultOp``)."""
        return self.op is not None and self.op in DEFAULT_OPS

    def refs(self) -> tuple[VarRef, ...]:
        """This reference followed by every reference nested in its arguments (source order)."""
        return tuple(_walk((self,)))


Part: TypeAlias = Text | VarRef


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed text: literal :class:`Text` runs and top-level :class:`VarRef` s."""

    text: str
    parts: tuple[Part, ...]

    def refs(self) -> tuple[VarRef, ...]:
        """Every ``${...}``, nested ones included, in source order (outer before inner)."""
        return tuple(_walk(self.parts))

    def names(self) -> frozenset[str]:
        """Names of all referenced variables, nested ones included."""
        return frozenset(r.name for r in _walk(self.parts))

    @property
    def is_literal(self) -> bool:
        """True when the text contains no ``${...}`` (it may still contain ``$$``)."""
        return all(type(p) is Text for p in self.parts)


def _walk(parts: tuple[Part, ...]) -> Iterator[VarRef]:
    stack: list[Part] = list(reversed(parts))
    while stack:
        p = stack.pop()
        if type(p) is VarRef:
            yield p
            stack.extend(reversed(p.args))
