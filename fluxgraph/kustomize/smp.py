"""Strategic merge patches as kustomize (kyaml) applies them.

A port of kyaml's ``merge2.Merge(patch, target, {ListIncreaseDirection: Prepend})`` as
called by ``api/filters/patchstrategicmerge/patchstrategicmerge.go`` and wrapped by
``api/resource/resource.go`` (``ApplySmPatch``), reproducing its quirks rather than the
apiserver's idea of a strategic merge patch. Sources followed:

* ``kyaml/yaml/walk/walk.go`` -- the walker: the node kind is that of the first non-null
  source, every non-null source must have that kind ("wrong node kind" otherwise); the
  schema comes from the parent or, when there is none, from the node's own
  ``apiVersion``/``kind``.
* ``kyaml/yaml/walk/map.go`` -- fields are visited in sorted order; a result of null or
  nothing deletes the field (``FieldSetter``).
* ``kyaml/yaml/merge2/merge2.go`` -- ``VisitMap``/``VisitScalar``/``VisitList``: the patch
  value wins for scalars and for lists without a merge strategy (so tolerations, envFrom,
  args... are replaced, and any list of a CRD); ``null`` in the patch deletes; an explicit
  ``null`` in the target that the patch does not touch is kept; a map the patch adds is
  still walked, so nulls and ``$patch: delete`` inside it disappear.
* ``kyaml/yaml/merge2/smpdirective.go`` -- ``$patch: delete|replace|merge`` in maps, and as
  a single-key element of an associative list (``- $patch: replace``); any other value is
  an error ("unknown patch strategy"). ``$patch: replace`` on an *element* of an
  associative list has no effect in kyaml, and neither it here. ``$setElementOrder/...``,
  ``$retainKeys`` and ``$deleteFromPrimitiveList/...`` are not directives for kyaml: they
  are merged as ordinary fields, so they reach the output exactly as with kustomize.
* ``kyaml/yaml/walk/associative_sequence.go`` -- associative lists (``x-kubernetes-patch-
  strategy: merge``) are merged by ``x-kubernetes-list-map-keys`` or else
  ``x-kubernetes-patch-merge-key``; with ``Prepend`` the elements named by the patch come
  first, in patch order, then the target's other elements; multi-key lists (container
  ``ports``: containerPort+protocol, Service ``ports``: port+protocol,
  ``topologySpreadConstraints``) use kyaml's partial-key matching and ordering
  (``mergeValues``/``validateKeys``/``appendListNode``); strategy-only lists
  (``finalizers``) are merged as sets of scalars.
* ``kyaml/yaml/fns.go`` -- ``ElementMatcher``/``ElementSetter``/``FieldMatcher`` element
  matching on the scalar *text* of keys (``80`` matches ``"80"``), and the dropping of
  null and empty-map elements by ``ElementSetter``.
* The patch strategies are those of the Kubernetes v1.21.2 OpenAPI document kustomize v5.5
  embeds (``kyaml/openapi/kubernetesapi/v1_21_2``; the table below is the subset that
  carries ``x-kubernetes-patch-strategy``, cf. ``kyaml/openapi/zz_generated_patchmeta.go``).
  Types absent from it -- CRDs, and builtins newer than v1.21 such as ``autoscaling/v2``
  -- have every list replaced, ``metadata.finalizers`` included.

``apply_smp`` then restores the target's kind, name and namespace as ``ApplySmPatch``
does (a patch selects by name but never renames). Merging is done on plain Python data,
never through YAML text.
"""

from __future__ import annotations

from typing import Any

from fluxgraph.kustomize.errors import KustomizeError
from fluxgraph.kustomize.resource import copy_data
from fluxgraph.kustomize.selector import scalar_text

__all__ = ["apply_smp", "merge_strategy", "smp_is_delete"]


class _Sentinel:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_MISSING: Any = _Sentinel("<missing>")  # no such field / source
_CLEAR: Any = _Sentinel("<clear>")  # walk.ClearNode: remove the field / element
_KEEP_NULL: Any = _Sentinel("<keep-null>")  # an explicit null kept in the target
_NOTFOUND: Any = _Sentinel("<not-found>")


# --------------------------------------------------------------------------------------
# patch strategies (Kubernetes v1.21.2 OpenAPI, the subset with x-kubernetes-patch-*)


