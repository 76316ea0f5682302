"""Whether ruamel.yaml's round-trip mode reproduces a file byte for byte.

``fluxgraph fix`` edits only files that pass this gate: loaded with ``YAML(typ="rt")`` (comments,
key order, quoting, anchors kept) and dumped again with the file's own indentation, the text must
come back unchanged. A file that does not (odd indentation, tabs, re-spaced flow collections,
``null`` written out, directives, CRLF line endings) is left alone and listed with the reason,
which names the first line ruamel.yaml would rewrite.

Three things around the documents are kept verbatim and not given to ruamel.yaml, because they
are no part of any document: comment lines before the first ``---``, a final ``---`` that opens
an empty document, and a missing newline at the end of the file.

The gate also yields the file's indentation (``Style``), which edits use for the lines they add.
"""

from __future__ import annotations

import io
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

# the widest line ruamel.yaml may write without folding it: never fold
_WIDTH = 1 << 30


@dataclass(frozen=True)
class Style:
    """Indentation in ruamel.yaml's terms: a nested mapping's keys ``mapping`` columns right of
    its parent key, a block sequence's ``-`` ``offset`` columns right and its items' content
    ``sequence`` columns right."""

    mapping: int = 2
    sequence: int = 4
    offset: int = 2
    # whether the file nests a block sequence under a mapping key (else sequence/offset are a guess)
    sequences_seen: bool = False


class NotRoundTrip(Exception):
    """The file does not round-trip: ``category`` (see ``CATEGORIES``), ``line`` (1-based, 0 for
    the whole file) and a one-line ``reason``."""

    def __init__(self, category: str, reason: str, line: int = 0):
        super().__init__(reason)
        self.category = category
        self.reason = reason
        self.line = line


CATEGORIES = (
    "encoding",  # not UTF-8, a byte-order mark
    "crlf",  # carriage returns
    "directive",  # %YAML / %TAG
    "load-error",  # ruamel.yaml refuses the file (duplicate key, syntax)
    "no-document",  # only comments or blank lines
    "tab",  # a tab on the first rewritten line
    "trailing-space",  # blanks at the end of the first rewritten line
    "dash-comment",  # "- # comment": ruamel.yaml moves the comment
    "explicit-null",  # `key: null` / `key: ~` becomes `key:`
    "unused-anchor",  # an anchor nothing refers to, which ruamel.yaml drops
    "blank-line",  # a blank line ruamel.yaml drops (before a document marker, at the start)
    "joined-lines",  # a scalar or an anchor continued on the next line, which ruamel.yaml joins
    "flow-style",  # a flow collection ruamel.yaml re-spaces or joins onto one line
    "indentation",  # indentation that differs from the file's other nesting
    "rewritten",  # anything else: the line is quoted
)

_KEY_LINE = re.compile(r"^(?P<indent>[ ]*)(?P<dashes>(?:-[ ]+)*)(?P<key>[^\s#-][^#]*?|\"[^\"]*\"|'[^']*'):[ ]*(?:#.*)?$")
_ANCHOR = re.compile(r"&[^\s\[\]{},]+")
_DASH_COMMENT = re.compile(r"^[ ]*-[ ]+#")
_EXPLICIT_NULL = re.compile(r"(?:^|[:\-][ ]+)(?:null|Null|NULL|~)[ ]*(?:#.*)?$")


