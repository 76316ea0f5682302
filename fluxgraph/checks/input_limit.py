"""Reports the model's `input-limit` problems (see rules/input-limit.md): file size, YAML
nesting depth and alias expansion, directory depth and count, kustomization nesting.

YAML limit errors may have been recorded under `yaml-syntax` by the build; they are
recognised by their message (``yamlio.is_limit_message``) and reported here.
"""

from collections.abc import Iterator

from fluxgraph.checks import CheckContext, problem_subject
from fluxgraph.findings import RawFinding
from fluxgraph.yamlio import is_limit_message

ID = "input-limit"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    ctx.evaluated(len(ctx.cluster.kustomizations))
    for p in ctx.problems():
        if p.not_evaluated:
            continue
        if p.code == "input-limit" or (p.code == "yaml-syntax" and is_limit_message(p.message)):
            yield ctx.finding(p.message, p.location, kustomization=p.kustomization, related=p.related, subject=problem_subject(p))