class _Arr:
    """Schema of a list field: strategy, merge keys, element definition."""

    __slots__ = ("strategy", "keys", "elem", "merge")

    def __init__(self, strategy: str, keys: tuple[str, ...], elem: str | None) -> None:
        self.strategy = strategy
        self.keys = keys
        self.elem = elem
        self.merge = "merge" in strategy.split(",")

    def __repr__(self) -> str:
        return f"_Arr({self.strategy!r}, {self.keys!r}, {self.elem!r})"


def _m(*keys: str, elem: str | None = None, strategy: str = "merge") -> _Arr:
    return _Arr(strategy, tuple(keys), elem)


_COND = _m("type")
# definition name -> field -> definition name (object field) or _Arr (list field)
_DEFS: dict[str, dict[str, str | _Arr]] = {
    "ObjectMeta": {"finalizers": _m(), "ownerReferences": _m("uid")},
    "Meta": {"metadata": "ObjectMeta"},
    "Conditions": {"conditions": _COND},
    "MetaConditions": {"metadata": "ObjectMeta", "status": "Conditions"},
    "PodTemplateSpec": {"metadata": "ObjectMeta", "spec": "PodSpec"},
    "PodSpec": {
        "containers": _m("name", elem="Container"),
        "ephemeralContainers": _m("name", elem="EphemeralContainer"),
        "hostAliases": _m("ip"),
        "imagePullSecrets": _m("name"),
        "initContainers": _m("name", elem="Container"),
        "topologySpreadConstraints": _m("topologyKey", "whenUnsatisfiable"),
        "volumes": _m("name", elem="Volume", strategy="merge,retainKeys"),
    },
    "Container": {
        "env": _m("name"),
        "ports": _m("containerPort", "protocol"),
        "volumeDevices": _m("devicePath"),
        "volumeMounts": _m("mountPath"),
    },
    "EphemeralContainer": {
        "env": _m("name"),
        "volumeDevices": _m("devicePath"),
        "volumeMounts": _m("mountPath"),
    },
    "Volume": {"ephemeral": "EphemeralVolumeSource"},
    "EphemeralVolumeSource": {"volumeClaimTemplate": "Meta"},
    "Workload": {"metadata": "ObjectMeta", "spec": "WorkloadSpec", "status": "Conditions"},
    "WorkloadSpec": {"template": "PodTemplateSpec"},
    "CronJob": {"metadata": "ObjectMeta", "spec": "CronJobSpec"},
    "CronJobSpec": {"jobTemplate": "JobTemplateSpec"},
    "JobTemplateSpec": {"metadata": "ObjectMeta", "spec": "WorkloadSpec"},
    "Pod": {"metadata": "ObjectMeta", "spec": "PodSpec", "status": "PodStatus"},
    "PodStatus": {"conditions": _COND, "podIPs": _m("ip")},
    "PodTemplate": {"metadata": "ObjectMeta", "template": "PodTemplateSpec"},
    "Node": {"metadata": "ObjectMeta", "spec": "NodeSpec", "status": "NodeStatus"},
    "NodeSpec": {"podCIDRs": _m()},
    "NodeStatus": {"addresses": _m("type"), "conditions": _COND},
    "Service": {"metadata": "ObjectMeta", "spec": "ServiceSpec", "status": "Conditions"},
    "ServiceSpec": {"ports": _m("port", "protocol")},
    "ServiceAccount": {"metadata": "ObjectMeta", "secrets": _m("name")},
    "ComponentStatus": {"metadata": "ObjectMeta", "conditions": _COND},
    "WebhookConfiguration": {"metadata": "ObjectMeta", "webhooks": _m("name")},
    "CSINode": {"metadata": "ObjectMeta", "spec": "CSINodeSpec"},
    "CSINodeSpec": {"drivers": _m("name")},
}

_ROOTS: dict[tuple[str, str], str] = {}


def _roots(definition: str, api_versions: str, kinds: str) -> None:
    for av in api_versions.split():
        for k in kinds.split():
            _ROOTS[(av, k)] = definition


