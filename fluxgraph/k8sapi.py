"""The fields of Kubernetes' built-in kinds, from the schemas the kubernetes-validate package ships.

The same fact as ``fluxapi`` for Flux's kinds: kustomize-controller applies with server-side
apply and no ``fieldValidation`` option, so the API server's default (``Warn``) drops a field the
kind's schema does not have and the apply succeeds (``unknown-kubernetes-field``). A Deployment
with ``spec.template.spec.containers[0].resource:`` runs without limits, a Service with
``spec.sessionAfinity:`` without affinity, and nothing says so.

Where the schemas come from: the maintained package `kubernetes-validate
<https://github.com/willthames/kubernetes-validate>`_ (Apache-2.0), which ships the JSON schemas of
each Kubernetes minor generated from the API server's OpenAPI document
(``kubernetes_validate/kubernetes-json-schema/v<version>-local-strict/_definitions.json``; the
strict variant closes every object with ``additionalProperties: false`` where Kubernetes does).
fluxgraph reads the newest version the installed package has, found with
``importlib.util.find_spec`` (the package's own module, which imports jsonschema, is never
imported), and only when a cluster applies a built-in object: loading its 1.8 MB of definitions
costs about 10 ms (docs/performance.md). A definition is reduced to what the field check reads
by ``fluxapi.reduce_schema`` when an object first needs it, its ``$ref``s resolved to shared,
possibly cyclic, references between reduced definitions.

What this does not know: which Kubernetes the cluster runs. A field is unknown when the newest
Kubernetes the package describes does not have it; fields that only newer releases add are
therefore known. An apiVersion that release does not serve (``batch/v1beta1``,
``policy/v1beta1``) has no schema here: its objects are not evaluated, and the report says so.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from fluxgraph.fluxapi import Schema, reduce_schema

PACKAGE = "kubernetes_validate"
_DIR = re.compile(r"v(\d+)\.(\d+)\.(\d+)-local-strict")
_REF = re.compile(r"#/\$defs/(.+)$")


@dataclass
class BuiltinSchemas:
    """The definitions of one Kubernetes release, reduced lazily."""

    version: str  # "1.37"
    where: str  # the definitions file
    defs: dict[str, Any]
    kinds: dict[tuple[str, str, str], str]  # (group, version, kind) -> definition name
    group_kinds: frozenset[tuple[str, str]]  # every built-in (group, kind), at any version
    _reduced: dict[str, Schema] = field(default_factory=dict)

    def schema(self, group: str, version: str, kind: str) -> Schema | None:
        """The reduced schema of a built-in kind at an apiVersion, or None where the release
        does not serve it."""
        name = self.kinds.get((group, version, kind))
        return self.definition(name) if name is not None else None

    def definition(self, name: str) -> Schema:
        hit = self._reduced.get(name)
        if hit is not None:
            return hit
        out: Schema = {}
        self._reduced[name] = out  # before the body: a definition may refer to itself
        out.update(reduce_schema(self.defs.get(name), self._ref))
        return out

    def _ref(self, ref: str) -> Schema:
        m = _REF.search(ref)
        return self.definition(m.group(1)) if m else {}


def schema_dir() -> Path | None:
    """The newest ``v<version>-local-strict`` directory of the installed kubernetes-validate."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.origin:
        return None
    base = Path(spec.origin).parent / "kubernetes-json-schema"
    try:
        found = [(tuple(int(g) for g in m.groups()), d) for d in base.iterdir() if (m := _DIR.fullmatch(d.name))]
    except OSError:
        return None
    return max(found)[1] if found else None


@cache
def builtin_schemas() -> BuiltinSchemas | str:
    """The schemas of the newest Kubernetes release the package describes, or why there are none."""
    d = schema_dir()
    if d is None:
        return f"the {PACKAGE.replace('_', '-')} package is not installed"
    path = d / "_definitions.json"
    try:
        with path.open("rb") as f:
            defs = json.load(f).get("$defs")
    except (OSError, ValueError, AttributeError) as e:
        return f"{path} could not be read ({e})"
    if not isinstance(defs, dict):
        return f"{path} has no $defs"
    kinds: dict[tuple[str, str, str], str] = {}
    for name, body in defs.items():
        for gvk in _gvks(body):
            kinds.setdefault(gvk, name)
    version = ".".join(d.name.split("-", 1)[0].lstrip("v").split(".")[:2])  # "1.37": the release, not the patch
    return BuiltinSchemas(version, str(path), defs, kinds, frozenset((g, k) for g, _, k in kinds))


def _gvks(body: Any) -> Iterable[tuple[str, str, str]]:
    if not isinstance(body, dict):
        return ()
    out = []
    for e in body.get("x-kubernetes-group-version-kind") or ():
        if isinstance(e, dict) and isinstance(e.get("kind"), str) and isinstance(e.get("version"), str):
            out.append((str(e.get("group") or ""), e["version"], e["kind"]))
    return out
