"""Rewriting name references to renamed objects (kustomize's nameReference transformer).

When kustomize renames an object -- a generated ConfigMap/Secret getting its hash suffix,
``namePrefix``/``nameSuffix`` -- it rewrites the fields of other objects that refer to it
by name. Follows:

* ``api/internal/konfig/builtinpluginconsts/namereference.go`` -- the builtin field specs
  (:data:`BUILTIN`), as shipped in kustomize v5.5 (checked with ``kubectl kustomize``:
  Gateway API ``HTTPRoute`` backendRefs are not in it, and the ``IngressClass`` entry,
  whose group is spelled ``networking.k8s.io/v1``, never matches anything).
* ``api/filters/fieldspec/fieldspec.go`` -- path traversal: ``/``-separated field names
  (``\\/`` escapes a slash, a ``[]`` suffix is ignored); a list anywhere on the path
  applies the rest of the path to each element; a scalar in the middle of the path is an
  error ("expected sequence or mapping node"), a missing field is not.
* ``api/filters/nameref/nameref.go`` and ``seqfilter.go`` -- at the end of the path a
  string is a name; a list is a list of names or of maps; a map (RoleBinding
  ``subjects``, webhook ``clientConfig/service``, Node ``configSource/configMap``) must
  have a ``name`` and may have a ``namespace`` that narrows the candidates, and gets the
  referral's namespace written back. ``roleRef/name`` only considers candidates of the
  kind named in ``roleRef.kind``. Subjects are matched by name whatever their ``kind``.
* ``api/resmap/reswrangler.go`` (``SubsetThatCouldBeReferencedByResource``) and
  ``selectReferral`` -- namespace rules: a cluster-scoped referrer may refer to anything;
  a namespaced one only to cluster-scoped objects and to objects in its own (effective:
  empty is ``default``) namespace -- except that a RoleBinding may refer to
  ServiceAccounts in the namespaces its ServiceAccount subjects name. Several surviving
  candidates with different new names (or namespaces, for maps) are an error ("found
  multiple possible referrals").
* ``api/internal/plugins/builtinhelpers`` / ``api/internal/target/kusttarget.go`` --
  user ``configurations:`` files add field specs with the same schema
  (:func:`parse_name_reference_config`), merged into the builtins per target kind.

The renames are given as ``{(kind, namespace or None, old name): new name}``, keyed by the
*current* namespace of the renamed object. Candidates are matched on kind only (not
group/version), and kustomize's last tie-break (comparing the prefixes/suffixes applied
to referrer and candidate) is not available: an ambiguity it would resolve that way is
reported as an error here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fluxgraph.kustomize.errors import KustomizeError
from fluxgraph.kustomize.selector import (
    DEFAULT_NAMESPACE,
    is_cluster_scoped,
    kustomize_cluster_scoped,
    scalar_text,
    split_api_version,
)

__all__ = [
    "BUILTIN",
    "FieldSpec",
    "NameRefSpec",
    "builtin_name_reference_specs",
    "merge_name_reference_specs",
    "parse_name_reference_config",
    "rewrite_references",
]

Renames = Mapping[tuple[str, "str | None", str], str]


@dataclass(frozen=True)
class FieldSpec:
    """Where a referrer holds a name: objects of group/version/kind (empty = any) at ``path``."""

    path: tuple[str, ...]
    kind: str = ""
    group: str = ""
    version: str = ""

    def selects(self, group: str, version: str, kind: str) -> bool:
        return (
            (not self.kind or self.kind == kind)
            and (not self.group or self.group == group)
            and (not self.version or self.version == version)
        )


@dataclass(frozen=True)
class NameRefSpec:
    """Objects of ``kind`` (``group``/``version``) are referred to at ``field_specs``."""

    kind: str
    field_specs: tuple[FieldSpec, ...]
    group: str = ""
    version: str = ""


# --------------------------------------------------------------------------------------
# builtin field specs (namereference.go)

_POD_CM = (
    "spec/volumes/configMap/name",
    "spec/containers/env/valueFrom/configMapKeyRef/name",
    "spec/initContainers/env/valueFrom/configMapKeyRef/name",
    "spec/containers/envFrom/configMapRef/name",
    "spec/initContainers/envFrom/configMapRef/name",
    "spec/volumes/projected/sources/configMap/name",
)
_POD_SECRET = (
    "spec/volumes/secret/secretName",
    "spec/containers/env/valueFrom/secretKeyRef/name",
    "spec/initContainers/env/valueFrom/secretKeyRef/name",
    "spec/containers/envFrom/secretRef/name",
    "spec/initContainers/envFrom/secretRef/name",
    "spec/imagePullSecrets/name",
    "spec/volumes/projected/sources/secret/name",
)
_TEMPLATED = ("Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job")
_WORKLOADS_SA = ("StatefulSet", "Deployment", "ReplicationController", "Job", "DaemonSet")
_RBAC = "rbac.authorization.k8s.io"


def _fs(path: str, kind: str, group: str = "", version: str = "") -> FieldSpec:
    return FieldSpec(_split_path(path), kind, group, version)


def _pod_family(paths: tuple[str, ...], templated: tuple[str, ...]) -> list[FieldSpec]:
    out = [_fs(p, "Pod", version="v1") for p in paths]
    out += [_fs("template/" + p, "PodTemplate") for p in paths]
    for k in templated:
        out += [_fs("spec/template/" + p, k) for p in paths]
    out += [_fs("spec/jobTemplate/spec/template/" + p, "CronJob") for p in paths]
    return out


def _one_path_family(path: str) -> list[FieldSpec]:
    out = [_fs(path, "Pod")]
    out += [_fs("spec/template/" + path, k) for k in _WORKLOADS_SA]
    out.append(_fs("spec/jobTemplate/spec/template/" + path, "CronJob"))
    return out


def _builtin() -> tuple[NameRefSpec, ...]:
    hpa = (_fs("spec/scaleTargetRef/name", "HorizontalPodAutoscaler"),)
    specs = [
        NameRefSpec("Deployment", hpa),
        NameRefSpec("ReplicationController", hpa),
        NameRefSpec("ReplicaSet", hpa),
        NameRefSpec("StatefulSet", hpa),
        NameRefSpec(
            "ConfigMap",
            tuple(
                _pod_family(_POD_CM, _TEMPLATED)
                + [
                    _fs("spec/configSource/configMap", "Node"),
                    _fs("rules/resourceNames", "Role"),
                    _fs("rules/resourceNames", "ClusterRole"),
                    _fs(
                        "metadata/annotations/nginx.ingress.kubernetes.io\\/fastcgi-params-configmap",
                        "Ingress",
                    ),
                ]
            ),
            version="v1",
        ),
        NameRefSpec(
            "Secret",
            tuple(
                _pod_family(_POD_SECRET, _TEMPLATED)
                + [
                    _fs("spec/tls/secretName", "Ingress"),
                    _fs("metadata/annotations/ingress.kubernetes.io\\/auth-secret", "Ingress"),
                    _fs("metadata/annotations/nginx.ingress.kubernetes.io\\/auth-secret", "Ingress"),
                    _fs("metadata/annotations/nginx.ingress.kubernetes.io\\/auth-tls-secret", "Ingress"),
                    _fs("imagePullSecrets/name", "ServiceAccount"),
                    _fs("parameters/secretName", "StorageClass"),
                    _fs("parameters/adminSecretName", "StorageClass"),
                    _fs("parameters/userSecretName", "StorageClass"),
                    _fs("parameters/secretRef", "StorageClass"),
                    _fs("rules/resourceNames", "Role"),
                    _fs("rules/resourceNames", "ClusterRole"),
                    _fs(
                        "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
                        "Service",
                        "serving.knative.dev",
                        "v1",
                    ),
                    _fs("spec/azureFile/secretName", "PersistentVolume"),
                ]
            ),
            version="v1",
        ),
        NameRefSpec(
            "Service",
            (
                _fs("spec/serviceName", "StatefulSet", "apps"),
                _fs("spec/rules/http/paths/backend/serviceName", "Ingress"),
                _fs("spec/backend/serviceName", "Ingress"),
                _fs("spec/rules/http/paths/backend/service/name", "Ingress"),
                _fs("spec/defaultBackend/service/name", "Ingress"),
                _fs("spec/service/name", "APIService", "apiregistration.k8s.io"),
                _fs(
                    "webhooks/clientConfig/service",
                    "ValidatingWebhookConfiguration",
                    "admissionregistration.k8s.io",
                ),
                _fs(
                    "webhooks/clientConfig/service",
                    "MutatingWebhookConfiguration",
                    "admissionregistration.k8s.io",
                ),
            ),
            version="v1",
        ),
        NameRefSpec("Role", (_fs("roleRef/name", "RoleBinding", _RBAC),), group=_RBAC),
        NameRefSpec(
            "ClusterRole",
            (_fs("roleRef/name", "RoleBinding", _RBAC), _fs("roleRef/name", "ClusterRoleBinding", _RBAC)),
            group=_RBAC,
        ),
        NameRefSpec(
            "ServiceAccount",
            tuple(
                [_fs("subjects", "RoleBinding", _RBAC), _fs("subjects", "ClusterRoleBinding", _RBAC)]
                + _one_path_family("spec/serviceAccountName")
            ),
            version="v1",
        ),
        NameRefSpec(
            "PersistentVolumeClaim",
            tuple(_one_path_family("spec/volumes/persistentVolumeClaim/claimName")),
            version="v1",
        ),
        NameRefSpec(
            "PersistentVolume",
            (_fs("spec/volumeName", "PersistentVolumeClaim"), _fs("rules/resourceNames", "ClusterRole")),
            version="v1",
        ),
        NameRefSpec(
            "StorageClass",
            (
                _fs("spec/storageClassName", "PersistentVolume"),
                _fs("spec/storageClassName", "PersistentVolumeClaim"),
                _fs("spec/volumeClaimTemplates/spec/storageClassName", "StatefulSet"),
            ),
            group="storage.k8s.io",
            version="v1",
        ),
        NameRefSpec(
            "PriorityClass",
            tuple(_one_path_family("spec/priorityClassName")),
            group="scheduling.k8s.io",
            version="v1",
        ),
        NameRefSpec(
            "IngressClass",
            (_fs("spec/ingressClassName", "Ingress"),),
            group="networking.k8s.io/v1",
            version="v1",
        ),
    ]
    return tuple(specs)


def _split_path(path: str) -> tuple[str, ...]:
    """utils.SmarterPathSplitter: split at ``/`` except after a backslash or inside ``[...]``."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    i = 0
    while i < len(path):
        ch = path[i]
        if ch == "\\" and i + 1 < len(path) and path[i + 1] == "/":
            cur.append("/")
            i += 2
            continue
        if ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
        if ch == "/" and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return tuple(parts)


