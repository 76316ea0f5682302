"""Tests for fluxgraph.shell: the sh/bash reader and the exit-status verdict."""

from __future__ import annotations

import itertools
import random
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fluxgraph.shell import (
    KINDS,
    ExitVerdict,
    analyze_exec,
    analyze_exit,
    parse,
    parse_exec,
    script_from_exec,
)
from fluxgraph.shell.nodes import CommandSubst, SimpleCommand, Word, walk

# The incident: a postStart hook whose last statement is `[ ... ] && fail ...`.
INCIDENT = """set -u
fail() {
  echo "postStart: $*" >&2
  exit 1
}
cat > /etc/app/limits.conf <<EOF
# generated; do not edit
max_load=15 && strict=1
EOF
p=$(cut -d. -f1 /proc/loadavg)
echo "load is $p"
[ "$p" -ge 15 ] && fail "load average $p too high"
"""
INCIDENT_LAST = '[ "$p" -ge 15 ] && fail "load average $p too high"'
INCIDENT_BODY = INCIDENT[: INCIDENT.index('[ "$p"')]


def stmt(script: str, v: ExitVerdict) -> str:
    return script[v.statement.start : v.statement.end]


def cause(script: str, v: ExitVerdict) -> str:
    return script[v.cause.start : v.cause.end]


