"""fluxgraph.strvals against the behaviour of Helm's --set parser (helm.sh/helm/v4/pkg/strvals,
whose parser_test.go the table follows) and against fluxcd/pkg chartutil's ReplacePathValue and
ReplacePathLiteralValue."""

from __future__ import annotations

from typing import Any

import pytest

from fluxgraph.strvals import StrvalsError, parse_into, replace_path_value

OK: list[tuple[str, dict[str, Any]]] = [
    ("name1=null,f=false,t=true", {"name1": None, "f": False, "t": True}),
    ("name1=value1,name2=value2,", {"name1": "value1", "name2": "value2"}),
    ("name1=,name2=value2", {"name1": "", "name2": "value2"}),
    ("leading_zeros=00009", {"leading_zeros": "00009"}),
    ("zero_int=0", {"zero_int": 0}),
    ("long_int=1234567890", {"long_int": 1234567890}),
    ("name1=one\\,two,name2=three\\,four", {"name1": "one,two", "name2": "three,four"}),
    ("name1=one\\=two", {"name1": "one=two"}),
    ("outer.inner1=value,outer.middle.inner=value", {"outer": {"inner1": "value", "middle": {"inner": "value"}}}),
    ("name1.name2=", {"name1": {"name2": ""}}),
    ("name1={value1,value2},name2={1021,902}", {"name1": ["value1", "value2"], "name2": [1021, 902]}),
    ("list[0].foo=bar,list[0].hello=world", {"list": [{"foo": "bar", "hello": "world"}]}),
    ("list[0]=foo,list[3]=bar", {"list": ["foo", None, None, "bar"]}),
    ("noval[0]", {"noval": []}),
    ("noval[0]=", {"noval": [""]}),
    ("nested[1][1]=1", {"nested": [None, [None, 1]]}),
    ("name1.name2[1].foo=bar,name1.name2[0].foo=bar", {"name1": {"name2": [{"foo": "bar"}, {"foo": "bar"}]}}),
]

FAIL = [
    "name1=value1,,,,name2=value2,",
    "name1,name2=",
    "name1,name2=value2",
    "name1,name2=value2\\",
    "name1.name2",
    "name1.name2,name1.name3",
    "name1.=name2",
    "name1.,name2",
    "name1={1021,902",
    "list[0].foo=bar,list[-30].hello=world",
    "illegal[0]name.foo=bar",
    "]={}].",
]


@pytest.mark.parametrize(("line", "expect"), OK)
def test_parses_as_helm_does(line: str, expect: dict[str, Any]) -> None:
    got: dict[str, Any] = {}
    parse_into(line, got)
    assert got == expect


@pytest.mark.parametrize("line", FAIL)
def test_fails_where_helm_fails(line: str) -> None:
    with pytest.raises(StrvalsError):
        parse_into(line, {})


def test_merges_into_existing_values() -> None:
    got: dict[str, Any] = {"outer": {"inner1": "overwrite", "inner2": "value2"}}
    parse_into("outer.inner1=1,outer.inner3=3", got, string_values=True)
    assert got == {"outer": {"inner1": "1", "inner2": "value2", "inner3": "3"}}


def test_a_path_through_a_value_of_another_type_fails() -> None:
    with pytest.raises(StrvalsError, match="interface conversion: interface {} is string"):
        parse_into("a.b=x", {"a": "s"})
    with pytest.raises(StrvalsError, match="interface is nil"):
        parse_into("a[0]=x", {"a": None})


def test_replace_path_value() -> None:
    # an unescaped comma ends the value and starts another key=value
    v: dict[str, Any] = {}
    replace_path_value(v, "a.b", "x,y=2")
    assert v == {"a": {"b": "x"}, "y": 2}
    with pytest.raises(StrvalsError, match='key " y: 2" has no value'):
        replace_path_value({}, "a.b", "x, y: 2")
    # quotes are stripped and the value is a string, still --set syntax
    v = {}
    replace_path_value(v, "a", "'123'")
    assert v == {"a": "123"}
    with pytest.raises(StrvalsError):
        replace_path_value({}, "a", '"q,r"')
    # a backslash escapes the next character and is dropped
    v = {}
    replace_path_value(v, "a", "^\\d+$")
    assert v == {"a": "^d+$"}
    # a leading brace makes a list
    v = {}
    replace_path_value(v, "a", '{"k": 1, "j": 2}')
    assert v == {"a": ['"k": 1', ' "j": 2']}


def test_replace_path_literal_value() -> None:
    for value in ("x, y: 2", '{"k": 1}', "^\\d+$", "a\\,b", "[x]", "123"):
        v: dict[str, Any] = {}
        replace_path_value(v, "a.b", value, literal=True)
        assert v == {"a": {"b": value}}
    # the path is still parsed: an escaped dot is part of a key
    v = {}
    replace_path_value(v, "a\\.b", "x", literal=True)
    assert v == {"a.b": "x"}