BUILTIN: tuple[NameRefSpec, ...] = _builtin()


def builtin_name_reference_specs() -> list[NameRefSpec]:
    """kustomize v5.5's builtin nameReference configuration."""
    return list(BUILTIN)


# --------------------------------------------------------------------------------------
# user configuration


def _cfg_str(m: Mapping[str, Any], key: str, where: str) -> str:
    v = m.get(key)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise KustomizeError(f"{where}: {key!r} must be a string, not {type(v).__name__}")
    return v


def parse_name_reference_config(doc: Any) -> list[NameRefSpec]:
    """The ``nameReference`` entries of a transformer configuration file (the documents
    listed under a kustomization's ``configurations:``). Other sections are ignored."""
    if doc is None:
        return []
    if not isinstance(doc, Mapping):
        raise KustomizeError(f"transformer configuration must be a mapping, not {type(doc).__name__}")
    entries = doc.get("nameReference")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise KustomizeError("nameReference must be a list")
    out: list[NameRefSpec] = []
    for i, e in enumerate(entries):
        where = f"nameReference[{i}]"
        if not isinstance(e, Mapping):
            raise KustomizeError(f"{where} must be a mapping")
        kind = _cfg_str(e, "kind", where)
        if not kind:
            raise KustomizeError(f"{where} needs a kind")
        fss = e.get("fieldSpecs")
        if fss is None:
            fss = []
        if not isinstance(fss, list):
            raise KustomizeError(f"{where}.fieldSpecs must be a list")
        specs: list[FieldSpec] = []
        for j, fs in enumerate(fss):
            w = f"{where}.fieldSpecs[{j}]"
            if not isinstance(fs, Mapping):
                raise KustomizeError(f"{w} must be a mapping")
            path = _cfg_str(fs, "path", w)
            if not path:
                raise KustomizeError(f"{w} needs a path")
            create = fs.get("create")
            if create is not None and not isinstance(create, bool):
                raise KustomizeError(f"{w}: 'create' must be a boolean")
            specs.append(
                FieldSpec(
                    _split_path(path),
                    _cfg_str(fs, "kind", w),
                    _cfg_str(fs, "group", w),
                    _cfg_str(fs, "version", w),
                )
            )
        out.append(
            NameRefSpec(kind, tuple(specs), _cfg_str(e, "group", where), _cfg_str(e, "version", where))
        )
    return out


