"""Recognise ``[<shell>, ..., "-c", <script>, ...]`` exec command lists (container
``command``/``args``, ``lifecycle.postStart.exec.command``, probes).

Accepted shells: ``sh bash ash dash zsh ksh mksh`` by basename (``/bin/sh``, ``/usr/bin/bash``),
optionally behind ``env`` (``/usr/bin/env bash``, ``env -i FOO=1 sh``) or ``busybox``
(``busybox sh``).  Options may be separate or combined and may come before the script in any
order: ``-c``, ``-ec``, ``-xc``, ``-euc``, ``-e -c``, ``-o pipefail -c``, ``-lc``,
``--login -c``, ``--rcfile F -c``.  The script is the first operand after the options (POSIX
``sh -c [options] command_string [command_name [argument...]]``).

Anything else -- a binary run directly, ``sh script.sh`` without ``-c``, ``env -S ...``,
``sh -c`` without a script, non-string list elements -- yields None: the exit status of such
an exec is whatever that program returns, which this package does not know.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["SHELLS", "ShellExec", "parse_exec", "script_from_exec"]

SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh", "ksh", "mksh"})

# bash long options that take an argument
_LONG_WITH_ARG = frozenset({"--rcfile", "--init-file"})


@dataclass(frozen=True)
class ShellExec:
    shell: str  # basename, e.g. "bash"
    script: str
    index: int  # position of the script in the command list
    errexit: bool  # started with -e / -o errexit
    pipefail: bool  # started with -o pipefail
    options: tuple[str, ...]  # the option words before the script


def _base(arg: str) -> str:
    return arg.rstrip("/").rsplit("/", 1)[-1]


def parse_exec(command: object) -> ShellExec | None:
    """Describe a shell ``-c`` exec command list, or None when it is not one.  Never raises."""
    if not isinstance(command, Sequence) or isinstance(command, str | bytes):
        return None
    args = list(command)
    if not args or not all(isinstance(a, str) for a in args):
        return None
    i = 0
    first = _base(args[0])
    if first == "env":
        i = 1
        while i < len(args):
            a = args[i]
            if a in ("-u", "--unset", "-C", "--chdir"):
                i += 2
            elif a == "--":
                i += 1
                break
            elif a.startswith("-S") or a.startswith("--split-string"):
                return None
            elif a.startswith("-") or ("=" in a and not a.startswith("=")):
                i += 1
            else:
                break
    elif first == "busybox":
        i = 1
    if i >= len(args) or _base(args[i]) not in SHELLS:
        return None
    shell = _base(args[i])
    i += 1
    has_c = errexit = pipefail = False
    options: list[str] = []
    while i < len(args):
        a = args[i]
        if a in ("--", "-"):
            options.append(a)
            i += 1
            break
        if a.startswith("--"):
            options.append(a)
            i += 1
            if a in _LONG_WITH_ARG and i < len(args):
                options.append(args[i])
                i += 1
            continue
        if len(a) < 2 or a[0] not in "-+":
            break
        options.append(a)
        i += 1
        on = a[0] == "-"
        for ch in a[1:]:
            if ch == "c" and on:
                has_c = True
            elif ch == "e":
                errexit = on
            elif ch in "oO" and i < len(args):
                opt = args[i]
                options.append(opt)
                i += 1
                if ch == "o" and opt == "errexit":
                    errexit = on
                elif ch == "o" and opt == "pipefail":
                    pipefail = on
    if not has_c or i >= len(args):
        return None
    return ShellExec(shell, args[i], i, errexit, pipefail, tuple(options))


def script_from_exec(command: list[str]) -> tuple[str, int] | None:
    """``(script, index)`` for a shell ``-c`` exec command list, else None (see module doc)."""
    pe = parse_exec(command)
    return None if pe is None else (pe.script, pe.index)
