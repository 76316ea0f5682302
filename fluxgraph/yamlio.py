"""YAML loading with positions, as kustomize-controller reads YAML, fast and bounded.

kustomize-controller reads manifests with kustomize's kyaml on yaml.v3 and turns every object
into JSON (``Resource.AsYAML``). fluxgraph parses with libyaml (``ruamel.yaml.clib``, through
ruamel's C composer, which builds a node tree that carries marks), then a small constructor of
our own turns nodes into plain Python data (dict / list / str / int / float / bool / None) with
the types yaml.v3's ``resolve.go`` gives (``on``/``yes`` are strings, ``0644`` is 420) and the
text JSON gives timestamps. The node tree is kept with each document so that a finding can
point at the exact line and column of any field (``Document.position``).

The libyaml that ruamel.yaml.clib bundles is older than yaml.v3 and refuses some YAML that
yaml.v3 reads (``[os:etcd:backup]``): a file it refuses is read again with ``fluxgraph.goyaml``
(ruamel's pure-Python parser with yaml.v3's scanning rules), whose verdict is the file's
(``_compose``). ``tests/test_yaml_conformance.py`` holds yaml.v3's verdicts on small documents.

This module is the only place where the parser's 0-based marks become 1-based positions.

Limits (each becomes a located error with code ``input-limit``, never a crash or a hang):
nesting depth, nodes per document after alias expansion ("billion laughs"), parser events per
file, file size (``repofs.MAX_FILE_BYTES``), and the size of what ``goyaml`` re-reads.
libyaml's scanner is quadratic in the depth of flow collections (``[[[[...``) and the C
composer recurses once per level (100,000 levels overflow the C stack), so a document that
*may* nest deeper than the limit (``_may_nest_deeper``: more ``[``/``{`` than ``MAX_DEPTH``, or a
run of 400 spaces and ``-``/``?`` indicators) is composed from events, stopping at the limit,
instead of by the C composer.
Duplicate mapping keys are an error in kustomize (yaml.v3 "mapping key already defined") and
are reported; as in yaml.v3, keys are compared by their text, and every scalar key is kept as
its text (``1: a`` has the key ``"1"``, as kyaml and JSON see it). Anchors may be redefined
(yaml.v3 allows it; libyaml's composer does not, so such files are composed from events).
"""

from __future__ import annotations

import base64
import datetime
import math
import re
from dataclasses import dataclass, field
from typing import Any

from _ruamel_yaml import CParser  # libyaml, from ruamel.yaml.clib
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.parser import ParserError
from ruamel.yaml.scanner import ScannerError
from ruamel.yaml.tag import Tag

from fluxgraph import goyaml

MAX_DEPTH = 256

# Plain scalars resolve as in yaml.v3's resolve.go (``resolve``), which kyaml's JSON conversion
# uses: one table whatever the %YAML version, so YAML 1.1 booleans (on, yes) are strings, while
# 1.1 octals (0644) are numbers; ParseInt with base 0 after removing '_'; a value out of int64
# (uint64 without a sign) range and decimal-looking is a float, and one out of float range a
# string. A timestamp becomes the text Go's JSON encoding gives its time.Time (kustomize's
# Resource.AsYAML turns every object into JSON): 2024-01-01 is "2024-01-01T00:00:00Z".
_TAGS = {t: Tag(suffix=f"tag:yaml.org,2002:{t}") for t in ("str", "int", "float", "bool", "null", "merge", "timestamp", "seq", "map")}
_STR_TAG_OBJ, _SEQ_TAG_OBJ, _MAP_TAG_OBJ = _TAGS["str"], _TAGS["seq"], _TAGS["map"]
_RESOLVE_MAP: dict[str, Tag] = {
    **dict.fromkeys(("true", "True", "TRUE", "false", "False", "FALSE"), _TAGS["bool"]),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), _TAGS["null"]),
    **dict.fromkeys((".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"), _TAGS["float"]),
    "<<": _TAGS["merge"],  # yaml.go (*parser).scalar: a plain "<<" is a merge key
}
_GO_INT = re.compile(r"([-+]?)(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|(0[0-7]*)|([1-9][0-9]*))\Z")
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")  # yamlStyleFloat
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?\Z")  # what ParseFloat reads of a value starting with '.'
_TIME = r"([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.([0-9]{1,9}))?"
# allowedTimestampFormats: 2006-1-2T15:4:5.999999999Z07:00 (T or t), 2006-1-2 15:4:5.999999999, 2006-1-2
_TIMESTAMP = re.compile(
    rf"([0-9]{{4}})-([0-9]{{1,2}})-([0-9]{{1,2}})(?:[Tt]{_TIME}(Z|[-+][0-9]{{2}}:[0-9]{{2}})| {_TIME})?\Z"
)


