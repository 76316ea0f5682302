"""``$${VAR}`` where nothing substitutes, so the doubled dollar reaches the cluster
(see rules/escape-without-substitution.md)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._subst import (
    dotted,
    object_strings,
    postbuild_injected,
    scripts_of,
    self_evaluated,
    short,
    text_location,
)
from fluxgraph.findings import FixData, Note, RawFinding, sentence

ID = "escape-without-substitution"

_ESCAPE = re.compile(r"(?<!\$)\$\$\{[^}\n]{0,80}\}?")


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    injected = set(postbuild_injected(ctx.cluster))
    for ks in ctx.cluster.kustomizations.values():
        if ks.status != "built" or ks.id in injected:
            continue  # injected: postBuild comes from outside the repository (not evaluated)
        for obj in ks.objects:
            if obj.substitution == "applied":
                continue
            if obj.substitution == "disabled":
                kind = "disabled"
                why = f"{obj.ref} opts out of substitution with kustomize.toolkit.fluxcd.io/substitute: disabled"
            elif obj.substitution == "skipped":
                kind = "skipped"
                why = f"Kustomization {ks.id} has a postBuild but no variable resolves, so Flux skips substitution"
            else:
                kind = "no-postbuild"
                why = f"Kustomization {ks.id} has no spec.postBuild, so Flux does not substitute it"
            scripts = None
            for path, text in object_strings(obj, "$${"):
                if "$${" not in text or self_evaluated(obj, path):
                    continue  # a Kustomization's patches are substituted by that Kustomization
                if scripts is None:
                    scripts = scripts_of(obj)
                ctx.evaluated()
                for m in _ESCAPE.finditer(text):
                    esc = short(m.group(0), 60)
                    effect = (
                        f"the shell expands $$ to its process ID and reads {esc[2:]} as text"
                        if path in scripts
                        else (f"the cluster gets {esc} instead of {esc[1:]}")
                    )
                    yield ctx.finding(
                        f"{esc} in {dotted(path)} of {obj.ref} is never unescaped: {why}; {effect}",
                        text_location(obj, path, m.start()),
                        headline=f"{esc} in {obj.ref} is never unescaped",
                        notes=(Note.why(sentence(f"{why}; {effect}")), Note.affected([f"{dotted(path)} of {obj.ref}"])),
                        obj=obj.ref,
                        kustomization=ks.id,
                        subject=f"{ks.id}|{obj.ref}|{dotted(path)}|{esc}",
                        fix=FixData(variant=kind, path=tuple(path), start=m.start()),
                    )
