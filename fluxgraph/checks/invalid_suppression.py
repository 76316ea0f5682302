"""A fluxgraph suppression without a reason, or naming a rule that does not exist."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import RepoContext
from fluxgraph.findings import RawFinding

ID = "invalid-suppression"
PHASE = 2


def check(ctx: RepoContext) -> Iterator[RawFinding]:
    known = ctx.known_rules
    for s in ctx.suppressions:
        ctx.evaluated()
        where = "annotation fluxgraph.io/ignore" if s.kind == "annotation" else "comment"
        if not s.rules:
            yield ctx.finding(f"{where} names no rule", s.location, subject=f"{s.kind}:norule")
            continue
        bad = [r for r in s.rules if r not in known]
        if bad:
            yield ctx.finding(f"{where} names unknown rule(s) {', '.join(bad)}", s.location, subject=f"{s.kind}:{','.join(bad)}")
        if not s.reason:
            yield ctx.finding(
                f"{where} suppressing {', '.join(s.rules)} gives no reason; it suppresses nothing until it does",
                s.location,
                subject=f"{s.kind}:noreason:{','.join(s.rules)}",
            )
