"""Reports the model's `kustomize-build,missing-file,missing-kustomization,resource-cycle,not-kubernetes-object` problems (see rules/kustomize-build-error.md)."""

from fluxgraph.checks import problem_check

ID = "kustomize-build-error"
check = problem_check(frozenset({'kustomize-build', 'missing-file', 'missing-kustomization', 'resource-cycle', 'not-kubernetes-object'}))