_roots(
    "WebhookConfiguration",
    "admissionregistration.k8s.io/v1 admissionregistration.k8s.io/v1beta1",
    "MutatingWebhookConfiguration ValidatingWebhookConfiguration",
)
_roots("Meta", "apiextensions.k8s.io/v1 apiextensions.k8s.io/v1beta1", "CustomResourceDefinition")
_roots("MetaConditions", "apiregistration.k8s.io/v1 apiregistration.k8s.io/v1beta1", "APIService")
_roots("Meta", "apps/v1", "ControllerRevision")
_roots("Workload", "apps/v1", "DaemonSet Deployment ReplicaSet StatefulSet")
_roots("Meta", "authentication.k8s.io/v1", "TokenRequest TokenReview")
_roots("Meta", "authentication.k8s.io/v1beta1", "TokenReview")
_roots(
    "Meta",
    "authorization.k8s.io/v1 authorization.k8s.io/v1beta1",
    "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview SubjectAccessReview",
)
_roots("Meta", "autoscaling/v1", "HorizontalPodAutoscaler Scale")
_roots("Meta", "autoscaling/v2beta1 autoscaling/v2beta2", "HorizontalPodAutoscaler")
_roots("CronJob", "batch/v1 batch/v1beta1", "CronJob")
_roots("Workload", "batch/v1", "Job")
_roots("Meta", "certificates.k8s.io/v1 certificates.k8s.io/v1beta1", "CertificateSigningRequest")
_roots("Meta", "coordination.k8s.io/v1 coordination.k8s.io/v1beta1", "Lease")
_roots("Meta", "discovery.k8s.io/v1 discovery.k8s.io/v1beta1", "EndpointSlice")
_roots("Meta", "events.k8s.io/v1 events.k8s.io/v1beta1", "Event")
_roots("Meta", "extensions/v1beta1", "Ingress")
_roots("Meta", "flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema PriorityLevelConfiguration")
_roots("Meta", "networking.k8s.io/v1", "Ingress IngressClass NetworkPolicy")
_roots("Meta", "networking.k8s.io/v1beta1", "Ingress IngressClass")
_roots("Meta", "node.k8s.io/v1 node.k8s.io/v1beta1", "RuntimeClass")
_roots("MetaConditions", "policy/v1 policy/v1beta1", "PodDisruptionBudget")
_roots("Meta", "policy/v1beta1", "Eviction PodSecurityPolicy")
_roots(
    "Meta",
    "rbac.authorization.k8s.io/v1 rbac.authorization.k8s.io/v1beta1",
    "ClusterRole ClusterRoleBinding Role RoleBinding",
)
_roots("Meta", "scheduling.k8s.io/v1 scheduling.k8s.io/v1beta1", "PriorityClass")
_roots("Meta", "storage.k8s.io/v1", "CSIDriver StorageClass VolumeAttachment")
_roots("Meta", "storage.k8s.io/v1beta1", "CSIDriver CSIStorageCapacity StorageClass VolumeAttachment")
_roots("CSINode", "storage.k8s.io/v1 storage.k8s.io/v1beta1", "CSINode")
_roots("Meta", "v1", "Binding ConfigMap Endpoints Event LimitRange PersistentVolume ResourceQuota Secret")
_roots("ComponentStatus", "v1", "ComponentStatus")
_roots("MetaConditions", "v1", "Namespace PersistentVolumeClaim")
_roots("Node", "v1", "Node")
_roots("Pod", "v1", "Pod")
_roots("PodTemplate", "v1", "PodTemplate")
_roots("Workload", "v1", "ReplicationController")
_roots("Service", "v1", "Service")
_roots("ServiceAccount", "v1", "ServiceAccount")

Schema = str | _Arr | None


def _schema_for(node: Any) -> Schema:
    if isinstance(node, dict):
        av = node.get("apiVersion")
        kind = node.get("kind")
        if isinstance(av, str) and isinstance(kind, str) and av and kind:
            return _ROOTS.get((av, kind))
    return None


def _field_schema(schema: Schema, key: Any) -> Schema:
    if isinstance(schema, str):
        fields = _DEFS.get(schema)
        if fields is not None and isinstance(key, str):
            return fields.get(key)
    return None


def merge_strategy(
    api_version: str, kind: str, path: list[str] | tuple[str, ...]
) -> tuple[str, tuple[str, ...]] | None:
    """The (strategy, merge keys) kustomize uses for the list at ``path`` in objects of
    ``api_version``/``kind``, or None when that list is replaced wholesale."""
    schema: Schema = _ROOTS.get((api_version, kind))
    for part in path:
        if isinstance(schema, _Arr):
            schema = schema.elem or ""
        schema = _field_schema(schema, part)
    if isinstance(schema, _Arr) and schema.merge:
        return schema.strategy, schema.keys
    return None


# --------------------------------------------------------------------------------------
# helpers on plain data


def _null(v: Any) -> bool:
    return v is None or v is _MISSING or v is _CLEAR


def _kind(v: Any) -> str | None:
    if v is None or v is _MISSING:
        return None
    if isinstance(v, dict):
        return "MappingNode"
    if isinstance(v, list):
        return "SequenceNode"
    return "ScalarNode"


