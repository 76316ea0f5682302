"""The round-trip gate and the position-based YAML edits of ``fluxgraph fix``: edits change only
the lines they must, and files ruamel.yaml cannot reproduce are refused with a true reason.
Over the shared corpus (skipped when absent): every file either round-trips byte for byte or is
refused for a reason that holds on the line it names."""

from __future__ import annotations

import os
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from fluxgraph.fix.roundtrip import CATEGORIES, NotRoundTrip, dump, roundtrip, split
from fluxgraph.fix.textedit import EditError, FileEditor, MapSet, ScalarEdit, SeqAppend

from .conftest import CORPUS

ANNOTATE = ("metadata", "annotations")
AFTER = ((), ("labels", "namespace", "name"))


def edit(text: str, *edits) -> str:
    return FileEditor("f.yaml", text).apply(list(edits))


def changed_lines(old: str, new: str) -> tuple[list[str], list[str]]:
    """Lines only in old, lines only in new (as a line diff sees them)."""
    import difflib

    a, b = old.splitlines(), new.splitlines()
    gone, added = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            gone += a[i1:i2]
            added += b[j1:j2]
    return gone, added


# -- the gate ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,category",
    [
        ("a: {b: 1}\nc: { d: 2 }\n", "flow-style"),
        ("a:\n  - # note\n    b: 1\n", "dash-comment"),
        ("a: null\n", "explicit-null"),
        ("a: 1   \nb: 2\n", "trailing-space"),
        ("a:\n  b: 1\nc:\n    d: 2\n", "indentation"),
        ("a: 1\r\n", "crlf"),
        ("%YAML 1.2\n---\na: 1\n", "directive"),
        ("# only a comment\n", "no-document"),
        ("a: 1\na: 2\n", "load-error"),
        ("a: &x\n  b: 1\n", "unused-anchor"),
        ("a: one\n  two\n", "joined-lines"),
        ("a:\n\tb: 1\n", "load-error"),
    ],
)
def test_gate_refuses_with_the_reason(text, category):
    with pytest.raises(NotRoundTrip) as e:
        roundtrip(text)
    assert e.value.category == category, e.value.reason
    assert e.value.category in CATEGORIES


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\n",
        "a: 1",  # no final newline
        "# head\n\n---\na: 1\n---\nb: [1, 2]\n---\n",  # comments before the first ---, empty last document
        "---\n# c\na: |\n  x\n    y\n\nb: 'q''s'  # eol\n",
        "a:\n- b: 1\n  c: &x 2\nd: *x\n",
        "a:\n    b:\n        - c\n        - d\n",
    ],
)
def test_gate_accepts_what_ruamel_reproduces(text):
    style = roundtrip(text)
    parts = split(text)
    assert parts.head + dump(parts.body, style) + parts.tail == (text if text.endswith("\n") else text + "\n")


# -- edits ------------------------------------------------------------------------------------------

NS = """\
# the shared namespace
apiVersion: v1
kind: Namespace
metadata:
  name: network  # LAN services
  labels:
    a: b
    # c: d (commented out)

  # trailing comment about the next key
spec: {}
"""


def test_annotation_goes_after_labels_and_keeps_every_comment():
    new = edit(NS, MapSet("f.yaml", 0, ANNOTATE, "kustomize.toolkit.fluxcd.io/prune", "disabled", AFTER))
    gone, added = changed_lines(NS, new)
    assert gone == [] and added == ["  annotations:", "    kustomize.toolkit.fluxcd.io/prune: disabled"]
    assert new.index("# c: d (commented out)") < new.index("  annotations:")


