"""Edits of a YAML file as text, placed by the parser's positions.

An edit names what it wants in YAML terms (change characters of a string, set a key of a
mapping, append an item to a sequence) in one document of one file. ``FileEditor`` turns the
edits into text replacements at positions taken from the composed node tree, so that every byte
the edits do not need stays as it is: comments, blank lines, quoting and the order of keys are
never touched, because nothing is dumped. A new key or item is written with the indentation of
its siblings (or, for a new block, of the file: ``roundtrip.Style``).

Before an edit is accepted the file must round-trip through ruamel.yaml (``roundtrip``), and
after it the new text is parsed again: every document must hold exactly the data of the old one
with the edits applied (``FileEditor.apply`` raises ``EditError`` otherwise), and the new text
must round-trip too.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from fluxgraph.fix.roundtrip import NotRoundTrip, Style, roundtrip
from fluxgraph.yamlio import Document, load_documents, plain_scalar_tag

Path = tuple[Any, ...]


class EditError(Exception):
    """An edit fluxgraph does not make (the message says why)."""


# -- what an edit asks for --------------------------------------------------------------------


@dataclass(frozen=True)
class ScalarEdit:
    """Replace ``[start, end)`` of the string at ``path`` with ``text`` (offsets into the value)."""

    file: str
    doc: int
    path: Path
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class MapSet:
    """Set ``key: value`` in the mapping at ``path`` (created, with any missing mapping on the
    way, when absent). A new key of a mapping goes after the first of ``after`` that the mapping
    has, else at its end."""

    file: str
    doc: int
    path: Path
    key: str
    value: str
    after: tuple[tuple[str, ...], ...] = ()  # per level of path created: keys to follow


@dataclass(frozen=True)
class SeqAppend:
    """Append ``item`` (a mapping of strings) to the block sequence at ``path`` (created when
    absent: the key ``path[-1]`` goes first in its mapping when ``first``, else after the first key
    of ``after`` present, else last)."""

    file: str
    doc: int
    path: Path
    item: tuple[tuple[str, str], ...]
    first: bool = False
    after: tuple[str, ...] = ()
    # indentation of a new sequence relative to its key (offset of "-", column of the content),
    # used when the file has no block sequence under a key to take it from
    indent: tuple[int, int] | None = None


Edit = ScalarEdit | MapSet | SeqAppend


# -- positions ---------------------------------------------------------------------------------


@dataclass
class _Text:
    text: str
    starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.starts = [0]
        for i, c in enumerate(self.text):
            if c == "\n":
                self.starts.append(i + 1)

    def offset(self, line: int, column: int) -> int:
        """0-based line and column -> offset (columns count characters)."""
        if line >= len(self.starts):
            return len(self.text)
        return self.starts[line] + column

    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def line(self, n: int) -> str:
        """Line ``n`` (0-based) without its newline; "" past the end."""
        if n >= len(self.starts):
            return ""
        end = self.text.find("\n", self.starts[n])
        return self.text[self.starts[n] : len(self.text) if end < 0 else end]

    def line_end(self, n: int) -> int:
        """Offset just after line ``n``'s newline (the start of the next line)."""
        return self.starts[n + 1] if n + 1 < len(self.starts) else len(self.text)

    @property
    def lines(self) -> int:
        return len(self.starts)


def _entry(node: Node, key: str) -> tuple[ScalarNode, Node] | None:
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode) and k.value == key:
                return k, v
    return None


def _style(node: ScalarNode) -> str | None:
    """The scalar's style: None for plain (the C composer gives "" for it)."""
    return node.style or None


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and _style(node) is None and node.value in ("", "~", "null", "Null", "NULL")


def _flow(node: Node) -> bool:
    return bool(getattr(node, "flow_style", False))


def _last_line(node: Node) -> int:
    """The last source line (0-based) holding content of ``node``."""
    if isinstance(node, ScalarNode):
        end = node.end_mark
        if node.style in ("|", ">") and end.column == 0 and end.line > node.start_mark.line:
            return int(end.line) - 1
        return int(end.line)
    if _flow(node):
        return int(node.end_mark.line)
    if isinstance(node, MappingNode):
        if not node.value:
            return int(node.start_mark.line)
        k, v = node.value[-1]
        return max(_last_line(k), _last_line(v))
    if isinstance(node, SequenceNode):
        if not node.value:
            return int(node.start_mark.line)
        return _last_line(node.value[-1])
    return int(node.end_mark.line)


