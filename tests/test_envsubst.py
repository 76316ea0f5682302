"""Tests for fluxgraph.envsubst: Flux postBuild substitution.

Every row of CASES was also run through the Go code of fluxcd/pkg envsubst
(rebuilt outside this repository) and gave the same output or error message.
"""

from __future__ import annotations

import pickle
import re
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fluxgraph.envsubst import (
    DEFAULT_OPS,
    UNKNOWN,
    EnvsubstRuntimeError,
    EnvsubstSyntaxError,
    Rendered,
    Template,
    Text,
    Unknown,
    UnsetVariableError,
    VarRef,
    escape,
    has_substitution_syntax,
    invalid_var_name_message,
    is_valid_var_name,
    normalize_value,
    normalize_variables,
    parse,
    parse_uncached,
    render,
    substitute,
)


@dataclass(frozen=True)
class Err:
    """Syntax error: Flux's message and the offset where its scanner gave up."""

    message: str
    offset: int


@dataclass(frozen=True)
class Unset:
    """Strict-mode failure for ``name``; ``offset`` is the start of its ``${``."""

    name: str
    offset: int


@dataclass(frozen=True)
class Panic:
    """The Go code panics (reproduced as EnvsubstRuntimeError)."""

    message: str
    offset: int


BAD = "bad substitution"
BRACE = "missing closing brace"
NAME = "unable to parse variable name"
FUNC = "unable to parse substitution within function"

V = {
    "v": "Hello World",
    "e": "",
    "p": "/a/b/c.tar.gz",
    "n": "3",
    "l": "hello",
    "w": "é€",
    "s": "a/b",
    "x": "${v}",
}

