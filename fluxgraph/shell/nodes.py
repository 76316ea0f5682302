"""AST node types for the shell reader.

Every node carries ``start``/``end`` character offsets into the script text it was
parsed from (``end`` is exclusive), so ``script[node.start:node.end]`` is the node's
source.  The one exception is the program of a backquoted command substitution: its
text is the backquote body after backslash un-escaping, so its offsets are relative
to ``Program.source`` of that inner program (``CommandSubst.absolute`` is False).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    """Half-open character range ``[start, end)`` into a script."""

    start: int
    end: int

    def text(self, source: str) -> str:
        return source[self.start : self.end]


@dataclass(eq=False)
class Node:
    start: int
    end: int

    @property
    def span(self) -> Span:
        return Span(self.start, self.end)


@dataclass(eq=False)
class CommandSubst(Node):
    """``$(...)``, backquotes, or bash process substitution ``<(...)`` / ``>(...)``."""

    program: Program | None
    style: str  # "dollar" | "backquote" | "process"
    absolute: bool  # True when program offsets index the outer script


@dataclass(eq=False)
class Word(Node):
    raw: str  # source text of the word
    unquoted: str  # quote removal applied, expansions left as written
    dynamic: bool  # contains a parameter/command/arithmetic expansion
    quoted: bool  # contains any quoting character
    substs: list[CommandSubst] = field(default_factory=list)

    @property
    def value(self) -> str | None:
        """The word's static value, or None when it depends on an expansion."""
        return None if self.dynamic else self.unquoted


@dataclass(eq=False)
class HereDoc:
    delimiter: str
    strip_tabs: bool  # ``<<-``
    quoted: bool  # delimiter was quoted: body is literal
    body_start: int = -1
    body_end: int = -1
    terminated: bool = False  # False: body runs to end of input (bash warns, accepts)


@dataclass(eq=False)
class Redirect(Node):
    op: str
    fd: str | None
    target: Word
    heredoc: HereDoc | None = None


@dataclass(eq=False)
class SimpleCommand(Node):
    assignments: list[Word]
    words: list[Word]
    redirects: list[Redirect]


@dataclass(eq=False)
class CommandList(Node):
    items: list[ListItem]


@dataclass(eq=False)
class ListItem(Node):
    """One and-or list plus the separator after it (``;``, ``&``, newline or None)."""

    command: AndOr
    separator: str | None


@dataclass(eq=False)
class Pipeline(Node):
    commands: list[Command]
    negated: bool = False
    timed: bool = False


@dataclass(eq=False)
class AndOr(Node):
    first: Pipeline
    rest: list[tuple[str, Pipeline]]  # ("&&" | "||", pipeline), left-associative


@dataclass(eq=False)
class Subshell(Node):
    body: CommandList
    redirects: list[Redirect] = field(default_factory=list)


@dataclass(eq=False)
class Group(Node):
    body: CommandList
    redirects: list[Redirect] = field(default_factory=list)


@dataclass(eq=False)
class IfClause(Node):
    keyword: str  # "if" | "elif"
    condition: CommandList
    body: CommandList


@dataclass(eq=False)
class If(Node):
    clauses: list[IfClause]
    else_body: CommandList | None
    redirects: list[Redirect] = field(default_factory=list)


@dataclass(eq=False)
class Loop(Node):
    keyword: str  # "while" | "until"
    condition: CommandList
    body: CommandList
    redirects: list[Redirect] = field(default_factory=list)


@dataclass(eq=False)
class ForLoop(Node):
    keyword: str  # "for" | "select"
    var: Word | None  # None for the arithmetic form
    items: list[Word] | None  # None: no ``in`` (iterates "$@")
    arith: str | None  # bash ``for ((...))`` header text
    body: CommandList
    redirects: list[Redirect] = field(default_factory=list)


@dataclass(eq=False)
class CaseItem(Node):
    patterns: list[Word]
    body: CommandList
    terminator: str | None  # ";;" | ";&" | ";;&" | None (last arm before esac)


@dataclass(eq=False)
class Case(Node):
    word: Word
    items: list[CaseItem]
    redirects: list[Redirect] = field(default_factory=list)


@dataclass(eq=False)
class FunctionDef(Node):
    name: str
    name_span: Span
    body: Command


@dataclass(eq=False)
class ArithCommand(Node):
    """bash ``(( expr ))``."""

    expr: str
    redirects: list[Redirect] = field(default_factory=list)


@dataclass(eq=False)
class CondCommand(Node):
    """bash ``[[ ... ]]``; ``words`` are the raw tokens between the brackets."""

    words: list[str]
    redirects: list[Redirect] = field(default_factory=list)


Command = (
    SimpleCommand | Subshell | Group | If | Loop | ForLoop | Case | FunctionDef | ArithCommand | CondCommand
)


@dataclass(eq=False)
class Program:
    source: str
    body: CommandList
    parse_ok: bool = True
    error_offset: int | None = None
    error_message: str | None = None
    heredocs: list[HereDoc] = field(default_factory=list)


def children(node: object) -> Iterator[Node]:
    """Direct child nodes of ``node`` (words, redirects and command nodes)."""
    if isinstance(node, Program):
        yield node.body
    elif isinstance(node, CommandList):
        yield from node.items
    elif isinstance(node, ListItem):
        yield node.command
    elif isinstance(node, AndOr):
        yield node.first
        for _, p in node.rest:
            yield p
    elif isinstance(node, Pipeline):
        yield from node.commands
    elif isinstance(node, SimpleCommand):
        yield from node.assignments
        yield from node.words
        yield from node.redirects
    elif isinstance(node, Subshell | Group):
        yield node.body
        yield from node.redirects
    elif isinstance(node, If):
        yield from node.clauses
        if node.else_body is not None:
            yield node.else_body
        yield from node.redirects
    elif isinstance(node, IfClause):
        yield node.condition
        yield node.body
    elif isinstance(node, Loop):
        yield node.condition
        yield node.body
        yield from node.redirects
    elif isinstance(node, ForLoop):
        if node.var is not None:
            yield node.var
        yield from node.items or ()
        yield node.body
        yield from node.redirects
    elif isinstance(node, Case):
        yield node.word
        yield from node.items
        yield from node.redirects
    elif isinstance(node, CaseItem):
        yield from node.patterns
        yield node.body
    elif isinstance(node, FunctionDef):
        yield node.body
    elif isinstance(node, ArithCommand | CondCommand):
        yield from node.redirects
    elif isinstance(node, Redirect):
        yield node.target
    elif isinstance(node, Word):
        yield from node.substs
    elif isinstance(node, CommandSubst):
        # Only substitutions whose offsets index the same text are children.
        if node.program is not None and node.absolute:
            yield node.program.body


def walk(node: object) -> Iterator[Node]:
    """Pre-order walk over ``node`` and its descendants (iterative, no recursion limit)."""
    stack: list[object] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Node):
            yield n
        stack.extend(reversed(list(children(n))))
