"""Text that Flux's envsubst parser rejects in an object it substitutes
(see rules/invalid-substitution-syntax.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph import envsubst
from fluxgraph.checks import CheckContext
from fluxgraph.checks._subst import dotted, short, text_location
from fluxgraph.findings import Note, RawFinding
from fluxgraph.model import value_at

ID = "invalid-substitution-syntax"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    for ks in ctx.cluster.kustomizations.values():
        if not ks.substituted:
            continue
        ctx.evaluated(sum(1 for o in ks.objects if o.substitution == "applied"))
        for obj, path, err in ks.substitution_errors:
            if isinstance(err, envsubst.EnvsubstSyntaxError):
                start = err.expr_start if err.expr_start is not None else err.offset
                detail = f"envsubst error: variable substitution failed: {err.message}"
            elif isinstance(err, envsubst.EnvsubstRuntimeError):
                start = err.offset
                detail = err.flux_message
            else:
                continue  # unset variables are undefined-substitution-variable's
            text = value_at(obj.pre_substitution, path)
            if not isinstance(text, str):
                continue
            end = text.find("}", start)
            snippet = short(
                text[start : end + 1 if end != -1 and end - start < 60 else start + 30].split("\n")[0], 60
            )
            yield ctx.finding(
                f"{snippet} in {dotted(path)} of {obj.ref} is not valid Flux substitution syntax: the build of "
                f"Kustomization {ks.id} fails ({detail})",
                text_location(obj, path, start),
                headline=f"{snippet} in {obj.ref} is not valid Flux substitution syntax",
                notes=(
                    Note.why(f"The build of Kustomization {ks.id} fails ({detail})"),
                    Note.affected([f"{dotted(path)} of {obj.ref}"]),
                ),
                obj=obj.ref,
                kustomization=ks.id,
                subject=f"{ks.id}|{obj.ref}|{dotted(path)}|{snippet}",
            )
