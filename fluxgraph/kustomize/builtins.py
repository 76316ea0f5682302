"""kustomize's builtin transformers that a kustomization's fields and ``transformers:`` entries
run: the namespace (with RoleBinding subjects), labels and annotations over kustomize's builtin
fieldSpecs (``api/konfig/builtinpluginconsts``), images and replicas, and the
``BUILTIN_TRANSFORMERS`` a ``transformers:`` entry of ``apiVersion: builtin`` names. Used by
``fluxgraph.kustomize.build``'s fixed transformer order (kustomize ``configureBuiltinTransformers``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from fluxgraph.kustomize import selector
from fluxgraph.kustomize.resource import Resource
from fluxgraph.model import as_dict, as_list, as_str


def scalar_str(v: Any) -> str:
    """A scalar as kustomize's fields read it: booleans lowercase, nothing as empty."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


def set_namespace(resources: list[Resource], ns: str) -> None:
    """kustomize's namespace transformer (api/filters/namespace): every object its schema does
    not know as cluster-scoped gets the namespace (``metaNamespaceHack`` skips only
    ``gvk.IsClusterScoped()``, keyed by the exact apiVersion: ``selector.kustomize_cluster_scoped``),
    custom kinds included; every Namespace object is renamed to it; RoleBinding/ClusterRoleBinding
    subjects that are ServiceAccounts in the default namespace follow."""
    moved = _moved_service_accounts(resources, ns)
    for r in resources:
        # NamespaceTransformer calls StorePreviousId() on every resource first: replacements
        # and back references still find it by this id after a later rename
        prev = (r.kind, r.namespace, r.name)
        if r.kind == "Namespace":
            if r.name != ns:
                r.set_name(ns)
            else:
                r.prev_names.append(prev)
            continue
        r.prev_names.append(prev)
        if not selector.kustomize_cluster_scoped(r.api_version, r.kind):
            r.ensure_metadata()["namespace"] = ns
        if r.kind in ("RoleBinding", "ClusterRoleBinding"):  # isRoleBinding(gvk.Kind), whatever the scope
            _fix_subjects(r, ns, moved=moved)


def _moved_service_accounts(resources: list[Resource], ns: str) -> set[tuple[str, str]]:
    """(name, namespace before) of the ServiceAccounts of the build that a namespace transform
    to ``ns`` moves: the subjects that name them follow them (kustomize's back references)."""
    return {
        (r.name, r.namespace or "default")
        for r in resources
        if r.kind == "ServiceAccount" and (r.namespace or "default") != ns
    }


def _fix_subjects(r: Resource, ns: str, mode: str = "defaultOnly", moved: Collection[tuple[str, str]] = ()) -> None:
    """The namespace filter's ``roleBindingHack``: with ``defaultOnly`` (the default) every
    subject named ``default``, whatever its kind or namespace, gets the namespace; with
    ``allServiceAccounts`` every ServiceAccount subject; with ``none`` nothing (as kubectl
    kustomize v5.5 does). A ServiceAccount subject naming a ServiceAccount of the build that
    the transform moves (``moved``) follows it."""
    subjects = r.data.get("subjects")
    if not isinstance(subjects, list):
        return
    for s in subjects:
        if not isinstance(s, dict):
            continue
        sa = s.get("kind") == "ServiceAccount"
        if mode == "allServiceAccounts":
            hit = sa
        elif mode == "defaultOnly":
            hit = s.get("name") == "default"
        else:
            hit = False
        if hit or (sa and (s.get("name"), s.get("namespace") or "default") in moved):
            s["namespace"] = ns


