"""A ``${VAR}`` evidently written for Flux in a Kustomization that does not substitute, so the
literal text reaches the cluster (see rules/unsubstituted-flux-variable.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._subst import (
    cluster_variables,
    dotted,
    flux_field,
    foreign_reason,
    object_strings,
    parse,
    postbuild_injected,
    scripts_of,
    self_evaluated,
    text_location,
)
from fluxgraph.findings import Note, RawFinding

ID = "unsubstituted-flux-variable"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    known = cluster_variables(ctx.cluster)
    injected = set(postbuild_injected(ctx.cluster))
    for ks in ctx.cluster.kustomizations.values():
        if ks.substituted or ks.status != "built" or ks.id in injected:
            continue  # injected: postBuild comes from outside the repository (not evaluated)
        if ks.spec.post_build is None:
            why_literal = (
                f"Kustomization {ks.id} has no spec.postBuild, so Flux does not substitute its objects"
            )
        else:
            why_literal = (
                f"Kustomization {ks.id} has a postBuild but no variable resolves, so Flux skips substitution "
                "(substituteStrategy WithVariables)"
            )
        for obj in ks.objects:
            if obj.substitution not in ("none", "skipped"):
                continue  # "disabled": opted out on purpose
            scripts = None
            for path, text in object_strings(obj, "${"):
                t = parse(text)
                if t is None or self_evaluated(obj, path):
                    continue
                if scripts is None:
                    scripts = scripts_of(obj)
                for ref in t.refs():
                    ctx.evaluated()
                    evidence = None
                    if flux_field(obj, path):
                        evidence = f"{dotted(path)} is a field Flux reads itself"
                    elif (path not in scripts or "$${" in text) and foreign_reason(
                        obj, path, text, ref.name
                    ) is None:
                        # a shell script counts only when its own $${...} escapes show it was written for Flux
                        if ref.name in known:
                            users = known[ref.name]
                            ks_id, origin = users[0]
                            src = "" if origin in ("substitute", "postBuild") else f" from {origin}"
                            more = f" and {len(users) - 1} more" if len(users) > 1 else ""
                            evidence = f"{ref.name} is a variable of Kustomization {ks_id}{src}{more}"
                        elif obj.substitution == "skipped" and ref.has_default:
                            evidence = "the Kustomization's postBuild was meant to apply this default"
                    if evidence is None:
                        continue
                    expr = text[ref.start : ref.end]
                    yield ctx.finding(
                        f"{expr} in {dotted(path)} of {obj.ref} reaches the cluster literally: {why_literal} "
                        f"({evidence})",
                        text_location(obj, path, ref.start),
                        obj=obj.ref,
                        kustomization=ks.id,
                        subject=f"{ks.id}|{obj.ref}|{dotted(path)}|{expr}",
                        headline=f"{expr} in {obj.ref} reaches the cluster unsubstituted",
                        notes=[
                            Note.why(why_literal),
                            Note.affected([f"{dotted(path)} of {obj.ref}"]),
                            Note.evidence([evidence]),
                        ],
                    )
