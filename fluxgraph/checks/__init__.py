"""Checks: one module per rule, ``ID`` plus a pure ``check(ctx)`` generator over the model.

A check reads the built cluster model (``ctx.cluster``) and yields ``RawFinding``s; it does no
I/O, prints nothing and never decides severity or suppression (the engine does). It calls
``ctx.evaluated()`` once per assertion it evaluates, so that a clean report says how much was
looked at, and ``ctx.not_evaluated(problem)`` for what it could not look at. Modules are discovered from this package; the catalog test keeps every check
matched by a ``rules/<ID>.md`` entry and a good/bad fixture pair.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from fluxgraph.findings import FixData, Note, RawFinding
from fluxgraph.model import Location, ObjRef, Problem

if TYPE_CHECKING:
    from fluxgraph.api import Repository
    from fluxgraph.cluster import ClusterModel
    from fluxgraph.suppress import Suppression

CheckFn = Callable[[Any], Iterable[RawFinding]]  # a CheckContext, or a RepoContext in phase 2


class _Findings:
    """What both contexts give a check: ``finding`` (a RawFinding, typed: a misspelled field
    is a TypeError) and ``evaluated`` (one assertion looked at, counted for the report)."""

    assertions: int

    def evaluated(self, n: int = 1) -> None:
        self.assertions += n

    def finding(
        self,
        message: str,
        location: Location,
        *,
        obj: ObjRef | None = None,
        kustomization: str | None = None,
        related: Iterable[Location] = (),
        subject: str = "",
        cause: Location | None = None,
        cause_message: str = "",
        cause_subject: str = "",
        fix: FixData | None = None,
        headline: str = "",
        notes: Iterable[Note] = (),
        cause_headline: str = "",
        cause_why: str = "",
    ) -> RawFinding:
        """A finding; ``cause``, ``cause_message`` and ``cause_subject`` group it with the
        findings of the same rule that share its cause (see ``RawFinding``). ``headline`` is
        the fact in about 100 characters, ``notes`` the labelled rest (``Note.why``,
        ``Note.affected``, ...); ``message`` stays the whole text in one sentence."""
        return RawFinding(
            message=message,
            headline=headline,
            notes=tuple(notes),
            cause_headline=cause_headline,
            cause_why=cause_why,
            location=location,
            obj=obj,
            kustomization=kustomization,
            related=tuple(related),
            subject=subject,
            fix=fix,
            cause=cause,
            cause_message=cause_message,
            cause_subject=cause_subject,
        )


@dataclass
class CheckContext(_Findings):
    """What a check over one cluster model sees (``PHASE`` 1, the default): the cluster and
    the repository it belongs to."""

    cluster: ClusterModel
    repo: Repository
    assertions: int = 0
    unevaluated: list[Problem] = field(default_factory=list)

    def not_evaluated(self, problem: Problem) -> None:
        """Say what the check could not look at (a ``Problem`` with ``not_evaluated``): the
        report counts it apart, so that a clean report never covers it."""
        self.unevaluated.append(replace(problem, not_evaluated=True))

    def problems(self) -> Iterator[Problem]:
        """Every problem the model recorded for this cluster (loading, building, parsing)."""
        yield from self.cluster.problems
        for ks in self.cluster.kustomizations.values():
            yield from ks.problems


def problem_subject(p: Problem) -> str:
    """The subject of the finding that reports problem ``p``: its code and what it is about
    (``Problem.subject``), so that rewording the message keeps its fingerprint; the message only
    for a problem that names no subject (tests/test_rules.py checks that none reaches a
    finding)."""
    return f"{p.code}|{p.subject}" if p.subject else p.message


HEADLINE_MAX = 100  # about: a headline with long object names may run a little over


def field_notes(owner: str, hint: str, schema: str, effect: str = "") -> tuple[Note, ...]:
    """The notes of a finding about a field that a schema does not have: what the API server
    does with it (``effect``, by default it drops the field), the suggestion (``hint`` as
    ``fluxapi.unknown_field_words`` gives it) and the schema it was judged against."""
    why = effect or f"The API server drops it when {owner} applies the object"
    notes = [Note.why(why), Note.note(f"schema: {schema}")]
    if hint:
        notes.append(Note.note(hint.removeprefix("; ")))
    return tuple(notes)


def problem_headline(p: Problem) -> tuple[str, tuple[Note, ...]]:
    """The headline of the finding that reports problem ``p`` and the notes it leaves: its
    message without the file the finding already names (``in <file>``, and that file's folder
    before the paths it names), and, where that is still long, the message up to its first
    ``: `` with the rest as why."""
    text = p.message
    folder = p.location.file.rpartition("/")[0]
    text = text.replace(f" in {p.location.file}", "")
    if folder:
        text = text.replace(f"{folder}/", "")
    head, sep, rest = text.partition(": ")
    if len(text) > HEADLINE_MAX and sep and rest:
        return head, (Note.why(rest),)
    return text, ()


def problem_check(codes: frozenset[str]) -> CheckFn:
    """A check that reports the model's recorded problems with the given codes."""

    def check(ctx: CheckContext) -> Iterator[RawFinding]:
        # one assertion per Kustomization: "its build has no problem of this kind"
        ctx.evaluated(len(ctx.cluster.kustomizations))
        for p in ctx.problems():
            if p.not_evaluated:
                continue
            if p.code in codes:
                headline, notes = problem_headline(p)
                yield ctx.finding(
                    p.message,
                    p.location,
                    kustomization=p.kustomization,
                    related=p.related,
                    subject=problem_subject(p),
                    headline=headline,
                    notes=notes,
                )

    return check


_PHASES: dict[str, int] = {}


@dataclass
class RepoContext(_Findings):
    """What a check over the whole repository after every cluster's checks sees (``PHASE = 2``,
    the suppression-hygiene rules): the suppressions, marked used where they suppressed a
    finding, the rules the catalog knows and the rules this run ran."""

    repo: Repository
    suppressions: tuple[Suppression, ...] = ()
    known_rules: frozenset[str] = frozenset()
    rules_run: frozenset[str] = frozenset()
    assertions: int = 0


def phase_of(rule_id: str) -> int:
    """1 for checks over one cluster model (``CheckContext``); 2 for checks over the whole
    repository that need the suppressions after the engine matched them against findings
    (``RepoContext``)."""
    registry()
    return _PHASES.get(rule_id, 1)


@lru_cache(maxsize=1)
def registry() -> dict[str, CheckFn]:
    out: dict[str, CheckFn] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        rid = getattr(mod, "ID", None)
        fn = getattr(mod, "check", None)
        if not isinstance(rid, str) or not callable(fn):
            raise RuntimeError(f"fluxgraph.checks.{info.name} must define ID and check()")
        if rid.replace("-", "_") != info.name:
            raise RuntimeError(f"fluxgraph.checks.{info.name}: ID {rid!r} does not match the module name")
        out[rid] = fn
        _PHASES[rid] = int(getattr(mod, "PHASE", 1))
    return out