# (script, kind, statement text, cause text or None)
CASES: list[tuple[str, str, str | None, str | None]] = [
    # --- the incident and its safe variants -------------------------------------------------
    (INCIDENT, "and-list-tail", INCIDENT_LAST, '[ "$p" -ge 15 ]'),
    (INCIDENT + "\n# done\n\n   \n", "and-list-tail", INCIDENT_LAST, '[ "$p" -ge 15 ]'),
    (INCIDENT.rstrip("\n") + " || true\n", "ok", INCIDENT_LAST + " || true", None),
    (INCIDENT.rstrip("\n") + " || :", "ok", INCIDENT_LAST + " || :", None),
    (INCIDENT + "exit 0\n", "ok", "exit 0", None),
    (INCIDENT + "true\n", "ok", "true", None),
    (
        INCIDENT_BODY + 'if [ "$p" -ge 15 ]; then fail "too high"; fi\n',
        "ok",
        'if [ "$p" -ge 15 ]; then fail "too high"; fi',
        None,
    ),
    (
        INCIDENT_BODY + '[ "$p" -lt 15 ] || fail "too high"\n',
        "ok",
        '[ "$p" -lt 15 ] || fail "too high"',
        None,
    ),
    (INCIDENT_BODY + "fail late\n", "explicit-exit", "fail late", "exit 1"),
    # --- && / || / ; semantics -----------------------------------------------------------------
    ("[ -f /x ] && exit 1", "and-list-tail", "[ -f /x ] && exit 1", "[ -f /x ]"),
    ("test -d /x && rm -rf /x", "and-list-tail", "test -d /x && rm -rf /x", "test -d /x"),
    ("grep -q x /f && echo found", "and-list-tail", "grep -q x /f && echo found", "grep -q x /f"),
    ("mkdir -p /x && cp a /x/", "ok", "mkdir -p /x && cp a /x/", None),
    ("echo a && grep b c", "fallible-command", "echo a && grep b c", "grep b c"),
    ("[ -f x ] && echo y || grep z w", "fallible-command", "[ -f x ] && echo y || grep z w", "grep z w"),
    ("[ -f x ] || [ -f y ]", "bare-test", "[ -f x ] || [ -f y ]", "[ -f y ]"),
    ("echo hi || grep a b", "ok", "echo hi || grep a b", None),
    ("[ a ] && [ b ] && echo", "and-list-tail", "[ a ] && [ b ] && echo", "[ a ]"),
    ("[ -f x ] \\\n  && echo y", "and-list-tail", "[ -f x ] \\\n  && echo y", "[ -f x ]"),
    ("[ -f x ] &&\n\n  echo y", "and-list-tail", "[ -f x ] &&\n\n  echo y", "[ -f x ]"),
    ("grep a b; echo done", "ok", "echo done", None),
    ("echo a\n[ -e /ready ]\n", "bare-test", "[ -e /ready ]", "[ -e /ready ]"),
    # --- quoting: operators inside quotes, substitutions, here-docs, comments ------------------
    ('echo "a && b"', "ok", 'echo "a && b"', None),
    ("echo '[ -f x ] && exit 1'", "ok", "echo '[ -f x ] && exit 1'", None),
    ("echo $'it\\'s && [ x ]'", "ok", "echo $'it\\'s && [ x ]'", None),
    ('echo "$(grep -q x f && echo y)"', "ok", 'echo "$(grep -q x f && echo y)"', None),
    ('v=$(a && b || c); echo "$v"', "ok", 'echo "$v"', None),
    ("echo hi # && [ -f x ]", "ok", "echo hi", None),
    ("echo hi\n# [ -f x ] && fail\n\n", "ok", "echo hi", None),
    ("echo a#b && [ x ]", "bare-test", "echo a#b && [ x ]", "[ x ]"),
    ("cat <<EOF\n[ -f x ] && exit 1\nEOF\n", "ok", "cat <<EOF", None),
    ("cat <<EOF >/tmp/f\nline\nEOF\n[ -f x ] && y\n", "and-list-tail", "[ -f x ] && y", "[ -f x ]"),
    ("cat <<-EOF\n\t[ -f x ] && exit 1\n\tEOF\necho ok\n", "ok", "echo ok", None),
    ("cat <<'EOF'\n$(oops ` \" '\nEOF\n[ -f x ] && y", "and-list-tail", "[ -f x ] && y", "[ -f x ]"),
    ('cat <<"E O"\nE\nE O\ngrep a b', "fallible-command", "grep a b", "grep a b"),
    ("cat <<A; cat <<B\na\nA\nb\nB\ntrue", "ok", "true", None),
    ("cat <<EOF | grep -q x\nx\nEOF\n", "fallible-command", "cat <<EOF | grep -q x", "grep -q x"),
    ('grep x <<< "$v"', "fallible-command", 'grep x <<< "$v"', 'grep x <<< "$v"'),
    # --- command substitution: nesting, parens, case patterns, backquotes ----------------------
    ('v=$(echo $(case a in a) echo "(";; esac) ")"); echo "$v"', "ok", 'echo "$v"', None),
    ("echo $(echo ')' \"(\" # )\n)\n[ x ]", "bare-test", "[ x ]", "[ x ]"),
    ("x=$(grep a b)", "assignment-substitution", "x=$(grep a b)", "grep a b"),
    ("x=$( (grep a b) )", "assignment-substitution", "x=$( (grep a b) )", "grep a b"),
    ("x=$(grep a b || true)", "ok", "x=$(grep a b || true)", None),
    ("x=`grep a b`", "assignment-substitution", "x=`grep a b`", "grep a b"),
    ("x=`echo \\`grep a b\\``", "ok", "x=`echo \\`grep a b\\``", None),
    ("x=`grep \\$a b`", "assignment-substitution", "x=`grep \\$a b`", "`grep \\$a b`"),
    ("export X=$(grep a b)", "ok", "export X=$(grep a b)", None),
    ('echo ${x:-$(echo })} && [ -z "${y#\\}}" ]', "bare-test", None, '[ -z "${y#\\}}" ]'),
    ("echo $((1 + (2 * 3))) && grep a b", "fallible-command", None, "grep a b"),
    # --- if / loops / case ---------------------------------------------------------------------------
    ("if [ x ]; then echo; fi", "ok", "if [ x ]; then echo; fi", None),
    ("if grep -q a b; then echo; else echo no; fi", "ok", None, None),
    ("if a; then echo; elif b; then grep x y; else :; fi", "fallible-command", "grep x y", "grep x y"),
    (
        "if a; then\n  echo\nelse\n  [ -f x ] && touch x\nfi",
        "and-list-tail",
        "[ -f x ] && touch x",
        "[ -f x ]",
    ),
    ("if a; then exit 1; fi", "ok", "if a; then exit 1; fi", None),
    ('while read l; do echo "$l"; done < /f', "ok", None, None),
    ("for i in 1 2; do [ -f $i ]; done", "bare-test", "[ -f $i ]", "[ -f $i ]"),
    ("until curl -sf http://x; do sleep 1; done", "ok", None, None),
    ("for ((i=0; i<3; i++)); do echo $i; done", "ok", None, None),
    (
        'case "$1" in\n  start) run ;;\n  stop|halt) [ -f /pid ] && kill "$(cat /pid)" ;;\n  *) echo ;;\nesac',
        "and-list-tail",
        '[ -f /pid ] && kill "$(cat /pid)"',
        "[ -f /pid ]",
    ),
    ("case x in (a) echo;; (*) :;; esac", "ok", None, None),
    ("case x in a) grep a b; esac", "fallible-command", "grep a b", "grep a b"),
    ("case x in a) ;; b) grep a b;& c) echo;; esac", "fallible-command", "grep a b", "grep a b"),
    ("case $x in *.txt|*.md) echo doc;; esac", "ok", None, None),
    # --- functions, groups, subshells ----------------------------------------------------------------
    ("f() { [ -f x ]; }\nf", "bare-test", "f", "[ -f x ]"),
    ("function g { grep -q a b; }; g arg", "fallible-command", "g arg", "grep -q a b"),
    ("function g() (\n  echo\n)\ng", "ok", "g", None),
    ("f() { [ -f x ]; }", "ok", "f() { [ -f x ]; }", None),
    ("f() { f; }; f", "ok", "f", None),
    ("check() { [ -f /x ] || return 1; }\ncheck", "ok", "check", None),
    ("check() { [ -f /x ] || return 1; }\ncheck && echo ok", "ok", "check && echo ok", None),
    ("check() { [ -f /x ]; }\ncheck && echo ok", "and-list-tail", "check && echo ok", "[ -f /x ]"),
    ("{ [ -f x ] && y; }", "and-list-tail", "[ -f x ] && y", "[ -f x ]"),
    ("( [ -f x ] && y )", "and-list-tail", "[ -f x ] && y", "[ -f x ]"),
    ("{ echo; } >/dev/null 2>&1", "ok", None, None),
    # --- pipelines, negation, background --------------------------------------------------------------
    ("grep a b | wc -l", "ok", "grep a b | wc -l", None),
    ("set -o pipefail\ncurl -s x | tee y", "fallible-command", "curl -s x | tee y", "curl -s x"),
    ("set -euo pipefail\ncurl -s x | tee y", "fallible-command", "curl -s x | tee y", "curl -s x"),
    ("! grep -q err /log", "negated-pipeline", "! grep -q err /log", "! grep -q err /log"),
    ("! false", "ok", "! false", None),
    ("echo | grep -q x |& cat", "ok", None, None),
    ("sleep 10 &", "ok", "sleep 10", None),
    ("[ -f x ] && y &", "ok", "[ -f x ] && y", None),
    ("time grep a b", "fallible-command", "time grep a b", "grep a b"),
    # --- exit / return / true / false ------------------------------------------------------------------
    ("exit 0", "ok", "exit 0", None),
    ("exit 1", "explicit-exit", "exit 1", "exit 1"),
    ("exit 256", "ok", "exit 256", None),
    ("echo a; exit 3; echo unreachable", "explicit-exit", "exit 3", "exit 3"),
    ("exit 0\n[ -f x ] && y", "ok", "exit 0", None),
    ("grep a b\nexit", "fallible-command", "grep a b", "grep a b"),
    ("grep a b\nexit $?", "fallible-command", "grep a b", "grep a b"),
    ('exit "$rc"', "ok", None, None),
    ("false", "always-fails", "false", "false"),
    ("true", "ok", "true", None),
    (":", "ok", ":", None),
    ("", "ok", "", None),
    ("  \n# only a comment\n", "ok", None, None),
    # --- bash-isms -----------------------------------------------------------------------------------
    ("(( i++ ))", "bare-test", "(( i++ ))", "(( i++ ))"),
    ("[[ -n $x && $y == *) ]]", "bare-test", None, None),
    ("[[ $x =~ ^(a|b)$ ]] && echo m", "and-list-tail", None, "[[ $x =~ ^(a|b)$ ]]"),
    ('a=(1 2 "3 )"); echo "${a[@]}"', "ok", 'echo "${a[@]}"', None),
    ("select x in a b; do break; done", "ok", None, None),
    ("echo @(a|b) && echo", "ok", None, None),
    ("diff <(sort a) <(sort b)", "fallible-command", None, None),
    ("cmd &>/dev/null", "ok", None, None),
    # --- command wrappers and fallible-command list -----------------------------------------------------
    ("command -v foo", "fallible-command", None, None),
    ("command grep a b", "fallible-command", None, None),
    ("exec grep a b", "fallible-command", None, None),
    ("exec >/tmp/log 2>&1\necho hi", "ok", "echo hi", None),
    ("env A=1 /usr/bin/curl -f http://x", "fallible-command", None, None),
    ('"grep" x', "fallible-command", None, None),
    ("\\kill -0 1", "fallible-command", None, None),
    ("$CMD arg", "ok", None, None),
    ("nc -z db 5432", "fallible-command", None, None),
    ("pgrep nginx >/dev/null", "fallible-command", None, None),
    ("wget -q -O- http://x", "fallible-command", None, None),
    ("cmp a b", "fallible-command", None, None),
    ("if then=1; then :; fi", "ok", None, None),
    ("echo if then fi done esac }", "ok", None, None),
]