# (text, strict, expected); variables are V.  Strict-only rows use strict=True,
# rows that behave the same either way use None (run both ways).
CASES: list[tuple[str, bool | None, str | Err | Unset | Panic]] = [
    # ---- only ${...} is expanded
    ("", None, ""),
    ("plain text", None, "plain text"),
    ("${v}", None, "Hello World"),
    ("a ${v} b ${n}", None, "a Hello World b 3"),
    ("${v}${n}", None, "Hello World3"),
    ("$v", None, "$v"),
    ("$(cmd) and $HOME", None, "$(cmd) and $HOME"),
    ("{{ $v }}", None, "{{ $v }}"),
    ("{v} } {", None, "{v} } {"),
    ("cost: 5$", None, "cost: 5$"),
    ("${1}", False, ""),
    ("${x}", None, "${v}"),  # values are not re-expanded
    ("${v}}", None, "Hello World}"),
    # ---- $$ is halved at top level; backslashes are kept
    ("$${v}", None, "${v}"),
    ("$$v", None, "$v"),
    ("a $$ b", None, "a $ b"),
    ("$$$${v}", None, "$${v}"),
    ("$$${v}", None, "$Hello World"),
    ("$$$", None, "$$"),
    ("$$$$", None, "$$"),
    ("$", None, "$"),
    ("$${v:-x}", None, "${v:-x}"),
    ("\\${v}", None, "\\Hello World"),
    ("a\\\\b\\/c", None, "a\\\\b\\/c"),
    ("some text ${v}$${v$${v}$v${v}", None, "some text Hello World${v${v}$vHello World"),
    # ---- ${#v}
    ("${#v}", None, "11"),
    ("${#e}", None, "0"),
    ("${#w}", None, "5"),  # bytes, like Go's len()
    ("${#u}", False, "0"),
    ("${#u}", True, Unset("u", 0)),
    ("${#}", None, Err(BAD, 3)),
    ("${##v}", None, Err(BAD, 3)),
    ("${#v:-x}", None, Err(BAD, 4)),
    # ---- case
    ("${l^}", None, "Hello"),
    ("${l^^}", None, "HELLO"),
    ("${v,}", None, "hello World"),
    ("${v,,}", None, "hello world"),
    ("${w^^}", None, "É€"),
    ("${v,^}", None, "Hello World"),  # unknown name: toDefault
    ("${u^^}", False, ""),
    ("${u^^}", True, Unset("u", 0)),
    ("${v^^^}", None, Err(BAD, 5)),
    ("${v^x}", None, Err(BAD, 4)),
    # ---- substring (byte offsets)
    ("${v:6}", None, "World"),
    ("${v:6:3}", None, "Wor"),
    ("${v:0:5}", None, "Hello"),
    ("${v:-5}", None, "Hello World"),  # ":-" is the default operator
    ("${v: -5}", None, "Hello World"),  # " -5" is not a number: value unchanged
    ("${v:-5:2}", None, "Hello World"),
    ("${v:+2}", None, "Hello World"),  # ":+" is a default operator too
    ("${v:1:-1}", None, "ello Worl"),  # negative length (pkg#1275)
    ("${v:8:-8}", None, ""),
    ("${v:20}", None, ""),
    ("${v:6:100}", None, "World"),
    ("${v:x}", None, "Hello World"),
    ("${v:1:x}", None, "Hello World"),
    ("${v:1::2}", None, "el"),
    ("${v:1:2:3}", None, "Hello World"),
    ("${v:${n}}", None, "lo World"),
    ("${v:${n}:${n}}", None, "lo "),
    ("${w:1}", None, "\udca9€"),  # cuts "é" in half: a stray byte, as in Go
    ("${u:0}", False, ""),
    ("${u:0:1}", True, Unset("u", 0)),
    ("${v:}", None, Err(FUNC, 4)),
    ("${v::2}", None, Err(FUNC, 4)),
    ("${v:1:}", None, Err(FUNC, 6)),
    ("${v:1${n}}", None, Err(BAD, 5)),
    ("${v:1:2${n}}", None, Err(BAD, 7)),
    ("${v:", None, Err(BAD, 4)),  # read/peek/unread quirk in parseDefaultOrSubstr
    ("${v:é}", None, Err(BAD, 4)),  # same quirk: non-ASCII after the colon
    ("${v:1", None, Err(BAD, 5)),
    (
        "${v:1:9223372036854775807}",
        None,
        Panic("runtime error: slice bounds out of range [:-9223372036854775808]", 0),
    ),
    # ---- trim (glob patterns; "*" also matches "/")
    ("${p#*/}", None, "a/b/c.tar.gz"),
    ("${p##*/}", None, "c.tar.gz"),
    ("${p%.*}", None, "/a/b/c.tar"),
    ("${p%%.*}", None, "/a/b/c"),
    ("${p#/a}", None, "/b/c.tar.gz"),
    ("${p#?}", None, "a/b/c.tar.gz"),
    ("${p##[/a]*}", None, ""),
    ("${p#[}", None, "/a/b/c.tar.gz"),  # bad pattern: value unchanged
    ("${p#${e}}", None, "/a/b/c.tar.gz"),
    ("${p#/${e}}", None, Err(BAD, 5)),
    ("${p%}", None, Err(FUNC, 4)),
    ("${p#}", None, Err(FUNC, 4)),
    ("${p###}", None, "/a/b/c.tar.gz"),  # "##" then the pattern "#"
    ("${u#a}", True, Unset("u", 0)),
    # ---- replace (plain substrings; "$$", "\/", "\\" escapes inside)
    ("${v/o/0}", None, "Hell0 World"),
    ("${v//o/0}", None, "Hell0 W0rld"),
    ("${v/#Hello/Bye}", None, "Bye World"),
    ("${v/#World/Bye}", None, "Hello World"),
    ("${v/%World/All}", None, "Hello All"),
    ("${v/o/}", None, "Hell World"),
    ("${v//o/}", None, "Hell Wrld"),
    ("${v/#Hello/}", None, "Hello World"),  # one argument: Go returns the value
    ("${v/o//0}", None, "Hell0 World"),  # the delimiter is any run of "/"
    ("${s/\\//-}", None, "a-b"),
    ("${s//\\//-}", None, "a-b"),
    ("${v/ /$$}", None, "Hello$World"),
    ("${v/ /\\\\}", None, "Hello\\World"),
    ("${v/ /\\x}", None, "Hello\\xWorld"),
    ("${v/o} x/y}", None, "Hello World"),  # "}" is part of the pattern "o} x"
    ("${v/${n}/x}", None, "Hello World"),
    ("${v/${e}/x}", None, "xHello World"),  # empty pattern from a nested ref
    ("${v//${e}/.}", None, ".H.e.l.l.o. .W.o.r.l.d."),
    ("${v/World/${n}}", None, "Hello 3"),
    ("${v/#/pfx}", None, Err(FUNC, 5)),  # pkg#947
    ("${v/%/sfx}", None, Err(FUNC, 5)),
    ("${v///x}", None, Err(FUNC, 5)),
    ("${v/o}", None, Err(BAD, 6)),
    ("${v//o}", None, Err(BAD, 7)),
    ("${v/o/", None, Err(FUNC, 6)),
    ("${v/o/x", None, Err(BAD, 7)),
    ("${v/a${n}/b}", None, Err(BAD, 5)),
    ("${v/a/b${n}}", None, Err(BAD, 7)),
    ("${u/a/b}", False, ""),
    ("${u/a/b}", True, Unset("u", 0)),
    # ---- default-style operators: all are "value if non-empty, else default"
    ("${u:-d}", None, "d"),
    ("${e:-d}", None, "d"),
    ("${v:-d}", None, "Hello World"),
    ("${u=d}", None, "d"),
    ("${e=d}", None, "d"),
    ("${u:=d}", None, "d"),
    ("${u:?msg}", None, "msg"),
    ("${u:+alt}", None, "alt"),
    ("${v:+alt}", None, "Hello World"),
    ("${u:-}", None, ""),
    ("${u=}", None, ""),
    ("${u:-a b}", None, "a b"),
    ("${u==x}", None, "=x"),
    ("${u:--x}", None, "-x"),
    ("${u:-$$x}", None, "$$x"),  # no escapes in defaults
    ("${u:-\\\\}", None, "\\\\"),
    ("${u:-a}b}", None, "ab}"),
    ("${u:-a/b:c#d}", None, "a/b:c#d"),
    ("${u:-$${v}}", None, "$Hello World"),
    # nested defaults
    ("${u:-${v}}", None, "Hello World"),
    ("${u:-x${e:-${n}}y}", None, "x3y"),
    ("${u:-${w:-deep}}", None, "é€"),
    ("${u:-${u2:-${u3:-deepest}}}", None, "deepest"),
    ("${u=${v^^}}", None, "HELLO WORLD"),
    ("${u:-${v/o/0}-${#v}}", None, "Hell0 World-11"),
    ("${v:-${u}}", False, "Hello World"),
    ("${v:-${u}}", True, Unset("u", 5)),  # defaults are evaluated eagerly
    ("${u:-${b}", None, Err(FUNC, 9)),
    ("${u:-abc", None, Err(FUNC, 8)),
    ("${u=", None, Err(FUNC, 4)),
    # ---- strict mode
    ("${u}", False, ""),
    ("${u}", True, Unset("u", 0)),
    ("x ${u} ${u2}", True, Unset("u", 2)),
    ("${1}", True, Unset("1", 0)),
    ("${e}", True, ""),
    ("${u:-d}${u=d}${u:=d}${u:?d}${u:+d}", True, "ddddd"),
    ("${u/${u2}/x}", True, Unset("u2", 4)),  # arguments first
    ("$${u}", True, "${u}"),
    # ---- syntax errors (the build fails)
    ("${v-d}", None, Err(BRACE, 3)),
    ("${v+x}", None, Err(BRACE, 3)),
    ("${v?x}", None, Err(BRACE, 3)),
    ("${@}", None, Err(NAME, 2)),
    ("${!x}", None, Err(NAME, 2)),
    ("${}", None, Err(NAME, 2)),
    ("${ v }", None, Err(NAME, 2)),
    ("${$v}", None, Err(NAME, 2)),
    ("${arr[@]}", None, Err(BRACE, 5)),
    ("${a.b}", None, Err(BRACE, 3)),
    ("${a b}", None, Err(BRACE, 3)),
    ("${a${b}}", None, Err(BRACE, 3)),
    ("${v", None, Err(BRACE, 3)),
    ("${", None, Err(NAME, 2)),
    ("x ${v", None, Err(BRACE, 5)),
    ("${v} ${", None, Err(NAME, 7)),
    ('if [ -n "${ARR[@]}" ]; then', None, Err(BRACE, 14)),
    ('for a in "${@}"; do', None, Err(NAME, 12)),
    # ---- unicode names (acceptIdent: letters, decimal digits, "_")
    ("${é}", False, ""),
    ("${日本}", True, Unset("日本", 0)),
    ("${a²}", None, Err(BRACE, 3)),
    ("${٣}", True, Unset("٣", 0)),
]


