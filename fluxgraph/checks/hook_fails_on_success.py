"""A container lifecycle hook (postStart / preStop) whose shell script can exit non-zero on
its success path (see rules/hook-fails-on-success.md)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fluxgraph.checks import CheckContext
from fluxgraph.checks._pods import hooks_of, source_text, text_location
from fluxgraph.cluster import AppliedObject
from fluxgraph.findings import FixData, Note, RawFinding, Severity
from fluxgraph.model import Location, value_at
from fluxgraph.shell import analyze_exec, parse_exec

if TYPE_CHECKING:
    from fluxgraph.shell import ExitVerdict

ID = "hook-fails-on-success"

# verdict kinds that fail on the normal path whatever the environment does
STRONG = frozenset({"and-list-tail", "bare-test", "explicit-exit", "always-fails"})
# verdict kinds that fail when a command's outcome is unfavourable (no match, no connection)
WEAK = frozenset({"fallible-command", "negated-pipeline", "assignment-substitution"})


def _severity(hook: str, kind: str) -> Severity | None:
    if hook == "preStop":
        return Severity.INFO  # the kubelet only records FailedPreStopHook; the container stops anyway
    if kind in STRONG:
        return None  # the rule's severity (error)
    return Severity.WARNING


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    for ks in sorted(ctx.cluster.kustomizations.values(), key=lambda k: k.id):
        for obj in ks.objects:
            for hook in hooks_of(obj):
                verdict = analyze_exec(hook.command)
                if verdict is None:
                    continue  # not a shell -c command: its status is the binary's own
                ctx.evaluated()
                if not verdict.parse_ok or not verdict.may_fail or verdict.kind not in STRONG | WEAK:
                    continue
                pe = parse_exec(hook.command)
                assert pe is not None
                spath = (*hook.path, pe.index)
                loc = _locate(obj, spath, pe.script, verdict, errexit=pe.errexit, pipefail=pe.pipefail)
                snippet = " ".join(verdict.cause.text(pe.script).split())
                if len(snippet) > 80:
                    snippet = snippet[:77] + "..."
                where = f"{obj.ref.kind} {obj.ref.namespace + '/' if obj.ref.namespace else ''}{obj.ref.name}"
                if obj.ref.kind == "HelmRelease":
                    where += " values"
                quoted = "" if f"`{snippet}`" in verdict.reason else f" at `{snippet}`"
                raw = ctx.finding(
                    f"{hook.hook} hook of container {hook.container} in {where} can exit non-zero on its success path"
                    f"{quoted}: {verdict.reason}",
                    loc,
                    obj=obj.ref,
                    kustomization=ks.id,
                    subject=f"{obj.ref} {hook.container} {hook.hook} {verdict.kind}",
                    fix=FixData(hook=hook.hook, variant=verdict.kind, path=tuple(spath)),
                    headline=f"{hook.hook} hook of {hook.container} in {where} can fail on its success path",
                    notes=[
                        Note.why(verdict.reason[:1].upper() + verdict.reason[1:]),
                        Note.affected([f"`{snippet}`, the statement that sets the script's exit status"]),
                        Note.note(
                            "the kubelet kills a container whose postStart hook fails"
                            if hook.hook == "postStart"
                            else "a failed preStop hook is only recorded (FailedPreStopHook)"
                        ),
                    ],
                )
                yield replace(raw, severity=_severity(hook.hook, verdict.kind))


def _locate(
    obj: AppliedObject,
    spath: tuple[Any, ...],
    script: str,
    verdict: ExitVerdict,
    *,
    errexit: bool,
    pipefail: bool,
) -> Location:
    """The statement responsible, in the source file. The script that runs is the built,
    substituted one; its offsets hold in the file only when the file has the same text. When
    substitution changed the text, the file's own script is analysed for the offset."""
    written = source_text(obj, spath)
    if written is None:
        return obj.resource.position(spath)
    if written == script:
        return text_location(obj, spath, verdict.cause.start)
    if value_at(obj.pre_substitution, spath) == written:
        from fluxgraph.shell import analyze_exit

        again = analyze_exit(written, errexit=errexit, pipefail=pipefail)
        if again.parse_ok and again.may_fail and again.kind == verdict.kind:
            return text_location(obj, spath, again.cause.start)
    return text_location(obj, spath, 0)