@pytest.mark.parametrize(("script", "kind", "statement", "cause_text"), CASES)
def test_verdict_table(script: str, kind: str, statement: str | None, cause_text: str | None) -> None:
    v = analyze_exit(script)
    assert v.parse_ok, v.error_message
    assert v.kind == kind, v.reason
    assert v.may_fail == (kind != "ok")
    assert kind in KINDS
    if statement is not None:
        assert stmt(script, v) == statement
    if cause_text is not None:
        assert cause(script, v) == cause_text
    assert v.reason and "\n" not in v.reason


def test_incident_reason_points_at_the_test() -> None:
    v = analyze_exit(INCIDENT)
    assert v.may_fail
    assert INCIDENT.count(INCIDENT_LAST) == 1
    assert v.statement.start == INCIDENT.index(INCIDENT_LAST)
    assert v.statement.end == v.statement.start + len(INCIDENT_LAST)
    assert "is false" in v.reason


def test_incident_through_exec_list() -> None:
    command = ["/bin/sh", "-c", INCIDENT]
    assert script_from_exec(command) == (INCIDENT, 2)
    v = analyze_exec(command)
    assert v is not None and v.kind == "and-list-tail"
    assert analyze_exec(["/app/healthcheck", "--ready"]) is None


# --- parse errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "offset"),
    [
        ("if true; then echo", 18),
        ('echo "unterminated', 5),
        ("echo 'x", 5),
        ("echo $(ls", 5),
        ("echo `ls", 5),
        ("echo ${x", 5),
        ("a && ", 5),
        ("a | | b", 4),
        ("fi", 0),
        ("}", 0),
        ("echo )", 5),
        ("{ echo }", 8),
        ("f() echo", 4),
        ("while a; do done", 12),
        ("[[ -f x", 0),
        ("a;;", 1),
    ],
)
def test_parse_errors(script: str, offset: int) -> None:
    prog = parse(script)
    assert not prog.parse_ok
    assert prog.error_offset == offset, prog.error_message
    v = analyze_exit(script)
    assert not v.parse_ok and v.kind == "parse-error" and not v.may_fail
    assert v.error_offset == offset and v.error_message
    assert v.statement.start == v.statement.end == offset