def _run(text: str, strict: bool) -> str | Err | Unset | Panic:
    try:
        return substitute(text, V, strict=strict)
    except EnvsubstSyntaxError as e:
        return Err(e.message, e.offset)
    except UnsetVariableError as e:
        return Unset(e.name, e.offset)
    except EnvsubstRuntimeError as e:
        return Panic(e.message, e.offset)


def _expand() -> list[tuple[str, bool, str | Err | Unset | Panic]]:
    out = []
    for text, strict, expected in CASES:
        for s in (False, True) if strict is None else (strict,):
            out.append((text, s, expected))
    return out


@pytest.mark.parametrize(("text", "strict", "expected"), _expand(), ids=lambda x: repr(x))
def test_table(text: str, strict: bool, expected: str | Err | Unset | Panic) -> None:
    assert _run(text, strict) == expected


@pytest.mark.parametrize(("text", "strict", "expected"), _expand(), ids=lambda x: repr(x))
def test_table_render_agrees(text: str, strict: bool, expected: str | Err | Unset | Panic) -> None:
    r = render(text, V, strict=strict)
    if isinstance(expected, str):
        assert r.text == expected and r.error is None
    elif isinstance(expected, Err):
        assert r.text is None and isinstance(r.error, EnvsubstSyntaxError)
        assert (r.error.message, r.error.offset) == (expected.message, expected.offset)
    elif isinstance(expected, Unset):
        assert r.text is None and isinstance(r.error, UnsetVariableError)
        assert (r.error.name, r.error.offset) == (expected.name, expected.offset)
    else:
        assert r.text is None and isinstance(r.error, EnvsubstRuntimeError)


