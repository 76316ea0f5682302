"""Reports the model's `yaml-syntax` problems (see rules/invalid-yaml.md)."""

from fluxgraph.checks import problem_check

ID = "invalid-yaml"
check = problem_check(frozenset({'yaml-syntax'}))
