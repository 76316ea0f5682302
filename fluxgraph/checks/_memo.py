"""Memoisation for helpers that several checks share, per cluster and per object.

The engine runs every check over one cluster model; a helper such as ``shared_namespaces`` is
asked by three rules. ``per_cluster`` keeps each helper's value with the model itself
(``ClusterModel.memo``, keyed by the helper), so that no state lives in a module: two models in
one process (``diff``'s base and head, a test's several repositories) each keep their own, and
a value goes when its model does. Models are not modified after ``api.load``, and callers must
not modify what they get.

``per_object`` (and ``per_object_with``, for a helper that also takes a schema) does the same
for a helper that is a function of one object's content alone: its resource and its document
before substitution, never its owner, identity or cluster. The value is kept in the object's
``AppliedObject.content_memo``, which ``diff`` shares with the same object at the other
revision where that revision's walk takes this one's (``cluster.ClusterWalker._take``): the
base's checks then find what the head's computed. A helper that reads anything else (the
object's ``ref``, ``owner``, the cluster) must not use it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from fluxgraph.cluster import AppliedObject, ClusterModel

T = TypeVar("T")
A = TypeVar("A")


def per_cluster(fn: Callable[[ClusterModel], T]) -> Callable[[ClusterModel], T]:
    key = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(cluster: ClusterModel) -> T:
        memo = cluster.memo
        if key not in memo:
            memo[key] = fn(cluster)
        return memo[key]

    return wrapper


def per_object(fn: Callable[[AppliedObject], T]) -> Callable[[AppliedObject], T]:
    key = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(obj: AppliedObject) -> T:
        memo = obj.content_memo
        try:
            return memo[key]
        except KeyError:
            value = memo[key] = fn(obj)
            return value

    return wrapper


def per_object_with(fn: Callable[[AppliedObject, A], T]) -> Callable[[AppliedObject, A], T]:
    """``per_object`` for ``fn(obj, arg)``, one value per ``arg`` object (by identity: a
    schema the catalog keeps, or one read from the repository's CRDs at this revision, which
    the other revision reads again as another object and so does not take)."""
    key = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def wrapper(obj: AppliedObject, arg: A) -> T:
        by_arg: dict[int, tuple[A, T]] = obj.content_memo.setdefault(key, {})
        hit = by_arg.get(id(arg))
        if hit is not None and hit[0] is arg:  # the reference kept makes the id unique
            return hit[1]
        value = fn(obj, arg)
        by_arg[id(arg)] = (arg, value)
        return value

    return wrapper
