"""Can a shell script exit non-zero on its success path?

:func:`analyze_exit` parses the script (:mod:`fluxgraph.shell.parser`) and follows the POSIX
rules for the exit status of each construct down to the statement whose status becomes the
script's status.  See the package docstring for the semantics and references.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .nodes import (
    AndOr,
    ArithCommand,
    Case,
    Command,
    CommandList,
    CommandSubst,
    CondCommand,
    ForLoop,
    FunctionDef,
    Group,
    If,
    ListItem,
    Loop,
    Pipeline,
    Program,
    SimpleCommand,
    Span,
    Subshell,
    Word,
    walk,
)
from .parser import parse

__all__ = [
    "ExitVerdict",
    "Note",
    "KINDS",
    "FALLIBLE_COMMANDS",
    "analyze_exit",
    "analyze_program",
]

#: Verdict kinds.  ``may_fail`` is True exactly for the kinds marked (F).
KINDS: dict[str, str] = {
    "ok": "the final status is 0 on normal paths (or not knowable statically and not flagged)",
    "and-list-tail": "(F) final `cond && action`: non-zero when `cond` is false",
    "bare-test": "(F) final `[ ]` / `test` / `[[ ]]` / `(( ))`: non-zero when the test is false",
    "fallible-command": "(F) final command from FALLIBLE_COMMANDS",
    "explicit-exit": "(F) unconditional `exit N` / `return N` with literal N != 0",
    "always-fails": "(F) unconditional `false`",
    "negated-pipeline": "(F) final `! pipeline`: non-zero whenever the pipeline succeeds",
    "assignment-substitution": "(F) final assignment-only command whose last $(...) may fail",
    "parse-error": "the script could not be parsed; nothing is claimed (check parse_ok)",
    "internal-error": "the analyser hit a bug; nothing is claimed",
}

#: Commands that commonly exit non-zero on paths that are not errors, with the reason.
FALLIBLE_COMMANDS: dict[str, str] = {
    "grep": "exits 1 when nothing matches",
    "egrep": "exits 1 when nothing matches",
    "fgrep": "exits 1 when nothing matches",
    "zgrep": "exits 1 when nothing matches",
    "rg": "exits 1 when nothing matches",
    "curl": "exits non-zero when the connection fails (and on HTTP errors with -f)",
    "wget": "exits non-zero on network and HTTP errors",
    "nc": "exits non-zero when the connection fails",
    "ncat": "exits non-zero when the connection fails",
    "netcat": "exits non-zero when the connection fails",
    "telnet": "exits non-zero when the connection fails",
    "ping": "exits non-zero when the host does not answer",
    "nslookup": "exits non-zero when the lookup fails",
    "dig": "exits non-zero when the lookup fails",
    "host": "exits non-zero when the name does not resolve",
    "getent": "exits non-zero when the key is not found",
    "pgrep": "exits 1 when no process matches",
    "pidof": "exits 1 when no process matches",
    "pkill": "exits 1 when no process matched",
    "killall": "exits non-zero when no process matched",
    "kill": "exits non-zero when the process does not exist",
    "diff": "exits 1 when the inputs differ",
    "cmp": "exits 1 when the inputs differ",
    "expr": "exits 1 when the result is 0 or empty",
    "read": "exits non-zero at end of input",
    "wait": "has the status of the awaited job",
    "which": "exits non-zero when the command is not found",
    "type": "exits non-zero when the name is not found",
    "hash": "exits non-zero when the command is not found",
    "id": "exits non-zero when the user does not exist",
    "timeout": "exits 124 when the time limit is reached",
    "mountpoint": "exits non-zero when the path is not a mount point",
    "flock": "exits non-zero when the lock is held (with -n)",
    "pg_isready": "exits non-zero when the server is not accepting connections",
}

_SAFE_BUILTINS = frozenset({"true", ":"})
_MAX_CALL_DEPTH = 40
_EXIT_WORDS = frozenset({"exit", "return"})


@dataclass(frozen=True)
class Note:
    """Lower-confidence information that does not affect ``may_fail``."""

    kind: str  # "errexit-abort" | "exit-trap"
    span: Span
    reason: str


@dataclass(frozen=True)
class ExitVerdict:
    may_fail: bool
    kind: str
    statement: Span  # the statement (and-or list) whose status is the script's status
    cause: Span  # the innermost construct responsible (e.g. the `[ ... ]` of `[ ... ] && x`)
    reason: str
    parse_ok: bool = True
    error_offset: int | None = None
    error_message: str | None = None
    notes: tuple[Note, ...] = ()


@dataclass(frozen=True)
class _R:
    fails: bool  # may be non-zero on a normal (non-error) path
    kind: str
    cause: Span
    reason: str
    always: bool = False  # non-zero on every path (`false`, `exit 1`)
    stmt: Span | None = None


@dataclass(frozen=True)
class _Ctx:
    conditional: bool = False  # reached only on some paths (branch, loop body, after &&/||)
    pipefail: bool = False
    active: frozenset[str] = frozenset()  # functions being expanded (recursion guard)


def _ok(span: Span, reason: str, always: bool = False) -> _R:
    return _R(False, "ok", span, reason, always)


class _Analyzer:
    def __init__(self, program: Program, funcs: dict[str, list[FunctionDef]] | None = None) -> None:
        self.src = program.source
        self.funcs: dict[str, list[FunctionDef]] = funcs if funcs is not None else {}
        self.call_memo: dict[tuple[int, bool, bool], _R] = {}
        self.errexit_seen: set[int] = set()
        if funcs is None:
            for node in walk(program):
                if isinstance(node, FunctionDef):
                    self.funcs.setdefault(node.name, []).append(node)

    def snip(self, node: Span | object, limit: int = 60) -> str:
        span = node if isinstance(node, Span) else getattr(node, "span", Span(0, 0))
        end = min(span.end, span.start + 4 * limit)  # bounded work on long statements
        text = " ".join(self.src[span.start : end].split())
        if end < span.end:
            text += " ..."
        return text if len(text) <= limit else text[: limit - 3] + "..."

    # -- lists ----------------------------------------------------------------------------------
    def analyze_list(self, lst: CommandList, ctx: _Ctx) -> _R:
        items = lst.items
        if not items:
            return _ok(lst.span, "no command runs, so the status is 0")
        eff = self.effective_last(items)
        it = items[eff]
        if it.separator == "&":
            r = _ok(
                it.command.span,
                f"`{self.snip(it.command)} &` runs in the background; an asynchronous list has status 0",
            )
        elif self.bare_exit(it.command):
            if eff == 0:
                r = _ok(
                    it.command.span, f"`{self.snip(it.command)}` keeps the status of the command before it"
                )
            else:
                prev = CommandList(items[0].start, items[eff - 1].end, items[:eff])
                inner = self.analyze_list(prev, ctx)
                r = replace(
                    inner, reason=f"`{self.snip(it.command)}` keeps the previous status: {inner.reason}"
                )
        else:
            r = self.analyze_andor(it.command, ctx)
        if r.stmt is None:
            r = replace(r, stmt=it.command.span)
        return r

    def effective_last(self, items: list[ListItem]) -> int:
        """Index of the last item that can run: the first unconditional `exit`, else the last."""
        for i, it in enumerate(items):
            if it.separator != "&" and self.terminates(it.command):
                return i
        return len(items) - 1

    def single_simple(self, ao: AndOr) -> SimpleCommand | None:
        if ao.rest or ao.first.negated or len(ao.first.commands) != 1:
            return None
        cmd = ao.first.commands[0]
        return cmd if isinstance(cmd, SimpleCommand) else None

    def terminates(self, ao: AndOr) -> bool:
        """Does this and-or list unconditionally end the script (or function)?"""
        sc = self.single_simple(ao)
        if sc is not None:
            if not sc.words:
                return False
            first = _base(sc.words[0].value)
            if first in _EXIT_WORDS:
                return True
            if first == "exec":
                idx = self.resolve(sc)
                return idx is not None and idx > 0
            return False
        if not ao.rest and not ao.first.negated and len(ao.first.commands) == 1:
            cmd = ao.first.commands[0]
            if isinstance(cmd, Group):
                return any(i.separator != "&" and self.terminates(i.command) for i in cmd.body.items)
        return False

    def bare_exit(self, ao: AndOr) -> bool:
        sc = self.single_simple(ao)
        if sc is None or not sc.words or _base(sc.words[0].value) not in _EXIT_WORDS:
            return False
        return len(sc.words) == 1 or sc.words[1].raw in ("$?", '"$?"', "${?}", '"${?}"')

    # -- and-or lists and pipelines ------------------------------------------------------------
    def analyze_andor(self, ao: AndOr, ctx: _Ctx) -> _R:
        acc = self.analyze_pipeline(ao.first, ctx)
        if not ao.rest:
            return acc
        cond = replace(ctx, conditional=True)
        left = Span(ao.first.start, ao.first.end)
        for op, p in ao.rest:
            rp = self.analyze_pipeline(p, cond)
            lt, rt = self.snip(left), self.snip(p)
            if op == "&&":
                if acc.fails:
                    if acc.kind == "and-list-tail":
                        new = acc
                    else:
                        why = "" if acc.kind == "bare-test" else f" ({acc.reason})"
                        new = _R(
                            True,
                            "and-list-tail",
                            acc.cause,
                            f"when `{lt}` is false{why}, the `&&` list stops there and has its "
                            "non-zero status",
                            acc.always or rp.always,
                        )
                elif rp.fails:
                    new = replace(rp, always=acc.always or rp.always)
                else:
                    new = _ok(rp.cause, f"`{rt}` runs after `{lt}`: {rp.reason}", rp.always)
            else:  # "||"
                if not acc.fails:
                    new = _ok(
                        acc.cause,
                        f"`{lt}` is not expected to fail, and then `||` keeps its status 0: {acc.reason}",
                    )
                elif rp.fails:
                    new = _R(
                        True,
                        rp.kind,
                        rp.cause,
                        f"if `{lt}` fails, `{rt}` runs and may fail too: {rp.reason}",
                        acc.always and rp.always,
                    )
                else:
                    new = _ok(
                        rp.cause,
                        f"a failure of `{lt}` is handled by `|| {rt}` ({rp.reason})",
                        acc.always and rp.always,
                    )
            acc = new
            left = Span(ao.first.start, p.end)
        return acc

    def analyze_pipeline(self, p: Pipeline, ctx: _Ctx) -> _R:
        cmds = p.commands
        r = self.analyze_command(cmds[-1], ctx)
        if len(cmds) > 1:
            if ctx.pipefail and not r.fails:
                for c in reversed(cmds[:-1]):
                    rc = self.analyze_command(c, ctx)
                    if rc.fails:
                        r = replace(
                            rc,
                            reason=f"with `set -o pipefail` a pipeline fails if any part fails: {rc.reason}",
                        )
                        break
            else:
                r = replace(r, reason=f"a pipeline has the status of its last command: {r.reason}")
        if p.negated:
            if r.always:
                return _ok(p.span, f"`!` inverts an always-failing command: {r.reason}")
            return _R(
                True,
                "negated-pipeline",
                p.span,
                f"`{self.snip(p)}` is non-zero whenever the negated command succeeds",
                always=not r.fails,
            )
        return r

    # -- commands ---------------------------------------------------------------------------------
    def analyze_command(self, cmd: Command, ctx: _Ctx) -> _R:
        cond = replace(ctx, conditional=True)
        if isinstance(cmd, SimpleCommand):
            return self.analyze_simple(cmd, ctx)
        if isinstance(cmd, Subshell | Group):
            return self.analyze_list(cmd.body, ctx)
        if isinstance(cmd, If):
            branches: list[tuple[str, CommandList]] = [(c.keyword, c.body) for c in cmd.clauses]
            if cmd.else_body is not None:
                branches.append(("else", cmd.else_body))
            results = [(kw, self.analyze_list(body, cond)) for kw, body in branches]
            # Non-zero on every path only if some branch is always taken and all are.
            always = cmd.else_body is not None and all(r.always for _, r in results)
            for kw, r in results:
                if r.fails:
                    where = "then" if kw == "if" else kw
                    return replace(r, reason=f"in the `{where}` branch of `if`: {r.reason}", always=always)
            return _ok(
                cmd.span,
                "an `if` has the status of the branch taken (0 when none is; a false condition "
                "does not fail it) and no branch ends in a command expected to fail",
                always,
            )
        if isinstance(cmd, Loop | ForLoop):
            r = self.analyze_list(cmd.body, cond)
            # Only a `for` over a literal, non-empty word list surely runs its body.
            runs = (
                isinstance(cmd, ForLoop)
                and cmd.keyword == "for"
                and bool(cmd.items)
                and not any(w.dynamic for w in cmd.items or ())
            )
            r = replace(r, always=r.always and runs)
            if r.fails:
                return replace(
                    r, reason=f"a `{cmd.keyword}` loop has the status of its body's last command: {r.reason}"
                )
            return _ok(
                cmd.span,
                f"a `{cmd.keyword}` loop has the status of its body's last command (0 if none ran): {r.reason}",
            )
        if isinstance(cmd, Case):
            arms = [(item, self.analyze_list(item.body, cond)) for item in cmd.items]
            catch_all = any(w.raw == "*" for item in cmd.items for w in item.patterns)
            always = catch_all and all(r.always for _, r in arms)
            for item, r in arms:
                if r.fails:
                    pats = self.snip(Span(item.patterns[0].start, item.patterns[-1].end), 30)
                    return replace(r, reason=f"in the `{pats})` arm of `case`: {r.reason}", always=always)
            return _ok(
                cmd.span,
                "a `case` has the status of the matched arm (0 when none matches) and no arm "
                "ends in a command expected to fail",
                always,
            )
        if isinstance(cmd, FunctionDef):
            return _ok(cmd.span, f"defining function `{_one_line(cmd.name)}` has status 0")
        if isinstance(cmd, ArithCommand):
            return _R(
                True,
                "bare-test",
                cmd.span,
                f"`{self.snip(cmd)}` has status 1 when the expression evaluates to 0",
            )
        if isinstance(cmd, CondCommand):
            return _R(True, "bare-test", cmd.span, f"`{self.snip(cmd)}` has status 1 when the test is false")
        return _ok(Span(0, 0), "unrecognised construct")  # pragma: no cover

    def resolve(self, sc: SimpleCommand) -> int | None:
        """Index of the word that names the command actually run (skipping wrappers)."""
        words = sc.words
        i = 0
        while i < len(words):
            b = _base(words[i].value)
            j = i + 1
            if b in ("command", "builtin"):
                opts = ""
                while j < len(words) and (v := words[j].value) and v.startswith("-") and v != "-":
                    j += 1
                    if v == "--":
                        break
                    opts += v[1:]
                if b == "command" and ("v" in opts or "V" in opts):
                    return i
            elif b == "exec":
                while j < len(words) and (v := words[j].value) and v.startswith("-"):
                    j += 2 if v == "-a" else 1
                    if v == "--":
                        break
            elif b == "env":
                while j < len(words) and (v := words[j].value) is not None:
                    if v in ("-u", "--unset", "-C", "--chdir"):
                        j += 2
                    elif v.startswith("-") or ("=" in v and not v.startswith("=")):
                        j += 1
                    else:
                        break
            elif b == "nice":
                while j < len(words) and (v := words[j].value) and v.startswith("-"):
                    j += 2 if v == "-n" else 1
            elif b in ("nohup", "time"):
                while b == "time" and j < len(words) and (v := words[j].value) and v.startswith("-"):
                    j += 1
            else:
                return i
            if j >= len(words):
                return i  # the wrapper alone (`exec >log`, bare `env`)
            i = j
        return None

    def analyze_simple(self, sc: SimpleCommand, ctx: _Ctx) -> _R:
        span = sc.span
        if not sc.words:
            substs = [s for w in sc.assignments for s in w.substs]
            if substs:
                return self.analyze_subst(sc, substs[-1], ctx)
            return _ok(span, "an assignment or redirection without a command has status 0")
        idx = self.resolve(sc)
        if idx is None:
            return _ok(span, "command wrapper without a command")
        w = sc.words[idx]
        name = w.value
        if name is None:
            return _ok(
                span, f"the command name `{self.snip(w)}` is computed at run time; its status is not analysed"
            )
        base = _base(name) or name
        args = sc.words[idx + 1 :]
        if "/" not in name and name in self.funcs and base not in _EXIT_WORDS:
            return self.analyze_call(sc, name, ctx)
        if base in _EXIT_WORDS:
            return self.analyze_exit_cmd(sc, base, args, ctx)
        if base in _SAFE_BUILTINS:
            return _ok(span, f"`{_one_line(base)}` always has status 0")
        if base == "false":
            if ctx.conditional:
                return _ok(span, "`false` on a conditional path is an intentional failure", always=True)
            return _R(True, "always-fails", span, "unconditional `false` has status 1", always=True)
        if base in ("test", "["):
            return _R(True, "bare-test", span, f"`{self.snip(sc)}` has status 1 when the test is false")
        if base == "command":
            if any(
                a.value is not None and a.value[:1] == "-" and set(a.value[1:]) & {"v", "V"} for a in args
            ):
                return _R(
                    True, "fallible-command", span, "`command -v` exits non-zero when the name is not found"
                )
            return _ok(span, "`command` without a command name has status 0")
        if base in FALLIBLE_COMMANDS:
            return _R(True, "fallible-command", span, f"`{base}` {FALLIBLE_COMMANDS[base]}")
        return _ok(span, f"`{_one_line(base)}` is not among the commands that commonly fail on normal paths")

    def analyze_exit_cmd(self, sc: SimpleCommand, base: str, args: list[Word], ctx: _Ctx) -> _R:
        span = sc.span
        if not args or args[0].raw in ("$?", '"$?"', "${?}", '"${?}"'):
            return _ok(span, f"`{base}` without a literal operand keeps the previous status")
        v = args[0].value
        if v is None:
            return _ok(span, f"`{self.snip(sc)}` uses a status computed at run time; not analysed")
        try:
            n = int(v.strip()) & 0xFF
        except ValueError:
            return _ok(span, f"`{self.snip(sc)}`: non-numeric status; not analysed")
        if n == 0:
            return _ok(span, f"`{self.snip(sc)}` has status 0")
        if ctx.conditional:
            return _ok(
                span, f"`{self.snip(sc)}` on a conditional path is an intentional failure", always=True
            )
        return _R(
            True, "explicit-exit", span, f"unconditional `{self.snip(sc)}` sets status {n}", always=True
        )

    def lookup(self, name: str, at: int) -> FunctionDef:
        """The definition a call at offset ``at`` runs: the last one before it, else the last."""
        defs = self.funcs[name]
        before = [d for d in defs if d.start < at]
        return before[-1] if before else defs[-1]

    def analyze_call(self, sc: SimpleCommand, name: str, ctx: _Ctx) -> _R:
        if name in ctx.active:
            return _ok(sc.span, f"recursive call of `{_one_line(name)}`; not analysed")
        if len(ctx.active) >= _MAX_CALL_DEPTH:
            return _ok(sc.span, f"call chain deeper than {_MAX_CALL_DEPTH} functions; not analysed")
        fdef = self.lookup(name, sc.start)
        key = (id(fdef), ctx.conditional, ctx.pipefail)
        r = self.call_memo.get(key)
        if r is None:
            r = self.analyze_command(fdef.body, replace(ctx, active=ctx.active | {name}))
            self.call_memo[key] = r
        if r.fails:
            return _R(
                True,
                r.kind,
                r.cause,
                f"`{_one_line(name)}` (function at offset {fdef.start}) has the status of its last statement: "
                f"{r.reason}",
                r.always,
            )
        return _ok(sc.span, f"`{_one_line(name)}` (function at offset {fdef.start}): {r.reason}", r.always)

    def analyze_subst(self, sc: SimpleCommand, sub: CommandSubst, ctx: _Ctx) -> _R:
        prog = sub.program
        prefix = "an assignment-only command has the status of its last command substitution"
        if prog is None or not prog.parse_ok:
            return _ok(sc.span, f"{prefix}, which could not be parsed; not analysed")
        inner = self if sub.absolute else _Analyzer(prog)
        r = inner.analyze_list(prog.body, replace(ctx, conditional=False))
        if not r.fails:
            return _ok(sc.span, f"{prefix}: {r.reason}")
        cause = r.cause if sub.absolute else sub.span
        return _R(True, "assignment-substitution", cause, f"{prefix}: {r.reason}", r.always)

    # -- set -e --------------------------------------------------------------------------------------
    def errexit_hazards(self, ao: AndOr, ctx: _Ctx, out: list[Note]) -> None:
        """Points where `set -e` would abort the script (XCU 2.14 `set -e` exemptions applied)."""
        last = ao.rest[-1][1] if ao.rest else ao.first
        if last.negated:
            return
        cmds = last.commands if ctx.pipefail else last.commands[-1:]
        for c in cmds:
            self.errexit_cmd(c, ctx, out)

    def errexit_list(self, lst: CommandList, ctx: _Ctx, out: list[Note]) -> None:
        for it in lst.items:
            if it.separator != "&":
                self.errexit_hazards(it.command, ctx, out)

    def errexit_cmd(self, c: Command, ctx: _Ctx, out: list[Note]) -> None:
        if isinstance(c, SimpleCommand):
            idx = self.resolve(c) if c.words else None
            name = c.words[idx].value if idx is not None else None
            if name is not None and "/" not in name and name in self.funcs:
                fdef = self.lookup(name, c.start)
                if id(fdef) not in self.errexit_seen and len(ctx.active) < _MAX_CALL_DEPTH:
                    self.errexit_seen.add(id(fdef))
                    self.errexit_cmd(fdef.body, replace(ctx, active=ctx.active | {name}), out)
                return
            r = self.analyze_simple(c, ctx)
            if r.fails and r.kind != "explicit-exit":
                out.append(
                    Note(
                        "errexit-abort",
                        c.span,
                        f"under `set -e` the script aborts here when this fails: {r.reason}",
                    )
                )
        elif isinstance(c, ArithCommand | CondCommand):
            r = self.analyze_command(c, ctx)
            out.append(
                Note(
                    "errexit-abort",
                    c.span,
                    f"under `set -e` the script aborts here when this fails: {r.reason}",
                )
            )
        elif isinstance(c, Subshell | Group):
            self.errexit_list(c.body, ctx, out)
        elif isinstance(c, If):
            for cl in c.clauses:
                self.errexit_list(cl.body, ctx, out)
            if c.else_body is not None:
                self.errexit_list(c.else_body, ctx, out)
        elif isinstance(c, Loop | ForLoop):
            self.errexit_list(c.body, ctx, out)
        elif isinstance(c, Case):
            for item in c.items:
                self.errexit_list(item.body, ctx, out)


def _one_line(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _base(name: str | None) -> str | None:
    if name is None:
        return None
    return name.rsplit("/", 1)[-1] or name


def _set_options(sc: SimpleCommand | None, errexit: bool, pipefail: bool) -> tuple[bool, bool]:
    """Apply a top-level ``set`` command's -e / -o errexit / -o pipefail flags."""
    if sc is None or not sc.words or sc.words[0].value != "set":
        return errexit, pipefail
    words = [w.value or "" for w in sc.words[1:]]
    i = 0
    while i < len(words):
        a = words[i]
        i += 1
        if a in ("--", "-"):
            break
        if len(a) < 2 or a[0] not in "-+":
            break
        on = a[0] == "-"
        for ch in a[1:]:
            if ch == "e":
                errexit = on
            elif ch == "o" and i < len(words):
                opt = words[i]
                i += 1
                if opt == "errexit":
                    errexit = on
                elif opt == "pipefail":
                    pipefail = on
    return errexit, pipefail