def test_annotation_into_existing_and_empty_mappings():
    text = "metadata:\n  name: x\n  annotations:\n    a: b\n"
    assert edit(text, MapSet("f.yaml", 0, ANNOTATE, "k", "v")) == text + "    k: v\n"
    text = "metadata:\n  name: x\n  annotations:\nspec: 1\n"
    assert edit(text, MapSet("f.yaml", 0, ANNOTATE, "k", "v")) == "metadata:\n  name: x\n  annotations:\n    k: v\nspec: 1\n"
    assert edit("metadata:\n  name: x", MapSet("f.yaml", 0, ANNOTATE, "k", "v", AFTER)) == "metadata:\n  name: x\n  annotations:\n    k: v"
    with pytest.raises(EditError, match="flow style"):
        edit("metadata:\n  name: x\n  annotations: {a: b}\n", MapSet("f.yaml", 0, ANNOTATE, "k", "v"))
    with pytest.raises(EditError, match="already set"):
        edit("metadata:\n  annotations:\n    k: w\n", MapSet("f.yaml", 0, ANNOTATE, "k", "v"))


def test_value_quoted_only_when_it_must_be():
    new = edit("metadata:\n  name: x\n", MapSet("f.yaml", 0, ANNOTATE, "k", "true"), MapSet("f.yaml", 0, ANNOTATE, "j", "a b: c"))
    assert 'k: "true"' in new and 'j: "a b: c"' in new


KS = """\
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
spec:
  # how often
  interval: 10m
  path: ./apps
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infra
spec:
  dependsOn:
    - name: a   # first
      namespace: x
  interval: 1h
"""


def test_depends_on_created_first_keeps_the_comment_with_its_key():
    new = edit(KS, SeqAppend("f.yaml", 0, ("spec", "dependsOn"), (("name", "infra"),), first=True))
    assert "spec:\n  dependsOn:\n    - name: infra\n  # how often\n  interval: 10m\n" in new
    assert changed_lines(KS, new)[0] == []


def test_depends_on_appended_to_the_list_in_its_indentation():
    new = edit(KS, SeqAppend("f.yaml", 1, ("spec", "dependsOn"), (("name", "b"), ("namespace", "y"))))
    assert "    - name: a   # first\n      namespace: x\n    - name: b\n      namespace: y\n  interval: 1h\n" in new


def test_depends_on_after_a_key():
    new = edit(KS, SeqAppend("f.yaml", 0, ("spec", "dependsOn"), (("name", "z"),), after=("interval",)))
    assert "  interval: 10m\n  dependsOn:\n    - name: z\n  path: ./apps\n" in new


SCRIPT = """\
a:
  script: |
    # ünïcödé before
    echo "${X}" ${Y}
  single: 'it''s ${Z}'
  double: "x ${Q}"
  plain: p ${P}
  flow: [sh, -c, "echo ${F}"]
  escaped: "a\\tb ${E}"
  folded: >
    ${G}
  anchored: &h "h.${H}"
  alias: *h
"""


@pytest.mark.parametrize(
    "key,expect",
    [
        ("script", '    echo "$${X}" ${Y}\n'),
        ("single", "  single: 'it''s $${Z}'\n"),
        ("double", '  double: "x $${Q}"\n'),
        ("plain", "  plain: p $${P}\n"),
    ],
)
def test_dollar_inserted_exactly_where_the_expression_is(key, expect):
    from fluxgraph.yamlio import load_text

    [data] = load_text(SCRIPT)
    value = data["a"][key]
    at = value.index("${")
    new = edit(SCRIPT, ScalarEdit("f.yaml", 0, ("a", key), at, at, "$"))
    gone, added = changed_lines(SCRIPT, new)
    assert len(gone) == 1 and added == [expect.rstrip("\n")]


def test_dollar_inserted_in_a_flow_sequence_item():
    new = edit(SCRIPT, ScalarEdit("f.yaml", 0, ("a", "flow", 2), 5, 5, "$"))
    assert '  flow: [sh, -c, "echo $${F}"]\n' in new


@pytest.mark.parametrize(
    "path,why",
    [
        (("a", "escaped"), "escape sequences"),
        (("a", "folded"), "folded"),
        (("a", "anchored"), "anchor &h"),
        (("a", "alias"), "alias"),
    ],
)
def test_strings_fluxgraph_does_not_edit(path, why):
    with pytest.raises(EditError, match=why):
        edit(SCRIPT, ScalarEdit("f.yaml", 0, path, 0, 0, "$"))