# kustomize's builtin fieldSpecs (api/konfig/builtinpluginconsts): (group, version, kind, path,
# create). An empty group/version/kind matches any; a path walks every element of a list.
_FieldSpec = tuple[str, str, str, str, bool]
_TEMPLATE_METADATA: tuple[tuple[str, str, str, str], ...] = (
    ("", "v1", "ReplicationController", "spec/template/metadata"),
    ("", "", "Deployment", "spec/template/metadata"),
    ("", "", "ReplicaSet", "spec/template/metadata"),
    ("", "", "DaemonSet", "spec/template/metadata"),
    ("apps", "", "StatefulSet", "spec/template/metadata"),
    ("batch", "", "Job", "spec/template/metadata"),
    ("batch", "", "CronJob", "spec/jobTemplate/metadata"),
    ("batch", "", "CronJob", "spec/jobTemplate/spec/template/metadata"),
)
# metadataLabelsFieldSpecs (also templateLabels, for labels[].includeTemplates)
_METADATA_LABELS: tuple[_FieldSpec, ...] = (("", "", "", "metadata/labels", True),) + tuple(
    (g, v, kd, f"{p}/labels", True) for g, v, kd, p in _TEMPLATE_METADATA
)
COMMON_ANNOTATIONS: tuple[_FieldSpec, ...] = (("", "", "", "metadata/annotations", True),) + tuple(
    (g, v, kd, f"{p}/annotations", True) for g, v, kd, p in _TEMPLATE_METADATA
)
_AFFINITY_SELECTORS = (
    "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
    "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
    "spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
    "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
    "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels",
)
# commonLabelFieldSpecs: selectors, then metadataLabelsFieldSpecs
_COMMON_LABELS: tuple[_FieldSpec, ...] = (
    ("", "v1", "Service", "spec/selector", True),
    ("", "v1", "ReplicationController", "spec/selector", True),
    ("", "", "Deployment", "spec/selector/matchLabels", True),
    *(("apps", "", "Deployment", p, False) for p in _AFFINITY_SELECTORS),
    ("", "", "ReplicaSet", "spec/selector/matchLabels", True),
    ("", "", "DaemonSet", "spec/selector/matchLabels", True),
    ("apps", "", "StatefulSet", "spec/selector/matchLabels", True),
    ("apps", "", "StatefulSet", "spec/volumeClaimTemplates[]/metadata/labels", True),
    *(("apps", "", "StatefulSet", p, False) for p in _AFFINITY_SELECTORS),
    ("batch", "", "Job", "spec/selector/matchLabels", False),
    ("batch", "", "CronJob", "spec/jobTemplate/spec/selector/matchLabels", False),
    ("policy", "", "PodDisruptionBudget", "spec/selector/matchLabels", False),
    ("networking.k8s.io", "", "NetworkPolicy", "spec/podSelector/matchLabels", False),
    ("networking.k8s.io", "", "NetworkPolicy", "spec/ingress/from/podSelector/matchLabels", False),
    ("networking.k8s.io", "", "NetworkPolicy", "spec/egress/to/podSelector/matchLabels", False),
    *_METADATA_LABELS,
)


def _custom_field_specs(fields: Any) -> list[_FieldSpec]:
    """``labels[].fields``: user fieldSpecs ({group, version, kind, path, create})."""
    out: list[_FieldSpec] = []
    for f in as_list(fields):
        if isinstance(f, dict) and isinstance(f.get("path"), str):
            out.append((as_str(f.get("group")), as_str(f.get("version")), as_str(f.get("kind")), f["path"], bool(f.get("create"))))
    return out


def _fs_selected(r: Resource, fs: _FieldSpec) -> bool:
    group, version, kind = fs[0], fs[1], fs[2]
    api = r.api_version
    return (
        (not group or group == r.group)
        and (not version or version == api.rsplit("/", 1)[-1])
        and (not kind or kind == r.kind)
    )


def _merge_at(node: Any, parts: list[str], create: bool, values: dict[str, str]) -> None:
    """Set ``values`` in the mapping at ``parts`` below ``node`` (kyaml's fieldspec walk: lists
    are walked element by element; missing mappings are created only when ``create``)."""
    if isinstance(node, list):
        for item in node:
            _merge_at(item, parts, create, values)
        return
    if not isinstance(node, dict):
        return
    key = parts[0].removesuffix("[]")
    cur = node.get(key)
    if len(parts) == 1:
        if cur is None:
            if not create:
                return
            cur = {}
        if isinstance(cur, dict):
            node[key] = {**cur, **values}
        return
    if cur is None:
        if not create:
            return
        cur = {}
        node[key] = cur
    _merge_at(cur, parts[1:], create, values)


def apply_field_specs(resources: list[Resource], specs: list[_FieldSpec] | tuple[_FieldSpec, ...], pairs: dict[str, Any]) -> None:
    vals = {str(a): scalar_str(v) for a, v in pairs.items()}
    for r in resources:
        for fs in specs:
            if _fs_selected(r, fs):
                _merge_at(r.data, fs[3].split("/"), fs[4], vals)


def apply_labels(resources: list[Resource], k: dict[str, Any]) -> None:
    """kustomize's LabelTransformer: each ``labels`` entry in order, then ``commonLabels``."""
    for entry in as_list(k.get("labels")):
        if not isinstance(entry, dict) or not isinstance(entry.get("pairs"), dict) or not entry["pairs"]:
            continue
        specs = _custom_field_specs(entry.get("fields"))
        if entry.get("includeSelectors"):
            specs.extend(_COMMON_LABELS)
        else:
            specs.append(("", "", "", "metadata/labels", True))
            if entry.get("includeTemplates"):  # templateLabels
                specs.extend(_METADATA_LABELS)
                specs.append(("apps", "", "StatefulSet", "spec/volumeClaimTemplates[]/metadata/labels", True))
        apply_field_specs(resources, specs, entry["pairs"])
    common = k.get("commonLabels")
    if isinstance(common, dict) and common:
        apply_field_specs(resources, _COMMON_LABELS, common)