def _check_no_alias(parent_key: ScalarNode, value: Node) -> None:
    """An alias node carries the marks of its anchor, somewhere else in the file."""
    sm, km = value.start_mark, parent_key.start_mark
    if (sm.line, sm.column) < (km.line, km.column):
        raise EditError(f"line {km.line + 1}: the value is an alias (*anchor); fluxgraph does not edit through aliases")


# -- scalar positions ----------------------------------------------------------------------


def _scalar_map(node: ScalarNode, t: _Text) -> list[int]:
    """Source offset of every character of the scalar's value, plus one for its end."""
    value = node.value
    style = _style(node)
    s = t.offset(node.start_mark.line, node.start_mark.column)
    e = t.offset(node.end_mark.line, node.end_mark.column)
    if style == ">":
        raise EditError(f"line {node.start_mark.line + 1}: the string is a folded block scalar (>)")
    if style != "|":
        # the start mark is at the node's properties (&anchor, !tag) when it has any
        while t.text[s : s + 1] in ("&", "!"):
            m = re.compile(r"[&!]\S*[ \t]+").match(t.text, s, e)
            if m is None:
                raise EditError(f"line {node.start_mark.line + 1}: cannot find where the string starts")
            s = m.end()
        if t.line_of(s) != t.line_of(e):
            raise EditError(f"line {node.start_mark.line + 1}: the string spans several lines (multi-line plain or quoted scalar)")
    if style is None or style in ("'", '"'):
        if node.start_mark.line != node.end_mark.line:
            raise EditError(f"line {node.start_mark.line + 1}: the string spans several lines (multi-line plain or quoted scalar)")
        src = t.text[s:e]
        if style is None:
            if src != value:
                raise EditError(f"line {node.start_mark.line + 1}: the string is not written as it reads")
            return list(range(s, e + 1))
        inner = src[1:-1]
        if style == '"' and "\\" in inner:
            raise EditError(f"line {node.start_mark.line + 1}: the double-quoted string has escape sequences")
        if style == "'":
            out: list[int] = []
            i = 0
            while i < len(inner):
                out.append(s + 1 + i)
                i += 2 if inner[i] == "'" else 1
            if "".join(t.text[o] for o in out) != value:
                raise EditError(f"line {node.start_mark.line + 1}: the quoted string is not written as it reads")
            return [*out, e - 1]
        if inner != value:
            raise EditError(f"line {node.start_mark.line + 1}: the quoted string is not written as it reads")
        return list(range(s + 1, e))
    header = t.line(node.start_mark.line)[node.start_mark.column :]
    if re.search(r"\|[+-]?[0-9]", header):
        raise EditError(f"line {node.start_mark.line + 1}: the block scalar has an indentation indicator")
    first = node.start_mark.line + 1
    indent = None
    for n in range(first, t.lines):
        ln = t.line(n)
        if ln.strip():
            indent = len(ln) - len(ln.lstrip(" "))
            break
    if indent is None:
        raise EditError(f"line {node.start_mark.line + 1}: empty block scalar")
    out = []
    pieces = value.split("\n")
    # "a\nb\n" -> ["a", "b", ""]: the last piece follows the final newline
    for k, piece in enumerate(pieces):
        n = first + k
        if k == len(pieces) - 1:
            if piece:  # strip chomping (|-): the value ends inside the last line
                base = t.offset(n, indent)
                if t.text[base : base + len(piece)] != piece:
                    raise EditError(f"line {n + 1}: the block scalar is not written as it reads")
                out.extend(range(base, base + len(piece) + 1))
            else:
                out.append(t.offset(n, 0) if n < t.lines else len(t.text))
            break
        ln = t.line(n)
        if piece == "":
            if ln.strip():
                raise EditError(f"line {n + 1}: the block scalar is not written as it reads")
            out.append(t.line_end(n) - 1)  # its newline
            continue
        base = t.offset(n, indent)
        if ln[:indent].strip() or t.text[base : base + len(piece)] != piece or t.text[base + len(piece) : base + len(piece) + 1] != "\n":
            raise EditError(f"line {n + 1}: the block scalar is not written as it reads")
        out.extend(range(base, base + len(piece) + 1))  # the characters and the newline
    if len(out) != len(value) + 1:
        raise EditError(f"line {node.start_mark.line + 1}: the block scalar is not written as it reads")
    return out