def test_unterminated_heredoc_is_accepted() -> None:
    # bash and dash accept a here-doc ended by end of input (with a warning).
    prog = parse("cat <<EOF\nbody && x\n")
    assert prog.parse_ok
    (hd,) = prog.heredocs
    assert not hd.terminated and hd.delimiter == "EOF"


# --- AST details ---------------------------------------------------------------------------------------


def test_heredoc_bodies_and_offsets() -> None:
    src = "cat <<A <<-'B'; echo x\nbody a\nA\n\tbody $(b\n\tB\necho end\n"
    prog = parse(src)
    assert prog.parse_ok
    a, b = prog.heredocs
    assert src[a.body_start : a.body_end] == "body a\n" and not a.quoted and not a.strip_tabs
    assert src[b.body_start : b.body_end] == "\tbody $(b\n" and b.quoted and b.strip_tabs
    assert [src[i.start : i.end] for i in prog.body.items] == ["cat <<A <<-'B'", "echo x", "echo end"]


def test_words_quote_removal_and_substitutions() -> None:
    src = "echo 'a b'\"c$d\"\\e $'\\x41\\n' $(date) `id`"
    prog = parse(src)
    cmd = prog.body.items[0].command.first.commands[0]
    assert isinstance(cmd, SimpleCommand)
    w = cmd.words
    assert [x.raw for x in w] == ["echo", "'a b'\"c$d\"\\e", "$'\\x41\\n'", "$(date)", "`id`"]
    assert w[1].unquoted == "a bc$de" and w[1].dynamic and w[1].value is None
    assert w[2].value == "A\n"
    assert [s.style for s in w[3].substs + w[4].substs] == ["dollar", "backquote"]
    assert all(s.absolute for s in w[3].substs + w[4].substs)


