"""A ``${VAR}`` without a default that no variable source of its Kustomization defines
(see rules/undefined-substitution-variable.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._subst import became_null, dotted, provided, sources_text, tokens
from fluxgraph.findings import RawFinding

ID = "undefined-substitution-variable"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    strict = ctx.cluster.strict
    for tok in tokens(ctx.cluster):
        if tok.category != "plain":
            continue
        ctx.evaluated()
        if tok.ref.has_default or provided(tok.ks, tok.ref.name) is not False:
            continue  # a default-style operator never fails; unknown sources are not evaluated
        if strict:
            effect = f'so its build fails under strict substitution (variable not set (strict mode): "{tok.ref.name}")'
        else:
            effect = "so Flux replaces it with an empty string (substitution is not strict)"
            if became_null(tok):
                effect += ", which turns the field into null"
        yield ctx.finding(
            f"{tok.expr} in {dotted(tok.path)} of {tok.obj.ref} has no value: no source of Kustomization {tok.ks.id} "
            f"({sources_text(tok.ks)}) defines {tok.ref.name}, {effect}",
            tok.location,
            obj=tok.obj.ref,
            kustomization=tok.ks.id,
            subject=tok.subject,
        )
