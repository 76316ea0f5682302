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
   has reconciled, and the third removes the annotations;
3. the move itself is rebuilt in memory from that state (``simulate_move``: a folder or file
   split into a new Kustomization) and judged (``_judge_final``): the new owner applies every
   moved object, each arrives as it was, and no error, warning or verdict appears.

A move that races nothing needs no protecting stage: step 3 runs from the repository as it is,
its steps are printed, and nothing is written (the move itself creates and renames files, which
the edit layer does not make).
"""

from __future__ import annotations

import io
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgraph import contentdiff, gc
from fluxgraph.explain import MovePlan, explain, resolve_target
from fluxgraph.findings import Severity
from fluxgraph.fix import FileChange, FixResult, change_detail, render_proposals, short_value
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
    notes: list[str] = field(default_factory=list)  # what was not checked, and why
    stage: str = ""  # what ``changes`` are: "protect" (stage 1) or "move" (the move itself)

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
    if result.refused:
        return result
    if not result.needs_protection:
        # nothing races: the first stage is the move itself, made and judged from here
        for cm in moves:
            cm.after = cm.plan
        made = _prove_stage_two(result, report, report, {}, tgt, memo, analyze_kwargs)
        if not result.refused and made:
            result.changes = {
                rel: FileChange(rel, _original(Path(repo.root), rel), new) for rel, new in made.items()
            }
            result.stage = "move"
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
    _prove_stage_two(result, report, after, overlay, tgt, memo, analyze_kwargs)
    if result.refused:
        return result
    result.changes = changes
    result.stage = "protect"
    return result


def _original(root: Path, rel: str) -> bytes:
    return (root / rel).read_bytes()


def _prove_stage_two(
    result: MoveResult, report: Any, state: Any, overlay: dict[str, bytes], tgt: Any, memo: dict[Any, Any], analyze_kwargs: dict[str, Any]
) -> dict[str, bytes]:
    """Make the move itself on top of ``state`` (the repository with ``overlay``), rebuild it and
    judge it; returns the files it changes (beyond ``overlay``), empty when it is not made in
    every cluster. Clusters whose moves change one file differently are refused."""
    from fluxgraph.engine import analyze

    made: dict[str, bytes] = {}
    for cm in result.moves:
        plan = cm.after or cm.plan
        simulated, why = simulate_move(state.repo, cm.cluster, plan, tgt, {**overlay, **made})
        if simulated is None:
            result.notes.append(f"cluster {cm.cluster}: the move itself is not made in memory: {why}")
            made = {}
            break
        made.update({rel: data for rel, data in simulated.items() if overlay.get(rel) != data})
    if not made:
        return {}
    final = analyze(OverlayFS(result.root, {**overlay, **made}), document_memo=memo, **analyze_kwargs)
    for cm in result.moves:
        plan = cm.after or cm.plan
        wrong = _judge_final(report, state, final, cm)
        if wrong:
            result.refused.extend(f"cluster {cm.cluster}: the move as planned is not safe: {w}" for w in wrong)
        else:
            result.proven.append(
                f"cluster {cm.cluster}: the move rebuilt in memory{' from that state' if overlay else ''}: "
                f"{plan.new_owner} applies the {len(plan.objects)} object(s) as they were; no new error or warning and no verdict"
            )
    # the clusters that do not apply the target still read the files the move edits
    others = {c.name for c in final.repo.clusters} - {cm.cluster for cm in result.moves}
    known = {(f.rule, f.fingerprint) for f in [*report.findings, *report.suppressed, *report.baselined, *report.excluded]}
    for f in final.findings:
        if f.cluster in others and (f.rule, f.fingerprint) not in known and f.severity.rank >= Severity.WARNING.rank:
            result.refused.append(f"cluster {f.cluster}: the move adds {f.severity.value} {f.rule} at {f.location}: {f.message[:200]}")
    return made


def _read(root: Path, overlay: dict[str, bytes], rel: str) -> str:
    data = overlay.get(rel)
    return (data if data is not None else (root / rel).read_bytes()).decode("utf-8")


def _unchanged(root: Path, overlay: dict[str, bytes]) -> set[str]:
    """The files of ``overlay`` that hold what the repository holds."""
    return {rel for rel, data in overlay.items() if (root / rel).is_file() and (root / rel).read_bytes() == data}


def _current(root: Path, out: dict[str, bytes], rel: str) -> str:
    return _read(root, out, rel)


def _dump(data: Any) -> str:
    from ruamel.yaml import YAML

    y = YAML()
    y.default_flow_style = False
    y.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


def _load_all(text: str) -> list[Any]:
    from ruamel.yaml import YAML

    return list(YAML(typ="safe", pure=True).load_all(text))


def simulate_move(
    repo: Any, cluster_name: str, plan: MovePlan, target: Any, overlay: dict[str, bytes]
) -> tuple[dict[str, bytes] | None, str]:
    """The move itself (a folder or file split into a new Kustomization) as text edits on top of
    ``overlay``, every other byte kept: the ``dependsOn`` entries of the dependents (the edit
    layer of ``fix``), the new Kustomization (``moveplan.new_kustomization``) appended as a
    document to the file that declares the old owner, and the target's line taken out of the
    ``resources`` of the kustomization that lists it. Each file is parsed again and must hold
    exactly the intended data. Returns the files with their new content (``overlay``'s
    included), or None and why the move cannot be made so."""
    from fluxgraph.fix import SOPS_FILE
    from fluxgraph.fix.roundtrip import NotRoundTrip
    from fluxgraph.fix.textedit import EditError, FileEditor, SeqAppend
    from fluxgraph.moveplan import new_kustomization, target_lister

    model = next(c for c in repo.clusters if c.name == cluster_name)
    if plan.exists or target.kind != "path" or not target.path or plan.new_path != target.path:
        return None, "only a folder or file split into a new Kustomization is made"
    doc = new_kustomization(model, plan)
    if doc is None:
        return None, "the plan leaves a decision in the new Kustomization (a variable, a namespace or a path)"
    old_id = next((o.old_owner for o in plan.objects), None)
    old = model.kustomizations.get(old_id or "")
    if old is None or old.declared_at is None:
        return None, "the old owner is not declared in a file"
    moving = [o for o in old.objects if any(m.ref == o.ref for m in plan.objects)]
    origin = moving[0].resource.origin if moving else None
    lister = None if origin is None else target_lister(origin, target.path)
    if not lister or lister.endswith("<generated>"):
        return None, "no kustomization file lists the target (a generated one takes the whole folder)"
    root = Path(repo.root)
    out = dict(overlay)
    new_ns, _, new_name = plan.new_owner.partition("/")

    def guard(rel: str, text: str) -> None:
        if SOPS_FILE.search(text):
            raise EditError(f"{rel} is encrypted with SOPS: an edit breaks its MAC")

    try:
        # 1. the dependents wait for the new owner (SeqAppend, as fix adds dependsOn)
        by_file: dict[str, list[Any]] = {}
        for dep_id, _why in plan.dependents:
            dep = model.kustomizations.get(dep_id)
            decl = dep.declared_by if dep is not None else None
            ddoc = decl.resource.doc if decl is not None else None
            if dep is None or decl is None or ddoc is None:
                return None, f"{dep_id} is not declared by a document fluxgraph can edit"
            written = (ddoc.data.get("spec") or {}).get("dependsOn") if isinstance(ddoc.data, dict) else None
            if written != (decl.pre_substitution.get("spec") or {}).get("dependsOn"):
                return None, f"spec.dependsOn of {dep_id} is changed by a patch: add the entry there"
            ns = dep_id.partition("/")[0]
            item = (("name", new_name),) if new_ns == ns else (("name", new_name), ("namespace", new_ns))
            by_file.setdefault(decl.resource.origin.file, []).append(SeqAppend(decl.resource.origin.file, ddoc.index, ("spec", "dependsOn"), item))
        for rel, edits in sorted(by_file.items()):
            text = _current(root, out, rel)
            guard(rel, text)
            out[rel] = FileEditor(rel, text).apply(edits).encode("utf-8")
        # 2. the new Kustomization, beside the old owner's declaration
        decl_file = old.declared_at.file
        text = _current(root, out, decl_file)
        guard(decl_file, text)
        before = _load_all(text)
        added = (text if text.endswith("\n") or not text else text + "\n") + "---\n" + _dump(doc)
        if _load_all(added) != [*before, doc]:
            return None, f"the new Kustomization does not read back from {decl_file} as written"
        out[decl_file] = added.encode("utf-8")
        # 3. the folder out of the build of the old owner
        text = _current(root, out, lister)
        guard(lister, text)
        data = _load_all(text)
        base = posixpath.dirname(lister)
        res = data[0].get("resources") if len(data) == 1 and isinstance(data[0], dict) else None
        if not isinstance(res, list):
            return None, f"{lister} does not list the target in a resources list"
        entries = [r for r in res if isinstance(r, str) and posixpath.normpath(posixpath.join(base, r)) == target.path]
        if not entries and lister in overlay and lister not in _unchanged(root, overlay):
            return out, ""  # the move of another cluster that builds this kustomization took it out
        if len(entries) != 1:
            return None, f"{lister} does not list {target.path} once in its resources"
        pattern = re.compile(r"(?m)^[ \t]*-[ \t]+(['\"]?)" + re.escape(entries[0]) + r"\1[ \t]*(#.*)?\n?")
        hits = list(pattern.finditer(text))
        if len(hits) != 1:
            return None, f"{lister} lists {entries[0]} in a way fluxgraph does not edit (a flow list, or twice)"
        removed = text[: hits[0].start()] + text[hits[0].end() :]
        want = dict(data[0])
        want["resources"] = [r for r in res if r != entries[0]]
        if not want["resources"]:
            # the last entry: the key goes too (an empty `resources:` reads as null)
            key = list(re.finditer(r"(?m)^resources:[ \t]*(#.*)?\n", removed))
            if len(key) != 1:
                return None, f"{lister} lists nothing else, and its resources key is not written as fluxgraph edits it"
            removed = removed[: key[0].start()] + removed[key[0].end() :]
            del want["resources"]
        got = _load_all(removed)
        if len(got) != 1 or got[0] != want:
            return None, f"{lister} does not read back as intended without {entries[0]}"
        out[lister] = removed.encode("utf-8")
    except (EditError, NotRoundTrip) as e:
        return None, str(getattr(e, "reason", None) or e)
    return out, ""


def _judge_final(report: Any, stage1: Any, final: Any, cm: ClusterMove) -> list[str]:
    """What is wrong with the state stage 2 leaves: a moved object not applied by the new owner,
    a new error or warning, a verdict of warning or error on the change."""
    from fluxgraph.diff import diff_repositories

    out: list[str] = []
    model = next((c for c in final.repo.clusters if c.name == cm.cluster), None)
    if model is None:
        return [f"cluster {cm.cluster} is not found after the move"]
    applied = {o.ref: o for o in model.objects() if o.owner == cm.plan.new_owner}
    lost = [str(o.ref) for o in cm.plan.objects if o.ref not in applied]
    if lost:
        out.append(f"{cm.plan.new_owner} does not apply {', '.join(lost[:5])}")
    # the objects must arrive as they were: what the build around the folder did to them (an
    # overlay's patches, its namespace) does not come along
    was = next((c for c in stage1.repo.clusters if c.name == cm.cluster), None)
    for mo in cm.plan.objects:
        now = applied.get(mo.ref)
        before = next((o for o in (was.kustomizations[mo.old_owner].objects if was and mo.old_owner in was.kustomizations else []) if o.ref == mo.ref), None)
        if now is None or before is None or now.data == before.data:
            continue
        changes = contentdiff.object_changes(mo.ref.kind, mo.ref.group, before.data, now.data)
        if changes:
            out.append(f"{mo.ref} changes on the way ({change_detail(changes[0])}): the build it leaves shapes it")
    known = {(f.rule, f.fingerprint) for f in [*report.findings, *report.suppressed, *report.baselined, *report.excluded]}
    for f in final.findings:
        if f.cluster in (cm.cluster, "") and (f.rule, f.fingerprint) not in known and f.severity.rank >= Severity.WARNING.rank:
            out.append(f"{f.severity.value} {f.rule} at {f.location}: {f.message[:200]}")
    for cd in diff_repositories(stage1.repo, final.repo).clusters:
        if cd.cluster != cm.cluster:
            continue
        for e in cd.effects:
            if e.severity.rank >= Severity.WARNING.rank:
                out.append(f"verdict {e.code}: {e.message[:200]}")
    return out