# --------------------------------------------------------------------- messages


def test_error_messages_match_flux() -> None:
    with pytest.raises(UnsetVariableError) as ui:
        substitute("a: ${CLUSTER_NAME}", {}, strict=True)
    assert ui.value.message == 'variable not set (strict mode): "CLUSTER_NAME"'
    assert ui.value.flux_message == (
        'envsubst error: variable substitution failed: variable not set (strict mode): "CLUSTER_NAME"'
    )
    assert ui.value.offset == 3
    assert ui.value.ref is not None and ui.value.ref.name == "CLUSTER_NAME"

    with pytest.raises(EnvsubstSyntaxError) as se:
        parse("x: ${v-d}")
    assert se.value.message == "missing closing brace"
    assert se.value.flux_message == "envsubst error: variable substitution failed: missing closing brace"
    assert se.value.offset == 6 and se.value.expr_start == 3
    assert "offset 6" in str(se.value)


def test_syntax_error_points_at_outermost_open_expression() -> None:
    with pytest.raises(EnvsubstSyntaxError) as e:
        parse("ok ${a} then ${b:-x${c:-${d!}}}")
    assert e.value.message == BRACE
    assert e.value.offset == 27
    assert e.value.expr_start == 13


def test_parse_errors_are_cached_but_fresh() -> None:
    for _ in range(2):
        with pytest.raises(EnvsubstSyntaxError) as e:
            parse("${}")
        assert e.value.offset == 2


# --------------------------------------------------------------------- the model and offsets


def test_refs_offsets_and_names() -> None:
    text = "image: ${REG:-ghcr.io}/${APP,,}:${TAG:=${VER}}"
    t = parse(text)
    assert isinstance(t, Template) and t.text == text
    refs = t.refs()
    assert [r.name for r in refs] == ["REG", "APP", "TAG", "VER"]
    for r in refs:
        assert text[r.start : r.start + 2] == "${" and text[r.end - 1] == "}"
        assert text[r.name_start : r.name_end] == r.name
    reg, app, tag, ver = refs
    assert (reg.op, reg.kind, reg.has_default) == (":-", "default", True)
    assert reg.default is not None and reg.default.parts == (Text("ghcr.io", 14, 21),)
    assert (app.op, app.kind, app.has_default, app.default) == (",,", "case", False, None)
    assert text[tag.start : tag.end] == "${TAG:=${VER}}"
    assert tag.args == (ver,) and tag.default is not None and tag.default.refs() == (ver,)
    assert (ver.op, ver.kind) == (None, "plain")
    assert t.names() == {"REG", "APP", "TAG", "VER"}
    assert [type(p) for p in t.parts] == [Text, VarRef, Text, VarRef, Text, VarRef]
    assert t.parts[0] == Text("image: ", 0, 7)