def test_reserved_words_only_in_command_position() -> None:
    prog = parse("echo if; \\if; 'fi'")
    names = [n.words[0].raw for n in walk(prog) if isinstance(n, SimpleCommand)]
    assert names == ["echo", "\\if", "'fi'"]


def test_all_spans_within_text_for_valid_scripts() -> None:
    for script, *_ in CASES:
        prog = parse(script)
        for node in walk(prog):
            assert 0 <= node.start <= node.end <= len(script), (script, node)
            if isinstance(node, Word):
                assert script[node.start : node.end] == node.raw
            if isinstance(node, CommandSubst) and node.absolute:
                assert script[node.start] in "$`<>"


# --- set -e and traps ----------------------------------------------------------------------------------


def test_set_e_notes_are_info_only() -> None:
    script = "set -e\ngrep a /b\n[ -f x ] && y\nif c; then curl x; fi\necho done\n"
    v = analyze_exit(script)
    assert v.kind == "ok" and not v.may_fail
    noted = [script[n.span.start : n.span.end] for n in v.notes if n.kind == "errexit-abort"]
    # `[ -f x ] && y` is exempt from -e (not the last command of the and-or list),
    # the `if` condition is exempt, the branch body is not.
    assert noted == ["grep a /b", "curl x"]


def test_set_e_from_exec_flags() -> None:
    v = analyze_exec(["sh", "-ec", "grep a b\necho"])
    assert v is not None and [n.kind for n in v.notes] == ["errexit-abort"]
    v = analyze_exec(["sh", "-c", "grep a b\necho"])
    assert v is not None and v.notes == ()
    v = analyze_exit("set -e\nset +e\ngrep a b\necho")
    assert v.notes == ()


