"""Tokenizer for POSIX sh plus common bash extensions: the words, operators and
here-documents :mod:`fluxgraph.shell.parser` builds its syntax tree from.

Token recognition follows POSIX XCU 2.3 (operators, quoting per 2.2, ``#`` comments at the
start of a token, backslash-newline line continuation), here-documents per 2.7.4 (bodies are
read at the next newline token, several per line in order, ``<<-`` strips leading tabs, a
quoted delimiter makes the body literal) and command substitution per 2.6.3: a ``$(...)`` body
is parsed by the grammar while it is read, so ``)`` inside quotes, comments, here-docs or
``case`` patterns does not end it; backquote bodies are un-escaped and parsed separately. The
lexer and the grammar are mutually recursive for that reason: the two places that parse a
substitution import the parser when they run.
"""

from __future__ import annotations

import re

from .nodes import (
    CommandSubst,
    HereDoc,
    Program,
    Word,
)

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
        from .parser import _Parser  # the grammar reads the body (see the module docstring)

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
        from .parser import _parse, _parse_at  # the grammar reads the body (see the module docstring)

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
