"""Reports the model's `yaml-syntax` problems (see rules/invalid-yaml.md).

A YAML error that is a safety limit (nesting depth, alias expansion) is reported by
`input-limit` instead, whichever code the build recorded it under.
"""

from collections.abc import Iterator

from fluxgraph.checks import CheckContext, problem_subject
from fluxgraph.findings import RawFinding
from fluxgraph.yamlio import is_limit_message

ID = "invalid-yaml"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    ctx.evaluated(len(ctx.cluster.kustomizations))
    for p in ctx.problems():
        if p.not_evaluated or p.code != "yaml-syntax" or is_limit_message(p.message):
            continue
        yield ctx.finding(p.message, p.location, kustomization=p.kustomization, related=p.related, subject=problem_subject(p))