def analyze_program(program: Program, *, errexit: bool = False, pipefail: bool = False) -> ExitVerdict:
    """Exit-status verdict for an already parsed program (see :func:`analyze_exit`)."""
    src = program.source
    if not program.parse_ok:
        off = program.error_offset or 0
        return ExitVerdict(
            may_fail=False,
            kind="parse-error",
            statement=Span(off, off),
            cause=Span(off, off),
            reason=f"could not parse the script at offset {off}: {program.error_message}",
            parse_ok=False,
            error_offset=off,
            error_message=program.error_message,
        )
    an = _Analyzer(program)
    items: list[ListItem] = program.body.items
    # Track `set -e` / `set -o pipefail` through the top-level statements.
    states: list[tuple[bool, bool]] = []
    state = (errexit, pipefail)
    for it in items:
        states.append(state)
        state = _set_options(an.single_simple(it.command), *state)
    last = an.effective_last(items) if items else -1
    final_pipefail = states[last][1] if items else pipefail
    r = an.analyze_list(program.body, _Ctx(pipefail=final_pipefail))

    notes: list[Note] = []
    for it, (on, pf) in zip(items[: last + 1], states, strict=False):
        if on and it.separator != "&":
            an.errexit_hazards(it.command, _Ctx(pipefail=pf), notes)
    for node in walk(program):
        if isinstance(node, SimpleCommand) and node.words and node.words[0].value == "trap":
            sigs = {w.value for w in node.words[2:]}
            if sigs & {"EXIT", "exit", "0", "SIGEXIT"}:
                notes.append(
                    Note(
                        "exit-trap",
                        node.span,
                        "an EXIT trap runs when the script ends and can change its status; not analysed",
                    )
                )
    seen: set[Span] = set()
    uniq: list[Note] = []
    for n in notes:
        if n.span in seen or (n.kind == "errexit-abort" and n.span == r.cause):
            continue
        seen.add(n.span)
        uniq.append(n)

    stmt = r.stmt if r.stmt is not None else Span(len(src), len(src))
    return ExitVerdict(
        may_fail=r.fails,
        kind=r.kind if r.fails else "ok",
        statement=stmt,
        cause=r.cause,
        reason=r.reason,
        parse_ok=True,
        notes=tuple(uniq),
    )


def analyze_exit(script: str, *, errexit: bool = False, pipefail: bool = False) -> ExitVerdict:
    """Can ``script`` (an ``sh -c`` script) finish with a non-zero status on a normal path?

    ``errexit``/``pipefail`` give the options the shell was started with (``sh -e -c``,
    ``bash -o pipefail -c``; see :func:`fluxgraph.shell.parse_exec`).  Never raises.
    """
    try:
        return analyze_program(parse(script), errexit=errexit, pipefail=pipefail)
    except Exception as e:  # noqa: BLE001 - the analyser must never raise
        return ExitVerdict(
            may_fail=False,
            kind="internal-error",
            statement=Span(0, 0),
            cause=Span(0, 0),
            reason=f"internal analyser error: {type(e).__name__}: {e}",
            parse_ok=True,
        )
