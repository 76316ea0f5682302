"""Flux postBuild variable substitution, reproduced exactly.

kustomize-controller runs ``github.com/fluxcd/pkg/envsubst`` over the YAML of
every object of a Kustomization that has ``spec.postBuild``.  This package
parses and evaluates that language the way Flux does, with exact character
offsets for every ``${...}`` so that rules can point at the expression.

API
---
``parse(text) -> Template``            (raises :class:`EnvsubstSyntaxError`; cached)
``substitute(text, variables, *, strict) -> str``   what Flux produces
``render(text, variables, *, strict) -> Rendered``  never raises for Flux failures,
accepts :data:`UNKNOWN` values, lists used / unset / defaulted references
``has_substitution_syntax(text)``      False means substitution leaves the text alone
``escape(s)``                          ``substitute(escape(s), any, strict=True) == s``
``is_valid_var_name(name)``            the check Flux applies to *supplied* names
``normalize_value(v)`` / ``normalize_variables(m)``  Flux's newline stripping

Verified against (fluxcd/pkg unless noted)
-------------------------------------------
* ``envsubst/parse/scan.go`` - scanner modes, ``acceptIdent`` (unicode letters,
  digits, ``_``; so ``${1}`` is a variable), ``$$`` escaping via
  ``scanEscaped``/``skip`` (top level: dollar only, so backslashes are kept;
  inside replace arguments: ``$$``, ``\\/`` and ``\\\\``).
* ``envsubst/parse/parse.go`` - every function parser and its error; the four
  messages ``bad substitution``, ``missing closing brace``, ``unable to parse
  variable name``, ``unable to parse substitution within function``.
* ``envsubst/template.go`` - ``evalFunc`` (arguments are evaluated eagerly,
  before the variable is looked up), ``isDefaultOp`` (pkg#1167: strict mode
  fails for every operator except ``- + = ? :- :+ := :?``), ``lookupFunc``
  (every default-style operator, plain ``${v}`` and unknown names such as
  ``,^`` are ``toDefault``: value if non-empty, else the arguments joined;
  so ``${u:?m}`` -> ``m``, ``${u:+a}`` -> ``a``, ``${set:+a}`` -> the value).
* ``envsubst/funcs.go`` - the string functions, byte-based like Go; negative
  substring length as merged in pkg#1275 (backported to flux/v2.9.x).
* ``envsubst/path/match.go`` (read from drone/envsubst, of which the Flux
  package is a fork; vendored copy in grafana/loki) - the glob used by
  ``#``, ``##``, ``%``, ``%%``.  ``*`` and ``?`` also match ``/``.
* ``envsubst/eval.go``, ``envsubst/README.md``.
* ``kustomize/kustomize_varsub.go`` - ``varsubRegex`` for supplied names,
  newline stripping of every value (``strings.ReplaceAll(v, "\\n", "")``), the
  strict/non-strict mapper, the ``len(vars) > 0`` guard and the error prefix
  ``envsubst error: variable substitution failed: ``.
* A differential test against the Go code above (rebuilt locally from those
  files, not shipped) agreed on every case of tests/test_envsubst.py plus
  randomized inputs.

Not expanded: ``$var``, ``$(cmd)``, ``{{ $v }}``.  Syntax errors include
``${v-d}``/``${v+x}``/``${v.x}``/``${arr[@]}`` (missing closing brace),
``${}``/``${ v }``/``${@}``/``${!x}`` (unable to parse variable name),
``${v/#/pfx}`` (pkg#947, still open) and an unclosed ``${v``.

Design: lark, LALR(1) + contextual lexer
----------------------------------------
The whole language, top level included, is one LALR grammar (``grammar.lark``).
Flux's hand-written scanner is modal, and each mode became its own terminal;
lark's contextual lexer only tries the terminals valid in the parser's state,
which reproduces the modes exactly.  The one trap, LALR's merged lookaheads
after a nested ``${...}`` closes, is avoided with one function rule per
follow-context (explained in the grammar).  Syntax errors are mapped back to
Flux's messages from the set of terminals the parser expected.  No hand
scanner was needed.

Speed: ``has_substitution_syntax`` and the fast paths in ``substitute``/
``render`` handle text without ``${`` with two substring searches; parsed
templates (and parse errors) are cached by text.

Scope and caveats
-----------------
* These functions work on one string.  Flux runs envsubst on the object's whole
  YAML text (``res.AsYAML()``), so a scalar is processed exactly like this only
  when it appears verbatim in that YAML (plain, single-quoted and block scalars
  without escapes).  Double-quoted scalars are seen with their YAML escapes
  (``\\\\`` for a backslash), and a ``${...}`` spanning lines of a block scalar
  sees the indentation.  Handling that is the caller's job.
* Go's scanner treats a NUL character as the end of the input.  YAML emitted by
  Flux never contains a raw NUL (it is escaped), so NUL is ordinary text here.
* Case mapping uses Go's simple (one-to-one) mappings; the Unicode tables are
  Python's, which can differ from Go's in rarely-used characters.
* Before pkg#1275 a negative substring length (``${v:1:-1}``) made Go panic; this
  package implements the fixed behaviour.  The one panic left (``pos + len``
  overflowing int64) is reproduced as :class:`EnvsubstRuntimeError`.
* Flux skips substitution entirely when no variables are defined (unless
  ``substituteStrategy: Always``); that decision belongs to the caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, overload

from ._eval import Rendered, execute, render, substitute
from ._front import parse, parse_uncached
from ._model import (
    DEFAULT_OPS,
    UNKNOWN,
    EnvsubstRuntimeError,
    EnvsubstSyntaxError,
    Kind,
    Part,
    Template,
    Text,
    Unknown,
    UnsetVariableError,
    VarRef,
)

__all__ = [
    "DEFAULT_OPS",
    "UNKNOWN",
    "VARSUB_REGEX",
    "EnvsubstRuntimeError",
    "EnvsubstSyntaxError",
    "Kind",
    "Part",
    "Rendered",
    "Template",
    "Text",
    "Unknown",
    "UnsetVariableError",
    "VarRef",
    "escape",
    "execute",
    "has_substitution_syntax",
    "invalid_var_name_message",
    "is_valid_var_name",
    "normalize_value",
    "normalize_variables",
    "parse",
    "parse_uncached",
    "render",
    "substitute",
]

#: kustomize/kustomize_varsub.go ``varsubRegex`` (Go RE2 POSIX classes are ASCII-only).
VARSUB_REGEX: Final = "^[_[:alpha:]][_[:alpha:][:digit:]]*$"
_VARSUB_RE: Final = re.compile(r"[_A-Za-z][_A-Za-z0-9]*")


def has_substitution_syntax(text: str) -> bool:
    """True when substitution could change ``text`` or fail on it.

    Only ``${`` (an expression) and ``$$`` (an escape, halved by Flux) do
    anything; for any other text ``substitute`` returns it unchanged.
    """
    return "$" in text and ("${" in text or "$$" in text)


def escape(s: str) -> str:
    """Write ``s`` so that Flux's substitution gives back exactly ``s``.

    Every ``$`` is doubled (``${x}`` -> ``$${x}``, the form Flux documents).
    """
    return s.replace("$", "$$")


def is_valid_var_name(name: str) -> bool:
    """Whether Flux accepts ``name`` as a key of ``postBuild.substitute`` or of a
    ``substituteFrom`` ConfigMap/Secret.  One invalid key fails the whole build."""
    return _VARSUB_RE.fullmatch(name) is not None


def invalid_var_name_message(name: str) -> str:
    """Flux's error for an invalid supplied name."""
    return f"'{name}' var name is invalid, must match '{VARSUB_REGEX}'"


def normalize_value(value: str) -> str:
    """Flux removes every ``\\n`` from each variable value when it loads the
    variables (inline ``substitute`` and ``substituteFrom`` alike; ``\\r`` stays).

    :func:`substitute` and :func:`render` take values as Flux holds them after
    loading, so apply this (or :func:`normalize_variables`) to raw manifest values.
    """
    return value.replace("\n", "")


@overload
def normalize_variables(variables: Mapping[str, str]) -> dict[str, str]: ...
@overload
def normalize_variables(variables: Mapping[str, str | Unknown]) -> dict[str, str | Unknown]: ...
def normalize_variables(variables: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`normalize_value` over a mapping; ``UNKNOWN`` values pass through."""
    return {k: (normalize_value(v) if isinstance(v, str) else v) for k, v in variables.items()}
