import pytest

from fluxgraph.yamlio import MAX_DEPTH, load_documents, load_text


def test_positions_are_one_based():
    res = load_documents("f.yaml", b"---\na: 1\nb:\n  - x: yes\n    y: '2'\n")
    assert not res.errors
    [doc] = res.documents
    assert doc.line == 2
    assert doc.data == {"a": 1, "b": [{"x": "yes", "y": "2"}]}
    assert doc.position(("b", 0, "y")) == (5, 8)
    assert doc.position(("missing",)) == (2, 1)


def test_yaml_v3_schema():
    [d] = load_text("a: yes\nb: 0o17\nc: 1_000\nd: ~\ne: 0x1F\nf: 1e3\ng: on\nh: 2024-01-01\ni: true\nj: 0644\n")
    assert d == {"a": "yes", "b": 15, "c": 1000, "d": None, "e": 31, "f": 1000.0, "g": "on", "h": "2024-01-01T00:00:00Z", "i": True, "j": 420}


def test_duplicate_keys_are_located_errors():
    res = load_documents("f.yaml", b"a: 1\nb: 2\na: 3\n")
    assert [(e.message, e.line, e.column) for e in res.errors] == [("mapping key 'a' already defined", 3, 1)]


def test_syntax_error_is_located():
    res = load_documents("f.yaml", b"a: [1, 2\nb: 3\n")
    assert res.documents == []
    assert res.errors and res.errors[0].line >= 1


def test_redefined_anchor_is_allowed():
    res = load_documents("f.yaml", b"a: &x 1\nb: *x\nc: &x 2\nd: *x\n")
    assert not res.errors
    assert res.documents[0].data == {"a": 1, "b": 1, "c": 2, "d": 2}


def test_alias_bomb_is_bounded():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    res = load_documents("bomb.yaml", "\n".join(lines).encode())
    assert res.documents == []
    assert "alias expansion" in res.errors[0].message


def test_deep_nesting_is_bounded():
    n = 20000
    res = load_documents("deep.yaml", b"a: " + b"[" * n + b"]" * n + b"\n")
    assert res.documents == []
    assert str(MAX_DEPTH) in res.errors[0].message


def test_binary_and_bad_utf8():
    assert "binary" in load_documents("b.yaml", b"\x00\x01\x02").errors[0].message
    err = load_documents("u.yaml", b"a: 1\nb: \xff\n").errors[0]
    assert "UTF-8" in err.message and err.line == 2


def test_empty_documents_are_skipped():
    res = load_documents("e.yaml", b"---\n# only a comment\n---\na: 1\n---\n")
    assert [d.data for d in res.documents] == [{"a": 1}]


def test_merge_keys():
    [d] = load_text("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\n")
    assert d["c"] == {"x": 1, "y": 3}


def test_implicit_resolution_is_yaml_v3s():
    """Plain scalars resolve as yaml.v3's resolve.go ``resolve("", value)`` does (the tag it
    returns, by its rules: the resolveMap, then ParseInt/ParseUint with base 0 after removing
    '_', yamlStyleFloat, timestamps)."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    from fluxgraph.yamlio import _Loader, plain_scalar_tag

    expected = {
        "str": [
            "nul", "tRUE", "yes", "no", "on", "off", "y", "n", "=", "name", "5m", "1.2.3", "v1", "-", "+", ".", "0xZZ",
            "é", "nan", "inf", "True ", " true", "12:30", "2024-13-01", "1e400", "+-1", "0x", "._5", "..5",
        ],
        "null": ["", "~", "null", "Null", "NULL"],
        "bool": ["true", "True", "TRUE", "false", "False", "FALSE"],
        "int": ["0", "-1", "+12", "0x1F", "0o17", "017", "0644", "0b101", "1_000", "1__2", "-0x1F", "18446744073709551615"],
        "float": ["1.5", "-.5", ".5", ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "1e3", "1.0e+3", "0.", "09", "-18446744073709551616"],
        "timestamp": ["2024-01-01", "2024-1-1", "2024-1-1 10:00:00", "2001-12-14t21:59:43.10Z", "2001-12-14T21:59:43+05:00"],
        "merge": ["<<"],
    }
    loader = _Loader(b"")
    for tag, values in expected.items():
        for v in values:
            assert plain_scalar_tag(v) == f"tag:yaml.org,2002:{tag}", v
            assert str(loader.resolve(ScalarNode, v, (True, False))) == f"tag:yaml.org,2002:{tag}", v
            assert str(loader.resolve(ScalarNode, v, (False, True))) == "tag:yaml.org,2002:str", v
    assert str(loader.resolve(SequenceNode, None, (False, False))) == "tag:yaml.org,2002:seq"
    assert str(loader.resolve(MappingNode, None, (False, False))) == "tag:yaml.org,2002:map"


def test_aliases_build_separate_objects():
    """kustomize.resource.copy_data (a deep copy without a memo) relies on this: no two places
    of a document share one Python object, merge keys included."""
    from fluxgraph.yamlio import load_text

    d = load_text("a: &x {k: [1]}\nb: *x\nc: {<<: *x}\nl: [*x, *x]\n")[0]
    objs = [d["a"], d["b"], d["l"][0], d["l"][1]]
    assert len({id(o) for o in objs}) == 4
    assert len({id(o["k"]) for o in objs} | {id(d["c"]["k"])}) == 5


def test_parsing_changes_no_module_state():
    """The loader builds ruamel's own node classes and leaves ruamel's modules as they were:
    ruamel's safe loader still works in the same process afterwards."""
    import _ruamel_yaml
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    before = dict(vars(_ruamel_yaml))
    res = load_documents("f.yaml", b"a: [1, !!str 2, {b: c}]\n")
    doc = res.documents[0]
    assert doc.data == {"a": [1, "2", {"b": "c"}]}
    root = doc.node
    assert type(root) is MappingNode
    seq = root.value[0][1]
    assert type(seq) is SequenceNode and [type(n) for n in seq.value] == [ScalarNode, ScalarNode, MappingNode]
    assert str(seq.value[1].tag) == "tag:yaml.org,2002:str" and str(seq.tag) == "tag:yaml.org,2002:seq"
    assert str(root.tag) == "tag:yaml.org,2002:map"
    assert (root.flow_style, seq.flow_style, seq.value[2].flow_style) == (False, True, True)
    assert load_documents("g.yaml", b"a: [1\n").errors
    assert dict(vars(_ruamel_yaml)) == before
    assert YAML(typ="safe").load("a: [1, 2]") == {"a": [1, 2]}


@pytest.mark.heavy
def test_parses_in_threads_read_as_one_at_a_time():
    """Parses in several threads at once each get their whole documents."""
    import sys
    import threading

    texts = [f"a{i}: [1, {{b: c{i}}}, x]\nlist:\n" + "".join(f"  - {{k: v{j}, n: {j}}}\n" for j in range(200)) for i in range(8)]
    expected = [load_text(t) for t in texts]
    failures: list[str] = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:

        def work(k: int) -> None:
            for _ in range(40):
                for t, e in zip(texts, expected, strict=True):
                    got = load_text(t)
                    if got != e:
                        failures.append(f"thread {k}: {str(got)[:80]}")
                        return

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)
    assert failures == []
