"""Reports the model's `missing-source` problems (see rules/missing-source.md)."""

from fluxgraph.checks import problem_check

ID = "missing-source"
check = problem_check(frozenset({'missing-source'}))