def test_parts_tile_the_text() -> None:
    text = "a $$ ${b} $${c} ${d:-${e}}x"
    t = parse(text)
    pos = 0
    for p in t.parts:
        assert p.start == pos
        pos = p.end
    assert pos == len(text)
    assert t.parts[0] == Text("a $ ", 0, 5)
    assert t.parts[2] == Text(" ${c} ", 9, 16)


def test_kinds_and_ops() -> None:
    cases = {
        "${v}": ("plain", None, ()),
        "${#v}": ("length", "#", ()),
        "${v^}": ("case", "^", ()),
        "${v:2}": ("substr", ":", (Text("2", 4, 5),)),
        "${v:2:3}": ("substr", ":", (Text("2", 4, 5), Text("3", 6, 7))),
        "${v##*/}": ("trim", "##", (Text("*/", 5, 7),)),
        "${v/\\//-}": ("replace", "/", (Text("/", 4, 6), Text("-", 7, 8))),
        "${v/a/}": ("replace", "/", (Text("a", 4, 5),)),
        "${v=}": ("default", "=", ()),
    }
    for text, (kind, op, args) in cases.items():
        (ref,) = parse(text).refs()
        assert (ref.kind, ref.op, ref.args) == (kind, op, args), text


def test_default_ops_constant() -> None:
    assert DEFAULT_OPS == {"-", "+", "=", "?", ":-", ":+", ":=", ":?"}
    producible = {r.op for r in parse("${a:-}${a=}${a:=}${a:?}${a:+}").refs()}
    assert producible == {":-", "=", ":=", ":?", ":+"}


def test_template_is_cached_and_immutable() -> None:
    text = "${abc} ${def:-x}"
    assert parse(text) is parse(text)
    assert parse_uncached(text) == parse(text)
    with pytest.raises(AttributeError):
        parse(text).parts = ()  # type: ignore[misc]


# --------------------------------------------------------------------- render / UNKNOWN


def test_render_unknown_flows_into_output() -> None:
    vs: dict[str, str | Unknown] = {"SECRET": UNKNOWN, "SET": "x", "EMPTY": ""}
    assert render("${SECRET}", vs, strict=True).text is None
    assert render("${#SECRET}", vs, strict=True).text is None
    assert render("${SECRET:-d}", vs, strict=True).text is None
    assert render("${SET:-${SECRET}}", vs, strict=True).text == "x"
    assert render("${EMPTY:-${SECRET}}", vs, strict=True).text is None
    assert render("${UNSET:-${SECRET}}", vs, strict=True).text is None
    assert render("${SET/${SECRET}/y}", vs, strict=True).text is None
    assert render("${SET:${SECRET}}", vs, strict=True).text is None
    r = render("${SECRET} ${SET}", vs, strict=True)
    assert r.text is None and r.error is None and [x.name for x in r.used] == ["SECRET", "SET"]


def test_render_classifies_refs() -> None:
    vs = {"SET": "x", "EMPTY": ""}
    r = render("${SET} ${EMPTY:-d} ${UNSET:=d} ${GONE} ${SET:-${ALSO_GONE}}", vs, strict=False)
    assert isinstance(r, Rendered) and r.ok
    assert r.text == "x d d  x"
    assert [x.name for x in r.used] == ["SET", "EMPTY", "SET"]
    assert [x.name for x in r.defaulted] == ["EMPTY", "UNSET"]
    assert [x.name for x in r.unset] == ["GONE", "ALSO_GONE"]


def test_render_strict_reports_first_error_and_all_unset() -> None:
    r = render("${A} ${B:-${C}} ${D}", {"B": "b"}, strict=True)
    assert r.text is None
    assert isinstance(r.error, UnsetVariableError) and r.error.name == "A"
    assert [x.name for x in r.unset] == ["A", "C", "D"]
    # Flux evaluates arguments first: C fails before B is looked at
    r = render("${B:-${C}} ${A}", {"B": "b"}, strict=True)
    assert isinstance(r.error, UnsetVariableError) and r.error.name == "C"


