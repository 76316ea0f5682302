"""A postBuild variable name that Flux rejects, failing the whole build
(see rules/invalid-variable-name.md)."""

from __future__ import annotations

from collections.abc import Iterator

from fluxgraph import envsubst
from fluxgraph.checks import CheckContext
from fluxgraph.checks._ownership import ks_object
from fluxgraph.checks._subst import key_location, producers
from fluxgraph.findings import RawFinding
from fluxgraph.model import Location, as_dict

ID = "invalid-variable-name"


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    # (location, name) -> Kustomizations whose build it fails
    bad: dict[tuple[Location, str, str], list[str]] = {}
    for ks in cluster.kustomizations.values():
        pb = ks.spec.post_build
        if pb is None or not any(o.substitution == "applied" for o in ks.objects):
            continue  # Flux checks the names only when it substitutes an object
        decl = ks_object(cluster, ks.id)
        for name, _ in pb.substitute:
            ctx.evaluated()
            if not envsubst.is_valid_var_name(name):
                loc = (
                    key_location(decl, ("spec", "postBuild", "substitute", name))
                    if decl
                    else (ks.declared_at or ks.spec.location)
                )
                bad.setdefault((loc, name, f"postBuild.substitute of Kustomization {ks.id}"), []).append(
                    ks.id
                )
        for sf in pb.substitute_from:
            for p in producers(cluster, sf.kind, ks.spec.namespace, sf.name, ks.home):
                if p.how:
                    continue
                sects = ("data", "stringData") if sf.kind == "Secret" else ("data",)
                for sect in sects:
                    for key in as_dict(p.obj.data.get(sect)):
                        ctx.evaluated()
                        if not envsubst.is_valid_var_name(str(key)):
                            loc = key_location(p.obj, (sect, key))
                            bad.setdefault(
                                (loc, str(key), f"{sf.kind} {p.obj.ref.namespace}/{p.obj.ref.name}"), []
                            ).append(ks.id)
                break
    for (loc, name, where), users in bad.items():
        users = sorted(set(users))
        whose = users[0] if len(users) == 1 else f"{', '.join(users[:-1])} and {users[-1]}"
        yield ctx.finding(
            f"{name!r} in {where} is not a valid variable name: the build of {whose} fails "
            f"(envsubst error: {envsubst.invalid_var_name_message(name)})",
            loc,
            kustomization=users[0],
            subject=f"{where}|{name}",
        )