def merge_name_reference_specs(
    base: Iterable[NameRefSpec], extra: Iterable[NameRefSpec]
) -> list[NameRefSpec]:
    """Merge ``extra`` into ``base`` as kustomize merges transformer configs: entries for the
    same target group/version/kind are combined, duplicate field specs dropped."""
    merged: dict[tuple[str, str, str], list[FieldSpec]] = {}
    order: list[tuple[str, str, str]] = []
    for spec in list(base) + list(extra):
        if not isinstance(spec, NameRefSpec):
            raise KustomizeError(f"not a NameRefSpec: {type(spec).__name__}")
        key = (spec.group, spec.version, spec.kind)
        if key not in merged:
            merged[key] = []
            order.append(key)
        have = merged[key]
        for fs in spec.field_specs:
            if not any(
                h.path == fs.path and h.kind == fs.kind and h.group == fs.group and h.version == fs.version
                for h in have
            ):
                have.append(fs)
    return [NameRefSpec(k[2], tuple(merged[k]), k[0], k[1]) for k in order]


@lru_cache(maxsize=1)
def _builtin_index() -> dict[str, list[tuple[int, NameRefSpec, FieldSpec]]]:
    return _index(BUILTIN)


def _index(specs: Iterable[NameRefSpec]) -> dict[str, list[tuple[int, NameRefSpec, FieldSpec]]]:
    """referrer kind ('' = any kind) -> (order, target spec, field spec), in configuration order."""
    idx: dict[str, list[tuple[int, NameRefSpec, FieldSpec]]] = {}
    order = 0
    for spec in specs:
        if "/" in spec.group:  # can never equal a parsed API group (the IngressClass entry)
            continue
        for fs in spec.field_specs:
            idx.setdefault(fs.kind, []).append((order, spec, fs))
            order += 1
    return idx


