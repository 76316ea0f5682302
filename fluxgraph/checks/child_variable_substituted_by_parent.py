"""A child Flux Kustomization's own ``${VAR}`` that its substituting parent replaces first
(see rules/child-variable-substituted-by-parent.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._subst import dotted, quote, render_expr, tokens
from fluxgraph.findings import FixData, Note, RawFinding

ID = "child-variable-substituted-by-parent"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    strict = ctx.cluster.strict
    for tok in tokens(ctx.cluster):
        if tok.category != "child":
            continue
        ctx.evaluated()
        r = render_expr(tok, strict)
        if r.error is not None:
            effect = f"the parent's build fails ({r.error.message})"
        elif r.text is None:
            effect = "the parent replaces it with a value that is not in the repository"
        else:
            effect = f"the parent replaces it with {quote(r.text)}"
        child = f"{tok.obj.ref.namespace}/{tok.obj.ref.name}"
        yield ctx.finding(
            f"{tok.expr} in {dotted(tok.path)} of Kustomization {child} names the child's own variable "
            f"{tok.ref.name}, but its parent {tok.ks.id} substitutes the child's manifest first and defines no "
            f"{tok.ref.name}: {effect}, so {child} never sees {tok.expr}",
            tok.location,
            headline=f"{tok.expr} in Kustomization {child} is substituted by its parent {tok.ks.id} first",
            notes=(
                Note.why(
                    f"{tok.ks.id} substitutes the child's manifest before the child exists and defines no "
                    f"{tok.ref.name}: {effect}, so {child} never sees {tok.expr}"
                ),
                Note.affected([f"{dotted(tok.path)} of Kustomization {child}"]),
            ),
            obj=tok.obj.ref,
            kustomization=tok.ks.id,
            subject=tok.subject,
            fix=FixData(path=tuple(tok.path), start=tok.ref.start, end=tok.ref.end),
        )
