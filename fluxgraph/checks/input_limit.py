"""Reports the model's `input-limit` problems (see rules/input-limit.md)."""

from fluxgraph.checks import problem_check

ID = "input-limit"
check = problem_check(frozenset({'input-limit'}))