# --------------------------------------------------------------------------------------
# rewriting


@dataclass
class _Cand:
    kind: str
    namespace: str  # "" = none
    new: str


@dataclass
class _Referrer:
    kind: str
    cluster_scoped: bool
    eff_ns: str
    sa_subject_namespaces: frozenset[str]
    role_ref_kind: str | None


class _Trie:
    """Field specs of one referrer kind merged by path prefix, so that a resource is walked
    once; ``leaf`` holds the (order, spec, field spec) entries ending here."""

    __slots__ = ("children", "leaf")

    def __init__(self) -> None:
        self.children: dict[str, _Trie] = {}
        self.leaf: list[tuple[int, NameRefSpec, FieldSpec]] = []


def _build_trie(entries: list[tuple[int, NameRefSpec, FieldSpec]]) -> _Trie:
    root = _Trie()
    for order, spec, fs in entries:
        node = root
        for part in fs.path:
            name = part[:-2] if part.endswith("[]") else part
            if not name:
                raise KustomizeError(
                    f"nameReference path {'/'.join(fs.path)!r}: cannot set or create an empty field name"
                )
            node = node.children.setdefault(name, _Trie())
        node.leaf.append((order, spec, fs))
    _sort_leaves(root)
    return root


def _sort_leaves(node: _Trie) -> None:
    node.leaf.sort(key=lambda e: e[0])
    for child in node.children.values():
        _sort_leaves(child)


def _copy_tracking(v: Any, targets: set[int], found: dict[int, Any]) -> Any:
    """Deep copy of ``v``; the copies of the containers whose id is in ``targets`` are
    recorded in ``found``."""
    if isinstance(v, dict):
        d = {k: _copy_tracking(x, targets, found) if isinstance(x, (dict, list)) else x for k, x in v.items()}
        if id(v) in targets:
            found[id(v)] = d
        return d
    if isinstance(v, list):
        lst = [_copy_tracking(x, targets, found) if isinstance(x, (dict, list)) else x for x in v]
        if id(v) in targets:
            found[id(v)] = lst
        return lst
    return v


def _rb_namespaces(res: Mapping[str, Any]) -> frozenset[str]:
    subjects = res.get("subjects")
    if not isinstance(subjects, list):
        return frozenset()
    out: set[str] = set()
    for s in subjects:
        if not isinstance(s, Mapping):
            continue
        if "namespace" in s and "kind" in s and s.get("kind") == "ServiceAccount":
            ns = s["namespace"]
            if not isinstance(ns, str):
                md = res.get("metadata")
                name = md.get("name") if isinstance(md, Mapping) else None
                raise KustomizeError(f"Invalid Input: namespace is blank for resource RoleBinding {name!r}")
            out.add(ns)
    return frozenset(out)


def _text(v: Any) -> str:
    return "" if v is None or isinstance(v, (dict, list)) else scalar_text(v)


