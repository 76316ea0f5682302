"""Tolerant tokenizer and recursive-descent parser for POSIX sh plus common bash extensions.

Entry point: :func:`parse` -> :class:`~fluxgraph.shell.nodes.Program`.  It never raises:
a syntax error (or anything unexpected) yields ``Program(parse_ok=False, error_offset=...,
error_message=...)`` with an empty body.

Token recognition follows POSIX XCU 2.3 (operators, quoting per 2.2, ``#`` comments at the
start of a token, backslash-newline line continuation), here-documents per 2.7.4 (bodies are
read at the next newline token, several per line in order, ``<<-`` strips leading tabs, a
quoted delimiter makes the body literal), command substitution per 2.6.3 (``$(...)`` is
parsed recursively, so ``)`` inside quotes, comments, here-docs or ``case`` patterns does not
end it; backquote bodies are un-escaped and parsed separately).  The grammar is XCU 2.10
plus bash's ``[[ ]]``, ``(( ))``, ``for ((;;))``, ``select``, ``function f``, ``;&``/``;;&``,
``|&``, ``&>``, ``<<<``, ``$'...'``, arrays ``a=(...)``, process substitution and extglob
``@(...)``.  Reserved words are recognised only where a command may start.
"""

from __future__ import annotations

import re

from .nodes import (
    AndOr,
    ArithCommand,
    Case,
    CaseItem,
    Command,
    CommandList,
    CommandSubst,
    CondCommand,
    ForLoop,
    FunctionDef,
    Group,
    HereDoc,
    If,
    IfClause,
    ListItem,
    Loop,
    Pipeline,
    Program,
    Redirect,
    SimpleCommand,
    Span,
    Subshell,
    Word,
)

__all__ = ["parse", "MAX_NESTING"]

#: Deepest nesting of compound commands / substitutions accepted (deeper input is
#: reported as a parse error instead of exhausting the Python stack).
MAX_NESTING = 60

_OPERATORS = (
    "<<<",
    "<<-",
    ";;&",
    "&>>",
    "&&",
    "||",
    ";;",
    ";&",
    "|&",
    "<<",
    ">>",
    "<&",
    ">&",
    "<>",
    ">|",
    "&>",
    "(",
    ")",
    ";",
    "&",
    "|",
    "<",
    ">",
)
_BQ_UNESCAPE_RE = re.compile(r"\\([\\`$])")
_OP_RE = re.compile("|".join(re.escape(op) for op in _OPERATORS))
_PLAIN_RE = re.compile(r"[^\s;&|<>()\\'\"`$@*+?!]+")
_REDIR_OPS = frozenset({"<", ">", ">>", "<&", ">&", "<>", ">|", "<<", "<<-", "<<<", "&>", "&>>"})
_STOP_WORDS = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "}"})
_STOP_OPS = frozenset({")", ";;", ";&", ";;&"})
_WORD_BREAK = frozenset(" \t\n;&|<>()")
_ASSIGN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_ARRAY_ASSIGN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=\Z")
_SPECIAL_PARAMS = frozenset("@*#?-$!0123456789")
_DIGITS_RE = re.compile(r"[0-9]+")
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")
_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


class ShellSyntaxError(Exception):
    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


class _Tok:
    __slots__ = ("kind", "text", "start", "end", "word", "heredoc")

    def __init__(
        self,
        kind: str,
        text: str,
        start: int,
        end: int,
        word: Word | None = None,
        heredoc: HereDoc | None = None,
    ) -> None:
        self.kind = kind  # WORD | OP | IO_NUMBER | NEWLINE | EOF
        self.text = text
        self.start = start
        self.end = end
        self.word = word
        self.heredoc = heredoc


class _Shared:
    """State shared by a parser and the sub-parsers of its ``$(...)`` substitutions."""

    def __init__(self, depth: int = 0) -> None:
        self.pending: list[HereDoc] = []
        self.heredocs: list[HereDoc] = []
        self.depth = depth

    def enter(self, offset: int) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ShellSyntaxError(offset, f"nesting deeper than {MAX_NESTING} levels")

    def leave(self) -> None:
        self.depth -= 1


