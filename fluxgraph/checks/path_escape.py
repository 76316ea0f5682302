"""Reports the model's `path-escape` problems (see rules/path-escape.md)."""

from fluxgraph.checks import problem_check

ID = "path-escape"
check = problem_check(frozenset({'path-escape'}))
