"""A fluxgraph suppression that suppresses no finding."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import RepoContext
from fluxgraph.findings import RawFinding

ID = "unused-suppression"
PHASE = 2


def check(ctx: RepoContext) -> Iterator[RawFinding]:
    known, ran = ctx.known_rules, ctx.rules_run
    for s in ctx.suppressions:
        ctx.evaluated()
        if s.used or not s.reason or not s.rules or any(r not in known for r in s.rules):
            continue  # reported by invalid-suppression, or in use
        if any(r not in ran for r in s.rules):
            continue  # its rule did not run (disabled): nothing to say
        where = "annotation fluxgraph.io/ignore" if s.kind == "annotation" else "comment"
        yield ctx.finding(
            f"{where} suppresses {', '.join(s.rules)} but no such finding is there",
            s.location,
            subject=f"{s.kind}:unused:{','.join(s.rules)}",
        )
