"""Per-cluster memoisation for helpers that several checks share.

The engine runs every check over one cluster model; a helper such as ``shared_namespaces`` is
asked by three rules. ``per_cluster`` keeps each helper's value with the model itself
(``ClusterModel.memo``, keyed by the helper), so that no state lives in a module: two models in
one process (``diff``'s base and head, a test's several repositories) each keep their own, and
a value goes when its model does. Models are not modified after ``api.load``, and callers must
not modify what they get.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from fluxgraph.cluster import ClusterModel

T = TypeVar("T")


def per_cluster(fn: Callable[[ClusterModel], T]) -> Callable[[ClusterModel], T]:
    key = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(cluster: ClusterModel) -> T:
        memo = cluster.memo
        if key not in memo:
            memo[key] = fn(cluster)
        return memo[key]

    return wrapper