def test_render_syntax_error() -> None:
    r = render("${a.b}", {}, strict=False)
    assert r.text is None and not r.ok
    assert isinstance(r.error, EnvsubstSyntaxError) and r.error.message == BRACE
    assert r.used == r.unset == r.defaulted == ()


def test_render_fast_path() -> None:
    assert render("no dollars", {}, strict=True) == Rendered("no dollars")
    assert render("a $$ b", {}, strict=True) == Rendered("a $ b")


def test_substitute_rejects_unknown_values() -> None:
    with pytest.raises(ValueError, match="UNKNOWN"):
        substitute("${s}", {"s": UNKNOWN}, strict=False)  # type: ignore[dict-item]
    assert substitute("${t}", {"s": UNKNOWN}, strict=False) == ""  # type: ignore[dict-item]
    assert repr(UNKNOWN) == "UNKNOWN"
    assert pickle.loads(pickle.dumps(UNKNOWN)) is UNKNOWN


def test_substitute_accepts_str_subclasses() -> None:
    class Quoted(str):
        pass

    assert substitute("${a}-${a^^}", {"a": Quoted("x")}, strict=True) == "x-X"


# --------------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("A", True),
        ("_", True),
        ("cluster_name", True),
        ("_1", True),
        ("A1_b", True),
        ("1", False),
        ("1A", False),
        ("", False),
        ("app.conf", False),
        ("a-b", False),
        ("é", False),
        ("A\n", False),
        ("a b", False),
    ],
)
def test_is_valid_var_name(name: str, ok: bool) -> None:
    assert is_valid_var_name(name) is ok


def test_invalid_var_name_message() -> None:
    assert invalid_var_name_message("app.conf") == (
        "'app.conf' var name is invalid, must match '^[_[:alpha:]][_[:alpha:][:digit:]]*$'"
    )


def test_lexable_but_not_suppliable() -> None:
    # ${1} is a variable reference, but "1" can never be supplied: always unset
    assert parse("${1}").refs()[0].name == "1"
    assert not is_valid_var_name("1")


def test_normalize() -> None:
    assert normalize_value("a\nb\r\n") == "ab\r"
    mixed: dict[str, str | Unknown] = {"a": "x\n", "b": UNKNOWN}
    assert normalize_variables(mixed) == {"a": "x", "b": UNKNOWN}
    assert normalize_variables({"a": "\nx"}) == {"a": "x"}


def test_has_substitution_syntax() -> None:
    assert not has_substitution_syntax("plain")
    assert not has_substitution_syntax("$v and $(cmd) and 5$")
    assert has_substitution_syntax("${v}")
    assert has_substitution_syntax("a $$ b")
    assert has_substitution_syntax("${")


def test_escape() -> None:
    assert escape("${v} and $x") == "$${v} and $$x"
    assert substitute(escape("${v} $$ ${"), {"v": "x"}, strict=True) == "${v} $$ ${"


def test_grammar_name_class_matches_unicodedata() -> None:
    """NAME in grammar.lark excludes exactly the \\w characters that are neither
    letters nor decimal digits (Go: unicode.IsLetter || unicode.IsDigit)."""
    grammar = (Path(__file__).parents[1] / "fluxgraph" / "envsubst" / "grammar.lark").read_text("utf-8")
    m = re.search(r"^NAME: /(.*)/$", grammar, re.M)
    assert m
    name_re = re.compile(m.group(1))
    for cp in range(0x110000):
        c = chr(cp)
        go_ident = (unicodedata.category(c).startswith("L") or unicodedata.category(c) == "Nd") or c == "_"
        if not c.isalnum() and c != "_":
            continue  # outside \w: not matched either way
        assert (name_re.fullmatch(c) is not None) is go_ident, hex(cp)


def test_thread_safety() -> None:
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(200):
                text = f"t{i}-{j} ${{A{i}:-{j}}}"
                assert parse_uncached(text).text == text
                assert substitute(text, {}, strict=True) == f"t{i}-{j} {j}"
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


# --------------------------------------------------------------------- properties

