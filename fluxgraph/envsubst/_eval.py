"""Evaluation: fluxcd/pkg ``envsubst/template.go`` (``Execute``/``evalFunc``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ._front import parse
from ._funcs import GoPanic, lookup_func, normalize_bytes, to_default
from ._model import (
    UNKNOWN,
    EnvsubstRuntimeError,
    EnvsubstSyntaxError,
    Part,
    Template,
    Text,
    Unknown,
    UnsetVariableError,
    VarRef,
)

__all__ = ["Rendered", "render", "substitute", "execute"]

Value = str | Unknown


def _fast_text(text: str) -> str | None:
    """The result for texts without ``${``, or None when a real parse is needed."""
    if "$" not in text:
        return text
    if "${" not in text:
        return text.replace("$$", "$")
    return None


# --------------------------------------------------------------------- substitute


def execute(template: Template, variables: Mapping[str, str], *, strict: bool) -> str:
    """``Template.Execute`` with KC's mapper: strict looks the name up, non-strict
    treats every name as set (missing ones as "")."""
    out = "".join(
        [p.value if isinstance(p, Text) else _eval_ref(p, variables, strict) for p in template.parts]
    )
    return out if out.isascii() else normalize_bytes(out)


def _eval_part(p: Part, variables: Mapping[str, str], strict: bool) -> str:
    if isinstance(p, Text):
        return p.value
    return _eval_ref(p, variables, strict)


def _eval_ref(ref: VarRef, variables: Mapping[str, str], strict: bool) -> str:
    # evalFunc evaluates every argument first, eagerly, even a default that will
    # not be used: ${SET:-${UNSET}} fails in strict mode.
    args = [_eval_part(a, variables, strict) for a in ref.args] if ref.args else []
    try:
        v = variables[ref.name]
    except KeyError:
        if strict and not ref.has_default:
            raise UnsetVariableError(ref.name, ref.start, ref) from None
        v = ""
    if not isinstance(v, str):
        if v is UNKNOWN:
            raise ValueError(f"the value of {ref.name!r} is UNKNOWN; use render() instead of substitute()")
        raise TypeError(f"the value of {ref.name!r} must be a str, not {type(v).__name__}")
    if ref.op is None:
        return v
    try:
        return lookup_func(ref.op, len(args))(v, args)
    except GoPanic as e:
        raise EnvsubstRuntimeError(str(e), ref.start, ref) from None


def substitute(text: str, variables: Mapping[str, str], *, strict: bool) -> str:
    """What Flux's ``envsubst.Eval`` returns for ``text`` with these variables.

    Raises :class:`EnvsubstSyntaxError`, (strict only) :class:`UnsetVariableError`,
    or :class:`EnvsubstRuntimeError` where the Go code panics.
    Variable values are used as given: apply :func:`normalize_value` (Flux strips
    newlines when it loads them) first if they come straight from a manifest.
    """
    fast = _fast_text(text)
    if fast is not None:
        return fast
    return execute(parse(text), variables, strict=strict)


# --------------------------------------------------------------------- render


@dataclass(frozen=True, slots=True)
class Rendered:
    """Result of :func:`render`.

    ``text`` is the substituted text, or None when it is not known statically
    (an ``UNKNOWN`` value reached the output) or when Flux would fail
    (``error`` is set).  The reference lists contain every ``${...}``, nested
    ones included, in Flux's evaluation order (arguments before their function):

    * ``used`` - the variable is set (its value may be ``UNKNOWN``);
    * ``unset`` - not set and no default-style operator: the strict-mode
      failures (non-strict they become "");
    * ``defaulted`` - a default-style operator whose fallback was taken
      (variable unset, or set to "").

    Evaluation continues past a strict-mode failure so that every unset
    reference is listed; ``error`` is the first one, which is the one Flux reports.
    """

    text: str | None
    used: tuple[VarRef, ...] = ()
    unset: tuple[VarRef, ...] = ()
    defaulted: tuple[VarRef, ...] = ()
    error: EnvsubstSyntaxError | UnsetVariableError | EnvsubstRuntimeError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class _Collector:
    __slots__ = ("variables", "strict", "used", "unset", "defaulted", "error")

    def __init__(self, variables: Mapping[str, Value], strict: bool) -> None:
        self.variables = variables
        self.strict = strict
        self.used: list[VarRef] = []
        self.unset: list[VarRef] = []
        self.defaulted: list[VarRef] = []
        self.error: UnsetVariableError | EnvsubstRuntimeError | None = None

    def part(self, p: Part) -> Value:
        if isinstance(p, Text):
            return p.value
        return self.ref(p)

    def ref(self, ref: VarRef) -> Value:
        args = [self.part(a) for a in ref.args]
        has_default = ref.has_default
        try:
            v: Value = self.variables[ref.name]
            self.used.append(ref)
        except KeyError:
            v = ""
            if has_default:
                self.defaulted.append(ref)
            else:
                self.unset.append(ref)
                if self.strict and self.error is None:
                    self.error = UnsetVariableError(ref.name, ref.start, ref)
        else:
            if isinstance(v, str):
                if has_default and v == "":
                    self.defaulted.append(ref)
            elif v is not UNKNOWN:
                raise TypeError(f"the value of {ref.name!r} must be a str or UNKNOWN, not {type(v).__name__}")
        fn = to_default if ref.op is None else lookup_func(ref.op, len(args))
        if v is UNKNOWN:
            return UNKNOWN
        assert isinstance(v, str)
        if fn is to_default:
            # only the fallback branch reads the arguments
            if v != "" or not args:
                return v
            return UNKNOWN if any(a is UNKNOWN for a in args) else to_default(v, args)  # type: ignore[arg-type]
        if any(a is UNKNOWN for a in args):
            return UNKNOWN
        try:
            return fn(v, args)  # type: ignore[arg-type]
        except GoPanic as e:
            if self.error is None:
                self.error = EnvsubstRuntimeError(str(e), ref.start, ref)
            return ""


def render(text: str, variables: Mapping[str, Value], *, strict: bool) -> Rendered:
    """Like :func:`substitute`, but never raises for Flux-level failures and
    accepts :data:`UNKNOWN` values; reports which references were used, unset
    or defaulted (see :class:`Rendered`)."""
    fast = _fast_text(text)
    if fast is not None:
        return Rendered(fast)
    try:
        template = parse(text)
    except EnvsubstSyntaxError as e:
        return Rendered(None, error=e)
    except RecursionError:  # defaults nested thousands deep: Flux's parser recurses too
        return Rendered(None, error=EnvsubstSyntaxError("expression nested too deeply", 0))
    try:
        return _render_template(template, variables, strict)
    except RecursionError:
        return Rendered(None, error=EnvsubstSyntaxError("expression nested too deeply", 0))


MAX_RENDERED_CHARS = 4 * 1024 * 1024


def _render_template(template: Template, variables: Mapping[str, Value], strict: bool) -> Rendered:
    c = _Collector(variables, strict)
    pieces: list[Value] = []
    size = 0
    for p in template.parts:
        piece = p.value if isinstance(p, Text) else c.ref(p)
        pieces.append(piece)
        if isinstance(piece, str):
            size += len(piece)
            if size > MAX_RENDERED_CHARS:  # 100,000 references to a 1 MB value would be 100 GB
                err = EnvsubstSyntaxError(f"substituted text exceeds {MAX_RENDERED_CHARS} characters", p.start if isinstance(p, VarRef) else 0)
                return Rendered(None, tuple(c.used), tuple(c.unset), tuple(c.defaulted), err)
    out: str | None
    if c.error is not None or any(p is UNKNOWN for p in pieces):
        out = None
    else:
        out = normalize_bytes("".join(pieces))  # type: ignore[arg-type]
    return Rendered(out, tuple(c.used), tuple(c.unset), tuple(c.defaulted), c.error)