class _WordBuilder:
    __slots__ = ("lit", "dynamic", "quoted", "substs")

    def __init__(self) -> None:
        self.lit: list[str] = []
        self.dynamic = False
        self.quoted = False
        self.substs: list[CommandSubst] = []


def _decode_ansi_c(body: str) -> str:
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[e])
            i += 2
        elif e == "x":
            m = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2 :])
            if m:
                out.append(chr(int(m.group(), 16)))
                i += 2 + len(m.group())
            else:
                out.append("\\x")
                i += 2
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        else:
            out.append("\\" + e)
            i += 2
    return "".join(out)


class _Lexer:
    def __init__(self, src: str, pos: int, shared: _Shared) -> None:
        self.src = src
        self.n = len(src)
        self.pos = pos
        self.shared = shared
        self._want_delim: str | None = None

    # -- tokens ---------------------------------------------------------------------------
    def next_token(self) -> _Tok:
        want = self._want_delim
        self._want_delim = None
        src, n = self.src, self.n
        i = self.pos
        while True:
            while i < n and src[i] in " \t":
                i += 1
            if src.startswith("\\\n", i):
                i += 2
                continue
            if i == n - 1 and src[i] == "\\":  # backslash at end of input: bash drops it
                i += 1
                continue
            if i < n and src[i] == "#":
                j = src.find("\n", i)
                i = n if j < 0 else j
                continue
            break
        self.pos = i
        if i >= n:
            return _Tok("EOF", "", n, n)
        c = src[i]
        if c == "\n":
            self.pos = i + 1
            self._read_heredocs()
            return _Tok("NEWLINE", "\n", i, i + 1)
        if c in "<>" and i + 1 < n and src[i + 1] == "(":
            return self._word_token(want)  # process substitution <(...) / >(...)
        m = _OP_RE.match(src, i)
        if m is not None:
            op = m.group()
            self.pos = i + len(op)
            if op in ("<<", "<<-"):
                self._want_delim = op
            return _Tok("OP", op, i, i + len(op))
        return self._word_token(want)

    def _word_token(self, want: str | None) -> _Tok:
        start = self.pos
        word = self.lex_word(start)
        self.pos = word.end
        if _DIGITS_RE.fullmatch(word.raw) and self.pos < self.n and self.src[self.pos] in "<>":
            return _Tok("IO_NUMBER", word.raw, start, word.end, word)
        heredoc = None
        if want is not None:
            heredoc = HereDoc(delimiter=word.unquoted, strip_tabs=want == "<<-", quoted=word.quoted)
            self.shared.pending.append(heredoc)
            self.shared.heredocs.append(heredoc)
        return _Tok("WORD", word.raw, start, word.end, word, heredoc)

    def _read_heredocs(self) -> None:
        pending = self.shared.pending
        if not pending:
            return
        src, n = self.src, self.n
        pos = self.pos
        for hd in pending:
            hd.body_start = pos
            while True:
                if pos >= n:
                    hd.body_end = n
                    hd.terminated = False
                    break
                j = src.find("\n", pos)
                line_end = n if j < 0 else j
                line = src[pos:line_end]
                if hd.strip_tabs:
                    line = line.lstrip("\t")
                if line == hd.delimiter:
                    hd.body_end = pos
                    hd.terminated = True
                    pos = min(line_end + 1, n)
                    break
                pos = line_end + 1 if j >= 0 else n
        pending.clear()
        self.pos = pos

    # -- words ----------------------------------------------------------------------------
    def lex_word(self, start: int) -> Word:
        src, n = self.src, self.n
        wb = _WordBuilder()
        i = start
        if src[i] in "<>" and src.startswith("(", i + 1):
            i = self._cmdsubst(i, i + 2, wb, "process")
        while i < n:
            m = _PLAIN_RE.match(src, i)
            if m is not None:
                wb.lit.append(m.group())
                i = m.end()
                if i >= n:
                    break
            c = src[i]
            if c in _WORD_BREAK:
                if c == "(" and i > start:
                    prev = src[i - 1]
                    if prev in "@*+?" or (prev == "!" and i - 1 > start):
                        j = self._balanced(i)
                        wb.lit.append(src[i:j])
                        i = j
                        continue
                    if _ARRAY_ASSIGN_RE.match(src, start, i):
                        j = self._balanced(i)
                        wb.lit.append(src[i:j])
                        wb.dynamic = True
                        i = j
                        continue
                break
            if c == "\\":
                if i + 1 >= n:  # backslash at end of input: dropped, like bash
                    i += 1
                elif src[i + 1] == "\n":
                    i += 2
                else:
                    wb.lit.append(src[i + 1])
                    wb.quoted = True
                    i += 2
            elif c == "'":
                j = src.find("'", i + 1)
                if j < 0:
                    raise ShellSyntaxError(i, "unterminated single quote")
                wb.lit.append(src[i + 1 : j])
                wb.quoted = True
                i = j + 1
            elif c == '"':
                i = self._dquote(i, wb)
            elif c == "`":
                i = self._backquote(i, wb)
            elif c == "$":
                i = self._dollar(i, wb, in_dquote=False)
            else:
                wb.lit.append(c)
                i += 1
        if i == start:  # defensive: never produce an empty token
            raise ShellSyntaxError(start, f"unexpected character {src[start]!r}")
        return Word(
            start=start,
            end=i,
            raw=src[start:i],
            unquoted="".join(wb.lit),
            dynamic=wb.dynamic,
            quoted=wb.quoted,
            substs=wb.substs,
        )

    def _dquote(self, i: int, wb: _WordBuilder) -> int:
        """``i`` at the opening quote; returns the offset after the closing quote."""
        src, n = self.src, self.n
        wb.quoted = True
        j = i + 1
        while j < n:
            c = src[j]
            if c == '"':
                return j + 1
            if c == "\\":
                if j + 1 < n and src[j + 1] in '$`"\\\n':
                    if src[j + 1] != "\n":
                        wb.lit.append(src[j + 1])
                    j += 2
                else:
                    wb.lit.append("\\")
                    j += 1
            elif c == "$":
                j = self._dollar(j, wb, in_dquote=True)
            elif c == "`":
                j = self._backquote(j, wb)
            else:
                wb.lit.append(c)
                j += 1
        raise ShellSyntaxError(i, "unterminated double quote")

    def _dollar(self, i: int, wb: _WordBuilder, in_dquote: bool) -> int:
        """``i`` at ``$``; returns the offset after the expansion."""
        if self.src.startswith(("(", "{"), i + 1):
            self.shared.enter(i)
            j = self._dollar_inner(i, wb, in_dquote)
            self.shared.leave()
            return j
        return self._dollar_inner(i, wb, in_dquote)

    def _dollar_inner(self, i: int, wb: _WordBuilder, in_dquote: bool) -> int:
        src, n = self.src, self.n
        nx = src[i + 1] if i + 1 < n else ""
        if nx == "(":
            if src.startswith("((", i + 1):
                j = self._arith(i + 3, wb)
                if j is not None:
                    wb.lit.append(src[i:j])
                    wb.dynamic = True
                    return j
            return self._cmdsubst(i, i + 2, wb, "dollar")
        if nx == "{":
            j = self._brace(i, wb, in_dquote)
            wb.lit.append(src[i:j])
            wb.dynamic = True
            return j
        if nx == "'" and not in_dquote:
            j = i + 2
            while j < n and src[j] != "'":
                j += 2 if src[j] == "\\" else 1
            if j >= n:
                raise ShellSyntaxError(i, "unterminated $'...' string")
            wb.lit.append(_decode_ansi_c(src[i + 2 : j]))
            wb.quoted = True
            return j + 1
        if nx == '"' and not in_dquote:
            return self._dquote(i + 1, wb)
        if nx and nx in _NAME_START:
            j = i + 1
            while j < n and src[j] in _NAME_CHARS:
                j += 1
            wb.lit.append(src[i:j])
            wb.dynamic = True
            return j
        if nx and nx in _SPECIAL_PARAMS:
            wb.lit.append(src[i : i + 2])
            wb.dynamic = True
            return i + 2
        wb.lit.append("$")
        return i + 1

    def _brace(self, i: int, wb: _WordBuilder, in_dquote: bool) -> int:
        """``i`` at ``$`` of ``${``; returns the offset after the matching ``}``."""
        src, n = self.src, self.n
        scratch = _WordBuilder()
        scratch.substs = wb.substs
        depth = 1
        j = i + 2
        while j < n:
            c = src[j]
            if c == "}":
                depth -= 1
                j += 1
                if depth == 0:
                    return j
            elif c == "\\":
                j += 2
            elif c == "'" and not in_dquote:
                k = src.find("'", j + 1)
                if k < 0:
                    raise ShellSyntaxError(j, "unterminated single quote")
                j = k + 1
            elif c == '"':
                j = self._dquote(j, scratch)
            elif c == "`":
                j = self._backquote(j, scratch)
            elif c == "$":
                if src.startswith("{", j + 1):
                    depth += 1
                    j += 2
                else:
                    j = self._dollar(j, scratch, in_dquote)
            else:
                j += 1
        raise ShellSyntaxError(i, "unterminated ${...}")

    def _arith(self, j: int, wb: _WordBuilder) -> int | None:
        """``j`` just after ``$((``/``((``; offset after the closing ``))`` or None."""
        src, n = self.src, self.n
        scratch = _WordBuilder()
        scratch.substs = wb.substs
        depth = 0
        while j < n:
            c = src[j]
            if c == "(":
                depth += 1
                j += 1
            elif c == ")":
                if depth:
                    depth -= 1
                    j += 1
                elif src.startswith(")", j + 1):
                    return j + 2
                else:
                    return None
            elif c == "\\":
                j += 2
            elif c == '"':  # (single quotes are not special: the expression is as if double-quoted)
                j = self._dquote(j, scratch)
            elif c == "`":
                j = self._backquote(j, scratch)
            elif c == "$":
                j = self._dollar(j, scratch, in_dquote=False)
            else:
                j += 1
        return None

    def scan_arith_command(self, j: int) -> int | None:
        return self._arith(j, _WordBuilder())

    def _cmdsubst(self, i: int, j: int, wb: _WordBuilder, style: str) -> int:
        """``i`` at ``$``/``<``/``>``, ``j`` after ``(``; parse the body up to ``)``."""
        self.shared.enter(i)
        sub = _Parser(self.src, j, self.shared)
        body = sub.parse_list()
        tok = sub.next()
        if tok.kind != "OP" or tok.text != ")":
            if tok.kind == "EOF":
                raise ShellSyntaxError(i, "unterminated command substitution (missing ')')")
            raise ShellSyntaxError(tok.start, f"unexpected {_describe(tok)} in command substitution")
        self.shared.leave()
        prog = Program(source=self.src, body=body)
        wb.substs.append(CommandSubst(i, tok.end, prog, style, True))
        wb.lit.append(self.src[i : tok.end])
        wb.dynamic = True
        return tok.end

    def _backquote(self, i: int, wb: _WordBuilder) -> int:
        src, n = self.src, self.n
        j = i + 1
        while j < n and src[j] != "`":
            j += 2 if src[j] == "\\" else 1
        if j >= n:
            raise ShellSyntaxError(i, "unterminated backquote")
        inner_raw = src[i + 1 : j]
        inner = _BQ_UNESCAPE_RE.sub(r"\1", inner_raw)
        in_place = _parse_at(src, i + 1, j, self.shared.depth + 1) if inner == inner_raw else None
        if in_place is not None:
            # Nothing was un-escaped: parsed in place, so offsets index the script.
            prog, absolute = in_place, True
        else:
            prog, absolute = _parse(inner, self.shared.depth + 1), False
        wb.substs.append(CommandSubst(i, j + 1, prog, "backquote", absolute))
        wb.lit.append(src[i : j + 1])
        wb.dynamic = True
        return j + 1

    def _balanced(self, i: int) -> int:
        """``i`` at ``(``: offset after the matching ``)`` (arrays, extglob)."""
        src, n = self.src, self.n
        scratch = _WordBuilder()
        depth = 0
        j = i
        while j < n:
            c = src[j]
            if c == "(":
                depth += 1
                j += 1
            elif c == ")":
                depth -= 1
                j += 1
                if depth == 0:
                    return j
            elif c == "\\":
                j += 2
            elif c == "'":
                k = src.find("'", j + 1)
                if k < 0:
                    raise ShellSyntaxError(j, "unterminated single quote")
                j = k + 1
            elif c == '"':
                j = self._dquote(j, scratch)
            elif c == "`":
                j = self._backquote(j, scratch)
            elif c == "$":
                j = self._dollar(j, scratch, in_dquote=False)
            elif c == "#" and src[j - 1] in " \t\n(":
                k = src.find("\n", j)
                j = n if k < 0 else k
            else:
                j += 1
        raise ShellSyntaxError(i, "unterminated '('")