def _detect(lines: list[str]) -> tuple[list[int], list[tuple[int, int]]]:
    """Mapping indents and (sequence, offset) pairs the file uses, most frequent first."""
    maps: Counter[int] = Counter()
    seqs: Counter[tuple[int, int]] = Counter()
    content = [(i, ln) for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")]
    for (_, ln), (_, nxt) in zip(content, content[1:], strict=False):
        m = _KEY_LINE.match(ln.rstrip("\n"))
        if m is None or ln.rstrip().endswith(("|", ">", "|-", ">-", "|+", ">+")):
            continue
        key_col = len(m.group("indent")) + len(m.group("dashes"))
        ind = len(nxt) - len(nxt.lstrip(" "))
        body = nxt[ind:]
        if body.startswith("- ") or body.rstrip("\n") == "-":
            after = body[1:]
            content_col = ind + 1 + (len(after) - len(after.lstrip(" ")))
            if ind >= key_col:
                seqs[(content_col - key_col, ind - key_col)] += 1
        elif ind > key_col:
            maps[ind - key_col] += 1
    return [m for m, _ in maps.most_common()], [s for s, _ in seqs.most_common()]


def _candidates(lines: list[str]) -> list[Style]:
    maps, seqs = _detect(lines)
    seen = bool(seqs)
    maps = (maps[:2] or [2]) + [2, 4]
    seqs = seqs[:2] + [(4, 2), (2, 0)]  # without a sequence to learn from: Flux's docs' style
    out: list[Style] = []
    for m in maps:
        for s, o in seqs:
            if s < o + 2:  # ruamel.yaml needs room for "- "
                continue
            st = Style(m, s, o, seen)
            if st not in out:
                out.append(st)
    return out[:6]


def _load(text: str) -> list[Any]:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ReusedAnchorWarning: an anchor defined again is valid YAML
        return list(y.load_all(text))


def _dump(docs: list[Any], style: Style, explicit_start: bool) -> str:
    y = YAML(typ="rt")
    y.width = _WIDTH
    y.indent(mapping=style.mapping, sequence=style.sequence, offset=style.offset)
    y.explicit_start = explicit_start
    buf = io.StringIO()
    y.dump_all(docs, buf)
    return buf.getvalue()


def dump(text: str, style: Style) -> str:
    """``text`` loaded and dumped by ruamel.yaml's round-trip mode with ``style`` (raises what
    ruamel.yaml raises)."""
    return _dump(_load(text), style, text.startswith("---"))


@dataclass(frozen=True)
class Split:
    """A file as the gate sees it: verbatim ``head`` and ``tail`` around the ``body`` ruamel.yaml
    reproduces; ``newline`` is False when the file does not end with one."""

    head: str
    body: str
    tail: str
    newline: bool


def split(text: str) -> Split:
    newline = text.endswith("\n") or not text
    body = text if newline else text + "\n"
    lines = body.splitlines(keepends=True)
    # comment and blank lines before the first "---"
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
        i += 1
    head = ""
    if 0 < i < len(lines) and lines[i].rstrip("\n") == "---":
        head = "".join(lines[:i])
        lines = lines[i:]
    # a last "---" that opens an empty document (comments and blank lines after it)
    j = len(lines)
    while j > 0 and (not lines[j - 1].strip() or lines[j - 1].lstrip().startswith("#")):
        j -= 1
    tail = ""
    if j > 1 and lines[j - 1].rstrip("\n") == "---":
        tail = "".join(lines[j - 1 :])
        lines = lines[: j - 1]
    return Split(head, "".join(lines), tail, newline)


def _first_difference(a: str, b: str) -> tuple[int, str, str]:
    al, bl = a.splitlines(keepends=True), b.splitlines(keepends=True)
    i = 0
    while i < len(al) and i < len(bl) and al[i] == bl[i]:
        i += 1
    return i, (al[i] if i < len(al) else ""), (bl[i] if i < len(bl) else "")


def _classify(line: int, x: str, y: str) -> NotRoundTrip:
    """Why the first differing line ``x`` (1-based ``line``) became ``y``."""
    n = line
    shown = x.rstrip("\n")
    if len(shown) > 60:
        shown = shown[:57] + "..."
    if "\t" in x:
        return NotRoundTrip("tab", f"line {n} has a tab character", n)
    if x.rstrip("\n") != x.rstrip() and x.rstrip() == y.rstrip():
        return NotRoundTrip("trailing-space", f"line {n} ends with blanks", n)
    if _DASH_COMMENT.match(x):
        return NotRoundTrip("dash-comment", f"line {n} has a comment right after a sequence dash, which ruamel.yaml moves", n)
    if _EXPLICIT_NULL.search(x.rstrip("\n")) and not _EXPLICIT_NULL.search(y.rstrip("\n")):
        return NotRoundTrip("explicit-null", f"line {n} writes null explicitly (`{shown}`), which ruamel.yaml drops", n)
    if ("{" in x or "[" in x or "{" in y or "[" in y) and x.strip() != y.strip():
        return NotRoundTrip("flow-style", f"line {n} has a flow collection that ruamel.yaml re-spaces or joins (`{shown}`)", n)
    if not x.strip():
        return NotRoundTrip("blank-line", f"line {n} is a blank line that ruamel.yaml drops", n)
    anchors = _ANCHOR.findall(x)
    if anchors and not all(a in y for a in anchors):
        return NotRoundTrip("unused-anchor", f"line {n} defines the anchor {anchors[0]} that nothing refers to, which ruamel.yaml drops", n)
    if x.rstrip() and y.rstrip("\n").startswith(x.rstrip()) and len(y.rstrip()) > len(x.rstrip()):
        return NotRoundTrip("joined-lines", f"line {n} continues on the next line, which ruamel.yaml joins into one (`{shown}`)", n)
    if x.strip() == y.strip() and x != y:
        return NotRoundTrip("indentation", f"line {n} is indented differently from the file's other nesting (`{shown.strip()}`)", n)
    return NotRoundTrip("rewritten", f"ruamel.yaml rewrites line {n} (`{shown}`)", n)


def roundtrip(text: str) -> Style:
    """The style with which ruamel.yaml reproduces ``text`` exactly; raises ``NotRoundTrip``."""
    if text.startswith("\ufeff"):
        raise NotRoundTrip("encoding", "the file starts with a byte-order mark")
    if "\r" in text:
        raise NotRoundTrip("crlf", "the file has carriage returns (CRLF line endings)")
    if re.search(r"^%", text, re.M):
        m = re.search(r"^%", text, re.M)
        assert m is not None
        line = text.count("\n", 0, m.start()) + 1
        raise NotRoundTrip("directive", f"line {line} is a YAML directive", line)
    parts = split(text)
    body = parts.body
    if not any(ln.strip() and not ln.lstrip().startswith("#") and ln.rstrip("\n") != "---" for ln in body.splitlines()):
        raise NotRoundTrip("no-document", "the file holds no YAML document (only comments, blank lines or ---)")
    offset = parts.head.count("\n")
    lines = body.splitlines(keepends=True)
    best: tuple[int, str] | None = None
    found: NotRoundTrip | None = None
    try:
        docs = _load(body)
    except (YAMLError, ValueError, TypeError, AttributeError, RecursionError) as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = (mark.line + 1 + offset) if mark is not None else 0
        what = " ".join(str(p) for p in (getattr(e, "context", None), getattr(e, "problem", None)) if p) or type(e).__name__
        raise NotRoundTrip("load-error", f"ruamel.yaml cannot load it: {what}" + (f" (line {line})" if line else ""), line) from None
    for style in _candidates(lines):
        try:
            out = _dump(docs, style, body.startswith("---"))
        except (YAMLError, ValueError, TypeError, AttributeError, RecursionError) as e:
            raise NotRoundTrip("rewritten", f"ruamel.yaml cannot write it again: {type(e).__name__}: {str(e)[:80]}") from None
        if out == body:
            return style
        i, x, y = _first_difference(body, out)
        if best is None or i > best[0]:
            best = (i, out)
            found = _classify(i + 1 + offset, x, y)
        if found is not None and found.category != "indentation":
            break  # another indentation cannot help
    assert found is not None
    raise found