def _node_text(v: Any) -> str:
    """yaml.Node.Value: the scalar text, ``""`` for maps and lists, ``null`` for null."""
    if v is None:
        return "null"
    if isinstance(v, (dict, list)):
        return ""
    return scalar_text(v)


def _key_text(v: Any) -> str:
    """ElementValuesList: ``""`` for missing, null or empty fields, else the node text."""
    if v is None or v is _MISSING or (isinstance(v, (dict, list)) and not v):
        return ""
    return _node_text(v)


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 200 else s[:197] + "..."


def _check(kind: str, *sources: Any) -> None:
    for s in sources:
        k = _kind(s)
        if k is not None and k != kind:
            raise KustomizeError(f"wrong node kind: expected {kind} but got {k}: node contents:\n{_short(s)}")


def _sort_key(k: Any) -> str:
    return k if isinstance(k, str) else _node_text(k)


# --------------------------------------------------------------------------------------
# directives


def _directive_text(v: Any) -> str:
    return _node_text(v)


def _map_directive(patch: Any, strict: bool) -> str:
    if not isinstance(patch, dict) or "$patch" not in patch:
        return "merge"
    v = _directive_text(patch["$patch"])
    if v in ("delete", "replace", "merge"):
        del patch["$patch"]
        return v
    if strict:
        raise KustomizeError(f"unknown patch strategy '{v}'")
    return "merge"


def _seq_directive(patch: Any) -> str:
    if not isinstance(patch, list):
        return "merge"
    node = next((e for e in patch if isinstance(e, dict) and "$patch" in e), None)
    if node is None or len(node) > 1:
        return "merge"
    v = _directive_text(node["$patch"])
    if v in ("delete", "replace", "merge"):
        _element_setter(patch, _MISSING, ["$patch"], [v])
        return v
    raise KustomizeError(f"unknown patch strategy '{v}'")


# --------------------------------------------------------------------------------------
# kyaml element matching (fns.go)


def _field_matcher(elem: Any, name: str, value: str) -> Any:
    """FieldMatcher{Name, StringValue}: the field's value, or _NOTFOUND."""
    if elem is None:
        return _NOTFOUND
    if name == "":
        if isinstance(elem, (dict, list)):
            raise KustomizeError(
                f"wrong node kind: expected ScalarNode but got {_kind(elem)}: node contents:\n{_short(elem)}"
            )
        return elem if (scalar_text(elem) if elem is not None else "") == value else _NOTFOUND
    if not isinstance(elem, dict):
        raise KustomizeError(
            f"wrong node kind: expected MappingNode but got {_kind(elem)}: node contents:\n{_short(elem)}"
        )
    if name in elem:
        fv = elem[name]
        if value == "" or _node_text(fv) == value:
            return fv
    return _NOTFOUND


def _element_list(src: Any, keys: list[str], values: list[str]) -> Any:
    """RNode.ElementList: the first element matching every key/value, or _MISSING."""
    if not isinstance(src, list):
        return _MISSING
    keys = keys or [""]
    values = values or [""]
    if keys[0] == "":
        for elem in src:
            if _node_text(elem) == values[0]:
                return elem
        return _MISSING
    for elem in src:
        if not isinstance(elem, dict):
            continue
        if len(keys) != len(values):
            return _MISSING
        if all(k in elem and _node_text(elem[k]) == v for k, v in zip(keys, values, strict=True)):
            return elem
    return _MISSING


def _element_setter(lst: list[Any], element: Any, keys: list[str], values: list[str]) -> None:
    """ElementSetter: replace (or append) the element matching keys/values in ``lst`` in
    place; delete it when ``element`` is _MISSING. Null and empty-map elements are dropped."""
    keys = keys or [""]
    mapping_setter = keys[0] != "" and len(values) > 0 and values[0] != ""
    new: list[Any] = []
    found_any = False
    for elem in lst:
        if elem is None or (isinstance(elem, dict) and not elem):
            continue
        if mapping_setter and not isinstance(elem, dict):
            new.append(elem)
            continue
        found = True
        val: Any = _NOTFOUND
        for j, key in enumerate(keys):
            if j < len(values):
                val = _field_matcher(elem, key, values[j])
            if val is _NOTFOUND:
                found = False
                break
        if not found:
            if values:
                new.append(elem)
            continue
        found_any = True
        if element is _MISSING:
            continue
        new.append(element)
    lst[:] = new
    if element is _MISSING or element is None:
        return
    if not found_any:
        lst.append(element)


