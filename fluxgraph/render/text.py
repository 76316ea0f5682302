"""Human text report, as compilers and linters print (rustc, ruff): findings grouped by file;
per finding the location, severity, rule and headline on one line, the offending source line
with a caret under it, then labelled notes (``= why:``, ``= affected:``, ``= evidence:``,
``= note:``, ``= fix:``) indented and wrapped to the width; a summary line closes. ``verbose``
adds the whole message and where the rule's long text is (``fluxgraph rules ID``)."""

from __future__ import annotations

import re
import textwrap
from itertools import groupby

from fluxgraph.engine import Report
from fluxgraph.findings import Finding, Note, NoteLabel
from fluxgraph.repofs import PathEscape

_COLORS = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "info": "\x1b[1;36m"}
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_BLUE = "\x1b[1;34m"
_RESET = "\x1b[0m"
WIDTH = 100  # when the output is not a terminal
MIN_WIDTH = 60
MAX_ITEMS = 6  # list items a note shows before "and N more" (all of them with verbose)
# what the caret underlines from the column: an expression ${...}, else a word up to a colon
_SPAN = re.compile(r"\$\{[^}\n]*\}?|[^\s:,\"']+")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(report: Report) -> str:
    c = report.counts()
    hazards = len(report.findings)
    parts = [
        _plural(len(report.clusters), "cluster"),
        _plural(report.kustomizations, "Kustomization"),
        _plural(report.assertions, "assertion"),
        _plural(hazards, "hazard") + (f" ({c['error']} error, {c['warning']} warning, {c['info']} info)" if hazards else ""),
        f"{len(report.not_evaluated)} not evaluated",
    ]
    if report.suppressed:
        parts.append(f"{len(report.suppressed)} suppressed")
    return ", ".join(parts)


class _Style:
    def __init__(self, color: bool):
        self.color = color

    def __call__(self, code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if self.color and text else text


def _source_line(report: Report, f: Finding) -> str | None:
    cache = report.repo.cache
    if cache is None:
        return None
    try:
        lines = cache.read_bytes(f.location.file).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError, PathEscape):
        return None  # a file that cannot be shown (the finding says why, where that matters)
    if f.location.line > len(lines):
        return None
    return lines[f.location.line - 1].expandtabs(4)


def _snippet(report: Report, f: Finding, width: int, style: _Style) -> list[str]:
    """The source line of ``f`` and a caret under its column, cut to ``width`` around it."""
    text = _source_line(report, f)
    if text is None or not text.strip():
        return []
    gutter = str(f.location.line)
    pad = " " * len(gutter)
    col = min(f.location.column - 1, len(text))
    m = _SPAN.match(text, col)
    span = max(1, min(len(m.group(0)) if m else 1, 40))
    room = width - len(gutter) - 6
    start = 0
    if len(text) > room:  # a window around the column, marked where cut
        start = max(0, min(col - room // 3, len(text) - room))
    shown = text[start : start + room]
    if start:
        shown = "…" + shown[1:]
    if start + room < len(text):
        shown = shown[:-1] + "…"
    sev = _COLORS[f.severity.value]
    caret = " " * (col - start) + "^" * min(span, max(1, room - (col - start)))
    return [
        f"  {pad} {style(_BLUE, '|')}",
        f"  {style(_BLUE, gutter)} {style(_BLUE, '|')} {shown.rstrip()}",
        f"  {pad} {style(_BLUE, '|')} {style(sev, caret)}",
    ]


def _note_lines(note: Note, indent: str, width: int, verbose: bool, style: _Style) -> list[str]:
    label = f"= {note.label.value}:"
    head = f"{indent}{style(_BOLD, label)} "
    hang = indent + " " * (len(label) + 1)
    body_width = max(20, width - len(hang))
    out: list[str] = []
    items = list(note.items)
    inline = bool(items) and not note.text and (len(items) == 1 or (len(items) <= 3 and len(", ".join(items)) <= body_width))
    text = note.text if not inline else ", ".join(items)
    if note.text and items and len(items) == 1 and len(note.text) + len(items[0]) + 2 <= body_width:
        text, items, inline = f"{note.text}: {items[0]}", [], True
    if text:
        wrapped = textwrap.wrap(text, body_width, break_on_hyphens=False, break_long_words=True) or [text]
        out.append(head + wrapped[0])
        out += [hang + w for w in wrapped[1:]]
    else:
        out.append(head.rstrip())
    if items and not inline:
        shown = items if verbose or len(items) <= MAX_ITEMS + 1 else items[:MAX_ITEMS]
        for item in shown:
            wrapped = textwrap.wrap(item, body_width - 2, break_on_hyphens=False, break_long_words=True) or [item]
            out.append(f"{hang}- {wrapped[0]}")
            out += [f"{hang}  {w}" for w in wrapped[1:]]
        if len(shown) < len(items):
            out.append(f"{hang}  … and {len(items) - len(shown)} more (--verbose)")
    return out


def render_finding(report: Report, f: Finding, *, width: int = WIDTH, color: bool = False, verbose: bool = False) -> list[str]:
    style = _Style(color)
    sev = f.severity.value
    where = f"{f.location.line}:{f.location.column}"
    lead = f"  {where}  {sev}  {f.rule}: "
    styled_lead = f"  {where}  {style(_COLORS[sev], sev)}  {style(_BOLD, f.rule)}: "
    hang = "      "
    first_width = max(20, width - len(lead))
    words = textwrap.wrap(f.headline, first_width, break_on_hyphens=False, break_long_words=True) or [f.headline]
    lines = [styled_lead + style(_BOLD, words[0])]
    rest = " ".join(words[1:])
    if rest:
        lines += [hang + style(_BOLD, w) for w in textwrap.wrap(rest, width - len(hang), break_on_hyphens=False, break_long_words=True)]
    lines += _snippet(report, f, width, style)
    indent = "   " + " " * len(str(f.location.line))  # the "=" under the gutter's "|"
    notes = list(f.notes)
    said = " ".join([f.headline, *(n.text + " " + " ".join(n.items) for n in notes)])
    if f.kustomization and f.kustomization not in said:
        notes.insert(0, Note(NoteLabel.NOTE, f"in Kustomization {f.kustomization}"))
    if verbose:
        notes.append(Note(NoteLabel.NOTE, f"in full: {f.message}"))
        notes.append(Note(NoteLabel.NOTE, f"the rule: fluxgraph rules {f.rule}"))
    for note in notes:
        lines += _note_lines(note, indent, width, verbose, style)
    return lines


def render_text(report: Report, color: bool = False, width: int = WIDTH, verbose: bool = False) -> str:
    style = _Style(color)
    lines: list[str] = report.flux_lines()
    if lines:
        lines.append("")
    width = max(MIN_WIDTH, width)
    for file, group in groupby(report.findings, key=lambda f: f.location.file):
        lines.append(style(_BOLD, file))
        for f in group:
            lines += render_finding(report, f, width=width, color=color, verbose=verbose)
            lines.append("")
    if report.not_evaluated:
        lines.append(style(_BOLD, "not evaluated:"))
        for p in report.not_evaluated:
            wrapped = textwrap.wrap(f"{p.location.file_line}  {p.message}", width - 2, subsequent_indent="    ", break_on_hyphens=False, break_long_words=True)
            lines += ["  " + w for w in wrapped]
        lines.append("")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
