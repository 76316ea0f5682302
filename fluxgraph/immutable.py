"""What an update of a built-in Kubernetes object may not change: the API server's update
validation, as data, and what kustomize-controller does when an apply hits it.

Each entry of ``FIELDS`` names a kind, the fields its update validation refuses to change and
the API server's message (the Kubernetes source it comes from is in ``source``).
``immutable_changes(kind, before, after)`` compares the object as two revisions of the
repository render it (desired state against desired state: fields the cluster fills in are
left out, defaults the API server sets are applied to both sides) and says which of those
fields change, and whether a PersistentVolumeClaim's storage request shrinks.

kustomize-controller applies every object with a server-side dry-run first (fluxcd/pkg
``ssa`` ``ResourceManager.ApplyAll``): an update the validation refuses fails that dry-run, and
the whole apply of the Kustomization fails with it. Unless the object is force-applied
(``spec.force: true`` on the Kustomization, or ``kustomize.toolkit.fluxcd.io/force: Enabled``
on the object as desired or as it is in the cluster: ``shouldForceApply``), which deletes it
(background propagation) and creates it again. ``spec.ignore`` rules do not change this: the
dry-run sends the whole object, ignored paths included; they only leave fields out of drift
detection and the final patch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from fluxgraph.model import as_dict, as_list, as_str, dotted


@dataclass(frozen=True)
class Change:
    """One field an update may not change."""

    path: tuple[Any, ...]  # where it is in the object at head (its parent where it is gone)
    field: str  # dotted
    before: Any
    after: Any
    message: str  # the API server's refusal
    shrink: bool = False  # a PersistentVolumeClaim's storage request decreases


@dataclass(frozen=True)
class Kind:
    group: str
    kind: str
    judge: Callable[[dict[str, Any], dict[str, Any]], list[Change]]
    fields: str  # what the update validation protects, in words (docs)
    source: str  # the Kubernetes source of the validation


# -- normalisation: the desired object as the API server would store it ---------------------

_SUFFIX = {
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
    "Pi": Fraction(2**50), "Ei": Fraction(2**60), "n": Fraction(1, 10**9), "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000), "": Fraction(1), "k": Fraction(10**3), "M": Fraction(10**6),
    "G": Fraction(10**9), "T": Fraction(10**12), "P": Fraction(10**15), "E": Fraction(10**18),
}  # fmt: skip
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$")


def quantity(v: Any) -> Fraction | None:
    """A Kubernetes resource.Quantity's value (``10Gi``, ``500M``, ``1e3``), None when it is not one."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return Fraction(v)
    m = _QUANTITY.match(str(v).strip()) if isinstance(v, str) else None
    if m is None:
        return None
    n = Fraction(m.group(1))
    if m.group(2):
        return n * Fraction(10) ** int(m.group(2)[1:])
    return n * _SUFFIX[m.group(3) or ""]


def _norm(v: Any, quantities: bool = False) -> Any:
    """Values as the API server compares them: empty maps and lists and nulls are absent;
    under ``requests``, ``limits`` and ``capacity``, quantities by value (``1Gi`` is ``1024Mi``)."""
    if isinstance(v, dict):
        out = {k: _norm(x, quantities or k in ("requests", "limits", "capacity")) for k, x in v.items()}
        return {k: x for k, x in out.items() if x not in (None, {}, [])}
    if isinstance(v, list):
        return [_norm(x, quantities) for x in v]
    if quantities:
        q = quantity(v)
        if q is not None:
            return ("quantity", q)
    return v


