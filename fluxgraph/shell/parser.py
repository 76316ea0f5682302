"""Tolerant recursive-descent parser for POSIX sh plus common bash extensions.

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

from .lexer import (
    _ASSIGN_RE,
    _REDIR_OPS,
    _STOP_OPS,
    _STOP_WORDS,
    MAX_NESTING,
    ShellSyntaxError,
    _describe,
    _kw_text,
    _Lexer,
    _Shared,
    _Tok,
)
from .nodes import (
    AndOr,
    ArithCommand,
    Case,
    CaseItem,
    Command,
    CommandList,
    CondCommand,
    ForLoop,
    FunctionDef,
    Group,
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