def _kw_text(tok: _Tok) -> str:
    return tok.word.unquoted if tok.word is not None else tok.text


def _describe(tok: _Tok) -> str:
    if tok.kind == "EOF":
        return "end of input"
    if tok.kind == "NEWLINE":
        return "newline"
    return repr(tok.text)


class _Parser:
    def __init__(self, src: str, pos: int, shared: _Shared) -> None:
        self.src = src
        self.lx = _Lexer(src, pos, shared)
        self.shared = shared
        self.buf: list[_Tok] = []

    # -- token helpers ----------------------------------------------------------------------
    def peek(self, k: int = 0) -> _Tok:
        while len(self.buf) <= k:
            self.buf.append(self.lx.next_token())
        return self.buf[k]

    def next(self) -> _Tok:
        tok = self.peek()
        self.buf.pop(0)
        return tok

    def seek(self, pos: int) -> None:
        self.buf.clear()
        self.lx.pos = pos

    @staticmethod
    def is_kw(tok: _Tok, *words: str) -> bool:
        w = tok.word
        return tok.kind == "WORD" and w is not None and not w.quoted and not w.dynamic and w.unquoted in words

    @staticmethod
    def is_op(tok: _Tok, *ops: str) -> bool:
        return tok.kind == "OP" and tok.text in ops

    def expect_kw(self, word: str, opened: str, at: int) -> _Tok:
        tok = self.peek()
        if not self.is_kw(tok, word):
            raise ShellSyntaxError(
                tok.start, f"expected '{word}' (for '{opened}' at offset {at}), found {_describe(tok)}"
            )
        return self.next()

    def expect_op(self, op: str, opened: str, at: int) -> _Tok:
        tok = self.peek()
        if not self.is_op(tok, op):
            raise ShellSyntaxError(
                tok.start, f"expected '{op}' (for '{opened}' at offset {at}), found {_describe(tok)}"
            )
        return self.next()

    def skip_newlines(self) -> None:
        while self.peek().kind == "NEWLINE":
            self.next()

    def at_stop(self) -> bool:
        tok = self.peek()
        return tok.kind == "EOF" or self.is_op(tok, *_STOP_OPS) or self.is_kw(tok, *_STOP_WORDS)

    # -- grammar --------------------------------------------------------------------------------
    def parse_list(self) -> CommandList:
        items: list[ListItem] = []
        self.skip_newlines()
        start = self.peek().start
        while True:
            self.skip_newlines()
            if self.at_stop():
                break
            andor = self.parse_and_or()
            tok = self.peek()
            sep: str | None = None
            end = andor.end
            if self.is_op(tok, ";", "&"):
                sep = tok.text
                self.next()
            elif tok.kind == "NEWLINE":
                sep = "\n"
                self.next()
            items.append(ListItem(andor.start, end, andor, sep))
            if sep is None:
                break
        if items:
            return CommandList(items[0].start, items[-1].end, items)
        return CommandList(start, start, items)

    def nonempty_list(self, what: str, at: int) -> CommandList:
        body = self.parse_list()
        if not body.items:
            tok = self.peek()
            raise ShellSyntaxError(tok.start, f"empty {what} (at offset {at}) before {_describe(tok)}")
        return body

    def parse_and_or(self) -> AndOr:
        first = self.parse_pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while self.is_op(self.peek(), "&&", "||"):
            op = self.next().text
            self.skip_newlines()
            rest.append((op, self.parse_pipeline()))
        end = rest[-1][1].end if rest else first.end
        return AndOr(first.start, end, first, rest)

    def parse_pipeline(self) -> Pipeline:
        tok = self.peek()
        start = tok.start
        timed = negated = False
        if self.is_kw(tok, "time"):
            self.next()
            timed = True
            if self.is_kw(self.peek(), "-p"):
                self.next()
        while self.is_kw(self.peek(), "!"):
            self.next()
            negated = not negated
        commands = [self.parse_command()]
        while self.is_op(self.peek(), "|", "|&"):
            self.next()
            self.skip_newlines()
            commands.append(self.parse_command())
        return Pipeline(start, commands[-1].end, commands, negated, timed)

    def parse_command(self) -> Command:
        tok = self.peek()
        if tok.kind == "OP":
            if tok.text == "(":
                return self.compound(tok)
            if tok.text in _REDIR_OPS:
                return self.simple_command()
            raise ShellSyntaxError(tok.start, f"unexpected {_describe(tok)}")
        if tok.kind == "IO_NUMBER":
            return self.simple_command()
        if tok.kind != "WORD":
            raise ShellSyntaxError(tok.start, f"unexpected {_describe(tok)} (a command was expected)")
        if self.is_kw(tok, "{", "if", "while", "until", "for", "select", "case", "[["):
            return self.compound(tok)
        if self.is_kw(tok, "function"):
            return self.function_keyword()
        if self.is_kw(tok, *_STOP_WORDS, "in", "]]"):
            raise ShellSyntaxError(tok.start, f"unexpected {_describe(tok)}")
        nxt = self.peek(1)
        if self.is_op(nxt, "(") and not _ASSIGN_RE.match(tok.text):
            return self.function_posix()
        return self.simple_command()

    def compound(self, tok: _Tok) -> Command:
        self.shared.enter(tok.start)
        try:
            node = self._compound(tok)
        finally:
            self.shared.leave()
        redirs = node.redirects
        while True:
            t = self.peek()
            if t.kind == "IO_NUMBER" or self.is_op(t, *_REDIR_OPS):
                r = self.redirect()
                redirs.append(r)
                node.end = r.end
            else:
                break
        return node

    def _compound(
        self, tok: _Tok
    ) -> Subshell | Group | If | Loop | ForLoop | Case | ArithCommand | CondCommand:
        start = tok.start
        if self.is_op(tok, "("):
            if self.src.startswith("(", tok.end):
                end = self.lx.scan_arith_command(tok.end + 1)
                if end is not None:
                    self.seek(end)
                    return ArithCommand(start, end, self.src[tok.end + 1 : end - 2])
            self.next()
            body = self.nonempty_list("subshell", start)
            close = self.expect_op(")", "(", start)
            return Subshell(start, close.end, body)
        word = _kw_text(tok)
        if word == "{":
            self.next()
            body = self.nonempty_list("group", start)
            close = self.expect_kw("}", "{", start)
            return Group(start, close.end, body)
        if word == "if":
            return self.if_clause()
        if word in ("while", "until"):
            self.next()
            cond = self.nonempty_list(f"'{word}' condition", start)
            self.expect_kw("do", word, start)
            body = self.nonempty_list(f"'{word}' body", start)
            done = self.expect_kw("done", word, start)
            return Loop(start, done.end, word, cond, body)
        if word in ("for", "select"):
            return self.for_clause()
        if word == "case":
            return self.case_clause()
        # [[ ... ]]
        self.next()
        words: list[str] = []
        while True:
            t = self.next()
            if t.kind == "EOF":
                raise ShellSyntaxError(start, "unterminated '[[' (missing ']]')")
            if self.is_kw(t, "]]"):
                return CondCommand(start, t.end, words)
            if t.kind != "NEWLINE":
                words.append(t.text)

    def if_clause(self) -> If:
        start = self.next().start
        clauses: list[IfClause] = []
        kw, kw_start = "if", start
        while True:
            cond = self.nonempty_list(f"'{kw}' condition", kw_start)
            self.expect_kw("then", kw, kw_start)
            body = self.nonempty_list("'then' branch", kw_start)
            clauses.append(IfClause(kw_start, body.end, kw, cond, body))
            if self.is_kw(self.peek(), "elif"):
                kw_start = self.next().start
                kw = "elif"
                continue
            break
        else_body = None
        if self.is_kw(self.peek(), "else"):
            else_start = self.next().start
            else_body = self.nonempty_list("'else' branch", else_start)
        fi = self.expect_kw("fi", "if", start)
        return If(start, fi.end, clauses, else_body)

    def for_clause(self) -> ForLoop:
        kw_tok = self.next()
        start, kw = kw_tok.start, _kw_text(kw_tok)
        var: Word | None = None
        items: list[Word] | None = None
        arith: str | None = None
        tok = self.peek()
        if kw == "for" and self.is_op(tok, "(") and self.src.startswith("(", tok.end):
            end = self.lx.scan_arith_command(tok.end + 1)
            if end is None:
                raise ShellSyntaxError(tok.start, "unterminated 'for ((' header")
            arith = self.src[tok.end + 1 : end - 2]
            self.seek(end)
            if self.is_op(self.peek(), ";"):
                self.next()
            self.skip_newlines()
        else:
            if tok.kind != "WORD" or tok.word is None:
                raise ShellSyntaxError(tok.start, f"expected a variable name after '{kw}'")
            var = self.next().word
            self.skip_newlines()
            if self.is_kw(self.peek(), "in"):
                self.next()
                items = []
                while self.peek().kind == "WORD":
                    w = self.next().word
                    assert w is not None
                    items.append(w)
                if self.is_op(self.peek(), ";") or self.peek().kind == "NEWLINE":
                    self.next()
            elif self.is_op(self.peek(), ";"):
                self.next()
            self.skip_newlines()
        tok = self.peek()
        if self.is_kw(tok, "do"):
            self.next()
            body = self.nonempty_list(f"'{kw}' body", start)
            done = self.expect_kw("done", kw, start)
            return ForLoop(start, done.end, kw, var, items, arith, body)
        if self.is_kw(tok, "{"):
            group = self.compound(tok)
            assert isinstance(group, Group)
            return ForLoop(start, group.end, kw, var, items, arith, group.body)
        raise ShellSyntaxError(
            tok.start, f"expected 'do' (for '{kw}' at offset {start}), found {_describe(tok)}"
        )

    def case_clause(self) -> Case:
        start = self.next().start
        tok = self.next()
        if tok.kind != "WORD" or tok.word is None:
            raise ShellSyntaxError(tok.start, "expected a word after 'case'")
        subject = tok.word
        self.skip_newlines()
        self.expect_kw("in", "case", start)
        items: list[CaseItem] = []
        while True:
            self.skip_newlines()
            tok = self.peek()
            if self.is_kw(tok, "esac"):
                end = self.next().end
                break
            if tok.kind == "EOF":
                raise ShellSyntaxError(start, "unterminated 'case' (missing 'esac')")
            item_start = tok.start
            if self.is_op(tok, "("):
                self.next()
            patterns: list[Word] = []
            while True:
                t = self.next()
                if t.kind != "WORD" or t.word is None:
                    raise ShellSyntaxError(t.start, f"expected a case pattern, found {_describe(t)}")
                patterns.append(t.word)
                if not self.is_op(self.peek(), "|"):
                    break
                self.next()
            close = self.expect_op(")", "case pattern", item_start)
            body = self.parse_list()
            tok = self.peek()
            term: str | None = None
            item_end = body.end if body.items else close.end
            if self.is_op(tok, ";;", ";&", ";;&"):
                term = tok.text
                item_end = self.next().end
            elif not self.is_kw(tok, "esac"):
                raise ShellSyntaxError(tok.start, f"expected ';;' or 'esac', found {_describe(tok)}")
            items.append(CaseItem(item_start, item_end, patterns, body, term))
        return Case(start, end, subject, items)

    def function_posix(self) -> FunctionDef:
        name_tok = self.next()
        self.next()  # (
        self.expect_op(")", "function definition", name_tok.start)
        self.skip_newlines()
        body = self.function_body(name_tok.start)
        return FunctionDef(
            name_tok.start, body.end, _kw_text(name_tok), Span(name_tok.start, name_tok.end), body
        )

    def function_keyword(self) -> FunctionDef:
        start = self.next().start
        name_tok = self.next()
        if name_tok.kind != "WORD":
            raise ShellSyntaxError(name_tok.start, "expected a function name after 'function'")
        if self.is_op(self.peek(), "("):
            self.next()
            self.expect_op(")", "function definition", start)
        self.skip_newlines()
        body = self.function_body(start)
        return FunctionDef(start, body.end, _kw_text(name_tok), Span(name_tok.start, name_tok.end), body)

    def function_body(self, at: int) -> Command:
        tok = self.peek()
        if self.is_op(tok, "(") or self.is_kw(
            tok, "{", "if", "while", "until", "for", "select", "case", "[["
        ):
            return self.compound(tok)
        raise ShellSyntaxError(
            tok.start, f"expected a compound command as the body of the function at offset {at}"
        )

    def redirect(self) -> Redirect:
        tok = self.next()
        start = tok.start
        fd: str | None = None
        if tok.kind == "IO_NUMBER":
            fd = tok.text
            tok = self.next()
            if not self.is_op(tok, *_REDIR_OPS):
                raise ShellSyntaxError(tok.start, "expected a redirection operator")
        target = self.next()
        if target.kind != "WORD" or target.word is None:
            raise ShellSyntaxError(
                target.start, f"expected a word after '{tok.text}', found {_describe(target)}"
            )
        return Redirect(start, target.end, tok.text, fd, target.word, target.heredoc)

    def simple_command(self) -> SimpleCommand:
        start = self.peek().start
        assignments: list[Word] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        end = start
        while True:
            tok = self.peek()
            if tok.kind == "IO_NUMBER" or self.is_op(tok, *_REDIR_OPS):
                r = self.redirect()
                redirects.append(r)
                end = r.end
            elif tok.kind == "WORD" and tok.word is not None:
                self.next()
                if not words and _ASSIGN_RE.match(tok.text):
                    assignments.append(tok.word)
                else:
                    words.append(tok.word)
                end = tok.end
            else:
                break
        if end == start:
            tok = self.peek()
            raise ShellSyntaxError(tok.start, f"unexpected {_describe(tok)} (a command was expected)")
        return SimpleCommand(start, end, assignments, words, redirects)


