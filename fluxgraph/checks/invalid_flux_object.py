"""Reports the model's `invalid-field,invalid-object,unknown-api-version` problems (see rules/invalid-flux-object.md)."""

from fluxgraph.checks import problem_check

ID = "invalid-flux-object"
check = problem_check(frozenset({'invalid-field', 'invalid-object', 'unknown-api-version'}))