def _append_list_node(dst: list[Any], src: list[Any], keys: list[str]) -> list[Any]:
    for elem in list(src):
        if keys[0] == "":
            _element_setter(dst, elem, [""], [_node_text(elem)])
            continue
        v: list[str] = []
        for key in keys:
            fv = _NOTFOUND if elem is None else _field_matcher(elem, key, "")
            if fv is _NOTFOUND:
                dst.append(elem)
                continue
            v.append(_node_text(fv))
        if len(keys) > 1:
            _element_setter(dst, _MISSING, keys, v)
        _element_setter(dst, elem, keys, v)
    return dst


def _validate_keys(
    values_list: list[list[str]], values: list[str], keys: list[str]
) -> tuple[list[str], list[str]]:
    valid = {keys[i] for vals in values_list for i, v in enumerate(vals) if v != "" and i < len(keys)}
    if not valid:
        return keys, values
    vk = [k for k in keys if k in valid]
    vv = [v for i, v in enumerate(values) if v != "" or (i < len(keys) and keys[i] in valid)]
    return vk, vv


def _match(v1: list[str], v2: list[str]) -> tuple[bool, list[str]]:
    if len(v1) != len(v2):
        return False, []
    common = False
    res: list[str] = []
    for a, b in zip(v1, v2, strict=True):
        if a == b:
            common = True
            res.append(a)
            continue
        if a != "" and b != "":
            return False, []
        res.append(a if a != "" else b)
    return common, res


def _merge_values(values_list: list[list[str]]) -> list[list[str]]:
    for i in range(len(values_list)):
        v1 = values_list[i]
        for j in range(len(values_list)):
            ok, res = _match(v1, values_list[j])
            if ok:
                values_list[i] = res
                values_list[j] = res
    return values_list


# --------------------------------------------------------------------------------------
# the walk


def _set_field(d: dict[Any, Any], key: Any, val: Any) -> None:
    if val is _CLEAR or val is None or val is _MISSING:
        d.pop(key, None)
    elif val is _KEEP_NULL:
        d[key] = None
    else:
        d[key] = val


def _norm(dest: Any, schema: Schema) -> Any:
    """The walk of a subtree the patch does not touch (origin missing): everything is kept
    except that associative lists are rebuilt as kyaml rebuilds them."""
    if isinstance(dest, dict):
        if schema is None:
            schema = _schema_for(dest)
        for key, v in list(dest.items()):
            if isinstance(v, (dict, list)):
                nv = _norm(v, _field_schema(schema, key))
                if nv is not v:
                    _set_field(dest, key, nv)
        return dest
    if isinstance(dest, list) and isinstance(schema, _Arr) and schema.merge:
        return _walk_assoc(dest, _MISSING, schema)
    return dest


def _walk(dest: Any, origin: Any, schema: Schema) -> Any:
    if origin is _MISSING and dest is not None and dest is not _MISSING:
        return _norm(dest, schema)
    if schema is None:
        schema = _schema_for(dest)
        if schema is None:
            schema = _schema_for(origin)
    kind = _kind(dest) or _kind(origin)
    if kind is None or kind == "MappingNode":
        if kind is not None:
            _check(kind, dest, origin)
        return _walk_map(dest, origin, schema)
    _check(kind, dest, origin)
    if kind == "SequenceNode":
        if isinstance(schema, _Arr) and schema.merge:
            return _walk_assoc(dest, origin, schema)
        return origin if origin is not _MISSING else dest
    return origin if origin is not _MISSING else dest


def _walk_map(dest: Any, origin: Any, schema: Schema) -> Any:
    if dest is _MISSING or dest is None:
        if _map_directive(origin, strict=False) == "delete":
            return _CLEAR
        if origin is _MISSING and dest is None:
            return _KEEP_NULL
        new = origin
    elif origin is None:
        return _CLEAR
    else:
        ps = _map_directive(origin, strict=True)
        if ps == "delete":
            return _CLEAR
        new = origin if ps == "replace" else dest
    if not isinstance(new, dict):
        return _CLEAR
    src = origin if isinstance(origin, dict) else None
    keys = list(new)
    if src is not None and src is not new:
        keys.extend(k for k in src if k not in new)
    for key in sorted(keys, key=_sort_key):
        dv = new.get(key, _MISSING)
        ov = src.get(key, _MISSING) if src is not None else _MISSING
        _set_field(new, key, _walk(dv, ov, _field_schema(schema, key)))
    return new


