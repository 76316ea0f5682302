"""Flux's substitution rewriting text that was written for another tool: a Grafana dashboard,
a CRD, a ``$$`` meant literally (see rules/unintended-substitution.md)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from fluxgraph import envsubst
from fluxgraph.checks import CheckContext
from fluxgraph.checks._subst import (
    dotted,
    line_around,
    object_strings,
    provided,
    quote,
    render_expr,
    scripts_of,
    short,
    substituted_objects,
    text_location,
    tokens,
)
from fluxgraph.findings import FixData, Note, RawFinding, Severity, sentence

ID = "unintended-substitution"

# Exactly two "$" that Flux halves (``$$`` -> ``$``) where the author evidently meant them
# literally: followed by the end of the text, a blank, or punctuation (a shell's PID ``$$``, a
# literal "$$"). ``$${`` is Flux's documented escape, ``$$$$`` the escaped form of ``$$``;
# ``$$name``, ``$$(``, ``$$1`` read as deliberate over-escaping of ``$name``/``$(...)``/``$1``,
# and so do ``$$*``, ``$$@``, ``$$?``, ``$$#``, ``$$!``, ``$$-`` and ``$$'...'``: escapes of the
# shell's ``$*``, ``$@``, ``$?``, ``$#``, ``$!``, ``$-`` and ANSI-C quoting, which Flux renders
# as their author meant.
_LITERAL_DOLLARS = re.compile(r"(?<!\$)\$\$(?=$|[\s\"/.,;:)|&<>\]+=%^~`])")


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    strict = ctx.cluster.strict
    for tok in tokens(ctx.cluster):
        if tok.category != "foreign":
            continue
        ctx.evaluated()
        if provided(tok.ks, tok.ref.name) is not False:
            continue
        r = render_expr(tok, strict)
        if r.error is not None:
            effect = f"the build fails ({r.error.message})"
        elif r.text is None:
            continue
        else:
            effect = f"Flux replaces it with {quote(r.text)}"
        raw = ctx.finding(
            f"{tok.expr} in {dotted(tok.path)} of {tok.obj.ref} is substituted by Kustomization {tok.ks.id} although "
            f"{tok.why}: {effect}",
            tok.location,
            headline=f"{tok.expr} in {tok.obj.ref} is substituted by {tok.ks.id}",
            notes=(
                Note.why(sentence(f"{tok.why}, but Flux substitutes every ${{...}} it builds: {effect}")),
                Note.affected([f"{dotted(tok.path)} of {tok.obj.ref}"]),
            ),
            obj=tok.obj.ref,
            kustomization=tok.ks.id,
            subject=tok.subject,
            fix=FixData(variant="token", path=tuple(tok.path), start=tok.ref.start, end=tok.ref.end),
        )
        if r.error is not None:
            raw = replace(raw, severity=Severity.ERROR)  # documented variant: the build fails
        elif tok.obj.ref.kind == "CustomResourceDefinition" and "description" in tok.path:
            raw = replace(raw, severity=Severity.INFO)  # only the text a person reads changes
        yield raw
    for ks, obj in substituted_objects(ctx.cluster):
        scripts: dict[Any, str] | None = None
        for path, text in object_strings(obj, "$$"):
            if "$$" not in text:
                continue
            ctx.evaluated()
            if scripts is None:
                scripts = scripts_of(obj)
            spans: list[tuple[int, int]] = []
            if "${" in text:
                try:
                    spans = [
                        (p.start, p.end) for p in envsubst.parse(text).parts if isinstance(p, envsubst.VarRef)
                    ]
                except envsubst.EnvsubstSyntaxError:
                    continue
            for m in _LITERAL_DOLLARS.finditer(text):
                if any(a <= m.start() < b for a, b in spans):
                    continue
                start, end = line_around(text, m.start())
                line = text[start:end].strip()
                if path in scripts and line.startswith("#"):
                    continue  # a shell comment: the halving changes nothing the shell runs
                after = envsubst.render(text[start:end], ks.variables, strict=False).text
                became = f": the line becomes {short(after.strip(), 100)}" if after is not None else ""
                run = m.group(0)
                halved = envsubst.substitute(run, {}, strict=False)
                yield ctx.finding(
                    f"{run} in {dotted(path)} of {obj.ref} is halved to {halved} by Kustomization {ks.id}'s "
                    f"substitution ({short(line, 60)}){became}",
                    text_location(obj, path, m.start()),
                    headline=f"{run} in {obj.ref} is halved to {halved} by {ks.id}'s substitution",
                    notes=(
                        Note.why("Flux's substitution renders `$$` as `$`, also where no `{` follows"),
                        Note.affected([f"{dotted(path)} of {obj.ref}"]),
                        *([Note.note(f"the line becomes {short(after.strip(), 100)}")] if after is not None else []),
                    ),
                    obj=obj.ref,
                    kustomization=ks.id,
                    subject=f"{ks.id}|{obj.ref}|{dotted(path)}|{run}|{line}",
                    fix=FixData(variant="dollars", path=tuple(path), start=m.start(), end=m.end()),
                )
