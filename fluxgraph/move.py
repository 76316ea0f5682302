"""``fluxgraph move TARGET --to KUSTOMIZATION``: make the first stage of a move plan, proven.

``explain --to`` (``fluxgraph.moveplan``) says what moving a component does and in which order.
Where the move races its old owner's garbage collection (the old owner may prune an object
before the new one applies it), the first stage protects the objects that move: each gets
``kustomize.toolkit.fluxcd.io/prune: disabled`` in the document that declares it, which
kustomize-controller's garbage collection skips (fluxcd/pkg ``ssa`` ``AnyInMetadata``; the Flux
FAQ "How can I safely move resources from one dir to another?"). The stage is a set of text
edits made by the edit layer of ``fluxgraph fix`` and proven before it is shown:

1. applied in memory, every cluster is built again and compared with the repository as it is
   (the ``diff`` engine): only the objects that move may change, and only in
   ``metadata.annotations``; no finding may appear and no verdict of warning or error;
2. from the state that stage leaves, the move is planned again: every object must then move
   without a race (``gc.judge_move``). That plan is the second stage, to merge once the first
   has reconciled, and the third removes the annotations.

A move that races nothing needs no protecting stage: its steps are printed, and nothing is
written (the move itself creates and renames files, which the edit layer does not make).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgraph import gc
from fluxgraph.explain import MovePlan, explain, resolve_target
from fluxgraph.findings import Severity
from fluxgraph.fix import FileChange, FixResult, render_proposals, short_value
from fluxgraph.fix.rules import ANNOTATIONS_AFTER, PRUNE_KEY, Proposal
from fluxgraph.fix.textedit import MapSet
from fluxgraph.fix.write import OverlayFS
from fluxgraph.model import FluxgraphError, ObjRef
from fluxgraph.repofs import RepoFS

UNSAFE = (gc.RACE, gc.RECREATE)


@dataclass
class ClusterMove:
    cluster: str
    plan: MovePlan  # at the repository as it is
    after: MovePlan | None = None  # planned again from the state the first stage leaves


@dataclass
class MoveResult:
    root: Path
    target: str
    moves: list[ClusterMove]
    changes: dict[str, FileChange] = field(default_factory=dict)  # the first stage
    refused: list[str] = field(default_factory=list)  # why no stage is offered
    proven: list[str] = field(default_factory=list)  # what was checked, in words

    @property
    def needs_protection(self) -> bool:
        return any(o.verdict in UNSAFE for m in self.moves for o in m.plan.objects)

    def as_fix(self) -> FixResult:
        return FixResult(root=self.root, changes=self.changes)


def _protections(repo: Any, cm: ClusterMove) -> tuple[list[Proposal], list[str]]:
    """The annotation of each object that moves with a race, in the document that declares it."""
    cluster = next(c for c in repo.clusters if c.name == cm.cluster)
    out: list[Proposal] = []
    problems: list[str] = []
    for mo in cm.plan.objects:
        if mo.verdict not in UNSAFE:
            continue
        obj = next((o for o in cluster.kustomizations[mo.old_owner].objects if o.ref == mo.ref), None)
        doc = obj.resource.doc if obj is not None else None
        if obj is None or doc is None or obj.resource.origin.generated_by or not isinstance(doc.data, dict):
            problems.append(f"{mo.ref} is not written as a document fluxgraph can edit (a generator or a patch makes it)")
            continue
        if doc.data.get("kind") != mo.ref.kind:
            problems.append(f"the document {obj.resource.origin.file} declares for {mo.ref} is not that object as written")
            continue
        annotations = (doc.data.get("metadata") or {}).get("annotations") or {}
        if isinstance(annotations, dict) and PRUNE_KEY in annotations:
            problems.append(f"{mo.ref} sets {PRUNE_KEY} already ({annotations[PRUNE_KEY]!r}) in {obj.resource.origin.file}")
            continue
        edit = MapSet(obj.resource.origin.file, doc.index, ("metadata", "annotations"), PRUNE_KEY, "disabled", ((), ANNOTATIONS_AFTER))
        p = Proposal("move", [], [edit], f"annotate {mo.ref} {PRUNE_KEY}: disabled", obj=obj)
        p.intended = frozenset({(cm.cluster, mo.ref)})
        out.append(p)
    return out, problems


def _judge(before: Any, after: Any, intended: set[tuple[str, ObjRef]]) -> list[str]:
    """What the first stage changes beyond the annotations it means to add."""
    from fluxgraph.diff import diff_repositories

    out: list[str] = []
    for cd in diff_repositories(before.repo, after.repo).clusters:
        for what, changes in (("adds", cd.added), ("removes", cd.removed), ("moves", cd.moved), ("changes", cd.modified)):
            for oc in changes:
                if what == "changes" and (cd.cluster, oc.ref) in intended:
                    other = [c for c in oc.changes if not c.path.startswith("metadata.annotations")]
                    if not other:
                        continue
                    out.append(f"it changes {other[0].path} of {oc.ref} in cluster {cd.cluster}, not only its annotations")
                    continue
                out.append(f"it also {what} {oc.ref} in cluster {cd.cluster}, which it does not mean to change")
        for e in cd.effects:
            if e.severity.rank >= Severity.WARNING.rank:
                out.append(f"it would be judged {e.code} in cluster {cd.cluster}: {e.message[:240]}")
    known = {(f.rule, f.fingerprint) for f in [*before.findings, *before.suppressed, *before.baselined, *before.excluded]}
    for f in after.findings:
        if (f.rule, f.fingerprint) not in known:
            out.append(f"it adds a finding: {f.rule} at {f.location}: {f.message[:200]}")
    return out


def move_component(
    path: str | Path,
    target: str,
    to: str,
    to_path: str | None = None,
    **analyze_kwargs: Any,
) -> MoveResult:
    """Plan moving ``target`` to the Kustomization ``to`` and make its first stage (nothing is
    written: ``MoveResult.as_fix().write()``)."""
    from fluxgraph.engine import analyze

    memo: dict[Any, Any] = {}
    report = analyze(path, document_memo=memo, **analyze_kwargs)
    repo = report.repo
    tgt = resolve_target(repo, target)
    ex = explain(repo, tgt, findings=report.findings, move_to=to, move_path=to_path)
    moves = [ClusterMove(ce.cluster, ce.move) for ce in ex.clusters if ce.move is not None]
    result = MoveResult(Path(repo.root), target, moves)
    if not moves:
        raise FluxgraphError(f"{tgt.describe()} contributes no object to move in any cluster")
    for cm in moves:
        result.refused.extend(f"cluster {cm.cluster}: {b}" for b in cm.plan.blocked)
    if result.refused or not result.needs_protection:
        return result
    proposals: list[Proposal] = []
    for cm in moves:
        mine, problems = _protections(repo, cm)
        proposals += mine
        result.refused.extend(f"cluster {cm.cluster}: {p}" for p in problems)
    if result.refused:
        return result
    changes, failed, left = render_proposals(RepoFS(repo.root), proposals)
    result.refused.extend(sorted(set(failed.values())))
    result.refused.extend(f"{la.file} does not round-trip exactly through ruamel.yaml ({la.reason})" for la in left)
    if result.refused:
        return result
    overlay = {rel: ch.new for rel, ch in changes.items()}
    after = analyze(OverlayFS(repo.root, overlay), document_memo=memo, **analyze_kwargs)
    intended = {pair for p in proposals for pair in p.intended}
    wrong = _judge(report, after, intended)
    if wrong:
        result.refused.extend(f"the protecting stage is not made: {w}" for w in wrong)
        return result
    result.proven.append(
        f"rebuilt with the stage in memory: only the {len(intended)} object(s) that move change, in "
        "metadata.annotations; no new finding and no verdict"
    )
    again = explain(after.repo, resolve_target(after.repo, target), findings=after.findings, move_to=to, move_path=to_path)
    planned = {ce.cluster: ce.move for ce in again.clusters if ce.move is not None}
    for cm in moves:
        cm.after = planned.get(cm.cluster)
        unsafe = [o for o in (cm.after.objects if cm.after else []) if o.verdict in UNSAFE]
        if cm.after is None or unsafe:
            why = f"{unsafe[0].ref} still moves with a {unsafe[0].verdict}: {short_value(unsafe[0].reason)}" if unsafe else "no plan"
            result.refused.append(f"cluster {cm.cluster}: after the protecting stage the move is still not safe ({why})")
    if result.refused:
        return result
    result.proven.append("planned again from that state: every object then moves without a race")
    result.changes = changes
    return result