def _get(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    cur: Any = data
    for p in path:
        cur = as_dict(cur).get(p)
    return cur


def _changed(before: dict[str, Any], after: dict[str, Any], path: tuple[str, ...], message: str, default: Any = None) -> list[Change]:
    b, a = _get(before, path), _get(after, path)
    nb = _norm(b if b is not None else default)
    na = _norm(a if a is not None else default)
    if nb == na:
        return []
    return [Change(path, dotted(path), b, a, message)]


def _selector(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    return _changed(before, after, ("spec", "selector"), "spec.selector: Invalid value: field is immutable")


_STS_MUTABLE = frozenset(
    {"replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit", "persistentVolumeClaimRetentionPolicy", "minReadySeconds"}
)
_STS_MESSAGE = (
    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)


def _claim_template(t: Any) -> Any:
    t = dict(as_dict(t))
    for k in ("apiVersion", "kind", "status"):
        t.pop(k, None)
    md = dict(as_dict(t.get("metadata")))
    md.pop("creationTimestamp", None)
    t["metadata"] = md
    spec = dict(as_dict(t.get("spec")))
    spec.setdefault("volumeMode", "Filesystem")
    t["spec"] = spec
    return t


def _statefulset(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    sb, sa = as_dict(before.get("spec")), as_dict(after.get("spec"))
    defaults: dict[str, Any] = {"podManagementPolicy": "OrderedReady", "serviceName": ""}
    out: list[Change] = []
    for key in sorted((set(sb) | set(sa)) - _STS_MUTABLE):
        b, a = sb.get(key), sa.get(key)
        if key == "volumeClaimTemplates":
            nb: Any = [_claim_template(t) for t in as_list(b)]
            na: Any = [_claim_template(t) for t in as_list(a)]
        else:
            nb = b if b is not None else defaults.get(key)
            na = a if a is not None else defaults.get(key)
        if _norm(nb) != _norm(na):
            out.append(Change(("spec", key), f"spec.{key}", b, a, _STS_MESSAGE))
    return out


def _job(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    for key in ("selector", "template", "completionMode"):
        msg = f"spec.{key}: Invalid value: field is immutable"
        out += _changed(before, after, ("spec", key), msg, "NonIndexed" if key == "completionMode" else None)
    return out


def _service(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    for key in ("clusterIP", "clusterIPs"):
        b, a = _get(before, ("spec", key)), _get(after, ("spec", key))
        if b in (None, "", []) or a in (None, "", []):
            continue  # allocated by the API server on one side: its value is not known here
        out += _changed(before, after, ("spec", key), f"spec.{key}: Invalid value: may not change once set")
    return out


_PVC_MESSAGE = "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"


def _claim(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    sb, sa = as_dict(before.get("spec")), as_dict(after.get("spec"))
    out: list[Change] = []
    qb = quantity(_get(sb, ("resources", "requests", "storage")))
    qa = quantity(_get(sa, ("resources", "requests", "storage")))
    if qb is not None and qa is not None and qa < qb:
        path = ("spec", "resources", "requests", "storage")
        out.append(
            Change(
                path,
                dotted(path),
                _get(before, path),
                _get(after, path),
                "spec.resources.requests.storage: Forbidden: field can not be less than previous value",
                shrink=True,
            )
        )
    for key in sorted((set(sb) | set(sa)) - {"volumeAttributesClassName"}):
        b, a = sb.get(key), sa.get(key)
        if key in ("storageClassName", "volumeName") and (b is None or a is None):
            continue  # filled in by the cluster (the default StorageClass, the binding): not known here
        if key == "resources":
            b = {**as_dict(b), "requests": {k: v for k, v in as_dict(as_dict(b).get("requests")).items() if k != "storage"}}
            a = {**as_dict(a), "requests": {k: v for k, v in as_dict(as_dict(a).get("requests")).items() if k != "storage"}}
        default = "Filesystem" if key == "volumeMode" else None
        if _norm(b if b is not None else default) != _norm(a if a is not None else default):
            out.append(Change(("spec", key), f"spec.{key}", sb.get(key), sa.get(key), _PVC_MESSAGE))
    return out


def _immutable_data(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    if before.get("immutable") is not True:
        return []
    msg = "Forbidden: field is immutable when `immutable` is set"
    out: list[Change] = []
    if after.get("immutable") is not True:
        out.append(Change(("immutable",), "immutable", True, after.get("immutable"), f"immutable: {msg}"))
    data_b = {**as_dict(before.get("data")), **as_dict(before.get("stringData"))}
    data_a = {**as_dict(after.get("data")), **as_dict(after.get("stringData"))}
    if data_b != data_a or as_dict(before.get("binaryData")) != as_dict(after.get("binaryData")):
        where = "data" if "data" in after or "stringData" not in after else "stringData"
        out.append(Change((where,), "data", None, None, f"data: {msg}"))
    return out


def _role_ref(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    def ref(d: dict[str, Any]) -> dict[str, Any]:
        r = dict(as_dict(d.get("roleRef")))
        r.setdefault("apiGroup", "rbac.authorization.k8s.io")
        return r

    if ref(before) == ref(after):
        return []
    return [Change(("roleRef",), "roleRef", before.get("roleRef"), after.get("roleRef"), "roleRef: Invalid value: cannot change roleRef")]


def _storage_class(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    for key, default, msg in (
        ("parameters", None, "parameters: Forbidden: updates to parameters are forbidden."),
        ("provisioner", None, "provisioner: Forbidden: updates to provisioner are forbidden."),
        ("reclaimPolicy", "Delete", "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden."),
        ("volumeBindingMode", "Immediate", "volumeBindingMode: Invalid value: field is immutable"),
    ):
        out += _changed(before, after, (key,), msg, default)
    return out


_APPS = "pkg/registry/apps/{0}/strategy.go ({1}Strategy.ValidateUpdate: ValidateImmutableField of spec.selector for apps/v1)"
KINDS: tuple[Kind, ...] = (
    Kind("apps", "Deployment", _selector, "spec.selector", _APPS.format("deployment", "deployment")),
    Kind("apps", "ReplicaSet", _selector, "spec.selector", _APPS.format("replicaset", "rs")),
    Kind("apps", "DaemonSet", _selector, "spec.selector", _APPS.format("daemonset", "daemonSet")),
    Kind(
        "apps",
        "StatefulSet",
        _statefulset,
        "every spec field but replicas, ordinals, template, updateStrategy, revisionHistoryLimit, "
        "persistentVolumeClaimRetentionPolicy and minReadySeconds (selector, serviceName, volumeClaimTemplates, "
        "podManagementPolicy)",
        "pkg/apis/apps/validation/validation.go ValidateStatefulSetUpdate",
    ),
    Kind(
        "batch",
        "Job",
        _job,
        "spec.selector, spec.template, spec.completionMode",
        "pkg/apis/batch/validation/validation.go ValidateJobSpecUpdate (ValidateImmutableField)",
    ),
    Kind(
        "",
        "Service",
        _service,
        "spec.clusterIP, spec.clusterIPs once set",
        "pkg/apis/core/validation/validation.go ValidateServiceUpdate (validateServiceClusterIPsRelatedFields: "
        "'may not change once set')",
    ),
    Kind(
        "",
        "PersistentVolumeClaim",
        _claim,
        "spec but resources.requests and volumeAttributesClassName; the storage request may not decrease",
        "pkg/apis/core/validation/validation.go ValidatePersistentVolumeClaimUpdate",
    ),
    Kind(
        "",
        "ConfigMap",
        _immutable_data,
        "data, binaryData and immutable itself when immutable: true",
        "pkg/apis/core/validation/validation.go ValidateConfigMapUpdate",
    ),
    Kind(
        "",
        "Secret",
        _immutable_data,
        "data and immutable itself when immutable: true",
        "pkg/apis/core/validation/validation.go ValidateSecretUpdate",
    ),
    Kind(
        "rbac.authorization.k8s.io",
        "RoleBinding",
        _role_ref,
        "roleRef",
        "pkg/apis/rbac/validation/validation.go ValidateRoleBindingUpdate ('cannot change roleRef')",
    ),
    Kind(
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        _role_ref,
        "roleRef",
        "pkg/apis/rbac/validation/validation.go ValidateClusterRoleBindingUpdate ('cannot change roleRef')",
    ),
    Kind(
        "storage.k8s.io",
        "StorageClass",
        _storage_class,
        "parameters, provisioner, reclaimPolicy, volumeBindingMode",
        "pkg/apis/storage/validation/validation.go ValidateStorageClassUpdate",
    ),
)
_BY_KIND = {(k.group, k.kind): k for k in KINDS}


def immutable_changes(group: str, kind: str, before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """The fields of ``kind`` that an update from ``before`` to ``after`` changes and the API
    server's update validation refuses (none for a kind ``KINDS`` does not list)."""
    k = _BY_KIND.get((group, kind))
    return k.judge(before, after) if k is not None else []


def retention_deletes_claims(sts: dict[str, Any]) -> bool:
    """A StatefulSet whose deletion deletes the claims of its volumeClaimTemplates
    (``persistentVolumeClaimRetentionPolicy.whenDeleted: Delete``; the default is Retain)."""
    return as_str(_get(sts, ("spec", "persistentVolumeClaimRetentionPolicy", "whenDeleted"))) == "Delete"
