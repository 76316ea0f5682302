"""Read a container hook's shell script and tell whether it can exit non-zero on its success path.

Why: a Kubernetes exec hook ``lifecycle.postStart.exec.command: ["/bin/sh", "-c", SCRIPT]``
*fails* when SCRIPT exits non-zero, and "If a PostStart or PreStop hook fails, it kills the
Container" (Kubernetes docs, Container Lifecycle Hooks, "Hook handler execution":
https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/).  A script whose
last statement is ``[ "$p" -ge 15 ] && fail "..."`` exits 1 exactly when the test is false,
i.e. on the success path.

API
---
``script_from_exec(command) -> (script, index) | None``
    The ``-c`` script of a shell exec list (``sh bash ash dash zsh ksh mksh``, with a path,
    behind ``env``/``busybox``, combined flags ``-ec``/``-xc``/``-euc``).  None for anything
    else: the exit status of a non-shell exec is whatever that binary returns and is not
    analysed.  ``parse_exec`` returns the same plus the ``-e``/``-o pipefail`` start options.
``analyze_exit(script, *, errexit=False, pipefail=False) -> ExitVerdict``
    ``may_fail``, ``kind`` (see ``KINDS``), ``statement`` (Span of the and-or list whose status
    is the script's), ``cause`` (Span of the innermost construct responsible, e.g. the
    ``[ ... ]`` of ``[ ... ] && fail``), ``reason`` (one line), ``parse_ok``, ``error_offset``,
    ``error_message``, ``notes`` (lower-confidence ``set -e`` abort points, EXIT traps).
    Never raises.  When ``parse_ok`` is False, ``kind == "parse-error"`` and ``may_fail`` is
    False: nothing is claimed -- callers should report the script as unanalysable (a real
    syntax error makes ``sh -c`` exit 2, but the parser may also lack some bash feature).
``analyze_exec(command) -> ExitVerdict | None``
    ``parse_exec`` + ``analyze_exit`` with the shell's start options; spans index the script.
``parse(script) -> Program``
    The AST (``fluxgraph.shell.nodes``) with exact offsets; never raises.

Semantics relied on (POSIX.1-2017, XCU chapter 2 "Shell Command Language",
https://pubs.opengroup.org/onlinepubs/9699919799/utilities/V3_chap02.html)
---------------------------------------------------------------------------------------
* 2.2 Quoting, 2.3 Token Recognition, 2.6.3 Command Substitution, 2.7.4 Here-Document,
  2.10 Shell Grammar: what the parser follows (reserved words only in command position,
  comments only at the start of a token, here-doc bodies after the next newline).
* 2.9.3 Lists: a sequential list has the status of its last command; an AND list
  ``a && b`` "shall be the exit status of the last command that is executed in the list"
  (so it is a's non-zero status when a fails); an OR list ``a || b`` is a's status when a
  succeeds, else b's (``x || true`` is safe); an asynchronous list ``cmd &`` has status 0.
  && and || have equal precedence and associate left: ``a && b || c`` is ``(a && b) || c``.
* 2.9.2 Pipelines: the status of the last command; ``!`` inverts it (bash ``set -o pipefail``:
  the last non-zero status of any command).
* 2.9.4 Compound Commands: ``( )``/``{ }`` have the status of their list; ``if`` has the status
  of the branch executed, or 0 if none was (a false condition does not fail the ``if``);
  ``while``/``until``/``for`` have the status of the last body command executed, or 0;
  ``case`` has the status of the matched arm's list, or 0 when nothing matches.
* 2.9.5 Function Definition Command: a definition has status 0; a call has the status of
  the body's last command (or of ``return N``).
* 2.9.1 Simple Commands: a command with no command name but with a command substitution has
  the status of the last substitution (``x=$(grep ...)`` can fail; ``local x=$(...)`` and
  ``export x=$(...)`` have the builtin's status, 0).
* 2.14 Special Built-In Utilities: ``exit n`` / ``return n`` (``exit`` without n, and
  ``exit $?``, keep the previous status); ``set -e``: the shell exits when a command fails,
  except in the condition of ``if``/``while``/``until``/``elif``, in a ``!`` pipeline, or in
  an AND-OR list other than after its last ``&&``/``||``.
* bash manual ("Conditional Constructs", "Pipelines"): ``[[ ]]`` and ``(( ))`` are 1 when false
  (``(( expr ))`` when expr evaluates to 0), ``;&``/``;;&``, ``|&``.

How the verdict is computed
---------------------------
The analysis follows the status rules above from the end of the script to the statements
that can set it.  Every such statement is classified:

* ``and-list-tail``: ``cond && action`` where ``cond`` can be false on a normal path (a test,
  a fallible command, a negation, a call of a function that can fail, ...);
* ``bare-test``: ``[ ]``, ``test``, ``[[ ]]``, ``(( ))``;
* ``fallible-command``: a command in ``FALLIBLE_COMMANDS`` (grep, curl, wget, nc, pgrep,
  kill, diff, cmp, expr, read, wait, which, ``command -v``, ...; wrappers ``command``,
  ``builtin``, ``exec``, ``env``, ``nice``, ``nohup``, ``time`` are looked through);
* ``explicit-exit``: ``exit N``/``return N``, N a non-zero literal, reached unconditionally;
* ``always-fails``: unconditional ``false``;
* ``negated-pipeline``: ``! cmd`` (non-zero whenever cmd succeeds);
* ``assignment-substitution``: ``x=$(cmd)`` with a cmd that may fail.

Any other command (``echo``, ``cp``, ``mkdir -p``, a command name computed at run time, an
unknown binary) is assumed to succeed: it can fail, but not on its success path.  ``exit N``
and ``false`` on a conditional path (an ``if`` branch, after ``&&``/``||``, a loop body, a case
arm, a function called conditionally) are an intentional failure and are not flagged; tests,
fallible commands and and-list tails are flagged wherever they end the taken path, because the
``if`` or loop then has their status.  If any branch of an ``if``/``case`` ends in a flagged
statement, the construct may fail.  A function call ending the script is analysed through the
body of the definition (the last one before the call); recursion is cut.  Output
redirections, background jobs and trailing comments/blank lines do not change the analysis;
``exit``/``exec cmd`` end the list they appear in (later statements are unreachable).

``set -e`` (from ``set -e``/``set -o errexit`` at top level, or ``sh -e -c`` via
``parse_exec``) does not change ``may_fail``: the script can then also abort early, and the
points where that happens (fallible statements not exempted by the 2.14 rules) are reported
as ``Note(kind="errexit-abort")``, lower confidence.  ``set -o pipefail`` at top level (or
``-o pipefail`` at start) makes a pipeline fail when any part may fail.

Not understood (documented gaps): EXIT traps (``Note(kind="exit-trap")`` only), ``eval`` /
``source`` / nested ``sh -c`` strings (treated as ordinary commands), ``break``/``continue``
exits from loops (a loop's status is taken from its body's last statement), aliases, errors
raised by the shell itself (bad redirection targets, unset variables under ``set -u``),
signals and timeouts, and zsh/ksh-only syntax.  Brace expansion and globs are kept as words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .execcmd import SHELLS, ShellExec, parse_exec, script_from_exec

if TYPE_CHECKING:
    from .exitstatus import FALLIBLE_COMMANDS, KINDS, ExitVerdict, Note, analyze_exit, analyze_program
    from .nodes import Program, Span
    from .parser import parse

# The parser and the exit-status analysis are imported on first use (PEP 562): most runs only
# need parse_exec to recognise a shell, and the rest is a noticeable part of start-up.
_LAZY = {
    "FALLIBLE_COMMANDS": "exitstatus",
    "KINDS": "exitstatus",
    "ExitVerdict": "exitstatus",
    "Note": "exitstatus",
    "analyze_exit": "exitstatus",
    "analyze_program": "exitstatus",
    "Program": "nodes",
    "Span": "nodes",
    "parse": "parser",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

__all__ = [
    "FALLIBLE_COMMANDS",
    "KINDS",
    "SHELLS",
    "ExitVerdict",
    "Note",
    "Program",
    "ShellExec",
    "Span",
    "analyze_exec",
    "analyze_exit",
    "analyze_program",
    "parse",
    "parse_exec",
    "script_from_exec",
]


def analyze_exec(command: list[str]) -> ExitVerdict | None:
    """Verdict for a shell ``-c`` exec command list, None when it is not one (never raises)."""
    from .exitstatus import analyze_exit

    pe = parse_exec(command)
    if pe is None:
        return None
    return analyze_exit(pe.script, errexit=pe.errexit, pipefail=pe.pipefail)
