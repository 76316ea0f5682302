"""A HelmRelease value merged at a ``valuesFrom[].targetPath`` that Helm's ``--set`` parser
does not read as the value it is (see rules/values-from-set-syntax.md).

helm-controller merges such an entry with fluxcd/pkg chartutil ``ReplacePathValue``: the line
``<targetPath>=<value>`` goes through Helm's strvals parser (``fluxgraph.strvals``), unless the
entry has ``literal: true`` on a Flux that serves the field (helm-controller v1.6, Flux 2.9),
where only the path is parsed. The check parses every such value the repository holds in
plain text (a ConfigMap's or a Secret's key; SOPS-encrypted values and objects made in the
cluster are not evaluated) as the controller would, into the values merged before it, and
compares what the chart receives with the value:

- error: the parser fails (an unescaped comma followed by text without ``=``, an unclosed
  ``{``, a path through a value of another type): the release fails with ``ValuesError`` and
  is not installed or upgraded;
- warning: the parser succeeds but the chart receives something else: more keys than the
  target path (an unescaped comma followed by ``key=value``), a list of fragments of a JSON
  object, or the value without the backslashes the parser dropped.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from fluxgraph import fluxapi, fluxrelease
from fluxgraph.admission import merge_values
from fluxgraph.checks import CheckContext
from fluxgraph.cluster import AppliedObject, ClusterModel, HelmReleaseNode, object_values
from fluxgraph.findings import FixData, Note, RawFinding, Severity, sentence
from fluxgraph.model import Location, Problem, as_dict, as_list, as_str, dotted
from fluxgraph.strvals import StrvalsError, replace_path_value
from fluxgraph.yamlio import load_text

ID = "values-from-set-syntax"

_SENTINEL = "\x00fluxgraph-target\x00"
# what a backslash escapes on purpose in a --set value: the parser's own syntax
_SYNTAX = set(",\\=.[]{}")


def check(ctx: CheckContext) -> Iterator[RawFinding]:
    cluster = ctx.cluster
    unevaluated: list[Location] = []
    index: dict[tuple[str, str, str, str], AppliedObject] | None = None
    for hr in cluster.helm_releases.values():
        spec = as_dict(hr.obj.data.get("spec"))
        refs = [as_dict(r) for r in as_list(spec.get("valuesFrom"))]
        if not any(as_str(r.get("targetPath")) for r in refs):
            continue
        if index is None:
            index = _config_objects(cluster)
        literal_served = _literal_served(cluster, hr)
        values = as_dict(spec.get("values"))
        merged: dict[str, Any] = {}  # ChartValuesFromReferences' result, as far as the repository says
        for i, ref in enumerate(refs):
            kind, name = as_str(ref.get("kind")) or "ConfigMap", as_str(ref.get("name"))
            key = as_str(ref.get("valuesKey")) or "values.yaml"
            path = as_str(ref.get("targetPath"))
            obj = index.get((kind, hr.spec.namespace, name, hr.obj.ref.target)) if name else None
            text = object_values(kind, obj.data).get(key) if obj is not None else None
            if not path:
                if isinstance(text, str):
                    docs = _load(text)
                    if docs and isinstance(docs[0], dict):
                        merged = merge_values(merged, docs[0])
                continue
            merged = merge_values(merged, values)
            if obj is None or not isinstance(text, str):
                if obj is None or key in object_values(kind, obj.data):  # made in the cluster, or encrypted
                    unevaluated.append(hr.obj.resource.position(("spec", "valuesFrom", i)))
                continue  # a key the object lacks: helm-controller's ErrKeyNotFound, not this rule's
            ctx.evaluated()
            literal = ref.get("literal") is True and literal_served
            raw = _judge(ctx, hr, i, kind, name, key, path, text, literal, merged, obj)
            if raw is not None:
                if ref.get("literal") is True and not literal_served:
                    raw = replace(
                        raw,
                        message=f"{raw.message} (its literal: true is a field {cluster.flux.short()} does not have: "
                        "the API server drops it, see unknown-flux-field)",
                    )
                yield raw
            try:  # what the next entries merge into (a copy: merged shares maps with the object's spec.values)
                merged = copy.deepcopy(merged)
                replace_path_value(merged, path, text, literal=literal)
            except StrvalsError:
                pass
    if unevaluated:
        n = len(unevaluated)
        ctx.not_evaluated(
            Problem(
                "not-evaluated-values-from",
                f"{n} valuesFrom entr{'ies' if n != 1 else 'y'} with a targetPath read{'' if n != 1 else 's'} a value the "
                "repository does not hold in plain text (SOPS-encrypted, or an object made in the cluster): how Helm's "
                f"--set parser reads {'them' if n != 1 else 'it'} is not checked ({ID})",
                min(unevaluated),
                subject=f"values-from:{cluster.name}",
            )
        )


def _judge(
    ctx: CheckContext,
    hr: HelmReleaseNode,
    i: int,
    kind: str,
    name: str,
    key: str,
    path: str,
    text: str,
    literal: bool,
    merged: dict[str, Any],
    obj: AppliedObject,
) -> RawFinding | None:
    what = f"HelmRelease {hr.spec.namespace}/{hr.spec.name}"
    source = f"key {key} of {kind} {name}"
    location = hr.obj.resource.position(("spec", "valuesFrom", i, "targetPath"))
    related = [obj.resource.position(("stringData" if "stringData" in obj.data and key in as_dict(obj.data.get("stringData")) else "data", key))]
    subject = f"{hr.obj.ref.key}|{i}|{path}"
    fix = FixData.none("escaping the value or setting literal: true is a decision about what the chart should receive")

    def finding(message: str, headline: str, why: str) -> RawFinding:
        return ctx.finding(
            message,
            location,
            headline=headline,
            notes=(Note.why(why),),
            obj=hr.obj.ref,
            kustomization=hr.owner,
            related=related,
            subject=subject,
            fix=fix,
        )

    try:
        replace_path_value(copy.deepcopy(merged), path, text, literal=literal)
    except StrvalsError as e:
        why = f"Helm's --set parser cannot read targetPath={path} with it ({e})"
        if literal:
            why = f"its targetPath {path} runs through a value of another type ({e})"
        return finding(
            f"{what} merges {source} at targetPath {path}, and {why}: helm-controller fails the release "
            "with ValuesError and installs or upgrades nothing",
            f"{what} fails: Helm's --set parser cannot read {source}",
            sentence(f"{why}: helm-controller fails the release with ValuesError and installs or upgrades nothing"),
        )
    if literal:
        return None
    got: dict[str, Any] = {}
    expect: dict[str, Any] = {}
    try:
        replace_path_value(got, path, text)
        replace_path_value(expect, path, _SENTINEL, literal=True)
    except StrvalsError:
        return None  # a failure in a fresh map only: already judged above against the merged values
    target = _find(expect, _SENTINEL)
    if target is None:
        return None
    extra = sorted(_leaves(got, target) - _leaves(expect, target))
    received = _at(got, target)
    problem = ""
    if extra:
        shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        problem = (
            f"an unescaped comma ends the value, so the chart receives {path}={_short(received)} and also sets {shown}"
        )
    elif isinstance(received, list) and _is_mapping(text):
        problem = (
            f"the value starts with {{, so the parser reads a list: the chart receives {path} as a list of "
            f"{len(received)} string{'s' if len(received) != 1 else ''}, not the object the value holds"
        )
    else:
        dropped = _dropped_escapes(text)
        if dropped and isinstance(received, str):
            shown = ", ".join(dropped[:3])
            problem = f"the parser drops the backslash of {shown}: the chart receives {path}={_short(received)}"
    if not problem:
        return None
    message = f"{what} merges {source} at targetPath {path}, which helm-controller parses with Helm's --set syntax: {problem}"
    headline = f"{what} receives {path} altered by Helm's --set parser"
    why = f"helm-controller merges {source} at targetPath {path} with Helm's --set syntax: {problem}"
    return replace(finding(message, headline, why), severity=Severity.WARNING)


def _config_objects(cluster: ClusterModel) -> dict[tuple[str, str, str, str], AppliedObject]:
    out: dict[tuple[str, str, str, str], AppliedObject] = {}
    for o in cluster.objects():
        if o.ref.group == "" and o.ref.kind in ("ConfigMap", "Secret"):
            out.setdefault((o.ref.kind, o.ref.namespace, o.ref.name, o.ref.target), o)
    return out


def _literal_served(cluster: ClusterModel, hr: HelmReleaseNode) -> bool:
    """Whether the HelmRelease CRD the cluster serves has ``valuesFrom[].literal`` (an older
    one prunes it, and the entry is parsed with --set syntax)."""
    apis = fluxapi.cluster_apis(cluster)
    group, version = fluxapi.api_version(hr.obj)
    crd = apis.crd(group, hr.obj.ref.kind)
    entry = crd.versions.get(version) if crd is not None else None
    if entry is None or not entry.schema.get("p"):
        return cluster.flux.minor >= fluxrelease.since("values-from-literal")
    probe = {"spec": {"valuesFrom": [{"kind": "ConfigMap", "name": "x", "literal": True}]}}
    return not any(u.path[-1] == "literal" for u in fluxapi.unknown_fields(probe, entry.schema))


def _load(text: str) -> list[Any]:
    try:
        return load_text(text)
    except Exception:  # noqa: BLE001 - values helm-controller cannot read are another error than this rule's
        return []


def _find(tree: Any, sentinel: str, at: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    if tree == sentinel:
        return at
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else ()
    for k, v in items:
        hit = _find(v, sentinel, (*at, k))
        if hit is not None:
            return hit
    return None


def _at(tree: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        tree = tree[p]
    return tree


def _leaves(tree: Any, skip: tuple[Any, ...], at: tuple[Any, ...] = ()) -> set[str]:
    """The dotted paths of the leaves of ``tree``, without the subtree at ``skip``."""
    if at == skip:
        return set()
    if isinstance(tree, dict) and tree:
        return set().union(*(_leaves(v, skip, (*at, k)) for k, v in tree.items()))
    if isinstance(tree, list) and tree:
        return set().union(*(_leaves(v, skip, (*at, k)) for k, v in enumerate(tree)))
    return {dotted(at)}


def _is_mapping(text: str) -> bool:
    if not text.lstrip().startswith("{"):
        return False
    docs = _load(text)
    # {a,b} is a --set list (and a YAML mapping of nulls): a mapping with a value is an object
    return bool(docs) and isinstance(docs[0], dict) and any(v is not None for v in docs[0].values())


def _dropped_escapes(text: str) -> list[str]:
    out: list[str] = []
    j = 0
    while j < len(text):
        if text[j] == "\\" and j + 1 < len(text):
            if text[j + 1] not in _SYNTAX:
                seq = "\\" + text[j + 1]
                if seq not in out:
                    out.append(seq)
            j += 2
            continue
        j += 1
    return out


def _short(v: Any) -> str:
    s = v if isinstance(v, str) else repr(v)
    s = s.replace("\n", "\\n")
    return s if len(s) <= 40 else s[:37] + "..."
