"""A field of a Flux object that the CRD schema of its apiVersion does not have
(see rules/unknown-flux-field.md).

The schema is the one ``removed-api-version`` reads (``fluxgraph.fluxapi``: the CRDs the
cluster applies, else those of the Flux release it runs). The API server prunes a field the
schema does not have, without an error (``fieldValidation`` defaults to ``Warn``): the object is
applied without it. Where the field is a misspelling of one the schema requires and the object
lacks, the API server rejects the object instead: the parent's apply fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from fluxgraph import fluxapi
from fluxgraph.checks import CheckContext, field_notes
from fluxgraph.checks._fields import unknown_fields
from fluxgraph.findings import FixData, Note, RawFinding, Severity

ID = "unknown-flux-field"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    apis = fluxapi.cluster_apis(cluster)
    # the fields the model already reports as missing or invalid (invalid-flux-object)
    reported = {p.subject for p in ctx.problems() if p.code in ("invalid-field", "invalid-object")}
    for obj in fluxapi.flux_objects(cluster):
        group, version = fluxapi.api_version(obj)
        crd = apis.crd(group, obj.ref.kind)
        entry = crd.versions.get(version) if crd is not None else None
        if crd is None or entry is None or not entry.served or not entry.schema.get("p"):
            continue  # removed-api-version's, or a CRD without a schema
        ctx.evaluated()
        what = f"{obj.ref.kind} {obj.ref.namespace + '/' if obj.ref.namespace else ''}{obj.ref.name}"
        of = f"the CRD the cluster applies ({crd.where})" if (group, obj.ref.kind) in apis.applied else cluster.flux.short()
        schema = f"the {group}/{version} {obj.ref.kind} of {of}"
        for u in unknown_fields(obj, entry.schema):
            name, parent, hint = fluxapi.unknown_field_words(u)
            fix = FixData.none(
                f"renaming {u.path[-1]} to {u.suggestion} is a decision (the field may belong to another apiVersion)"
                if u.suggestion
                else "which field was meant is a decision"
            )
            raw = ctx.finding(
                f"{what} has {name}, which {schema} does not have: "
                f"the API server drops it when {obj.owner} applies the object{hint}",
                obj.resource.position(u.path, key=True),
                headline=f"{what} has {name}, which {group}/{version} does not have",
                notes=field_notes(obj.owner, hint, schema.removeprefix("the ")),
                obj=obj.ref,
                kustomization=obj.owner,
                subject=f"{obj.ref.key}|{name}",
                fix=fix,
            )
            if u.suggestion and u.suggestion in u.required_missing:
                meant = f"{parent + '.' if parent else ''}{u.suggestion}"
                if f"{obj.ref.kind}/{obj.ref.namespace}/{obj.ref.name}:{meant}" in reported:
                    # invalid-flux-object reports the missing field (an error): this is its cause
                    raw = replace(
                        raw,
                        message=f"{raw.message} (invalid-flux-object reports the missing {meant})",
                        notes=(*raw.notes, Note.note(f"invalid-flux-object reports the missing {meant}")),
                    )
                else:
                    raw = replace(
                        raw,
                        message=f"{what} has {name} but not {meant}, which {schema} requires: the API server "
                        f"rejects the object, so the apply of {obj.owner} fails{hint}",
                        headline=f"{what} has {name} but not {meant}, which {group}/{version} requires",
                        notes=field_notes(
                            obj.owner,
                            hint,
                            schema.removeprefix("the "),
                            f"The API server rejects the object, so the apply of {obj.owner} fails",
                        ),
                        severity=Severity.ERROR,
                    )
            yield raw
