"""``fluxgraph fix``: repair the findings that have one right, mechanical repair.

From the findings of ``fluxgraph check`` (``engine.analyze``) each rule's fixer
(``fix.rules.FIXERS``) proposes edits in YAML terms; ``fix.textedit`` makes them as text changes
at the parser's positions, in files that round-trip exactly through ruamel.yaml
(``fix.roundtrip``), and verifies that every document then holds exactly the intended data. The
repository with the edits is then checked again, in memory: a fix whose finding is still
reported, after which a finding appears that was not reported before, or after which the
rendered objects change beyond those it means to change (``_rendered``, with the ``diff``
engine, which also judges the change: an immutable field, a deletion), is withheld (with the
reason) and the rest is checked again. Only then can the changes be shown (a unified diff) or
written (``FixResult.write``: atomic per file, never outside the repository).

The library entry point is ``fix_repository``; ``plan_fixes`` works from a report.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxgraph.findings import Severity
from fluxgraph.fix.roundtrip import NotRoundTrip
from fluxgraph.fix.rules import (
    FIXERS,
    FixContext,
    NoFix,
    Proposal,
    consolidate,
    implied_depends_on,
    nested_unescaped,
)
from fluxgraph.fix.textedit import Edit, EditError, FileEditor
from fluxgraph.fix.write import OverlayFS, WriteRefused, check_writable, resolve_for_write, write_atomic
from fluxgraph.model import FluxgraphError, ObjRef
from fluxgraph.repofs import FileTooLarge, PathEscape, RepoFS

if TYPE_CHECKING:
    from fluxgraph.engine import Report
    from fluxgraph.findings import Finding

__all__ = ["FIXERS", "FileChange", "FixResult", "LeftAlone", "NotFixed", "fix_repository", "fixable_rules", "plan_fixes"]

# a document SOPS encrypted: a top-level ``sops:`` mapping with its ``mac`` (sops' metadata)
SOPS_FILE = re.compile(r"(?m)^sops:[ \t]*\n(?:(?:[ \t]+.*|[ \t]*)\n)*?[ \t]+mac:")

# how often the re-check may withhold fixes and try again before it gives up on the rest
MAX_RECHECKS = 8


def fixable_rules() -> list[str]:
    return sorted(FIXERS)


@dataclass(frozen=True)
class FileChange:
    file: str
    old: bytes
    new: bytes


@dataclass(frozen=True)
class NotFixed:
    finding: Finding
    reason: str


@dataclass(frozen=True)
class LeftAlone:
    """A file with something to fix that fluxgraph does not edit: it does not round-trip."""

    file: str
    reason: str


@dataclass
class FixResult:
    root: Path
    fixes: list[Proposal] = field(default_factory=list)
    changes: dict[str, FileChange] = field(default_factory=dict)
    not_fixed: list[NotFixed] = field(default_factory=list)
    left_alone: list[LeftAlone] = field(default_factory=list)
    rechecked: bool = False

    @property
    def fixed(self) -> list[Finding]:
        return sorted({f for p in self.fixes for f in p.findings})

    def diff(self) -> str:
        """A unified diff (``a/``, ``b/`` prefixes, as git writes them) of every change."""
        out: list[str] = []
        for rel in sorted(self.changes):
            ch = self.changes[rel]
            old = ch.old.decode("utf-8").splitlines(keepends=True)
            new = ch.new.decode("utf-8").splitlines(keepends=True)
            for line in difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}", n=3):
                if line.endswith("\n"):
                    out.append(line)
                else:
                    out.append(line + "\n\\ No newline at end of file\n")
        return "".join(out)

    def write(self) -> list[tuple[str, str]]:
        """Write every change (atomically per file); returns the files that could not be written,
        with why. Every file is checked first (``check_writable``): when one cannot be written,
        none is, so that a fix spanning several files is never left half made. A failure while
        writing (a full disk) can still leave the files before it written: they are fixed."""
        failed: list[tuple[str, str]] = []
        for rel in sorted(self.changes):
            try:
                check_writable(self.root, rel, self.changes[rel].old)
            except WriteRefused as e:
                failed.append((rel, str(e)))
            except OSError as e:
                failed.append((rel, e.strerror or str(e)))
        if failed:
            return failed
        for rel in sorted(self.changes):
            ch = self.changes[rel]
            try:
                write_atomic(self.root, rel, ch.old, ch.new)
            except WriteRefused as e:
                failed.append((rel, str(e)))
            except OSError as e:
                failed.append((rel, e.strerror or str(e)))
        return failed


# -- making the edits -------------------------------------------------------------------------


def render_proposals(
    fs: RepoFS, proposals: list[Proposal]
) -> tuple[dict[str, FileChange], dict[int, str], list[LeftAlone]]:
    """The files the proposals change; proposals that cannot be made (id -> why) and the files
    that are left alone."""
    by_file: dict[str, list[Proposal]] = {}
    for p in proposals:
        for f in sorted(p.files):
            by_file.setdefault(f, []).append(p)
    changes: dict[str, FileChange] = {}
    failed: dict[int, str] = {}
    left: list[LeftAlone] = []
    # a proposal spanning several files is made in all of them or in none
    for rel in sorted(by_file):
        mine = [p for p in by_file[rel] if id(p) not in failed]
        if not mine:
            continue
        try:
            resolve_for_write(fs.root, rel)  # what --write would refuse is not offered either
        except WriteRefused as e:
            for p in mine:
                failed[id(p)] = f"{e}: not fixed"
            continue
        try:
            old = fs.read_bytes(rel)
            text = old.decode("utf-8")
            if SOPS_FILE.search(text):
                raise EditError(
                    "it is encrypted with SOPS: its MAC covers every value, so an edit makes Flux's decryption fail "
                    "(MAC mismatch) and the whole apply with it; edit it with `sops`"
                )
            editor = FileEditor(rel, text)
        except NotRoundTrip as e:
            left.append(LeftAlone(rel, e.reason))
            for p in mine:
                failed[id(p)] = f"{rel} is left alone: it does not round-trip exactly through ruamel.yaml ({e.reason})"
            continue
        except (OSError, PathEscape, FileTooLarge, UnicodeDecodeError, EditError) as e:
            for p in mine:
                failed[id(p)] = f"{rel} cannot be edited: {e}"
            continue
        accepted: list[Edit] = []
        new_text = text
        every = list(dict.fromkeys(e for p in mine for e in p.edits if e.file == rel))
        try:  # usually all of them go together; else one proposal after the other
            new_text = editor.apply(every)
            accepted, mine = every, []
        except (EditError, NotRoundTrip):
            pass
        for p in mine:
            edits = [e for e in p.edits if e.file == rel]
            try:
                candidate = editor.apply(list(dict.fromkeys([*accepted, *edits])))
            except (EditError, NotRoundTrip) as e:
                why = str(getattr(e, "reason", None) or e)
                # a fix spanning files: say which file refused it, not only the finding's
                failed[id(p)] = why if rel in why else f"{rel}: {why}"
                continue
            accepted = list(dict.fromkeys([*accepted, *edits]))
            new_text = candidate
        if accepted and new_text != text:
            changes[rel] = FileChange(rel, old, new_text.encode("utf-8"))
    # a proposal that failed in one of its files is dropped from the others too
    if any(len(p.files) > 1 and id(p) in failed for p in proposals):
        keep = [p for p in proposals if id(p) not in failed]
        again, more, left2 = render_proposals(fs, keep)
        failed.update(more)
        return again, failed, left + [x for x in left2 if x not in left]
    return changes, failed, left


# -- the re-check -----------------------------------------------------------------------------


@dataclass
class Recheck:
    """Runs the analysis again on the repository with changes in memory. ``before`` are the
    reports the fixes were planned from (the first one is the one whose findings are fixed;
    the others, e.g. the whole repository when the run is scoped to one cluster, only must not
    gain findings)."""

    before: list[Report]
    run: Callable[[dict[str, bytes]], list[Report]]


def _key(f: Finding) -> tuple[str, str]:
    return (f.rule, f.fingerprint)


def _known(report: Report) -> set[tuple[str, str]]:
    return {_key(f) for f in [*report.findings, *report.suppressed, *report.baselined, *report.excluded]}


def _lineage(report: Report, f: Finding) -> set[tuple[str, str]]:
    """(cluster, Kustomization) of the finding and of every Kustomization that applies it."""
    out: set[tuple[str, str]] = set()
    for inst in report.instances(f):
        if not inst.kustomization:
            continue
        out.add((inst.cluster, inst.kustomization))
        for c in report.repo.clusters:
            if c.name == inst.cluster:
                out.update((c.name, k) for k in c.ancestors(inst.kustomization))
    return out


def _files_of(reports: list[Report], lineage: set[tuple[str, str]]) -> set[str]:
    """Every file the builds of those Kustomizations read (and where they are declared)."""
    out: set[str] = set()
    for r in reports:
        for c in r.repo.clusters:
            for name, ks_id in lineage:
                node = c.kustomizations.get(ks_id) if c.name == name else None
                if node is not None:
                    out |= node.files
                    if node.declared_at is not None:
                        out.add(node.declared_at.file)
    return out


def _built_before(before: Report, f: Finding) -> bool:
    for c in before.repo.clusters:
        if c.name == f.cluster:
            node = c.kustomizations.get(f.kustomization or "")
            return node is not None and node.status == "built"
    return False


def _judge(recheck: Recheck, after: list[Report], active: list[Proposal]) -> dict[int, str]:
    """Proposals to withhold after the re-check: id -> why. A new finding is blamed on the fixes
    that edit its file (or a related one), else on those of its Kustomization or of one that
    applies it (a fix that lets a parent build again uncovers its children), else on all."""
    out: dict[int, str] = {}
    still = {_key(f) for f in after[0].findings}
    for p in active:
        left = [f for f in p.findings if _key(f) in still]
        if left:
            out[id(p)] = f"the re-check still reports it at {left[0].location}"
    for before, now in zip(recheck.before, after, strict=False):
        known = _known(before)
        for f in now.findings:
            if _key(f) in known:
                continue
            files = {f.location.file, *(r.file for r in f.related)}
            where = f"{f.rule} at {f.location}: {f.message[:160]}"
            if f.kustomization and not _built_before(before, f):
                why = (
                    f"after the fix Kustomization {f.kustomization} builds, which it did not before, and the re-check "
                    f"reports a finding there that was hidden: {where}"
                )
            else:
                why = f"after the fix the re-check reports a new finding: {where}"
            hit = [p for p in active if p.files & files]
            if not hit:
                lineage = _lineage(now, f)
                hit = [p for p in active if any((g.cluster, g.kustomization) in lineage for g in p.findings)]
            if not hit:
                read = _files_of([before, now], _lineage(now, f))
                hit = [p for p in active if p.files & read]
            for p in hit or active:
                out.setdefault(id(p), why)
    return out


def _owners_built(model: Any, owners: list[str]) -> bool:
    return any(model.kustomizations.get(o) is not None and model.kustomizations[o].status == "built" for o in owners)


def _origin_files(models: list[Any], ref: ObjRef) -> set[str]:
    return {o.resource.origin.file for m in models if m is not None for o in m.objects() if o.ref == ref}


def _rendered(recheck: Recheck, after: list[Report], active: list[Proposal]) -> dict[int, str]:
    """Proposals to withhold after comparing what the repository renders before and after the
    edits (the ``diff`` engine): id -> why. An object the proposals do not mean to change
    (``Proposal.intended``) that is added, removed, moved or modified, or a verdict of warning or
    error on the change (a deletion, a race), withholds the proposals whose edits touch the file
    the object comes from, else every proposal of that cluster's findings, else all; on an
    object it means to change only an error does (a refused update: an immutable field). The
    objects a Kustomization applies once it builds, where it did not before, are the fix's
    purpose when the Kustomization is one of the findings' (or applied by one)."""
    from fluxgraph.diff import diff_repositories

    intended = {pair for p in active for pair in p.intended}
    out: dict[int, str] = {}
    for before, now in zip(recheck.before, after, strict=False):
        bmodels = {c.name: c for c in before.repo.clusters}
        amodels = {c.name: c for c in now.repo.clusters}
        lineage = {pair for p in active for f in p.findings for pair in _lineage(before, f)}
        for cd in diff_repositories(before.repo, now.repo).clusters:
            bm, am = bmodels.get(cd.cluster), amodels.get(cd.cluster)
            blamed: list[tuple[ObjRef | None, str]] = []
            for what, changes in (("adds", cd.added), ("removes", cd.removed), ("moves", cd.moved), ("changes", cd.modified)):
                for oc in changes:
                    if (cd.cluster, oc.ref) in intended:
                        continue
                    if (
                        what == "adds"
                        and bm is not None
                        and not _owners_built(bm, oc.after)
                        and any((cd.cluster, o) in lineage or any((cd.cluster, a) in lineage for a in am.ancestors(o)) for o in oc.after if am is not None)
                    ):
                        continue  # applied now that the finding's Kustomization builds
                    detail = f" ({change_detail(oc.changes[0])})" if what == "changes" and oc.changes else ""
                    owners = ", ".join(oc.after or oc.before)
                    blamed.append((oc.ref, f"it also {what} {oc.ref}{detail} in cluster {cd.cluster} (applied by {owners}), which it does not mean to change"))
            for e in cd.effects:
                # on an object it means to change, only what fails or destroys withholds it (a
                # Job recreated under force: Enabled is what its author asked for)
                bar = Severity.ERROR if e.ref is not None and (cd.cluster, e.ref) in intended else Severity.WARNING
                if e.severity.rank >= bar.rank and not e.acknowledged:
                    blamed.append((e.ref, f"the change it makes would be judged {e.code} in cluster {cd.cluster}: {e.message[:240]}"))
            for ref, why in blamed:
                files = _origin_files([bm, am], ref) if ref is not None else set()
                hit = [p for p in active if p.files & files]
                if not hit:
                    hit = [p for p in active if any(g.cluster == cd.cluster for f in p.findings for g in before.instances(f))]
                for p in hit or active:
                    out.setdefault(id(p), why)
    return out


