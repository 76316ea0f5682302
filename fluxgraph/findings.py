"""Findings: what a check reports, and what the engine makes of it.

A check yields ``RawFinding``s (facts: message, location, objects). The engine stamps the rule
ID, severity (from the catalog, or the user's configuration) and suppression, and sorts; a
check never decides its own severity.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from fluxgraph.model import Location, ObjRef


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls(text.lower())
        except ValueError:
            raise ValueError(f"unknown severity {text!r} (error, warning, info)") from None


class Applicability(StrEnum):
    """Whether a finding's repair can be made without a person (as ruff's fix applicability):
    ``safe`` (one mechanical repair, ``fluxgraph fix`` makes it), ``needs-review`` (a repair
    exists but changes behaviour a person must confirm), ``none`` (no mechanical repair: the
    fix is a decision; ``FixData.reason`` says which)."""

    SAFE = "safe"
    REVIEW = "needs-review"
    NONE = "none"


JsonPath = tuple["str | int", ...]


def sentence(text: str) -> str:
    """``text`` with its first letter capitalised when it starts with a plain word (never a
    name such as ``flux-system/apps``, ``helm-controller`` or ``spec.path``): a note's text."""
    if re.match(r"[a-z]+(?=[ ,])", text):
        return text[:1].upper() + text[1:]
    return text


class NoteLabel(StrEnum):
    """What a note of a finding says (rustc's ``= note:``/``= help:``): ``why`` (the mechanism,
    one sentence), ``affected`` (what it reaches, a list), ``evidence`` (file:line references),
    ``note`` (a caveat that changes how to read it), ``fix`` (what to do; the rule's fix line
    unless the check knows better)."""

    WHY = "why"
    AFFECTED = "affected"
    EVIDENCE = "evidence"
    NOTE = "note"
    FIX = "fix"


@dataclass(frozen=True)
class Note:
    """One labelled note under a finding's headline: a sentence (``text``), a list
    (``items``), or both (a sentence introducing the list)."""

    label: NoteLabel
    text: str = ""
    items: tuple[str, ...] = ()

    @classmethod
    def why(cls, text: str) -> Note:
        return cls(NoteLabel.WHY, text)

    @classmethod
    def affected(cls, items: Iterable[str], text: str = "") -> Note:
        return cls(NoteLabel.AFFECTED, text, tuple(items))

    @classmethod
    def evidence(cls, items: Iterable[str], text: str = "") -> Note:
        return cls(NoteLabel.EVIDENCE, text, tuple(items))

    @classmethod
    def note(cls, text: str) -> Note:
        return cls(NoteLabel.NOTE, text)

    @classmethod
    def fix(cls, text: str) -> Note:
        return cls(NoteLabel.FIX, text)

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"label": self.label.value}
        if self.text:
            out["text"] = self.text
        if self.items:
            out["items"] = list(self.items)
        return out

    def as_text(self) -> str:
        """The note on one line (``text: a, b, c``), for formats with no room for structure."""
        items = ", ".join(self.items)
        return f"{self.text}: {items}" if self.text and items else self.text or items


@dataclass(frozen=True)
class FixData:
    """What ``fluxgraph fix`` needs to repair a finding, typed: where the text is (``path`` in
    the object before substitution, ``start``/``end`` in that string), the Kustomization to
    depend on (``depends_on``, and ``provides``: what it applies that the finding's
    Kustomization needs), and the variant of the repair (``variant``: the kind of escape, the
    verdict of a hook, ``hook``: which one). ``applicability`` ``none`` with ``reason`` where
    there is no mechanical repair."""

    applicability: Applicability = Applicability.SAFE
    reason: str = ""
    path: JsonPath | None = None
    start: int | None = None
    end: int | None = None
    depends_on: str | None = None
    provides: str = ""
    variant: str = ""
    hook: str = ""

    @classmethod
    def none(cls, reason: str) -> FixData:
        return cls(applicability=Applicability.NONE, reason=reason)


@dataclass(frozen=True)
class RawFinding:
    """``headline``: the fact, in about 100 characters, with the names that make it this
    finding (what SARIF ``message.text``, annotation titles and JUnit messages carry);
    ``notes``: the rest, labelled (``Note``); ``message``: the whole text in one sentence, as
    ``--verbose`` prints it and as the fingerprint of a finding without ``subject`` reads it."""

    message: str
    location: Location
    obj: ObjRef | None = None
    kustomization: str | None = None
    related: tuple[Location, ...] = ()
    # the stable part of the fingerprint (what the finding is about, not where it is)
    subject: str = ""
    # a severity the rule's doc allows as a variant (e.g. a system namespace); None = default
    severity: Severity | None = None
    fix: FixData | None = None  # for ``fluxgraph fix``
    # One finding per cause: raw findings of one rule with the same ``cause`` (the place that
    # brings the hazard to several Kustomizations: a parent's patch, a shared component) and
    # the same ``cause_message`` are reported once, there, listing the Kustomizations
    # (``engine.group_by_cause``). ``cause_subject`` keys the grouped finding's fingerprint. The
    # two texts mean nothing without a ``cause``.
    cause: Location | None = None
    cause_message: str = ""
    cause_subject: str = ""
    headline: str = ""
    notes: tuple[Note, ...] = ()
    # the headline of the grouped finding (``cause_message`` is its long text)
    cause_headline: str = ""
    cause_why: str = ""  # the group's mechanism, where ``cause_message`` says more than that


@dataclass(frozen=True, order=True)
class Finding:
    location: Location
    rule: str
    severity: Severity = field(compare=False)
    message: str
    cluster: str = field(default="", compare=False)
    obj: ObjRef | None = field(default=None, compare=False)
    kustomization: str | None = field(default=None, compare=False)
    related: tuple[Location, ...] = field(default=(), compare=False)
    fingerprint: str = field(default="", compare=False)
    fix: FixData | None = field(default=None, compare=False)
    # the Kustomizations a finding grouped per cause stands for (empty for a single finding),
    # and the findings it groups (what ``fluxgraph fix`` repairs, one by one)
    kustomizations: tuple[str, ...] = field(default=(), compare=False)
    members: tuple[Finding, ...] = field(default=(), compare=False, repr=False)
    # the short fact and its labelled notes (the engine adds evidence and fix: ``with_notes``)
    headline: str = field(default="", compare=False)
    notes: tuple[Note, ...] = field(default=(), compare=False)

    def note(self, label: NoteLabel) -> Note | None:
        return next((n for n in self.notes if n.label is label), None)

    @staticmethod
    def fingerprint_of(rule: str, raw: RawFinding) -> str:
        """Stable across line moves: rule + file + subject (object identity or message)."""
        subject = raw.subject or (str(raw.obj) if raw.obj else raw.message)
        return fingerprint(rule, raw.location.file, subject)


def fingerprint(rule: str, file: str, subject: str) -> str:
    return hashlib.sha256(f"{rule}\x00{file}\x00{subject}".encode()).hexdigest()[:32]