def _set_scalar_at(node: Any, parts: list[str], create: bool, value: str, unset_only: bool) -> None:
    """Set the scalar at ``parts`` below ``node`` to ``value`` (kyaml's fieldspec walk, as
    ``_merge_at``; with ``unset_only`` an existing non-empty value is kept)."""
    if isinstance(node, list):
        for item in node:
            _set_scalar_at(item, parts, create, value, unset_only)
        return
    if not isinstance(node, dict):
        return
    key = parts[0].removesuffix("[]")
    cur = node.get(key)
    if len(parts) == 1:
        if (cur is None and not create) or (unset_only and cur not in (None, "")):
            return
        if cur is None or isinstance(cur, (str, int, float, bool)):
            node[key] = value
        return
    if cur is None:
        if not create:
            return
        cur = {}
        node[key] = cur
    _set_scalar_at(cur, parts[1:], create, value, unset_only)


def _namespace_transformer(resources: list[Resource], cfg: dict[str, Any]) -> None:
    """kustomize's builtin NamespaceTransformer (api/filters/namespace ``Filter``): the
    namespace is the configuration's ``metadata.namespace``; every object kustomize does not
    know as cluster-scoped gets it (``metaNamespaceHack``), RoleBinding subjects follow
    (``setRoleBindingSubjects``: ``defaultOnly``, the default, ``allServiceAccounts`` or
    ``none``), then each of the configuration's ``fieldSpecs`` (its own, not the defaults of
    the ``namespace:`` field) is set; ``unsetOnly`` keeps values already there."""
    ns = as_str(as_dict(cfg.get("metadata")).get("namespace"))
    if not ns:
        return
    unset_only = cfg.get("unsetOnly") is True
    subjects = as_str(cfg.get("setRoleBindingSubjects")) or "defaultOnly"
    specs = [fs for fs in _custom_field_specs(cfg.get("fieldSpecs")) if fs[3] != "metadata/namespace"]
    moved = _moved_service_accounts(resources, ns)
    for r in resources:
        r.prev_names.append((r.kind, r.namespace, r.name))
        if not selector.kustomize_cluster_scoped(r.api_version, r.kind) and not (unset_only and r.namespace):
            r.ensure_metadata()["namespace"] = ns
        if r.kind in ("RoleBinding", "ClusterRoleBinding"):
            _fix_subjects(r, ns, subjects, moved)
        for fs in specs:
            if not _fs_selected(r, fs):
                continue
            if fs[3] == "metadata/name":
                if r.name != ns and not (unset_only and r.name):
                    r.data.setdefault("metadata", {})["name"] = ns
                continue
            _set_scalar_at(r.data, fs[3].split("/"), fs[4], ns, unset_only)


def _map_transformer(field: str) -> Callable[[list[Resource], dict[str, Any]], None]:
    """kustomize's builtin LabelTransformer (``labels``) or AnnotationsTransformer
    (``annotations``): the pairs merged at each of the configuration's ``fieldSpecs``."""

    def transform(resources: list[Resource], cfg: dict[str, Any]) -> None:
        pairs = cfg.get(field)
        if isinstance(pairs, dict) and pairs:
            apply_field_specs(resources, _custom_field_specs(cfg.get("fieldSpecs")), pairs)

    return transform


# builtin transformer configurations (``apiVersion: builtin``) the ``transformers:`` field runs
BUILTIN_TRANSFORMERS: dict[str, Callable[[list[Resource], dict[str, Any]], None]] = {
    "NamespaceTransformer": _namespace_transformer,
    "LabelTransformer": _map_transformer("labels"),
    "AnnotationsTransformer": _map_transformer("annotations"),
}


REPLICA_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")
_IMAGE_CONTAINER_KEYS = ("containers", "initContainers", "ephemeralContainers")


def apply_images(data: Any, imgs: list[dict[str, Any]]) -> None:
    """kustomize's image transformer over every ``containers``/``initContainers`` image field."""
    stack = [data]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            for key, val in cur.items():
                if key in _IMAGE_CONTAINER_KEYS and isinstance(val, list):
                    for c in val:
                        if isinstance(c, dict) and isinstance(c.get("image"), str):
                            c["image"] = _new_image(c["image"], imgs)
                if isinstance(val, (dict, list)):
                    stack.append(val)
        elif isinstance(cur, list):
            stack.extend(x for x in cur if isinstance(x, (dict, list)))


def split_image(image: str) -> tuple[str, str, str]:
    """An image reference's name, tag and digest (``""`` where absent), as kustomize splits it."""
    name, tag, digest = image, "", ""
    if "@" in name:
        name, digest = name.split("@", 1)
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1 :]
    return name, tag, digest


def _new_image(image: str, imgs: list[dict[str, Any]]) -> str:
    name, tag, digest = split_image(image)
    for im in imgs:
        if im.get("name") != name:
            continue
        new_name = as_str(im.get("newName")) or name
        if im.get("digest"):
            return f"{new_name}@{im['digest']}"
        if im.get("newTag") is not None:
            return f"{new_name}:{scalar_str(im['newTag'])}"
        if digest:
            return f"{new_name}@{digest}"
        return f"{new_name}:{tag}" if tag else new_name
    return image
