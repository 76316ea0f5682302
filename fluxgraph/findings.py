"""Findings: what a check reports, and what the engine makes of it.

A check yields ``RawFinding``s (facts: message, location, objects). The engine stamps the rule
ID, severity (from the catalog, or the user's configuration) and suppression, and sorts; a
check never decides its own severity.
"""

from __future__ import annotations

import hashlib
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


@dataclass(frozen=True)
class RawFinding:
    message: str
    location: Location
    obj: ObjRef | None = None
    kustomization: str | None = None
    related: tuple[Location, ...] = ()
    # the stable part of the fingerprint (what the finding is about, not where it is)
    subject: str = ""
    # a severity the rule's doc allows as a variant (e.g. a system namespace); None = default
    severity: Severity | None = None
    details: tuple[tuple[str, str], ...] = ()


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
    details: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @staticmethod
    def fingerprint_of(rule: str, raw: RawFinding) -> str:
        """Stable across line moves: rule + file + subject (object identity or message)."""
        subject = raw.subject or (str(raw.obj) if raw.obj else raw.message)
        h = hashlib.sha256(f"{rule}\x00{raw.location.file}\x00{subject}".encode()).hexdigest()
        return h[:32]