def test_exit_trap_note() -> None:
    v = analyze_exit("trap 'exit 0' EXIT\n[ -f x ] && y")
    assert v.kind == "and-list-tail"
    assert [n.kind for n in v.notes] == ["exit-trap"]


# --- script_from_exec ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["/bin/sh", "-c", "echo"], ("echo", 2)),
        (["sh", "-c", "echo", "name", "arg"], ("echo", 2)),
        (["bash", "-ec", "x"], ("x", 2)),
        (["bash", "-xc", "x"], ("x", 2)),
        (["/bin/bash", "-euc", "x"], ("x", 2)),
        (["ash", "-e", "-c", "x"], ("x", 3)),
        (["dash", "-c", "-e", "x"], ("x", 3)),
        (["zsh", "-c", "x"], ("x", 2)),
        (["/usr/bin/env", "bash", "-c", "x"], ("x", 3)),
        (["env", "-i", "A=1", "sh", "-c", "x"], ("x", 5)),
        (["bash", "-o", "pipefail", "-c", "x"], ("x", 4)),
        (["bash", "--login", "-c", "x"], ("x", 3)),
        (["bash", "--rcfile", "/r", "-lc", "x"], ("x", 4)),
        (["busybox", "sh", "-c", "x"], ("x", 3)),
        (["sh", "-c", "--", "x"], ("x", 3)),
        (["/app/run", "-c", "x"], None),
        (["python3", "-c", "print(1)"], None),
        (["sh", "/script.sh"], None),
        (["sh", "-e", "/script.sh"], None),
        (["sh", "-c"], None),
        (["/usr/bin/env", "-S", "sh -c x"], None),
        ([], None),
        ("sh -c x", None),
        (["sh", "-c", 1], None),
        (None, None),
    ],
)
def test_script_from_exec(command: object, expected: tuple[str, int] | None) -> None:
    assert script_from_exec(command) == expected  # type: ignore[arg-type]


def test_parse_exec_options() -> None:
    pe = parse_exec(["bash", "-euo", "pipefail", "-c", "x"])
    assert pe is not None and pe.errexit and pe.pipefail and pe.shell == "bash" and pe.index == 4
    pe = parse_exec(["sh", "-c", "x"])
    assert pe is not None and not pe.errexit and not pe.pipefail
    pe = parse_exec(["bash", "-o", "pipefail", "-c", "curl x | cat"])
    assert pe is not None
    v = analyze_exec(["bash", "-o", "pipefail", "-c", "curl x | cat"])
    assert v is not None and v.kind == "fallible-command"


# --- robustness ----------------------------------------------------------------------------------------

SHELLISH = st.sampled_from(
    [
        "a", "echo", " ", " ", "\n", "\t", ";", ";;", "&", "&&", "||", "|", "!", "(", ")", "{", "}",
        "if", "then", "else", "elif", "fi", "while", "do", "done", "for", "in", "case", "esac",
        "'", '"', "\\", "`", "$", "$(", "${", "$((", "))", "((", "#", "<<", "<<-", "EOF", "<<'EOF'",
        ">", "2>&1", "[", "]", "[[", "]]", "f()", "function", "=", "x=", "$'", "*)", "@(", "exit 1",
        "[ -f x ]", "grep", "true", "false", "\\\n", "\r",
    ]
)  # fmt: skip


def _check_never_raises(text: str) -> None:
    v = analyze_exit(text)
    n = len(text)
    assert isinstance(v, ExitVerdict)
    assert v.kind in KINDS and "\n" not in v.reason
    for span in [v.statement, v.cause, *(note.span for note in v.notes)]:
        assert 0 <= span.start <= span.end <= n
    if not v.parse_ok:
        assert v.error_offset is not None and 0 <= v.error_offset <= n
    prog = parse(text)
    assert prog.parse_ok == v.parse_ok
    for node in walk(prog):
        assert 0 <= node.start <= node.end <= n


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    _check_never_raises(text)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SHELLISH, max_size=40).map("".join))
def test_shellish_text_never_raises(text: str) -> None:
    _check_never_raises(text)


