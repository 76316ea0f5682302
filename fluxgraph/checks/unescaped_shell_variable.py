"""A ``${VAR}`` in a container's shell script that Flux substitutes at build time
(see rules/unescaped-shell-variable.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._subst import provided, quote, render_expr, render_line, tokens
from fluxgraph.findings import RawFinding

ID = "unescaped-shell-variable"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    strict = ctx.cluster.strict
    for tok in tokens(ctx.cluster):
        if tok.category != "shell":
            continue
        ctx.evaluated()
        if provided(tok.ks, tok.ref.name) is not False:
            continue  # a variable of the Kustomization (templated on purpose), or not known
        r = render_expr(tok, strict)
        if r.error is not None:
            effect = f"its build fails under strict substitution ({r.error.message})"
        else:
            line = render_line(tok, strict)
            effect = (
                f"the shell gets {quote(r.text)} instead" if r.text is not None else "the shell never sees it"
            )
            if line is not None:
                effect += f" (the line becomes: {line})"
        yield ctx.finding(
            f"{tok.expr} in {tok.why} of {tok.obj.ref} is substituted by Kustomization {tok.ks.id}, which defines no "
            f"variable {tok.ref.name}: {effect}",
            tok.location,
            obj=tok.obj.ref,
            kustomization=tok.ks.id,
            subject=tok.subject,
            # for `fluxgraph fix`: where the expression is in the object (before substitution)
            path=json.dumps(list(tok.path)),
            start=str(tok.ref.start),
            end=str(tok.ref.end),
        )
