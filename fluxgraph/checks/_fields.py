"""The unknown-field rules' walk of one object against its schema (``fluxapi.unknown_fields``),
kept with the object's content (``_memo.per_object_with``): ``unknown-flux-field``,
``unknown-kubernetes-field`` and ``unknown-custom-resource-field`` walk every object of a
cluster, and ``diff``'s base takes what the head's walk found for an object it shares."""

from __future__ import annotations

from fluxgraph import fluxapi
from fluxgraph.checks._memo import per_object_with
from fluxgraph.cluster import AppliedObject
from fluxgraph.fluxapi import Schema, UnknownField


@per_object_with
def unknown_fields(obj: AppliedObject, schema: Schema) -> list[UnknownField]:
    """``fluxapi.unknown_fields`` of the object as applied (callers must not modify the list)."""
    return fluxapi.unknown_fields(obj.data, schema)