def test_edited_text_is_verified_against_the_intended_data():
    # an edit whose text would change the YAML structure is refused, not written
    with pytest.raises(EditError):
        edit("a: b\n", ScalarEdit("f.yaml", 0, ("a",), 1, 1, ": c"))


# -- the corpus -------------------------------------------------------------------------------------


def _corpus_files() -> list[str]:
    if not CORPUS.is_dir():
        return []
    return sorted(str(p) for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file() and not p.is_symlink())


def _judge(job: tuple[int, str]) -> tuple[str, str, str, int, str]:
    """(path, verdict, category, line, reason). For every tenth file the gate's "ok" is derived
    again from a fresh load and dump with the style it found (the whole corpus twice would
    double the test's time)."""
    n, path = job
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return path, "refused", "encoding", 0, "not UTF-8"
    try:
        style = roundtrip(text)
    except NotRoundTrip as e:
        return path, "refused", e.category, e.line, e.reason
    if n % 10:
        return path, "ok", "", 0, ""
    parts = split(text)
    again = parts.head + dump(parts.body, style) + parts.tail
    same = again == text or (not text.endswith("\n") and again == text + "\n")
    return path, "ok" if same else "MISMATCH", "", 0, ""


# what each reason claims about the line it names (or the file), checked on the original text
_CLAIMS = {
    "tab": lambda line, text: "\t" in line,
    "trailing-space": lambda line, text: line != line.rstrip(),
    "dash-comment": lambda line, text: re.match(r"^\s*-\s+#", line) is not None,
    "explicit-null": lambda line, text: re.search(r"(null|Null|NULL|~)\s*(#.*)?$", line) is not None,
    "flow-style": lambda line, text: any(c in line for c in "[]{}") or line.rstrip().endswith(":"),
    "indentation": lambda line, text: line.startswith(" ") or line.lstrip().startswith("-"),
    "blank-line": lambda line, text: line.strip() == "",
    "unused-anchor": lambda line, text: "&" in line,
    "joined-lines": lambda line, text: line.strip() != "",
    "rewritten": lambda line, text: True,
    "no-document": lambda line, text: all(not ln.strip() or ln.lstrip().startswith("#") or ln.strip() == "---" for ln in text.splitlines()),
    "crlf": lambda line, text: "\r" in text,
    "directive": lambda line, text: line.startswith("%"),
    "encoding": lambda line, text: True,
    "load-error": lambda line, text: True,
}


@pytest.fixture(scope="module")
def corpus_verdicts():
    files = _corpus_files()
    if not files:
        pytest.skip("shared corpus not present")
    with ProcessPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        return list(pool.map(_judge, enumerate(files), chunksize=32))


@pytest.mark.corpus
def test_every_corpus_file_round_trips_or_is_refused_for_a_true_reason(corpus_verdicts):
    assert not [v for v in corpus_verdicts if v[1] == "MISMATCH"]
    wrong = []
    for path, verdict, category, line, reason in corpus_verdicts:
        if verdict != "refused":
            continue
        assert category in CATEGORIES and reason
        text = Path(path).read_bytes().decode("utf-8", "replace")
        lines = text.split("\n")
        named = lines[line - 1] if 0 < line <= len(lines) else ""
        if not _CLAIMS[category](named, text):
            wrong.append((path, category, line, reason))
        if category == "load-error":
            from ruamel.yaml import YAML

            with pytest.raises(Exception):  # noqa: B017 - the claim is that ruamel.yaml refuses it
                list(YAML(typ="rt").load_all(text))
    assert not wrong, wrong[:5]
    ok = sum(1 for v in corpus_verdicts if v[1] == "ok")
    # the figure reported in docs/cli.md; most real manifests round-trip
    assert ok / len(corpus_verdicts) > 0.9