def change_detail(fc: Any) -> str:
    """``path: before becomes after`` of one field change, at its first differing value and, in a
    multi-line string, its first differing line; short. A Secret's values are not shown."""
    if fc.secret:
        return f"{fc.path} changes"
    path, old, new = _first_difference(fc.path, fc.before, fc.after)
    return f"{path}: {short_value(old)} becomes {short_value(new)}"


def _first_difference(path: str, a: Any, b: Any) -> tuple[str, Any, Any]:
    while True:
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            i = next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), None)
            if i is None:
                return path, a, b
            path, a, b = f"{path}[{i}]", a[i], b[i]
        elif isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
            k = next((k for k in a if a[k] != b[k]), None)
            if k is None:
                return path, a, b
            path, a, b = f"{path}.{k}", a[k], b[k]
        elif isinstance(a, str) and isinstance(b, str) and "\n" in a + b:
            pairs = zip(a.splitlines(), b.splitlines(), strict=False)
            return path, *next(((x, y) for x, y in pairs if x != y), (a, b))
        else:
            return path, a, b


def short_value(v: Any) -> str:
    import json

    if v is None:
        return "nothing"
    text = json.dumps(v.strip() if isinstance(v, str) else v, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


# -- planning ----------------------------------------------------------------------------------


def _merge(proposals: list[Proposal]) -> list[Proposal]:
    """One proposal per set of edits: findings repaired by the same edits (the Namespace and the
    CRD of one missing dependsOn, a file two clusters share) are one fix."""
    out: dict[tuple[str, frozenset[Edit]], Proposal] = {}
    for p in proposals:
        key = (p.rule, frozenset(p.edits))
        if key in out:
            out[key].findings.extend(f for f in p.findings if f not in out[key].findings)
            out[key].intended |= p.intended
            out[key].edges = tuple(dict.fromkeys([*out[key].edges, *p.edges]))
        else:
            out[key] = p
    return list(out.values())


def plan_fixes(
    report: Report,
    *,
    rules: set[str] | None = None,
    recheck: Recheck | None = None,
    exclude: Callable[[str], bool] | None = None,
) -> FixResult:
    """The fixes for ``report``'s findings (of ``rules``, default every rule with a fixer).
    Nothing is written."""
    repo = report.repo
    result = FixResult(root=repo.root)
    ctx = FixContext(repo)
    proposals: list[Proposal] = []
    for f in report.findings:
        fixer = FIXERS.get(f.rule)
        if fixer is None or (rules is not None and f.rule not in rules):
            continue
        # the same finding in every cluster that reports it (a file they share): fixed in all
        # of them, or not at all
        instances = report.instances(f)
        try:
            made: list[Proposal] = []
            for inst in instances:
                try:
                    made.append(fixer(inst, ctx))
                except NoFix as e:
                    raise NoFix(f"in cluster {inst.cluster}: {e}" if len(instances) > 1 else str(e)) from None
        except NoFix as e:
            result.not_fixed.append(NotFixed(f, str(e)))
            continue
        first = made[0]
        first.intended = frozenset((inst.cluster, m.obj.ref) for inst, m in zip(instances, made, strict=True) if m.obj is not None)
        first.edges = tuple(dict.fromkeys(t for m in made for t in m.edges))
        first.findings = [f]
        first.edits = list(dict.fromkeys(e for p in made for e in p.edits))
        if len({p.target for p in made}) > 1:
            first.target = None  # the per-object choice of the opt-out needs one object
        proposals.append(first)
    proposals = implied_depends_on(_merge(consolidate(proposals)), repo)
    dropped = nested_unescaped(proposals)
    blocked: dict[int, str] = dict(dropped)
    for p in proposals:
        outside = sorted(f for f in p.files if exclude is not None and exclude(f))
        if outside:
            blocked.setdefault(id(p), f"{outside[0]} is excluded by the configuration")
    fs = RepoFS(repo.root)
    active = [p for p in proposals if id(p) not in blocked]
    withheld: dict[int, str] = {}
    changes: dict[str, FileChange] = {}
    left: list[LeftAlone] = []
    for _ in range(MAX_RECHECKS + 1):
        changes, failed, left = render_proposals(fs, active)
        blocked.update(failed)
        active = [p for p in active if id(p) not in failed]
        if recheck is None or not changes:
            break
        after = recheck.run({rel: ch.new for rel, ch in changes.items()})
        result.rechecked = True
        withheld = _judge(recheck, after, active)
        for k, why in _rendered(recheck, after, active).items():
            withheld.setdefault(k, why)
        if not withheld:
            break
        blocked.update(withheld)
        active = [p for p in active if id(p) not in withheld]
    else:  # pragma: no cover - every round removes at least one fix
        for p in active:
            blocked.setdefault(id(p), "the re-check did not settle")
        active, changes = [], {}
    if not active:
        changes = {}
    for p in proposals:
        if id(p) in blocked:
            for f in p.findings:
                result.not_fixed.append(NotFixed(f, blocked[id(p)]))
    result.fixes = active
    result.changes = changes
    result.left_alone = sorted(set(left), key=lambda x: x.file)
    result.not_fixed.sort(key=lambda n: n.finding)
    return result


def fix_repository(path: str | Path, *, rules: set[str] | None = None, recheck: bool = True, **kwargs: Any) -> FixResult:
    """Analyse the repository at ``path`` (keyword arguments of ``engine.analyze``), plan the
    fixes and re-check them. Nothing is written: call ``FixResult.write``.

    When the analysis is scoped to one cluster (``cluster``/``env``), the re-check also runs over
    the whole repository, because a fixed file may be shared with other clusters."""
    from fluxgraph.engine import analyze

    unknown = sorted(r for r in (rules or set()) if r not in FIXERS)
    if unknown:
        from fluxgraph.catalog import load_catalog

        cat = load_catalog()
        bad = [r for r in unknown if r not in cat]
        if bad:
            raise FluxgraphError(f"unknown rule(s): {', '.join(bad)} (see `fluxgraph rules`)")
        raise FluxgraphError(f"{', '.join(unknown)}: no automatic fix (see `fluxgraph rules`)")
    memo: dict[Any, Any] = {}
    report = analyze(path, document_memo=memo, **kwargs)
    check: Recheck | None = None
    if recheck:
        scoped = kwargs.get("cluster") is not None or kwargs.get("env") is not None
        whole_kwargs = {k: v for k, v in kwargs.items() if k not in ("cluster", "env")}
        before = [report]
        if scoped:
            try:
                before.append(analyze(path, document_memo=memo, **whole_kwargs))
            except FluxgraphError:
                scoped = False

        def run(overlay: dict[str, bytes]) -> list[Report]:
            reports = [analyze(OverlayFS(report.repo.root, overlay), document_memo=memo, **kwargs)]
            if scoped:
                reports.append(analyze(OverlayFS(report.repo.root, overlay), document_memo=memo, **whole_kwargs))
            return reports

        check = Recheck(before, run)
    return plan_fixes(report, rules=rules, recheck=check, exclude=kwargs.get("exclude"))
