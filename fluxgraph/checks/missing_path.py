"""A Kustomization whose ``spec.path`` does not exist in its source (see rules/missing-path.md).

The model records the problem (``missing-path``) when the resolved directory is absent or a
file, or lies outside what an ExternalArtifact copies. A path that still holds a ``${var}``
after the parent's substitution (a value only the cluster knows) is not judged: its real value
is unknown. Without substitution by the parent the ``${var}`` is literal in the cluster too, and
is reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph.checks import CheckContext
from fluxgraph.checks._ownership import ks_object
from fluxgraph.checks._subst import short
from fluxgraph.findings import Note, RawFinding

ID = "missing-path"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    for ks in sorted(cluster.kustomizations.values(), key=lambda k: k.id):
        ctx.evaluated()
        parent = cluster.kustomizations.get(ks.parent) if ks.parent else None
        if "${" in ks.spec.path and parent is not None and parent.substituted:
            continue
        for p in ks.problems:
            if p.code == "missing-path" and not p.not_evaluated:
                obj = ks_object(cluster, ks.id)
                where = obj.resource.position(("spec", "path")) if obj is not None else p.location
                # the headline: the message with a long path shortened and the controller's
                # error as the why (the source line under it shows the whole path)
                head = p.message.replace(" (kustomization path not found)", "")
                if len(head) > 100:
                    head = head.replace(repr(ks.spec.path), repr(short(ks.spec.path, 40)))
                notes = (
                    (Note.why("kustomize-controller stops the build: kustomization path not found"),)
                    if "(kustomization path not found)" in p.message
                    else ()
                )
                yield ctx.finding(
                    p.message,
                    where,
                    headline=head.replace("of Kustomization ", "of "),
                    notes=notes,
                    kustomization=ks.id,
                    related=p.related,
                    subject=f"{ks.id} path {ks.spec.path}",
                )