@pytest.mark.parametrize(
    "text",
    [
        "(" * 5000 + "a" + ")" * 5000,
        "$(" * 3000,
        "{ " * 3000,
        '"$(' * 3000,
        "$((" * 3000,
        "`" * 2001,
        " && ".join(["[ a ]"] * 3000),
        "f() { f; }; f",
        "\n".join(f"f{i}() {{ if a; then f{i + 1}; else f{i + 1}; fi; }}" for i in range(200)) + "\nf0",
        "cat <<E\n" * 2000,
    ],
)
def test_pathological_inputs(text: str) -> None:
    _check_never_raises(text)


# --- differential check against a real shell ------------------------------------------------------------

_SHELL = shutil.which("dash") or shutil.which("sh")


class _Gen:
    """Random scripts over independent test atoms `[ "$Bk" = 1 ]` and always-succeeding commands.

    With every test free to be true or false, "may the script exit non-zero?" has an exact
    answer: run it under every assignment of the B variables.
    """

    def __init__(self, rnd: random.Random) -> None:
        self.r = rnd
        self.bits = 0
        self.fn = 0

    def test(self) -> str:
        self.bits += 1
        return f'[ "$B{self.bits}" = 1 ]'

    def gen(self, d: int) -> str:
        if d <= 0 or self.bits >= 6:
            return self.atom()
        k = self.r.randrange(12)
        g = self.gen
        if k == 0:
            return f"{g(d - 1)} && {g(d - 1)}"
        if k == 1:
            return f"{g(d - 1)} || {g(d - 1)}"
        if k == 2:
            return f"{g(d - 1)}\n{g(d - 1)}"
        if k == 3:
            return f"! {{ {g(d - 1)}; }}"
        if k == 4:
            return f"( {g(d - 1)} )"
        if k == 5:
            return f"if {self.test()}; then {g(d - 1)}; fi"
        if k == 6:
            return (
                f"if {self.test()}; then {g(d - 1)}; elif {self.test()}; then {g(d - 1)}; else {g(d - 1)}; fi"
            )
        if k == 7:
            self.bits += 1
            return f'case "$B{self.bits}" in 1) {g(d - 1)};; *) {g(d - 1)};; esac'
        if k == 8:
            return f"for _ in 1 2; do {g(d - 1)}; done"
        if k == 9:
            self.fn += 1
            name = f"f{self.fn}"
            return f"{{ {name}() {{ {g(d - 1)}; }}; {name}; }}"
        if k == 10:
            return f"{{ {g(d - 1)}; }} | {{ {g(d - 1)}; }}"
        return f"{g(d - 1)} # && false\n{g(d - 1)}"

    def atom(self) -> str:
        k = self.r.randrange(3)
        if k == 0 and self.bits < 6:
            return self.test()
        return ":" if k == 1 else "echo x >/dev/null"


def _may_fail_really(script: str, nbits: int) -> bool:
    assert _SHELL is not None
    runs = []
    for combo in itertools.product("01", repeat=nbits):
        assign = " ".join(f"B{i + 1}={v}" for i, v in enumerate(combo)) or ":"
        runs.append(f"{assign}; ( {script}\n ); echo $?")
    out = subprocess.run([_SHELL], input="\n".join(runs), capture_output=True, text=True, check=False)
    statuses = [int(x) for x in out.stdout.split()]
    assert len(statuses) == 2**nbits, out.stderr
    return any(statuses)


@pytest.mark.skipif(_SHELL is None, reason="no POSIX shell available")
@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=4))
def test_matches_real_shell(seed: int, depth: int) -> None:
    g = _Gen(random.Random(seed))
    script = g.gen(depth)
    v = analyze_exit(script)
    assert v.parse_ok, (script, v.error_message)
    assert v.may_fail == _may_fail_really(script, g.bits), (script, v.reason)