class _Rewriter:
    """Walks one resource read-only and records the edits to make."""

    def __init__(
        self, by_name: dict[tuple[str, str], list[_Cand]], ref: _Referrer, gvk: tuple[str, str, str]
    ) -> None:
        self.by_name = by_name
        self.ref = ref
        self.gvk = gvk
        self.edits: list[tuple[Any, Any, Any]] = []

    # candidate selection ---------------------------------------------------------------
    def _ns_ok(self, c: _Cand) -> bool:
        ref = self.ref
        if ref.cluster_scoped or is_cluster_scoped(c.kind):
            return True
        if (c.namespace or DEFAULT_NAMESPACE) == ref.eff_ns:
            return True
        return (
            ref.kind == "RoleBinding"
            and c.kind == "ServiceAccount"
            and c.namespace in ref.sa_subject_namespaces
        )

    def _select(self, fs: FieldSpec, old: str, cands: list[_Cand], with_ns: bool) -> _Cand | None:
        sel = [c for c in cands if self._ns_ok(c)]
        if fs.path[-2:] == ("roleRef", "name") and self.ref.role_ref_kind is not None:
            sel = [c for c in sel if c.kind == self.ref.role_ref_kind]
        if not sel:
            return None
        first = sel[0]
        if all(c.new == first.new and (not with_ns or c.namespace == first.namespace) for c in sel):
            return first
        ids = ", ".join(f"{c.kind}/{c.new}.{c.namespace or '[noNs]'}" for c in sel)
        raise KustomizeError(
            f"updating name reference in {'/'.join(fs.path)!r} of {self.ref.kind}: "
            f"found multiple possible referrals for {old!r}: {ids}"
        )

    def _entries(self, leaf: list[tuple[int, NameRefSpec, FieldSpec]]) -> list[tuple[NameRefSpec, FieldSpec]]:
        g, v, k = self.gvk
        return [(spec, fs) for _, spec, fs in leaf if fs.selects(g, v, k)]

    def scalar(self, value: Any, entries: list[tuple[NameRefSpec, FieldSpec]]) -> Any:
        """The value after every applicable spec, in configuration order (``value`` if none)."""
        cur = value
        for spec, fs in entries:
            old = _text(cur)
            cands = self.by_name.get((spec.kind, old))
            if not cands:
                continue
            c = self._select(fs, old, cands, False)
            if c is not None and c.new != old:
                cur = c.new
        return cur

    def mapping(self, node: dict[str, Any], entries: list[tuple[NameRefSpec, FieldSpec]]) -> None:
        if not entries:
            return
        if "name" not in node:
            fs = entries[0][1]
            raise KustomizeError(
                f"updating name reference in {'/'.join(fs.path)!r} of {self.ref.kind}: "
                "path config error; no 'name' field in node"
            )
        name: Any = node["name"]
        ns_val: Any = node.get("namespace")
        has_ns = "namespace" in node
        for spec, fs in entries:
            old = _text(name)
            cands = self.by_name.get((spec.kind, old))
            if not cands:
                continue
            if has_ns:
                want = _text(ns_val)
                cands = [
                    c
                    for c in cands
                    if not is_cluster_scoped(c.kind) and (c.namespace or DEFAULT_NAMESPACE) == want
                ]
            c = self._select(fs, old, cands, True)
            if c is None or (c.new == old and not c.namespace):
                continue
            name = c.new
            if c.namespace:
                ns_val, has_ns = c.namespace, True
        if name != node["name"]:
            self.edits.append((node, "name", name))
        if has_ns and ("namespace" not in node or node["namespace"] != ns_val):
            self.edits.append((node, "namespace", ns_val))

    # traversal ---------------------------------------------------------------------------
    def walk(self, node: Any, trie: _Trie) -> None:
        if node is None:
            return
        if isinstance(node, list):
            for el in node:
                self.walk(el, trie)
            return
        if not isinstance(node, dict):
            path = _first_path(trie)
            raise KustomizeError(
                f"updating name reference in {path!r} of {self.ref.kind}: expected sequence or mapping node"
            )
        for name, child in trie.children.items():
            if name not in node:
                continue
            value = node[name]
            if child.leaf:
                self.leaf(node, name, value, self._entries(child.leaf))
            if child.children:
                self.walk(value, child)

    def leaf(
        self, parent: dict[str, Any], key: str, value: Any, entries: list[tuple[NameRefSpec, FieldSpec]]
    ) -> None:
        if value is None or not entries:
            return
        if isinstance(value, dict):
            self.mapping(value, entries)
        elif isinstance(value, list):
            for i, el in enumerate(value):
                if el is None or isinstance(el, list):
                    continue
                if isinstance(el, dict):
                    self.mapping(el, entries)
                else:
                    new = self.scalar(el, entries)
                    if new is not el:
                        self.edits.append((value, i, new))
        else:
            new = self.scalar(value, entries)
            if new is not value:
                self.edits.append((parent, key, new))