def _parse_at(src: str, start: int, stop: int, depth: int) -> Program | None:
    """Parse ``src[start:stop]`` in place (offsets index ``src``); None unless it is a clean parse."""
    shared = _Shared(depth)
    try:
        p = _Parser(src[:stop], start, shared)
        body = p.parse_list()
        if p.peek().kind != "EOF":
            return None
    except (ShellSyntaxError, RecursionError):
        return None
    return Program(source=src, body=body, heredocs=shared.heredocs)


def _parse(src: str, depth: int) -> Program:
    shared = _Shared(depth)
    try:
        if depth > MAX_NESTING:
            raise ShellSyntaxError(0, f"nesting deeper than {MAX_NESTING} levels")
        p = _Parser(src, 0, shared)
        body = p.parse_list()
        tok = p.peek()
        if tok.kind != "EOF":
            raise ShellSyntaxError(tok.start, f"unexpected {_describe(tok)}")
        return Program(source=src, body=body, heredocs=shared.heredocs)
    except ShellSyntaxError as e:
        return _failed(src, e.offset, e.message)
    except RecursionError:
        return _failed(src, 0, "input nested too deeply to analyse")
    except Exception as e:  # noqa: BLE001 - the parser must never raise
        return _failed(src, 0, f"internal parser error: {type(e).__name__}: {e}")


def _failed(src: str, offset: int, message: str) -> Program:
    offset = max(0, min(offset, len(src)))
    return Program(
        source=src,
        body=CommandList(0, 0, []),
        parse_ok=False,
        error_offset=offset,
        error_message=message,
    )


def parse(script: str) -> Program:
    """Parse ``script``; never raises (see module docstring)."""
    if not isinstance(script, str):
        return _failed("", 0, f"script must be a string, not {type(script).__name__}")
    return _parse(script, 0)
