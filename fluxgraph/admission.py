"""Admission in the cluster that changes Flux objects as they are applied.

A mutating webhook, a Kyverno or Gatekeeper mutation, or a ``MutatingAdmissionPolicy`` that
the repository installs may change a Flux ``Kustomization`` (or ``HelmRelease``) between the
parent's apply and the controller's read: add ``postBuild`` variables, patches, dependsOn. A
verdict that rests on a field it may change is then not evaluated, with the mutator named,
never an error; where the mutator's configuration in the repository says what it adds (the
ConfigMaps and Secrets whose keys a substitution webhook injects), the walk uses it.

Read here (``mutators``), each with the fields it may change:

* ``MutatingWebhookConfiguration`` (admissionregistration.k8s.io/v1): a webhook whose
  ``rules`` match the ``kustomizations`` or ``helmreleases`` resources of the Flux API groups
  (``*`` included) for CREATE or UPDATE, in the namespaces its ``namespaceSelector`` selects;
  any field;
* ``MutatingAdmissionPolicy`` (admissionregistration.k8s.io v1alpha1/v1beta1): the same
  ``matchConstraints.resourceRules``; the fields its mutations name, else any;
* Kyverno ``ClusterPolicy``/``Policy`` ``mutate`` rules matching the kinds (``Kustomization``,
  ``kustomize.toolkit.fluxcd.io/*/Kustomization``...): the ``spec`` fields of its
  ``patchStrategicMerge``, or the ``/spec/<field>`` paths of its ``patchesJson6902``; literal
  ``postBuild.substitute`` values are known;
* Gatekeeper ``Assign``/``ModifySet`` (mutations.gatekeeper.sh) whose ``applyTo`` names the
  kinds: the ``spec.<field>`` of ``spec.location``;
* ``CHARTS``: a HelmRelease of a chart known to install such a webhook, whose values say what
  it injects: xunholy's kustomize-mutating-webhook (``deploy/chart/kustomize-mutating-webhook``:
  every key of the ConfigMaps and Secrets its values list under ``configMaps``/``secrets``, in
  the release namespace, is added to ``spec.postBuild.substitute`` of every Kustomization it
  admits with a JSON patch ``add`` that replaces a key already there; its
  ``webhook.namespaceSelector`` defaults to every namespace but ``flux-system``;
  ``internal/handlers/mutate.go`` ``createPatch``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fluxgraph import flux
from fluxgraph.materialize import Namespaces
from fluxgraph.model import Location, as_dict, as_list, as_str
from fluxgraph.yamlio import load_text

if TYPE_CHECKING:
    from fluxgraph.cluster import AppliedObject, ClusterModel, HelmReleaseNode

KUSTOMIZATIONS = "kustomizations"
HELMRELEASES = "helmreleases"
_RESOURCES = {flux.KUSTOMIZE_GROUP: KUSTOMIZATIONS, flux.HELM_GROUP: HELMRELEASES}
_KINDS = {"Kustomization": KUSTOMIZATIONS, "HelmRelease": HELMRELEASES}
# the spec fields whose change a verdict may rest on
ANY = None


@dataclass(frozen=True)
class Mutator:
    """Admission that may change Flux objects: ``resources`` (``kustomizations``,
    ``helmreleases``) in ``namespaces``; ``fields`` the top-level ``spec`` fields it may change
    (None: any); ``sources`` the (kind, namespace, name) objects whose keys it adds to
    ``spec.postBuild.substitute``, ``substitute`` the literal variables it adds."""

    how: str
    location: Location
    resources: frozenset[str]
    namespaces: Namespaces
    fields: frozenset[str] | None = ANY
    sources: tuple[tuple[str, str, str], ...] = ()
    substitute: tuple[tuple[str, str], ...] = ()

    def admits(self, resource: str, namespace: str, labels: dict[str, str] | None) -> bool:
        return resource in self.resources and self.namespaces.contains(namespace, labels)

    def may_change(self, spec_field: str) -> bool:
        return self.fields is None or spec_field in self.fields

    @property
    def known(self) -> bool:
        """Whether the repository says everything it changes (its variables, nothing else)."""
        return self.fields is not None and self.fields <= {"postBuild"} and bool(self.sources or self.substitute)


def _selector_namespaces(selector: Any) -> Namespaces:
    sel = as_dict(selector)
    return Namespaces(every=True) if not sel or (not sel.get("matchLabels") and not sel.get("matchExpressions")) else Namespaces(selectors=(sel,))


def _rule_resources(rules: Iterable[Any]) -> frozenset[str]:
    """The Flux resources admission ``rules`` match for CREATE or UPDATE."""
    out: set[str] = set()
    for rule in rules:
        rule = as_dict(rule)
        ops = {str(o) for o in as_list(rule.get("operations"))}
        if ops and not ops & {"CREATE", "UPDATE", "*"}:
            continue
        groups = {str(g) for g in as_list(rule.get("apiGroups"))}
        resources = {str(r).split("/", 1)[0] for r in as_list(rule.get("resources"))}
        for group, res in _RESOURCES.items():
            if (group in groups or "*" in groups) and (res in resources or "*" in resources):
                out.add(res)
    return frozenset(out)


def _webhook_configuration(obj: AppliedObject) -> list[Mutator]:
    out: list[Mutator] = []
    for hook in as_list(obj.data.get("webhooks")):
        hook = as_dict(hook)
        res = _rule_resources(as_list(hook.get("rules")))
        if res:
            out.append(
                Mutator(
                    f"MutatingWebhookConfiguration {obj.ref.name} (webhook {as_str(hook.get('name')) or '?'})",
                    obj.location,
                    res,
                    _selector_namespaces(hook.get("namespaceSelector")),
                )
            )
    return out


# spec fields a MutatingAdmissionPolicy names: a JSON patch path, a dotted CEL path, the fields
# of an apply configuration's ``Object.spec{field: ...}``
_SPEC_FIELD = re.compile(r"/spec/(\w+)|\.spec\.(\w+)|\bspec\.(\w+)")
_APPLY_SPEC = re.compile(r"Object\.spec\{([^{}]*)")
_APPLY_FIELD = re.compile(r"(\w+)\s*:")


def _admission_policy(obj: AppliedObject) -> list[Mutator]:
    spec = as_dict(obj.data.get("spec"))
    match = as_dict(spec.get("matchConstraints"))
    res = _rule_resources(as_list(match.get("resourceRules")))
    if not res:
        return []
    text = " ".join(str(as_dict(m).get("jsonPatch") or as_dict(m).get("applyConfiguration") or "") for m in as_list(spec.get("mutations")))
    fields = {next(g for g in m.groups() if g) for m in _SPEC_FIELD.finditer(text)}
    for block in _APPLY_SPEC.finditer(text):
        fields |= set(_APPLY_FIELD.findall(block.group(1)))
    return [Mutator(f"MutatingAdmissionPolicy {obj.ref.name}", obj.location, res, _selector_namespaces(match.get("namespaceSelector")),
                    frozenset(fields) or ANY)]


def _kyverno_kinds(match: dict[str, Any]) -> frozenset[str]:
    out: set[str] = set()
    blocks = [as_dict(match.get("resources"))] + [as_dict(as_dict(b).get("resources")) for key in ("any", "all") for b in as_list(match.get(key))]
    for b in blocks:
        for k in as_list(b.get("kinds")):
            kind = str(k).rsplit("/", 1)[-1]
            if kind in _KINDS and (str(k).count("/") == 0 or str(k).split("/", 1)[0] in (flux.KUSTOMIZE_GROUP, flux.HELM_GROUP, "*")):
                out.add(_KINDS[kind])
            elif kind == "*":
                out.update(_KINDS.values())
    return frozenset(out)


def _kyverno_policy(obj: AppliedObject) -> list[Mutator]:
    out: list[Mutator] = []
    for rule in as_list(as_dict(obj.data.get("spec")).get("rules")):
        rule = as_dict(rule)
        mutate = as_dict(rule.get("mutate"))
        if not mutate:
            continue
        res = _kyverno_kinds(as_dict(rule.get("match")))
        if not res:
            continue
        smp = as_dict(mutate.get("patchStrategicMerge"))
        fields: set[str] | None = set(as_dict(smp.get("spec")))
        for op in as_list(mutate.get("patchesJson6902")) if isinstance(mutate.get("patchesJson6902"), list) else []:
            m = re.match(r"^/spec/([^/]+)", as_str(as_dict(op).get("path")))
            if m and fields is not None:
                fields.add(m.group(1))
        if isinstance(mutate.get("patchesJson6902"), str):
            fields = {m.group(1) for m in re.finditer(r"path:\s*/spec/([^/\s]+)", mutate["patchesJson6902"])} or None
        if mutate.get("foreach") or (fields is not None and not fields and not smp):
            fields = None
        subst = as_dict(as_dict(as_dict(smp.get("spec")).get("postBuild")).get("substitute"))
        literal = tuple((str(k), str(v)) for k, v in subst.items() if "{{" not in str(v))
        ns = Namespaces(names=frozenset({obj.ref.namespace})) if obj.ref.kind == "Policy" else Namespaces(every=True)
        out.append(Mutator(f"Kyverno {obj.ref.kind} {obj.ref.name} (rule {as_str(rule.get('name'))})", obj.location, res, ns,
                           frozenset(fields) if fields is not None else ANY, substitute=literal))
    return out


def _gatekeeper(obj: AppliedObject) -> list[Mutator]:
    spec = as_dict(obj.data.get("spec"))
    res: set[str] = set()
    for a in as_list(spec.get("applyTo")):
        a = as_dict(a)
        groups = {str(g) for g in as_list(a.get("groups"))}
        for kind in as_list(a.get("kinds")):
            r = _KINDS.get(str(kind))
            if r is not None and (groups & {flux.KUSTOMIZE_GROUP, flux.HELM_GROUP, "*"}):
                res.add(r)
    if not res:
        return []
    m = re.match(r"^spec\.([A-Za-z]+)", as_str(spec.get("location")))
    return [Mutator(f"Gatekeeper {obj.ref.kind} {obj.ref.name}", obj.location, frozenset(res), Namespaces(every=True),
                    frozenset({m.group(1)}) if m else ANY)]


# -- charts that install a known mutator -------------------------------------------------


def _kustomize_mutating_webhook(obj: AppliedObject, values: dict[str, Any], namespace: str) -> list[Mutator]:
    sources: list[tuple[str, str, str]] = []
    for kind, key in (("ConfigMap", "configMaps"), ("Secret", "secrets")):
        for item in as_list(values.get(key, [{"name": "cluster-config"}] if key == "configMaps" else [])):
            name = as_str(as_dict(item).get("name"))
            if name:
                sources.append((kind, namespace, name))
    sel = as_dict(values.get("webhook")).get("namespaceSelector")
    if sel is None:
        sel = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["flux-system"]}]}
    return [Mutator(f"HelmRelease {obj.ref.namespace}/{obj.ref.name} (chart kustomize-mutating-webhook)", obj.location,
                    frozenset({KUSTOMIZATIONS}), _selector_namespaces(sel), frozenset({"postBuild"}), tuple(sources))]


# chart name -> what its release installs, from the release's values and namespace
CHARTS: dict[str, Callable[[AppliedObject, dict[str, Any], str], list[Mutator]]] = {
    "kustomize-mutating-webhook": _kustomize_mutating_webhook,
    "fluxcd-kustomize-mutating-webhook": _kustomize_mutating_webhook,
}

_READERS: dict[tuple[str, str], Callable[[AppliedObject], list[Mutator]]] = {
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _webhook_configuration,
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): _admission_policy,
    ("kyverno.io", "ClusterPolicy"): _kyverno_policy,
    ("kyverno.io", "Policy"): _kyverno_policy,
    ("mutations.gatekeeper.sh", "Assign"): _gatekeeper,
    ("mutations.gatekeeper.sh", "ModifySet"): _gatekeeper,
}


def merge_values(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """fluxcd/pkg chartutil ``MergeMaps``: ``over`` wins, maps merged recursively (a new
    top-level map; nested maps of either side may be shared)."""
    out = dict(base)
    for k, v in over.items():
        out[k] = merge_values(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def release_values(model: ClusterModel, hr: HelmReleaseNode) -> dict[str, Any]:
    """A HelmRelease's values as helm-controller merges them: each ``valuesFrom`` entry in
    order (the ``valuesKey``, default ``values.yaml``, of a ConfigMap or Secret the cluster
    applies in its namespace; ``targetPath`` entries are left out), then ``spec.values``
    (helm-controller ``internal/chartutil`` ``ChartValuesFromReferences``)."""
    from fluxgraph.cluster import object_values  # cluster imports this module

    spec = as_dict(hr.obj.data.get("spec"))
    out: dict[str, Any] = {}
    for ref in as_list(spec.get("valuesFrom")):
        ref = as_dict(ref)
        kind, name = as_str(ref.get("kind")) or "ConfigMap", as_str(ref.get("name"))
        if not name or ref.get("targetPath") or kind not in ("ConfigMap", "Secret"):
            continue
        key = as_str(ref.get("valuesKey")) or "values.yaml"
        for o in model.find_objects(kind, hr.spec.namespace, name, hr.obj.ref.target):
            text = object_values(kind, o.data).get(key)
            if isinstance(text, str):
                try:
                    docs = load_text(text)
                except Exception:  # noqa: BLE001 - values helm-controller cannot read give nothing here
                    docs = []
                if docs and isinstance(docs[0], dict):
                    out = merge_values(out, docs[0])
            break
    return merge_values(out, as_dict(spec.get("values")))


def releases(model: ClusterModel) -> Releases:
    """Each HelmRelease of the model: chart name, merged values, release namespace
    (``spec.targetNamespace``, else its own)."""
    out = Releases()
    for hr in model.helm_releases.values():
        chart = model.chart_name(hr)
        if chart in CHARTS:
            ns = as_str(as_dict(hr.obj.data.get("spec")).get("targetNamespace")) or hr.spec.namespace
            out.charts[id(hr.obj)] = (chart, release_values(model, hr), ns)
    return out


@dataclass
class Releases:
    """What ``mutators`` needs to know of HelmReleases: each release's chart name, merged
    values and release namespace (the walk's ``HelmReleaseNode``s and their valuesFrom)."""

    charts: dict[int, tuple[str, dict[str, Any], str]] = field(default_factory=dict)  # id(obj) -> (chart, values, namespace)


def mutators(objects: Iterable[AppliedObject], releases: Releases) -> list[Mutator]:
    """The admission the cluster's applied objects install that may change Flux objects."""
    out: list[Mutator] = []
    for obj in objects:
        reader = _READERS.get((obj.ref.group, obj.ref.kind))
        if reader is not None:
            out.extend(reader(obj))
        rel = releases.charts.get(id(obj))
        if rel is not None and rel[0] in CHARTS:
            out.extend(CHARTS[rel[0]](obj, rel[1], rel[2]))
    return out