def _go_time(value: str) -> str | None:
    """time.Parse with resolve.go's allowedTimestampFormats, then time.Time.MarshalJSON
    (RFC 3339 with the fraction's trailing zeros dropped; UTC as Z): None if not a time."""
    m = _TIMESTAMP.match(value)
    if m is None:
        return None
    y, mo, d, h1, mi1, s1, f1, zone, h2, mi2, s2, f2 = m.groups()
    h, mi, sec, frac = (h1, mi1, s1, f1) if h1 is not None else (h2, mi2, s2, f2)
    try:
        t = datetime.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(sec or 0))
    except ValueError:  # time.Parse: "day out of range", "hour out of range", ...
        return None
    if zone is not None and zone != "Z" and (int(zone[1:3]) > 23 or int(zone[4:6]) > 59):
        return None
    frac = (frac or "").rstrip("0")
    offset = "Z" if zone is None or zone in ("Z", "+00:00", "-00:00") else zone
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ("." + frac if frac else "") + offset


def _go_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64), else ParseUint(plain, 0, 64), as resolve.go tries them."""
    m = _GO_INT.match(plain) if len(plain) <= 70 else None
    if m is None:
        return None
    sign, hexa, octo, bina, octal11, dec = m.groups()
    if hexa:
        v = int(hexa, 16)
    elif octo:
        v = int(octo, 8)
    elif bina:
        v = int(bina, 2)
    elif octal11:
        v = int(octal11, 8)
    else:
        v = int(dec)
    v = -v if sign == "-" else v
    return v if -(1 << 63) <= v < (1 << 63) or (not sign and v < (1 << 64)) else None


def _go_float(plain: str) -> float | None:
    v = float(plain)
    return None if math.isinf(v) else v  # ParseFloat: out of range is an error


def _plain_tag(value: str) -> Tag:
    tag = _RESOLVE_MAP.get(value)
    if tag is not None:
        return tag
    c = value[:1]
    if c == ".":
        return _TAGS["float"] if _DOT_FLOAT.match(value) and _go_float(value) is not None else _STR_TAG_OBJ
    if c and c in "+-0123456789":
        if _go_time(value) is not None:
            return _TAGS["timestamp"]
        plain = value.replace("_", "")
        if _go_int(plain) is not None:
            return _TAGS["int"]
        if _GO_FLOAT.match(plain) and _go_float(plain) is not None:
            return _TAGS["float"]
    return _STR_TAG_OBJ


def plain_scalar_tag(value: str) -> str:
    """The tag yaml.v3 resolves a plain (unquoted, untagged) scalar to. (Flux re-reads a
    substituted object with sigs.k8s.io/yaml, on goyaml.v2, which agrees on numbers and
    timestamps, kept as text by ``resolve_scalar``, but reads YAML 1.1 booleans: ``yes``.)"""
    return str(_plain_tag(value).suffix)


MAX_NODES_PER_DOCUMENT = 1_000_000
# parser events of one file (a node is one event, a collection two; aliases not expanded): the
# corpus's 6.4 MB of manifests make 68 per kilobyte, so only files far denser than manifests
# (or over 29 MB of them) reach it
MAX_PARSE_EVENTS = 2_000_000
# nodes built from one file, all documents together (aliases expanded): at least this many, and
# never fewer than the file has bytes, so only alias expansion can reach it (200-byte documents
# that each expand to 900,000 nodes, repeated, took 13 s and 680 MB for 8 KB)
MIN_NODES_PER_FILE = 4_000_000
# a mapping key defined twice is reported this many times per document at most
MAX_DUPLICATE_KEYS = 100
# libyaml compares each %TAG directive with every earlier one (quadratic)
MAX_TAG_DIRECTIVES = 100
_TAG_DIRECTIVE = re.compile(rb"^%TAG", re.M)
# a file libyaml refuses is read again with the YAML 1.2 parser (``goyaml``, pure Python) only
# when it has at most this many bytes and '[' / '{' (ruamel's scanner checks every open flow
# level at every token): 128 KiB of dense flow entries take 1.7 s, 10,000 brackets nested 200
# deep per line 1 to 2 s. Manifests that yaml.v3 reads and libyaml refuses are small.
MAX_FALLBACK_BYTES = 1 << 17
MAX_FALLBACK_BRACKETS = 10_000
# a directive line (``%YAML``, ``%TAG``): such files are read by the YAML 1.2 parser
_DIRECTIVE = re.compile(rb"^%", re.M)


class YamlLoadError(Exception):
    """A located YAML problem: 1-based line and column. ``code`` is ``yaml-syntax``, or
    ``input-limit`` when a safety limit (depth, alias expansion) stopped the parse."""

    def __init__(self, message: str, line: int = 1, column: int = 1, code: str = "yaml-syntax"):
        super().__init__(message)
        self.message = message
        self.line = max(1, line)
        self.column = max(1, column)
        self.code = code


_LIMIT_PREFIXES = ("document nests deeper than", "document expands to more than", "document nests too deeply")


def is_limit_message(message: str) -> bool:
    """Whether a YAML error message is one of the limit errors (code ``input-limit``), for
    callers that kept only the message."""
    return message.startswith(_LIMIT_PREFIXES)


@dataclass
class Document:
    """One YAML document of a file. ``line`` is the 1-based line where its content starts."""

    file: str
    index: int
    line: int
    data: Any
    node: Node | None = None
    source: str | None = field(default=None, repr=False)  # the whole file's text

    def position(self, path: tuple[Any, ...] | list[Any], *, key: bool = False) -> tuple[int, int]:
        """1-based (line, column) of the value at ``path`` (keys and list indexes); with
        ``key``, of the mapping key that ends ``path`` (a field's name rather than its value).

        Falls back to the deepest existing ancestor, and to the document start.
        """
        node = self.node
        best = (self.line, 1)
        if node is None:
            return best
        best = (node.start_mark.line + 1, node.start_mark.column + 1)
        for i, step in enumerate(path):
            nxt = None
            if isinstance(node, MappingNode) and isinstance(step, str):
                for k, v in node.value:
                    if isinstance(k, ScalarNode) and k.value == step:
                        nxt = k if key and i == len(path) - 1 else v
                        break
            elif isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
                nxt = node.value[step]
            if nxt is None:
                break
            node = nxt
            best = (node.start_mark.line + 1, node.start_mark.column + 1)
        return best

    def text_position(self, path: tuple[Any, ...] | list[Any], offset: int) -> tuple[int, int]:
        """1-based (line, column) of character ``offset`` inside the string scalar at ``path``.

        Exact for block scalars (``|``, ``|-``, ``>`` keep one source line per content line
        for ``|``) and for single-line plain or quoted scalars; otherwise the scalar's start.
        """
        node = self.scalar_node(path)
        if node is None:
            return self.position(path)
        start_line, start_col = node.start_mark.line + 1, node.start_mark.column + 1
        value = node.value if isinstance(node.value, str) else ""
        offset = max(0, min(offset, len(value)))
        style = node.style
        if style == "|":
            before = value[:offset]
            line_in = before.count("\n")
            col_in = offset - (before.rfind("\n") + 1)
            # content starts on the line after the indicator, at the block's indentation
            indent = _block_indent(node, self.source)
            return start_line + 1 + line_in, indent + 1 + col_in
        if "\n" in value[:offset] or style == ">":
            return start_line, start_col
        quote = 1 if style in ("'", '"') else 0
        return start_line, start_col + quote + offset

    def scalar_node(self, path: tuple[Any, ...] | list[Any]) -> ScalarNode | None:
        node = self.node
        for step in path:
            if node is None:
                return None
            nxt = None
            if isinstance(node, MappingNode) and isinstance(step, str):
                for k, v in node.value:
                    if isinstance(k, ScalarNode) and k.value == step:
                        nxt = v
                        break
            elif isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
                nxt = node.value[step]
            node = nxt
        return node if isinstance(node, ScalarNode) else None


def _block_indent(node: ScalarNode, source: str | None) -> int:
    """Indentation (0-based columns) of a block scalar's content, read from the file text."""
    mark = node.start_mark
    if source is not None:
        # the lines after the indicator, without splitting the whole (possibly huge) file
        pos = _line_start(source, mark.line + 1)
        for _ in range(49):
            if pos < 0 or pos >= len(source):
                break
            end = source.find("\n", pos)
            ln = source[pos:] if end < 0 else source[pos:end]
            if ln.strip():
                return len(ln) - len(ln.lstrip(" "))
            pos = -1 if end < 0 else end + 1
    return mark.column


def _line_start(source: str, line: int) -> int:
    """Offset of the 0-based ``line`` in ``source`` (-1 past the end)."""
    pos = 0
    for _ in range(line):
        nl = source.find("\n", pos)
        if nl < 0:
            return -1
        pos = nl + 1
    return pos



class _Loader(CParser):
    """libyaml's parser and ruamel's C composer. The composer asks its loader for the tag of
    every node (``resolve``) and calls ``descend_resolver``/``ascend_resolver`` around each
    node for path resolvers, which fluxgraph has none of."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Tag:
        if kind is ScalarNode:
            return _plain_tag(value) if implicit[0] else _STR_TAG_OBJ
        return _MAP_TAG_OBJ if kind is MappingNode else _SEQ_TAG_OBJ

    def descend_resolver(self, parent: Any, index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


class _EventComposer:
    """Pure-Python composer from parser events (libyaml's through ``_Loader``, or
    ``goyaml.parser``'s); allows anchors to be redefined, stops at ``MAX_DEPTH`` nested
    collections before the scanner reads deeper, and at ``MAX_PARSE_EVENTS`` events in the
    file."""

    def __init__(self, events: Any):
        self.events = 0
        self.p = events
        self.anchors: dict[str, Node] = {}

    def documents(self) -> list[Node]:
        from ruamel.yaml.events import DocumentStartEvent, StreamEndEvent

        p = self.p
        out: list[Node] = []
        try:
            while True:
                ev = p.get_event()
                if ev is None or isinstance(ev, StreamEndEvent):
                    break
                if isinstance(ev, DocumentStartEvent):
                    self.anchors = {}
                    node = self._node()
                    p.get_event()  # DocumentEndEvent
                    out.append(node)
        finally:
            p.dispose()
        return out

    def _node(self) -> Node:
        from ruamel.yaml.events import (
            AliasEvent,
            MappingEndEvent,
            MappingStartEvent,
            ScalarEvent,
            SequenceEndEvent,
            SequenceStartEvent,
        )

        p = self.p
        # iterative composition: a stack of (node, pending key)
        root: Node | None = None
        stack: list[list[Any]] = []

        def attach(n: Node) -> None:
            nonlocal root
            if not stack:
                root = n
                return
            top = stack[-1]
            if isinstance(top[0], SequenceNode):
                top[0].value.append(n)
            elif top[1] is None:
                top[1] = n
            else:
                top[0].value.append((top[1], n))
                top[1] = None

        while True:
            ev = p.get_event()
            self.events += 1
            if self.events > MAX_PARSE_EVENTS:
                raise _too_many_events(ev.start_mark.line + 1, ev.start_mark.column + 1)
            if isinstance(ev, AliasEvent):
                if ev.anchor not in self.anchors:
                    raise YamlLoadError(f"unknown anchor {ev.anchor!r}", ev.start_mark.line + 1, ev.start_mark.column + 1)
                attach(self.anchors[ev.anchor])
            elif isinstance(ev, ScalarEvent):
                tag: Any = ev.tag
                if tag is None or tag == "!":
                    tag = _plain_tag(ev.value) if ev.implicit[0] else _STR_TAG_OBJ
                n: Node = ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, style=ev.style)
                if ev.anchor:
                    self.anchors[ev.anchor] = n
                attach(n)
            elif isinstance(ev, (SequenceStartEvent, MappingStartEvent)):
                if len(stack) >= MAX_DEPTH:
                    raise _too_deep(ev.start_mark)
                seq = isinstance(ev, SequenceStartEvent)
                tag = ev.tag if ev.tag and ev.tag != "!" else "tag:yaml.org,2002:seq" if seq else "tag:yaml.org,2002:map"
                n = (SequenceNode if seq else MappingNode)(tag, [], ev.start_mark, None, ev.flow_style)
                if ev.anchor:
                    self.anchors[ev.anchor] = n
                attach(n)
                stack.append([n, None])
                continue
            elif isinstance(ev, (SequenceEndEvent, MappingEndEvent)):
                done = stack.pop()[0]
                done.end_mark = ev.end_mark
            else:  # pragma: no cover - malformed event stream
                raise YamlLoadError(f"unexpected YAML event {type(ev).__name__}")
            if not stack:
                assert root is not None
                return root


def _too_deep(mark: Any) -> YamlLoadError:
    return YamlLoadError(f"document nests deeper than {MAX_DEPTH} levels", mark.line + 1, mark.column + 1, code="input-limit")


# a document marker at the start of a line ends any document, block scalar included
_DOC_MARKER = re.compile(rb"^---(?=[ \t\r\n]|$)", re.M)


# A run of this many spaces and "- "/"? " indicators. Block collections nest one
# level per column of indentation or per compact indicator (a block sequence in a mapping may
# keep its parent's indentation, so at most two levels per column): without such a line a
# document's block nesting stays under about 2 x 400 levels.
_DEEP_BLOCK_LINE = re.compile(rb"[ ?-]{400}")  # anywhere: libyaml also breaks lines at \r, NEL, LS, PS


def _may_nest_deeper(data: bytes) -> bool:
    """Whether the C composer must not see ``data``: it recurses once per nesting level in C
    (``- - - ...`` 100,000 deep overflows the stack and kills the process), and libyaml's
    scanner is quadratic in the depth of flow collections. An upper bound, not the depth: a
    document cannot nest flow collections deeper than it has ``[``/``{``, and without a line
    matching ``_DEEP_BLOCK_LINE`` (looked for anywhere, not only after "\n": libyaml starts
    lines at "\r", NEL, LS and PS too, and skips a BOM) its block collections stay under about
    800 levels. Such documents are composed from events in Python, which stops at
    ``MAX_DEPTH``."""
    if _DEEP_BLOCK_LINE.search(data):
        return True
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return False
    return any(chunk.count(b"[") + chunk.count(b"{") > MAX_DEPTH for chunk in _DOC_MARKER.split(data))


def _too_many_events(line: int = 1, column: int = 1) -> YamlLoadError:
    return YamlLoadError(
        f"the file has more than {MAX_PARSE_EVENTS} YAML nodes and collection ends; it is not read",
        line,
        column,
        code="input-limit",
    )


def _over_event_limit(data: bytes) -> bool:
    """Whether ``data`` has more than ``MAX_PARSE_EVENTS`` parser events. The C composer builds
    a whole file before anything can count its nodes (4 MB of ``-\n``, two million empty
    entries, took 7 s and 540 MB), so a file that may be over the limit is first counted by
    libyaml alone, without a Python object per event (0.23 s for those 4 MB).

    Whether it may be over comes from an upper bound: every node but a document's first starts
    after a line break or one of ``- : ? , [ {``, with at most an implicit null beside it
    (``S`` such places: at most ``2(S+1)`` nodes); a collection adds an end event, a document
    two, the stream two: at most ``6(S+1)+2`` events."""
    if 6 * (len(data) + 1) + 2 <= MAX_PARSE_EVENTS:
        return False
    starts = sum(data.count(c) for c in (b"\n", b"-", b":", b"?", b",", b"[", b"{"))
    if 6 * (starts + 1) + 2 <= MAX_PARSE_EVENTS:
        return False
    try:
        events = CParser(data).raw_parse()
    except (YAMLError, ValueError, TypeError):
        return False  # the composer reports the syntax error, with its position
    return bool(events > MAX_PARSE_EVENTS)


def _compose_all(data: bytes) -> list[Node]:
    """The documents of ``data`` as composed by libyaml (raises libyaml's error)."""
    if _may_nest_deeper(data):
        return _EventComposer(_Loader(data)).documents()
    if _over_event_limit(data):
        raise _too_many_events()
    loader = _Loader(data)
    nodes: list[Node] = []
    try:
        while loader.check_node():
            nodes.append(loader.get_node())
    except MarkedYAMLError as e:
        if "duplicate anchor" in str(e):
            return _EventComposer(_Loader(data)).documents()
        raise
    finally:
        loader.dispose()
    return nodes


_ALIAS = re.compile(rb"\*([^\s,\]\}]+)")


def _unknown_anchor(data: bytes, e: MarkedYAMLError) -> str:
    """yaml.v3's message for an alias without its anchor (``decode.go``: ``unknown anchor
    'x' referenced``), the name read at the error's mark."""
    mark = e.problem_mark or e.context_mark
    if mark is not None:
        lines = data.split(b"\n")
        if 0 <= mark.line < len(lines):
            m = _ALIAS.search(lines[mark.line], max(mark.column, 0))
            if m is not None:
                return f"unknown anchor {m.group(1).decode('utf-8', 'replace')!r} referenced"
    return "unknown anchor referenced"


def _describe(e: MarkedYAMLError) -> str:
    """A parser error as one line: what it was doing and what it found, without the
    excerpts of the file that ruamel adds."""
    return " ".join(str(x) for x in (e.context, e.problem) if x) or "invalid YAML"


def _located(e: MarkedYAMLError, message: str) -> YamlLoadError:
    mark = e.problem_mark or e.context_mark
    return YamlLoadError(message, mark.line + 1, mark.column + 1) if mark is not None else YamlLoadError(message)


def _compose(data: bytes, source: str) -> list[Node]:
    """The documents of a file as yaml.v3 (kustomize's parser) reads them, or the located
    error of a file that yaml.v3 refuses too.

    libyaml reads almost every file, fast. A file it refuses (ScannerError, ParserError: never
    a limit) is read again with ``goyaml``, ruamel's pure-Python YAML 1.2 parser with yaml.v3's
    scanning rules: the libyaml bundled with ruamel.yaml.clib is older than yaml.v3 and refuses
    some YAML that yaml.v3 reads (``[os:etcd:backup]``). Its verdict is the file's; its error
    says what it refused, and what libyaml had said. A file with a directive goes to ``goyaml``
    directly: libyaml accepts ``%YAML 1.2`` and yaml.v3 does not. ``goyaml`` is pure Python,
    so it reads only files within ``MAX_FALLBACK_BYTES`` and ``MAX_FALLBACK_BRACKETS``, through
    the same composer limits (depth, events) and constructor limits (nodes) as libyaml's."""
    small = len(data) <= MAX_FALLBACK_BYTES and data.count(b"[") + data.count(b"{") <= MAX_FALLBACK_BRACKETS
    if small and _DIRECTIVE.search(data):
        try:
            return _EventComposer(goyaml.parser(source)).documents()
        except MarkedYAMLError as e:
            raise _located(e, _describe(e)) from None
    try:
        return _compose_all(data)
    except (ScannerError, ParserError) as e:
        libyaml = e
    mark = libyaml.problem_mark or libyaml.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "the start"
    if not small:
        err = _located(
            libyaml,
            f"libyaml refused it ({_describe(libyaml)}); the file is over {MAX_FALLBACK_BYTES} bytes or "
            f"{MAX_FALLBACK_BRACKETS} brackets, so it was not read again with the YAML 1.2 parser",
        )
        err.code = "input-limit"
        raise err from None
    try:
        return _EventComposer(goyaml.parser(source)).documents()
    except MarkedYAMLError as e:
        raise _located(e, f"{_describe(e)} (YAML 1.2 parser; libyaml refused it too: {_describe(libyaml)}, at {where})") from None


_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_BINARY_TAG = "tag:yaml.org,2002:binary"


def resolve_scalar(tag: str, value: str) -> Any:
    """The value of a scalar with a resolved tag, as yaml.v3's resolve.go decodes it; a
    timestamp stays text (goyaml.v2, which re-reads substituted objects, keeps it so)."""
    if tag == _INT_TAG:
        v = _go_int(value.replace("_", ""))
        return value if v is None else v
    if tag == _FLOAT_TAG:
        special = {".nan": math.nan, ".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf}.get(value.lower())
        if special is not None:
            return special
        f = _go_float(value if value.startswith(".") else value.replace("_", ""))
        return value if f is None else f
    if tag == _BOOL_TAG:
        return value in ("true", "True", "TRUE")
    if tag == _NULL_TAG:
        return None
    return value  # a timestamp too: only the constructor writes it as JSON does (_explicit_scalar)


# resolve.go resolvableTag: an explicit tag of these must fit the text ("cannot decode ...")
_CHECKED_TAGS = {"tag:yaml.org,2002:" + t for t in ("int", "float", "bool", "null", "timestamp")}


def _explicit_scalar(tag: str, node: Node) -> Any:
    """A scalar whose tag is not ``!!str``: resolve.go resolve(tag, text), and decode.go
    (*decoder).scalar for ``!!binary`` (base64, line breaks ignored, as text)."""
    if tag == _BINARY_TAG:
        try:
            data = base64.b64decode(node.value.replace("\n", "").replace("\r", ""), validate=True)
        except ValueError:
            raise YamlLoadError("!!binary value contains invalid base64 data", node.start_mark.line + 1, node.start_mark.column + 1) from None
        return data.decode("utf-8", "replace")  # encoding/json writes invalid UTF-8 as U+FFFD
    if tag in _CHECKED_TAGS:
        natural = plain_scalar_tag(node.value)
        if natural != tag and not (tag == _FLOAT_TAG and natural == _INT_TAG):
            raise YamlLoadError(
                f"cannot decode !!{natural.rsplit(':', 1)[1]} `{node.value[:80]}` as a !!{tag.rsplit(':', 1)[1]}",
                node.start_mark.line + 1,
                node.start_mark.column + 1,
            )
        if tag == _FLOAT_TAG and natural == _INT_TAG:
            v = _go_int(node.value.replace("_", ""))
            return node.value if v is None else float(v)
    if tag == _TIMESTAMP_TAG:  # a time.Time, which encoding/json writes in RFC 3339
        t = _go_time(node.value)
        return node.value if t is None else t
    value = resolve_scalar(tag, node.value)
    if isinstance(value, float) and not math.isfinite(value):
        # kustomize's Resource.AsYAML encodes every object as JSON (encoding/json), which has
        # no NaN or Infinity: the build fails
        go = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        raise YamlLoadError(
            f"json: unsupported value: {go} (kustomize converts every object to JSON)",
            node.start_mark.line + 1,
            node.start_mark.column + 1,
        )
    return value


def _tag(node: Node) -> str:
    """The resolved tag without ruamel's per-node URI decoding (``Node.tag`` is slow)."""
    t = node.ctag
    if t is None:
        return ""
    if t.handle is None:
        return t.suffix or ""
    return str(t)


class _Constructor:
    """Builds the documents of one file: ``limit`` caps the nodes of each document, ``budget``
    those of the whole file (both with aliases expanded)."""

    def __init__(self, budget: int = MIN_NODES_PER_FILE) -> None:
        self.count = 0
        self.limit = MAX_NODES_PER_DOCUMENT
        self.file_budget = budget
        self.budget = budget  # what the file may still build
        self.file_limit_reported = False
        self.aliased = False
        self.duplicates: list[tuple[str, int, int]] = []
        self.more_duplicates = 0
        self._built: set[int] = set()  # collections built once: meeting one again is an alias

    def start_document(self) -> None:
        self.budget -= self.count
        self.limit = min(MAX_NODES_PER_DOCUMENT, self.budget)
        self.count = 0
        self.aliased = False
        self.duplicates = []
        self.more_duplicates = 0

    def file_limit_error(self) -> YamlLoadError:
        self.file_limit_reported = True
        return YamlLoadError(f"the file expands to more than {self.file_budget} nodes; later documents are not read", code="input-limit")

    def _over(self, node: Node) -> YamlLoadError:
        if self.limit < MAX_NODES_PER_DOCUMENT:
            self.file_limit_reported = True
            what = f"the file expands to more than {self.file_budget} nodes"
        else:
            what = f"document expands to more than {MAX_NODES_PER_DOCUMENT} nodes"
        return YamlLoadError(
            what + (" (alias expansion)" if self.aliased else ""),
            node.start_mark.line + 1,
            node.start_mark.column + 1,
            code="input-limit",
        )

    def _child(self, node: Node, depth: int, where: Any) -> Any:
        """Build a child; an alias expansion over the limit is located where the alias is used
        (``where``, the outermost such place), not at the shared anchor."""
        alias = node.__class__ is not ScalarNode and id(node) in self._built
        if alias:
            self.aliased = True
        try:
            return self.build(node, depth)
        except YamlLoadError as e:
            if alias and e.code == "input-limit":
                e.line, e.column = where.line + 1, where.column + 1
            raise

    def _duplicate(self, key: str, knode: Node) -> None:
        if len(self.duplicates) < MAX_DUPLICATE_KEYS:
            shown = key if len(key) <= 80 else key[:80] + "..."
            self.duplicates.append((shown, knode.start_mark.line + 1, knode.start_mark.column + 1))
        else:
            self.more_duplicates += 1

    def build(self, node: Node, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise _too_deep(node.start_mark)
        self.count += 1
        if self.count > self.limit:
            raise self._over(node)
        cls = node.__class__
        if cls is ScalarNode:
            tag = _tag(node)
            return node.value if tag == _STR_TAG else _explicit_scalar(tag, node)
        if cls is SequenceNode:
            self._built.add(id(node))
            out_l: list[Any] = []
            for n in node.value:
                if n.__class__ is ScalarNode and _tag(n) == _STR_TAG:
                    self.count += 1
                    if self.count > self.limit:
                        raise self._over(n)
                    out_l.append(n.value)
                else:
                    out_l.append(self._child(n, depth + 1, node.start_mark))
            return out_l
        if cls is MappingNode:
            self._built.add(id(node))
            out: dict[Any, Any] = {}
            merges: list[Any] = []
            dropped: set[str] = set()
            for knode, vnode in node.value:
                if knode.__class__ is ScalarNode:
                    if _tag(knode) == _MERGE_TAG:
                        if merges:  # yaml.v3 compares "<<" keys by text like any other
                            self._duplicate("<<", knode)
                        merged = self._child(vnode, depth + 1, knode.start_mark)
                        # yaml.v3 decode.go (*decoder).merge, failWantMap
                        if not isinstance(merged, dict) and not (isinstance(merged, list) and all(isinstance(x, dict) for x in merged)):
                            raise YamlLoadError(
                                "map merge requires map or sequence of maps as the value",
                                vnode.start_mark.line + 1,
                                vnode.start_mark.column + 1,
                            )
                        merges.append(merged)
                        continue
                    # kyaml keeps keys as node text (yaml.v3 compares them by text): `1: a` and
                    # `"1": b` are the same key, `1` and `true` are not
                    key = knode.value
                    if _tag(knode) == _NULL_TAG:
                        # yaml.v3 (*decoder).mapping: a null key (`~`, `null`, empty) does not
                        # decode into the string key of kyaml's JSON map, so the entry is dropped
                        if key in out or key in dropped:
                            self._duplicate(key, knode)
                        dropped.add(key)
                        continue
                else:
                    # "? [a, b]: v": kyaml reads it, but the object cannot become JSON, so the
                    # build fails (and turning the key into text grows exponentially with nesting)
                    raise YamlLoadError(
                        "a mapping key that is a sequence or a mapping (complex key) cannot be a Kubernetes field",
                        knode.start_mark.line + 1,
                        knode.start_mark.column + 1,
                    )
                if key in out or key in dropped:
                    self._duplicate(key, knode)
                if vnode.__class__ is ScalarNode and _tag(vnode) == _STR_TAG:
                    self.count += 2
                    if self.count > self.limit:
                        raise self._over(vnode)
                    out[key] = vnode.value
                else:
                    self.count += 1
                    out[key] = self._child(vnode, depth + 1, knode.start_mark)
            for m in merges:  # explicit keys win over merged ones, earlier merged maps over later
                for src in m if isinstance(m, list) else [m]:
                    for k, v in src.items():
                        out.setdefault(k, v)
            return out
        return None  # pragma: no cover


@dataclass
class LoadResult:
    documents: list[Document]
    errors: list[YamlLoadError]


def load_documents(file: str, data: bytes) -> LoadResult:
    """Parse every document of ``data``. Errors are collected, never raised."""
    errors: list[YamlLoadError] = []
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return LoadResult([], [YamlLoadError("binary file, not YAML")])
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        source = data.decode("utf-8")  # validates before the C parser sees it
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        return LoadResult([], [YamlLoadError(f"not valid UTF-8 (byte 0x{data[e.start]:02x})", line, 1)])
    if data.count(b"%TAG") > MAX_TAG_DIRECTIVES and len(_TAG_DIRECTIVE.findall(data)) > MAX_TAG_DIRECTIVES:
        return LoadResult([], [YamlLoadError(f"more than {MAX_TAG_DIRECTIVES} %TAG directives", code="input-limit")])
    try:
        nodes = _compose(data, source)
    except YamlLoadError as e:
        return LoadResult([], [e.with_traceback(None)])
    except MarkedYAMLError as e:  # a composer's (undefined alias), or a reader's
        if "undefined alias" in _describe(e):  # in yaml.v3's words, as kustomize-controller reports it
            return LoadResult([], [_located(e, _unknown_anchor(data, e))])
        return LoadResult([], [_located(e, _describe(e))])
    except (YAMLError, RecursionError, ValueError, TypeError) as e:
        return LoadResult([], [YamlLoadError(f"invalid YAML: {str(e).splitlines()[0] if str(e) else type(e).__name__}")])
    docs: list[Document] = []
    c = _Constructor(max(MIN_NODES_PER_FILE, len(data)))
    for i, node in enumerate(nodes):
        c.start_document()
        if c.budget <= 0:  # reported with the document that used the rest, or here
            if not c.file_limit_reported:
                errors.append(c.file_limit_error())
            break
        try:
            value = c.build(node)
        except YamlLoadError as e:
            errors.append(e.with_traceback(None))  # the traceback would keep the partial build alive
            continue
        except RecursionError:
            errors.append(YamlLoadError("document nests too deeply", node.start_mark.line + 1, 1, code="input-limit"))
            continue
        for key, line, col in c.duplicates:
            errors.append(YamlLoadError(f"mapping key {key!r} already defined", line, col))
        if c.more_duplicates:
            errors.append(YamlLoadError(f"{c.more_duplicates} more mapping keys defined twice in this document"))
        if value is None:
            continue
        docs.append(Document(file=file, index=i, line=node.start_mark.line + 1, data=value, node=node, source=source))
    return LoadResult(docs, errors)


def load_text(text: str, file: str = "<string>") -> list[Any]:
    """Convenience for tests and inline YAML (patches): data of every document; raises on error."""
    res = load_documents(file, text.encode("utf-8"))
    if res.errors:
        e = res.errors[0]
        raise YamlLoadError(e.message, e.line, e.column)
    return [d.data for d in res.documents]