def _first_path(trie: _Trie) -> str:
    node = trie
    while True:
        if node.leaf:
            return "/".join(node.leaf[0][2].path)
        if not node.children:
            return ""
        node = next(iter(node.children.values()))


def _candidates(renames: Renames) -> dict[tuple[str, str], list[_Cand]]:
    if not isinstance(renames, Mapping):
        raise KustomizeError(f"renames must be a mapping, not {type(renames).__name__}")
    out: dict[tuple[str, str], list[_Cand]] = {}
    for key, new in renames.items():
        if not (isinstance(key, tuple) and len(key) == 3):
            raise KustomizeError(f"rename key must be (kind, namespace, old name), not {key!r}")
        kind, ns, old = key
        if (
            not isinstance(kind, str)
            or not isinstance(old, str)
            or (ns is not None and not isinstance(ns, str))
        ):
            raise KustomizeError(f"rename key must be (kind, namespace, old name) strings, not {key!r}")
        if not isinstance(new, str):
            raise KustomizeError(f"new name for {key!r} must be a string")
        out.setdefault((kind, old), []).append(_Cand(kind, ns or "", new))
    return out


def rewrite_references(
    resources: list[dict[str, Any]],
    renames: Renames,
    extra: Iterable[NameRefSpec] | None = None,
) -> list[dict[str, Any]]:
    """Rewrite, in every resource, the name references to renamed objects.

    ``renames`` maps ``(kind, namespace or None, old name)`` of each renamed object to its
    new name; ``extra`` adds nameReference specs from ``configurations:`` files
    (:func:`parse_name_reference_config`). Returns a list parallel to ``resources``:
    changed resources are new objects, unchanged ones are returned as they are; the
    inputs are never modified.
    """
    if not isinstance(resources, list):
        raise KustomizeError(f"resources must be a list, not {type(resources).__name__}")
    by_name = _candidates(renames)
    extra_list = list(extra) if extra is not None else []
    index = _index(merge_name_reference_specs(BUILTIN, extra_list)) if extra_list else _builtin_index()
    target_kinds = {k for k, _ in by_name}
    tries: dict[str, _Trie | None] = {}
    out: list[dict[str, Any]] = []
    for res in resources:
        if not isinstance(res, dict):
            raise KustomizeError(f"resource must be a mapping, not {type(res).__name__}")
        kind = res.get("kind")
        kind = kind if isinstance(kind, str) else ""
        if kind not in tries:
            entries = [
                (order, spec, fs)
                for order, spec, fs in index.get(kind, []) + (index.get("", []) if kind else [])
                if spec.kind in target_kinds
            ]
            tries[kind] = _build_trie(entries) if entries else None
        trie = tries[kind]
        if trie is None:
            out.append(res)
            continue
        group, version = split_api_version(res.get("apiVersion"))
        md = res.get("metadata")
        ns = md.get("namespace") if isinstance(md, Mapping) else None
        role_ref = res.get("roleRef")
        rr_kind = None
        if isinstance(role_ref, Mapping) and "apiGroup" in role_ref and "kind" in role_ref:
            rr_kind = _text(role_ref["kind"])
        ref = _Referrer(
            kind=kind,
            cluster_scoped=kustomize_cluster_scoped(res.get("apiVersion"), kind),
            eff_ns=ns if isinstance(ns, str) and ns else DEFAULT_NAMESPACE,
            sa_subject_namespaces=_rb_namespaces(res) if kind == "RoleBinding" else frozenset(),
            role_ref_kind=rr_kind,
        )
        rw = _Rewriter(by_name, ref, (group, version, kind))
        try:
            rw.walk(res, trie)
        except RecursionError:
            raise KustomizeError("name references: document nested too deeply") from None
        if not rw.edits:
            out.append(res)
            continue
        found: dict[int, Any] = {}
        copy = _copy_tracking(res, {id(c) for c, _, _ in rw.edits}, found)
        for container, key, value in rw.edits:
            found[id(container)][key] = value
        out.append(copy)
    return out
