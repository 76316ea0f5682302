"""Per-cluster memoisation for helpers that several checks share.

The engine runs every check over one cluster model before the next; a helper such as
``shared_namespaces`` is asked by three rules. ``per_cluster`` keeps the value for the last
cluster model seen (by identity: the cache holds the model, so its id cannot be reused), which
is all the engine needs and keeps no more than one model alive. Models are not modified after
``api.load``, and callers must not modify what they get.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from fluxgraph.cluster import ClusterModel

T = TypeVar("T")


def per_cluster(fn: Callable[[ClusterModel], T]) -> Callable[[ClusterModel], T]:
    last: list[tuple[ClusterModel, Any]] = []

    @functools.wraps(fn)
    def wrapper(cluster: ClusterModel) -> T:
        if last and last[0][0] is cluster:
            return last[0][1]
        value = fn(cluster)
        last[:] = [(cluster, value)]
        return value

    return wrapper