def _walk_assoc(dest: Any, origin: Any, schema: _Arr) -> Any:
    if dest is _MISSING or dest is None:
        new = origin
    elif origin is None:
        return _CLEAR
    else:
        ps = _seq_directive(origin)
        if ps == "delete":
            return _CLEAR
        new = origin if ps == "replace" else dest
    if not isinstance(new, list):
        return _CLEAR
    keys = list(schema.keys)
    srcs = [s for s in (origin, new) if isinstance(s, list)]
    if keys:
        values: list[list[str]] = []
        seen: set[tuple[str, ...]] = set()
        for s in srcs:
            for elem in s:
                vals = tuple(
                    _key_text(elem.get(k, _MISSING) if isinstance(elem, dict) else _MISSING) for k in keys
                )
                if vals not in seen:
                    seen.add(vals)
                    values.append(list(vals))
        return _set_assoc(values, keys, new, origin, schema)
    prim: list[list[str]] = []
    pseen: set[str] = set()
    for s in srcs:
        for elem in s:
            t = _node_text(elem)
            if t not in pseen:
                pseen.add(t)
                prim.append([t])
    return _set_assoc(prim, [""], new, origin, schema)


def _set_assoc(
    values_list: list[list[str]], keys: list[str], dest: list[Any], origin: Any, schema: _Arr
) -> Any:
    items: list[Any] = []
    elem_schema: Schema = schema.elem or ""
    if len(keys) > 1:
        values_list = _merge_values(values_list)
    valid_keys: list[str] = keys
    for values in values_list:
        if not values:
            continue
        valid_keys, valid_values = _validate_keys(values_list, values, keys)
        lk, lv = _validate_keys([valid_values], valid_values, valid_keys)
        d_elem = _element_list(dest, lk, lv)
        o_elem = _element_list(origin, lk, lv) if origin is not _MISSING else _MISSING
        val = _walk(d_elem, o_elem, elem_schema)
        if val is _KEEP_NULL:
            val = None
        if _null(val) or (isinstance(val, dict) and not val):
            _element_setter(dest, _MISSING, valid_keys, valid_values)
            continue
        if isinstance(val, dict):
            for i, key in enumerate(valid_keys):
                if key and key not in val and i < len(valid_values) and valid_values[i] != "":
                    val[key] = valid_values[i]
        _element_setter(items, val, valid_keys, valid_values)
    if values_list:
        return _append_list_node(items, dest, valid_keys)
    return dest


# --------------------------------------------------------------------------------------
# public API


def smp_is_delete(patch: Any) -> bool:
    """Whether ``patch`` deletes its target (``$patch: delete`` at the top level)."""
    return isinstance(patch, dict) and _node_text(patch.get("$patch", "")) == "delete"


def apply_smp(
    target: dict[str, Any], patch: dict[str, Any], *, keep_identity: bool = True
) -> dict[str, Any] | None:
    """Apply the strategic merge patch ``patch`` to ``target`` as kustomize does.

    Returns the patched copy, or None when the patch deletes the object. With
    ``keep_identity`` (kustomize's behaviour) the result keeps the target's ``kind``,
    ``metadata.name`` and ``metadata.namespace`` whatever the patch says. Neither argument
    is modified.
    """
    if not isinstance(target, dict):
        raise KustomizeError(f"strategic merge patch target must be a mapping, not {type(target).__name__}")
    if not isinstance(patch, dict):
        raise KustomizeError(f"strategic merge patch must be a mapping, not {type(patch).__name__}")
    t = copy_data(target)
    try:
        res = _walk(t, copy_data(patch), None)
    except RecursionError:
        raise KustomizeError("strategic merge patch: document nested too deeply") from None
    if not isinstance(res, dict):
        return None
    if res is not t:
        # Resource.ApplyFilter keeps the resource's own node and ignores the one the filter
        # returns, so a top-level `$patch: replace` leaves the target as it was.
        res = t
    if not res or not keep_identity:
        return res
    if "kind" in target:
        res["kind"] = target["kind"]
    tmd = target.get("metadata")
    tmd = tmd if isinstance(tmd, dict) else {}
    md = res.get("metadata")
    if not isinstance(md, dict):
        if not tmd:
            return res
        md = {}
        res["metadata"] = md
    if "name" in tmd:
        md["name"] = tmd["name"]
    else:
        md.pop("name", None)
    ns = tmd.get("namespace")
    if isinstance(ns, str) and ns:
        md["namespace"] = ns
    else:
        md.pop("namespace", None)
    return res