_SPECIAL = st.sampled_from(
    list("${}${}:-=?+#%/\\,^ab1_ .@[]*!é²\n") + ["${", "$$", "${a", "${a:-", "${a/", "${#"]
)
_TEXT = st.one_of(st.text(), st.lists(_SPECIAL, max_size=30).map("".join))
_VARS = st.dictionaries(
    st.sampled_from(["a", "b", "1", "é", "SECRET"]),
    st.one_of(st.text(max_size=8), st.sampled_from(["", "a/b/c", "x.y.z", "é€", "$x", "${a}"])),
    max_size=5,
)
_FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FAST
@given(_TEXT)
def test_parse_only_raises_syntax_errors(text: str) -> None:
    try:
        t = parse_uncached(text)
    except EnvsubstSyntaxError as e:
        assert e.message in (BAD, BRACE, NAME, FUNC)
        assert 0 <= e.offset <= len(text)
        assert e.expr_start is None or text.startswith("${", e.expr_start)
        return
    pos = 0
    for p in t.parts:
        assert p.start == pos
        pos = p.end
    assert pos == len(text)
    for r in t.refs():
        assert text.startswith("${", r.start) and text[r.end - 1] == "}"
        assert text[r.name_start : r.name_end] == r.name


@_FAST
@given(st.text(), _VARS)
def test_escape_round_trips(s: str, variables: dict[str, str]) -> None:
    assert substitute(escape(s), variables, strict=True) == s
    assert render(escape(s), variables, strict=True).text == s


@_FAST
@given(_TEXT, _VARS, st.booleans())
def test_render_agrees_with_substitute(text: str, variables: dict[str, str], strict: bool) -> None:
    r = render(text, variables, strict=strict)
    try:
        out = substitute(text, variables, strict=strict)
    except (EnvsubstSyntaxError, UnsetVariableError, EnvsubstRuntimeError) as e:
        assert r.text is None and type(r.error) is type(e)
        return
    assert r.text == out and r.error is None


@_FAST
@given(_TEXT, _VARS)
def test_no_syntax_means_unchanged(text: str, variables: dict[str, str]) -> None:
    if not has_substitution_syntax(text):
        assert substitute(text, variables, strict=True) == text


@_FAST
@given(_TEXT, _VARS)
def test_non_strict_never_fails_on_unset(text: str, variables: dict[str, str]) -> None:
    try:
        substitute(text, variables, strict=False)
    except UnsetVariableError:  # pragma: no cover - the property
        pytest.fail("non-strict mode reported an unset variable")
    except (EnvsubstSyntaxError, EnvsubstRuntimeError):
        pass


def test_fast_path_gives_the_grammars_template():
    """The regex front door (plain ${NAME}, simple defaults, case ops, $$) must equal the grammar's result."""
    import random

    from fluxgraph.envsubst._front import fast_parse
    from fluxgraph.envsubst._parser import parse_uncached as full

    rnd = random.Random(7)
    alphabet = ["$", "$", "{", "}", "A", "b", "_", "1", " ", "x", "$$", "${A}", "${B_1}", "$${A}", "\n"]
    openers = ["${A:=", "${A:-", "${B=", "${A:?", "${A:+", "${A:", "${A-", "${A::-", "${é:-", "${A^", "${A,", "${A^^", "${A,,"]
    inner = ["x", " ", "é", ":", "-", "=", "{", "$", "\n", "$$", "}", "${B}", "${C_2}", "${", "$${B}", "^", ","]

    def piece(letters: list[str], n: int) -> str:
        return "".join(rnd.choice(letters) for _ in range(rnd.randint(0, n)))

    checked = defaults = nested = cases = 0
    for i in range(40000):
        if i % 2:
            s = piece(alphabet, 12)
        else:  # a default-style reference with random text around and inside it
            s = piece(alphabet, 3) + rnd.choice(openers) + piece(inner, 4) + rnd.choice(["}", "}", ""]) + piece(alphabet, 3)
        fast = fast_parse(s)
        if fast is None:
            continue
        checked += 1
        ref = full(s)
        assert fast == ref, s
        # VarRef.default is left out of ==; the fast path must build it too
        for a, b in zip(fast.refs(), ref.refs(), strict=True):
            assert a.default == b.default, s
            defaults += a.default is not None
            nested += a.default is not None and any(isinstance(x, VarRef) for x in a.args)
            cases += a.kind == "case"
    assert checked > 10000
    assert defaults > 3000
    assert nested > 1000
    assert cases > 500
