"""A ``${VAR}`` in a container's shell script that Flux substitutes at build time
(see rules/unescaped-shell-variable.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fluxgraph.checks import CheckContext
from fluxgraph.checks._subst import Token, provided, quote, render_expr, render_line, tokens
from fluxgraph.findings import FixData, Note, RawFinding
from fluxgraph.model import as_dict, as_list, as_str

ID = "unescaped-shell-variable"


def _container_env(data: dict[str, Any], path: tuple[Any, ...]) -> tuple[set[str], bool] | None:
    """The variables the container holding ``path`` gets from ``env`` (names) and whether it
    has ``envFrom`` (any name), or None when the path is not in a container."""
    node: Any = data
    container: dict[str, Any] | None = None
    for i, step in enumerate(path):
        if isinstance(node, dict):
            node = node.get(step)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            return None
        if i >= 1 and path[i - 1] in ("containers", "initContainers", "ephemeralContainers") and isinstance(node, dict):
            container = node
    if container is None:
        return None
    names = {as_str(as_dict(e).get("name")) for e in as_list(container.get("env"))}
    return names - {""}, bool(as_list(container.get("envFrom")))


def _templated_elsewhere(ctx: CheckContext, file: str, name: str) -> bool:
    """Whether a Kustomization that builds ``file``, in any cluster of the repository, defines
    (or may define) the variable ``name``: the file is then a template with defaults."""
    for c in ctx.repo.clusters:
        for ks in c.kustomizations.values():
            if not ks.substituted or provided(ks, name) is False:
                continue
            if any(o.location.file == file for o in ks.objects):
                return True
    return False


def is_shell_variable(ctx: CheckContext, tok: Token) -> bool:
    """A ``${VAR}`` without a default in a script is the shell's. One with a default
    (``${VAR:-x}``) is the shell's only where the evidence says so: the container's ``env``
    gives it ``VAR`` (or ``envFrom`` may), or no Kustomization that builds the file, in any
    cluster, defines ``VAR``; otherwise it is templating with a default (measured on the wide
    corpus, docs/precision.md)."""
    if not tok.ref.has_default:
        return True
    env = _container_env(tok.obj.pre_substitution, tok.path)
    if env is not None and (tok.ref.name in env[0] or env[1]):
        return True
    return not _templated_elsewhere(ctx, tok.obj.location.file, tok.ref.name)


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    strict = ctx.cluster.strict
    for tok in tokens(ctx.cluster):
        if tok.category != "shell":
            continue
        ctx.evaluated()
        if provided(tok.ks, tok.ref.name) is not False:
            continue  # a variable of the Kustomization (templated on purpose), or not known
        if not is_shell_variable(ctx, tok):
            continue  # a template's default: another build of the file defines the variable
        r = render_expr(tok, strict)
        line = None
        if r.error is not None:
            effect = f"its build fails under strict substitution ({r.error.message})"
            short = ": the build fails (strict substitution)"
        else:
            line = render_line(tok, strict)
            effect = (
                f"the shell gets {quote(r.text)} instead" if r.text is not None else "the shell never sees it"
            )
            short = f" with {quote(r.text)}" if r.text is not None else " away"
            if line is not None:
                effect += f" (the line becomes: {line})"
        notes = [
            Note.why(
                f"Kustomization {tok.ks.id} substitutes {tok.obj.ref} and defines no variable {tok.ref.name}, "
                "so Flux replaces the shell's expression at build time"
            ),
            Note.affected([f"{tok.why} of {tok.obj.ref}"]),
        ]
        if line is not None:
            notes.append(Note.note(f"the line becomes: {line}"))
        yield ctx.finding(
            f"{tok.expr} in {tok.why} of {tok.obj.ref} is substituted by Kustomization {tok.ks.id}, which defines no "
            f"variable {tok.ref.name}: {effect}",
            tok.location,
            obj=tok.obj.ref,
            kustomization=tok.ks.id,
            subject=tok.subject,
            # for `fluxgraph fix`: where the expression is in the object (before substitution)
            fix=FixData(path=tuple(tok.path), start=tok.ref.start, end=tok.ref.end),
            headline=f"Flux substitutes {tok.expr} in the script of {tok.obj.ref}{short}",
            notes=notes,
        )