# -- writing new YAML ----------------------------------------------------------------------------

_ANCHOR = re.compile(r"&([^\s\[\]{},]+)")
_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]*$")


def scalar_text(value: str) -> str:
    """``value`` as a YAML scalar: plain when it reads back as the same string, else quoted."""
    if _PLAIN_SAFE.match(value) and plain_scalar_tag(value) == "tag:yaml.org,2002:str":
        return value
    return json.dumps(value, ensure_ascii=False)


def _key_text(key: str) -> str:
    return scalar_text(key)


# -- the editor ----------------------------------------------------------------------------------


@dataclass
class _Replace:
    start: int
    end: int
    text: str
    what: str


class FileEditor:
    """Edits of one file. ``apply`` returns the new text or raises ``EditError`` /
    ``NotRoundTrip``."""

    def __init__(self, file: str, text: str):
        self.file = file
        self.text = text
        self._t = _Text(text)
        res = load_documents(file, text.encode("utf-8"))
        if res.errors:
            e = res.errors[0]
            raise EditError(f"{file}:{e.line}: {e.message}")
        self.docs: dict[int, Document] = {d.index: d for d in res.documents}
        self.style: Style = roundtrip(text)

    # -- placing ---------------------------------------------------------------------------
    def _after_block(self, last_line: int, column: int) -> int:
        """Where a new line goes after content ending on ``last_line``: after the comment lines
        that follow it indented deeper than ``column`` (they belong to that content)."""
        n = last_line + 1
        while n < self._t.lines:
            ln = self._t.line(n)
            stripped = ln.lstrip(" ")
            if stripped.startswith("#") and len(ln) - len(stripped) > column:
                n += 1
                continue
            break
        return self._t.offset(n, 0) if n < self._t.lines else len(self.text)

    def _insert_lines(self, at: int, lines: list[str], what: str) -> _Replace:
        block = "".join(ln + "\n" for ln in lines)
        if at >= len(self.text) and self.text and not self.text.endswith("\n"):
            # the file has no final newline: keep it that way
            return _Replace(len(self.text), len(self.text), "\n" + block.rstrip("\n"), what)
        return _Replace(at, at, block, what)

    def _entry_lines(self, key: str, col: int, value: Any) -> list[str]:
        """``key: value`` at column ``col``; ``value`` a string, a mapping of strings or a list
        of mappings of strings (written with the file's style)."""
        pad = " " * col
        if isinstance(value, str):
            return [f"{pad}{_key_text(key)}: {scalar_text(value)}"]
        out = [f"{pad}{_key_text(key)}:"]
        if isinstance(value, dict):
            for k, v in value.items():
                out.extend(self._entry_lines(k, col + self.style.mapping, v))
            return out
        raise AssertionError(value)

    def _item_lines(self, item: tuple[tuple[str, str], ...], dash: int, content: int) -> list[str]:
        out = []
        for i, (k, v) in enumerate(item):
            line = f"{_key_text(k)}: {scalar_text(v)}"
            if i == 0:
                out.append(" " * dash + "-" + " " * (content - dash - 1) + line)
            else:
                out.append(" " * content + line)
        return out

    def _mapping_insert_at(self, mapping: MappingNode, parent_key: ScalarNode | None, first: bool, after: tuple[str, ...]) -> tuple[int, int]:
        """(offset, column) where a new key of ``mapping`` goes."""
        if _flow(mapping):
            raise EditError(f"line {mapping.start_mark.line + 1}: the mapping is written in flow style ({{...}})")
        col = int(mapping.value[0][0].start_mark.column) if mapping.value else int(mapping.start_mark.column)
        if first and mapping.value:
            first_line = int(mapping.value[0][0].start_mark.line)
            if parent_key is not None and parent_key.start_mark.line < first_line:
                return self._t.offset(int(parent_key.start_mark.line) + 1, 0), col
            first = False  # the mapping starts on its parent's line ("- key: v"): go after instead
        for want in after:
            hit = _entry(mapping, want)
            if hit is not None:
                _check_no_alias(hit[0], hit[1])
                return self._after_block(max(_last_line(hit[0]), _last_line(hit[1])), col), col
        k, v = mapping.value[-1]
        _check_no_alias(k, v)
        return self._after_block(max(_last_line(k), _last_line(v)), col), col

    def _walk(self, doc: Document, path: Path) -> tuple[list[tuple[ScalarNode | None, Node]], int]:
        """The nodes along ``path`` that exist: [(key node, value node)], and how many steps."""
        node = doc.node
        if node is None:
            raise EditError(f"document {doc.index + 1} is empty")
        out: list[tuple[ScalarNode | None, Node]] = [(None, node)]
        for i, step in enumerate(path):
            if isinstance(node, SequenceNode) and isinstance(step, int):
                if not 0 <= step < len(node.value):
                    raise EditError(f"{step} is not an item of the sequence at line {node.start_mark.line + 1}")
                item = node.value[step]
                if (item.start_mark.line, item.start_mark.column) < (node.start_mark.line, node.start_mark.column):
                    raise EditError(f"line {node.start_mark.line + 1}: item {step} is an alias (*anchor); fluxgraph does not edit through aliases")
                self._check_not_shared(None, item)
                node = item
                out.append((None, node))
                continue
            if not isinstance(node, MappingNode) or not isinstance(step, str):
                raise EditError(f"the document has no mapping where {'.'.join(map(str, path[: i + 1]))} should be")
            hit = _entry(node, step)
            if hit is None or _is_null(hit[1]):
                if hit is not None:
                    out.append(hit)
                return out, i
            _check_no_alias(hit[0], hit[1])
            self._check_not_shared(hit[0], hit[1])
            node = hit[1]
            out.append(hit)
        return out, len(path)

    def _check_not_shared(self, key: ScalarNode | None, value: Node) -> None:
        """A value (of ``key``, or a sequence item) with an anchor that an alias or a merge key
        (``<<: *a``) refers to: an edit there would change the other places too."""
        b = self._t.offset(value.start_mark.line, value.start_mark.column)
        m = _ANCHOR.match(self.text, b)
        if m is None and key is not None:
            m = _ANCHOR.search(self.text, self._t.offset(key.end_mark.line, key.end_mark.column), b)
        if m is not None and re.search(r"\*" + re.escape(m.group(1)) + r"(?![^\s,\]}])", self.text):
            what = key.value if key is not None else "the item"
            raise EditError(
                f"line {value.start_mark.line + 1}: {what} carries the anchor &{m.group(1)}, which other values refer to (*{m.group(1)})"
            )

    # -- the edits -------------------------------------------------------------------------
    def _scalar_edits(self, doc: Document, edits: list[ScalarEdit]) -> list[_Replace]:
        out: list[_Replace] = []
        by_path: dict[Path, list[ScalarEdit]] = {}
        for e in edits:
            by_path.setdefault(e.path, []).append(e)
        for path, es in by_path.items():
            chain, got = self._walk(doc, path)
            node = chain[-1][1]
            if got != len(path) or not isinstance(node, ScalarNode) or not isinstance(node.value, str):
                raise EditError(f"document {doc.index + 1} has no string at {'.'.join(map(str, path))}")
            offsets = _scalar_map(node, self._t)
            es = sorted(es, key=lambda x: (x.start, x.end))
            for a, b in zip(es, es[1:], strict=False):
                if b.start < a.end:
                    raise EditError(f"overlapping edits of the string at line {node.start_mark.line + 1}")
            for e in es:
                if not 0 <= e.start <= e.end <= len(node.value):
                    raise EditError(f"line {node.start_mark.line + 1}: edit outside the string")
                text = e.text
                if _style(node) == '"' and ('"' in text or "\\" in text):
                    raise EditError(f"line {node.start_mark.line + 1}: the text needs escaping in a double-quoted string")
                if _style(node) == "'":
                    text = text.replace("'", "''")
                if "\n" in text and _style(node) != "|":
                    raise EditError(f"line {node.start_mark.line + 1}: a line break cannot be added to this string")
                if "\n" in text:
                    raise EditError(f"line {node.start_mark.line + 1}: fluxgraph does not add lines to a block scalar")
                out.append(_Replace(offsets[e.start], offsets[e.end], text, f"{'.'.join(map(str, path))}"))
        return out

    def _map_sets(self, doc: Document, sets: list[MapSet]) -> list[_Replace]:
        out: list[_Replace] = []
        # every MapSet on one path is written together (a created mapping holds all its keys)
        by_path: dict[Path, list[MapSet]] = {}
        for s in sets:
            by_path.setdefault(s.path, []).append(s)
        for path, ss in by_path.items():
            chain, got = self._walk(doc, path)
            keys: dict[str, str] = {}
            for s in ss:
                if keys.get(s.key, s.value) != s.value:
                    raise EditError(f"two values for {s.key}")
                keys[s.key] = s.value
            if got == len(path):
                node = chain[-1][1]
                if not isinstance(node, MappingNode):
                    raise EditError(f"{'.'.join(path)} is not a mapping")
                todo = {}
                for k, v in keys.items():
                    hit = _entry(node, k)
                    if hit is not None:
                        if isinstance(hit[1], ScalarNode) and hit[1].value == v:
                            continue
                        raise EditError(f"line {hit[0].start_mark.line + 1}: {k} is already set to another value")
                    todo[k] = v
                if not todo:
                    continue
                at, col = self._mapping_insert_at(node, chain[-1][0], False, ())
                lines = [ln for k, v in todo.items() for ln in self._entry_lines(k, col, v)]
                out.append(self._insert_lines(at, lines, ".".join(path)))
                continue
            # create path[got:] under the deepest existing mapping (or under a null value)
            value: Any = dict(keys)
            for step in reversed(path[got + 1 :]):
                value = {step: value}
            key_node, node = chain[-1]
            hints = ss[0].after[got] if got < len(ss[0].after) else ()
            if len(chain) == got + 2 and _is_null(node):  # "annotations:" with no value
                assert key_node is not None
                if node.value not in ("",):
                    raise EditError(f"line {key_node.start_mark.line + 1}: {key_node.value} is written as an explicit null")
                col = int(key_node.start_mark.column) + self.style.mapping
                lines = []
                for k, v in value.items():
                    lines.extend(self._entry_lines(k, col, v))
                at = self._after_block(int(key_node.start_mark.line), int(key_node.start_mark.column))
                out.append(self._insert_lines(at, lines, ".".join(path)))
                continue
            if not isinstance(node, MappingNode):
                raise EditError(f"{'.'.join(path[:got]) or 'the document'} is not a mapping")
            at, col = self._mapping_insert_at(node, key_node, False, hints)
            out.append(self._insert_lines(at, self._entry_lines(path[got], col, value), ".".join(path)))
        return out

    def _seq_appends(self, doc: Document, apps: list[SeqAppend]) -> list[_Replace]:
        out: list[_Replace] = []
        by_path: dict[Path, list[SeqAppend]] = {}
        for a in apps:
            by_path.setdefault(a.path, []).append(a)
        for path, aa in by_path.items():
            items = list(dict.fromkeys(a.item for a in aa))
            chain, got = self._walk(doc, path)
            key_node, node = chain[-1]
            if got == len(path):
                if not isinstance(node, SequenceNode):
                    raise EditError(f"{'.'.join(map(str, path))} is not a sequence")
                if _flow(node):
                    raise EditError(f"line {node.start_mark.line + 1}: the sequence is written in flow style ([...])")
                dash = int(node.start_mark.column)
                firstitem = node.value[0]
                content = int(firstitem.start_mark.column)
                if firstitem.start_mark.line != node.start_mark.line or content <= dash:
                    raise EditError(f"line {node.start_mark.line + 1}: the first item does not start on its dash's line")
                lines = [ln for it in items for ln in self._item_lines(it, dash, content)]
                at = self._after_block(_last_line(node), dash)
                out.append(self._insert_lines(at, lines, ".".join(map(str, path))))
                continue
            if got != len(path) - 1:
                raise EditError(f"the document has no {'.'.join(map(str, path[:-1]))}")
            # the file's own style when it has a block sequence under a key, else the one given
            off, seq = (self.style.offset, self.style.sequence)
            if not self.style.sequences_seen and aa[0].indent is not None:
                off, seq = aa[0].indent
            if len(chain) == got + 2 and _is_null(node):  # "dependsOn:" with no value
                assert key_node is not None
                if node.value != "":
                    raise EditError(f"line {key_node.start_mark.line + 1}: {key_node.value} is written as an explicit null")
                kc = int(key_node.start_mark.column)
                lines = [ln for it in items for ln in self._item_lines(it, kc + off, kc + seq)]
                at = self._after_block(int(key_node.start_mark.line), kc)
                out.append(self._insert_lines(at, lines, ".".join(map(str, path))))
                continue
            if not isinstance(node, MappingNode):
                raise EditError(f"{'.'.join(map(str, path[:-1]))} is not a mapping")
            at, col = self._mapping_insert_at(node, key_node, aa[0].first, aa[0].after)
            lines = [" " * col + f"{_key_text(str(path[-1]))}:"]
            lines += [ln for it in items for ln in self._item_lines(it, col + off, col + seq)]
            out.append(self._insert_lines(at, lines, ".".join(map(str, path))))
        return out

    def apply(self, edits: list[Edit]) -> str:
        """The text with ``edits`` made; verified (see the module doc)."""
        reps: list[_Replace] = []
        for index in sorted({e.doc for e in edits}):
            doc = self.docs.get(index)
            if doc is None:
                raise EditError(f"{self.file} has no document {index + 1}")
            mine = [e for e in edits if e.doc == index]
            reps += self._scalar_edits(doc, [e for e in mine if isinstance(e, ScalarEdit)])
            reps += self._map_sets(doc, [e for e in mine if isinstance(e, MapSet)])
            reps += self._seq_appends(doc, [e for e in mine if isinstance(e, SeqAppend)])
        reps.sort(key=lambda r: (r.start, r.end))
        for a, b in zip(reps, reps[1:], strict=False):
            if b.start < a.end or (b.start == a.end and a.start == a.end and b.start == b.end):
                raise EditError(f"{self.file}: two edits at the same place ({a.what}, {b.what})")
        new = self.text
        for r in reversed(reps):
            new = new[: r.start] + r.text + new[r.end :]
        self._verify(new, edits)
        return new

    # -- verification ----------------------------------------------------------------------
    def _expected(self, edits: list[Edit]) -> dict[int, Any]:
        data = {i: copy.deepcopy(d.data) for i, d in self.docs.items()}
        scalar: dict[tuple[int, Path], list[ScalarEdit]] = {}
        for e in edits:
            if isinstance(e, ScalarEdit):
                scalar.setdefault((e.doc, e.path), []).append(e)
            elif isinstance(e, MapSet):
                m = _ensure(data, e.doc, e.path, dict)
                m[e.key] = e.value
            else:
                seq = _ensure(data, e.doc, e.path, list)
                item = dict(e.item)
                if item not in seq:
                    seq.append(item)
        for (doc, path), es in scalar.items():
            parent = _ensure(data, doc, path[:-1], None)
            s = parent[path[-1]]
            for e in sorted(es, key=lambda x: x.start, reverse=True):
                s = s[: e.start] + e.text + s[e.end :]
            parent[path[-1]] = s
        return data

    def _verify(self, new: str, edits: list[Edit]) -> None:
        res = load_documents(self.file, new.encode("utf-8"))
        if res.errors:
            e = res.errors[0]
            raise EditError(f"the edited {self.file} does not parse ({e.line}:{e.column}: {e.message})")
        got = {d.index: d.data for d in res.documents}
        if got != self._expected(edits):
            raise EditError(f"the edited {self.file} does not hold exactly the intended data")
        try:
            roundtrip(new)
        except NotRoundTrip as e:
            raise EditError(f"the edited {self.file} would not round-trip ({e.reason})") from None


def _ensure(data: dict[int, Any], doc: int, path: Path, leaf: type | None) -> Any:
    node = data[doc]
    for i, step in enumerate(path):
        last = i == len(path) - 1
        want: type = leaf if (last and leaf is not None) else dict
        if isinstance(node, list):
            node = node[step]
            continue
        if node.get(step) is None and (leaf is not None or not last):
            node[step] = want()
        node = node[step]
    return node
