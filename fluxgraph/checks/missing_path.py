"""Reports the model's `missing-path` problems (see rules/missing-path.md)."""

from fluxgraph.checks import problem_check

ID = "missing-path"
check = problem_check(frozenset({'missing-path'}))
