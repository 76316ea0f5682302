"""The check engine: run every enabled check over every cluster, stamp rule, severity and
fingerprint, deduplicate, then apply path exclusions, suppressions and the baseline, and sort.
``analyze()`` is the library entry point behind ``fluxgraph check``.

Checks run in two phases: ordinary checks (phase 1) see the model; checks with ``PHASE = 2``
(the suppression hygiene rules) also see the suppressions and which of them matched.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgraph.api import Repository, load
from fluxgraph.catalog import load_catalog
from fluxgraph.checks import HEADLINE_MAX, CheckContext, RepoContext, phase_of, registry
from fluxgraph.findings import Finding, Note, NoteLabel, RawFinding, Severity, fingerprint, sentence
from fluxgraph.model import FluxgraphError, Location, Problem
from fluxgraph.repofs import RepoFS
from fluxgraph.suppress import Suppression, apply, collect


@dataclass
class Report:
    repo: Repository
    findings: list[Finding]
    not_evaluated: list[Problem]
    assertions: int
    rules_run: list[str]
    suppressed: list[Finding] = field(default_factory=list)
    baselined: list[Finding] = field(default_factory=list)
    excluded: list[Finding] = field(default_factory=list)
    # the same finding (rule, location, message) from further clusters, deduplicated away
    also: dict[tuple[str, Location, str], list[Finding]] = field(default_factory=dict)

    def instances(self, f: Finding) -> list[Finding]:
        """``f`` and the same finding in the other clusters that report it (a file they share):
        what a repair of ``f`` must repair in every one of them. A finding reported once per
        cause (``group_by_cause``) stands for its members: each of them, in every cluster."""
        out: list[Finding] = []
        for m in f.members or (f,):
            out += [m, *self.also.get((m.rule, m.location, m.message), ())]
        return out

    @property
    def clusters(self) -> list[str]:
        return [c.name for c in self.repo.clusters]

    def flux(self) -> list[dict[str, Any]]:
        """Which Flux each cluster was modelled as, and where that came from (the report
        header of every format): ``fluxrelease.FluxRelease`` as data."""
        out = []
        for c in self.repo.clusters:
            f = c.flux
            out.append(
                {
                    "cluster": c.name,
                    "modelled": f.modelled,
                    "version": f.version,
                    "source": f.where if f.version is not None else "assumed: the repository pins no version",
                    "strictSubstitution": c.strict,
                    "also": [{"version": v, "source": w} for v, w in f.also],
                }
            )
        return out

    def flux_lines(self) -> list[str]:
        """The header in words: one line per distinct Flux, naming its clusters when there are
        several."""
        by: dict[str, list[str]] = {}
        for c in self.repo.clusters:
            by.setdefault(c.flux.describe(), []).append(c.name)
        many = len(self.repo.clusters) > 1
        return [f"flux: {d}" + (f" [{', '.join(cs[:3])}{f' and {len(cs) - 3} more' if len(cs) > 3 else ''}]" if many else "") for d, cs in by.items()]

    @property
    def kustomizations(self) -> int:
        return sum(len(c.kustomizations) for c in self.repo.clusters)

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        return out

    def exit_code(self, fail_on: Severity) -> int:
        return 1 if any(f.severity.rank >= fail_on.rank for f in self.findings) else 0


def _files_of(repo: Repository) -> set[str]:
    files: set[str] = set()
    for c in repo.clusters:
        for ks in c.kustomizations.values():
            files |= ks.files
            if ks.declared_at is not None:
                files.add(ks.declared_at.file)
    return files


def run_checks(
    repo: Repository,
    *,
    enabled: set[str] | None = None,
    disabled: set[str] | None = None,
    severities: dict[str, Severity] | None = None,
    exclude: Any = None,
    baseline: set[tuple[str, str]] | None = None,
) -> Report:
    """Run the checks. ``exclude`` is a predicate on repo-relative file paths; ``baseline`` a
    set of (rule, fingerprint) already known."""
    catalog = load_catalog()
    checks = registry()
    unknown = [r for r in (enabled or set()) | (disabled or set()) | set(severities or {}) if r not in catalog]
    if unknown:
        raise FluxgraphError(f"unknown rule(s): {', '.join(sorted(unknown))} (see `fluxgraph rules`)")
    # a check runs only with its catalog entry (tests/test_catalog.py keeps the two in step)
    rule_ids = [
        rid
        for rid in sorted(checks)
        if rid in catalog
        and ((enabled is None and catalog[rid].default) or (enabled is not None and rid in enabled))
        and rid not in (disabled or set())
    ]
    findings: dict[tuple[Any, ...], Finding] = {}
    causes: dict[tuple[Any, ...], RawFinding] = {}  # the raw finding behind each stamped one
    also: dict[tuple[str, Location, str], list[Finding]] = {}
    not_evaluated: dict[tuple[Any, ...], Problem] = {}
    assertions = 0

    def stamp(rid: str, raw: RawFinding, cluster: str) -> None:
        sev = (severities or {}).get(rid) or raw.severity or catalog[rid].severity
        key = (rid, raw.location, raw.message)
        headline, notes = (raw.headline, raw.notes) if raw.headline else split_message(raw.message)
        f = Finding(
            location=raw.location,
            rule=rid,
            severity=sev,
            message=raw.message,
            cluster=cluster,
            obj=raw.obj,
            kustomization=raw.kustomization,
            related=raw.related,
            fingerprint=Finding.fingerprint_of(rid, raw),
            fix=raw.fix,
            headline=headline,
            notes=compose_notes(notes, raw.related, catalog[rid].fix),
        )
        if key not in findings:
            causes[key] = raw
            findings[key] = f
        elif findings[key].cluster != cluster:
            also.setdefault(key, []).append(f)

    phase1 = [r for r in rule_ids if phase_of(r) == 1]
    phase2 = [r for r in rule_ids if phase_of(r) == 2]
    for cluster in repo.clusters:
        for rid in phase1:
            ctx = CheckContext(cluster=cluster, repo=repo)
            for raw in checks[rid](ctx):
                stamp(rid, raw, cluster.name)
            assertions += ctx.assertions
            for p in ctx.unevaluated:
                not_evaluated.setdefault((p.code, p.location, p.message), p)
        for p in [*cluster.problems, *(p for ks in cluster.kustomizations.values() for p in ks.problems)]:
            if p.not_evaluated:
                not_evaluated.setdefault((p.code, p.location, p.message), p)

    for p in repo.problems:  # repository-wide (Flux Kustomizations no cluster applies)
        if p.not_evaluated:
            not_evaluated.setdefault((p.code, p.location, p.message), p)

    ordered = sorted(group_by_cause([(f, causes[k]) for k, f in findings.items()]))
    excluded = [f for f in ordered if exclude is not None and exclude(f.location.file)]
    ordered = [f for f in ordered if not (exclude is not None and exclude(f.location.file))]
    suppressions: list[Suppression] = collect(repo.cache, _files_of(repo) | {f.location.file for f in ordered}) if repo.cache else []
    kept, suppressed = apply(ordered, suppressions)

    if phase2 and repo.clusters:
        findings.clear()
        rctx = RepoContext(
            repo=repo, suppressions=tuple(suppressions), known_rules=frozenset(catalog), rules_run=frozenset(rule_ids)
        )
        for rid in phase2:
            for raw in checks[rid](rctx):
                if exclude is None or not exclude(raw.location.file):
                    stamp(rid, raw, "")
        assertions += rctx.assertions
        kept = sorted([*kept, *findings.values()])

    baselined = [f for f in kept if baseline and (f.rule, f.fingerprint) in baseline]
    kept = [f for f in kept if not (baseline and (f.rule, f.fingerprint) in baseline)]
    return Report(
        repo=repo,
        findings=kept,
        not_evaluated=sorted(not_evaluated.values(), key=lambda p: p.sort_key()),
        assertions=assertions,
        rules_run=rule_ids,
        suppressed=suppressed,
        baselined=baselined,
        excluded=excluded,
        also=also,
    )


MAX_NAMED = 6  # Kustomizations named in the message of a finding grouped per cause
MAX_RELATED = 50
_NOTE_ORDER = {label: i for i, label in enumerate(NoteLabel)}


def _top_level(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` where it is outside brackets and quotes (a message quotes
    expressions, lines and errors that hold separators of their own)."""
    parts: list[str] = []
    depth, quote, start, i = 0, "", 0, 0
    while i < len(text):
        c = text[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"`" and (i == 0 or not text[i - 1].isalnum()):
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i = i + len(sep)
            continue
        i += 1
    parts.append(text[start:])
    return parts


def split_message(message: str) -> tuple[str, tuple[Note, ...]]:
    """The headline and notes of a finding whose check gives only its whole ``message`` (a
    check's own ``headline`` and ``notes`` are better, and most give them): messages are written
    ``fact: mechanism; caveat; caveat``, so the fact is the headline, the mechanism its why and
    each caveat a note, cut where no bracket or quote is open. A message short enough is its
    own headline."""
    if len(message) <= HEADLINE_MAX:
        return message, ()
    head, *caveats = _top_level(message, "; ")
    notes: list[Note] = []
    fact, *rest = _top_level(head, ": ")
    if rest and len(fact) >= 20:
        why = ": ".join(rest)
        head = fact
        notes.append(Note.why(sentence(why)))
    notes += [Note.note(c) for c in caveats if c]
    return head, tuple(notes)


def compose_notes(notes: Iterable[Note], related: Iterable[Location], fix: str) -> tuple[Note, ...]:
    """A finding's notes as reports show them: the check's, then the related places as
    evidence and the rule's fix where the check gave neither, in label order (why, affected,
    evidence, note, fix)."""
    out = list(notes)
    labels = {n.label for n in out}
    places = list(dict.fromkeys(loc.file_line for loc in related))
    if NoteLabel.EVIDENCE not in labels and places:
        out.append(Note.evidence(places))
    if NoteLabel.FIX not in labels and fix:
        out.append(Note.fix(fix))
    return tuple(sorted(out, key=lambda n: _NOTE_ORDER[n.label]))


def group_by_cause(items: list[tuple[Finding, RawFinding]]) -> list[Finding]:
    """One finding per cause. Findings of one rule whose raw findings name the same ``cause``
    and ``cause_message`` (a parent's patch, a shared component, a producer that several
    Kustomizations read) become one finding at the cause, naming the Kustomizations (all of
    them in ``Finding.kustomizations``); findings of one rule at the same place without a
    cause (a shared base's line built by several Kustomizations) become one finding there.
    A cause that only one finding has leaves it as it is. The grouped finding has the highest
    severity of its members and a fingerprint of rule, cause file and cause subject, so that a
    suppression or a baseline entry applies per cause."""
    buckets: dict[tuple[Any, ...], list[tuple[Finding, RawFinding]]] = {}
    for f, raw in items:
        key = (f.rule, raw.cause, raw.cause_message) if raw.cause is not None else (f.rule, f.location, "")
        buckets.setdefault(key, []).append((f, raw))
    out: list[Finding] = []
    for (rid, where, cause_message), members in buckets.items():
        if len(members) == 1:
            out.append(members[0][0])
            continue
        fs = sorted(f for f, _ in members)
        raws = [r for _, r in members]
        assert isinstance(where, Location)
        ks_ids = sorted({f.kustomization for f in fs if f.kustomization})
        if cause_message:
            # name what the members differ in: their Kustomizations, else their objects
            names = ks_ids if len(ks_ids) > 1 else sorted({str(f.obj) for f in fs if f.obj is not None})
            what = "Kustomization" if len(ks_ids) > 1 else "object"
            named = ", ".join(names[:MAX_NAMED]) + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")
            message = f"{cause_message}; {len(names)} {what}{'s' if len(names) != 1 else ''}: {named}"
            subject = next((r.cause_subject for r in raws if r.cause_subject), cause_message)
        else:
            others = [k for k in ks_ids if k != fs[0].kustomization]
            message = fs[0].message + (
                f"; the same at this line for {len(others)} more Kustomization{'s' if len(others) != 1 else ''}: "
                + ", ".join(others[:MAX_NAMED])
                + (f" and {len(others) - MAX_NAMED} more" if len(others) > MAX_NAMED else "")
                if others
                else ""
            )
            subject = raws[0].subject or message
        top = max((f.severity for f in fs), key=lambda sv: sv.rank)

        # a member as the message names it: its Kustomization, else its object
        named_as = {id(f): (f.kustomization or "") if len(ks_ids) > 1 else str(f.obj) for f in fs}
        loud = sorted({named_as[id(f)] for f in fs if f.severity is top})
        if cause_message and any(f.severity is not top for f in fs) and set(loud) != set(named_as.values()):
            # members of mixed severity: say which carry the finding's, the rest is advice
            message += (
                f"; {top.value} for {', '.join(loud[:MAX_NAMED])}"
                + (f" and {len(loud) - MAX_NAMED} more" if len(loud) > MAX_NAMED else "")
                + f" (the others: {', '.join(sorted({f.severity.value for f in fs if f.severity is not top}))})"
            )
        related = sorted({loc for f in fs for loc in (f.location, *f.related)} - {where})[:MAX_RELATED]
        objs = {f.obj for f in fs}
        # the notes: what the members share (the first one's mechanism and caveats), the
        # members themselves as what is affected, the mixed severities, the places
        first = fs[0]
        # what every member says alike (a caveat one member has is not the group's)
        shared = [n for n in first.notes if all(n in f.notes for f in fs[1:])]
        notes = [n for n in shared if n.label in (NoteLabel.WHY, NoteLabel.NOTE, NoteLabel.FIX)]
        if cause_message:
            # the cause's own text is the mechanism of the group, not the first member's
            why = next((r.cause_why for r in raws if r.cause_why), "") or cause_message
            notes = [Note.why(why), *(n for n in notes if n.label is not NoteLabel.WHY)]
            headline = next((r.cause_headline for r in raws if r.cause_headline), "") or first.headline
            members_named = sorted(set(named_as.values()))
            notes.append(Note.affected(members_named, f"{len(members_named)} {what}{'s' if len(members_named) != 1 else ''}"))
            if any(f.severity is not top for f in fs) and set(loud) != set(named_as.values()):
                notes.append(
                    Note.note(
                        f"{top.value} for {', '.join(loud)}; the others: "
                        + ", ".join(sorted({f.severity.value for f in fs if f.severity is not top}))
                    )
                )
        else:
            headline = first.headline
            others = [k for k in ks_ids if k != first.kustomization]
            if others:
                notes.append(Note.affected(others, "the same at this line for"))
        if related:
            notes.append(Note.evidence(dict.fromkeys(loc.file_line for loc in related)))
        notes.sort(key=lambda n: _NOTE_ORDER[n.label])
        out.append(
            Finding(
                location=where,
                rule=rid,
                severity=top,
                message=message,
                cluster=", ".join(sorted({f.cluster for f in fs})),
                obj=objs.pop() if len(objs) == 1 else None,
                kustomization=ks_ids[0] if len(ks_ids) == 1 else None,
                related=tuple(related),
                fingerprint=fingerprint(rid, where.file, subject),
                kustomizations=tuple(ks_ids),
                members=tuple(fs),
                headline=headline,
                notes=tuple(notes),
            )
        )
    return out


def analyze(path: str | Path | RepoFS, **kwargs: Any) -> Report:
    """Load the repository (a directory, or a ``RepoFS`` such as a git revision or the
    repository with ``fluxgraph fix``'s changes in memory) and run the checks. Keyword arguments
    are those of ``api.load`` plus those of ``run_checks``; ``settings`` (a
    ``config.Settings``, as ``config.resolve_settings`` reads ``.fluxgraph.yaml``) gives them
    all at once, and a keyword argument given beside it wins."""
    settings = kwargs.pop("settings", None)
    if settings is not None:
        kwargs = {**settings.analyze_kwargs(), **kwargs}
    check_keys = ("enabled", "disabled", "severities", "exclude", "baseline")
    check_kwargs = {k: kwargs.pop(k) for k in check_keys if k in kwargs}
    repo = load(path, **kwargs)
    return run_checks(repo, **check_kwargs)
