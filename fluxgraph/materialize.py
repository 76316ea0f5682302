"""Secrets and ConfigMaps that the cluster creates because of an object of the repository.

Flux applies what the repository declares; controllers in the cluster then create more. A
Secret an ``ExternalSecret`` makes exists once its controller has run, so "does this object
exist" (``missing-substitute-from``, the variables a ``substituteFrom`` reads, the copy of a
ConfigMap a Kustomization expects in a namespace) must count it, and its values are not
evaluated (they come from outside the repository). That it appears only after its controller
runs is what the Ready-is-not-healthy rules judge (``generated-secret-not-awaited``).

``MAKERS`` is the one table: (API group, kind) of the maker -> how to read what it makes, each
entry with its source. Annotations that copy a Secret or ConfigMap into other namespaces
(``COPIERS``) are read on every Secret and ConfigMap, including the ones a maker makes (a
cert-manager ``secretTemplate`` that carries reflector's annotations).

Namespaces are selected the way each controller does: a list, a label selector over the
Namespace objects the cluster applies (every namespace has its ``kubernetes.io/metadata.name``
label), or regular expressions over namespace names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fluxgraph.model import as_dict, as_list, as_str

if TYPE_CHECKING:
    from fluxgraph.cluster import AppliedObject

NAME_LABEL = "kubernetes.io/metadata.name"


# -- which namespaces -------------------------------------------------------------------


@dataclass(frozen=True)
class Namespaces:
    """A set of namespaces: ``names`` (exact), ``patterns`` (regular expressions over the
    name, full match), ``selectors`` (label selectors, any of which selects), or ``every``."""

    names: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()
    selectors: tuple[dict[str, Any], ...] = ()
    every: bool = False

    def contains(self, namespace: str, labels: dict[str, str] | None) -> bool:
        if self.every or namespace in self.names:
            return True
        for p in self.patterns:
            try:
                if re.fullmatch(p, namespace):
                    return True
            except re.error:
                continue
        have = dict(labels or {})
        have.setdefault(NAME_LABEL, namespace)
        return any(selector_matches(s, have) for s in self.selectors)

    def describe(self) -> str:
        if self.every:
            return "every namespace"
        parts = sorted(self.names) + [f"/{p}/" for p in self.patterns] + [f"namespaces selected by {s}" for s in self.selectors]
        return ", ".join(parts) or "no namespace"


def one(namespace: str) -> Namespaces:
    return Namespaces(names=frozenset({namespace}))


def selector_matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A Kubernetes label selector (``matchLabels`` and ``matchExpressions`` with In, NotIn,
    Exists, DoesNotExist); an empty selector selects everything."""
    for k, v in as_dict(selector.get("matchLabels")).items():
        if labels.get(str(k)) != str(v):
            return False
    for e in as_list(selector.get("matchExpressions")):
        e = as_dict(e)
        key, op = as_str(e.get("key")), as_str(e.get("operator"))
        values = {str(x) for x in as_list(e.get("values"))}
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


_REQ = re.compile(r"^\s*(!?)\s*([A-Za-z0-9._/-]+)\s*(?:(==|!=|=)\s*([A-Za-z0-9._-]*)|\s+(in|notin)\s*\(([^)]*)\))?\s*$")


def parse_label_selector(text: str) -> dict[str, Any] | None:
    """A label selector written as a string (``k=v,k2!=v2,k3,!k4,k5 in (a,b)``, as
    ``labels.Parse`` reads it) as a selector mapping; None when it cannot be read."""
    exprs: list[dict[str, Any]] = []
    for part in re.split(r",(?![^()]*\))", text.strip()):
        if not part.strip():
            continue
        m = _REQ.match(part)
        if not m:
            return None
        neg, key, op, value, setop, values = m.groups()
        if op in ("=", "=="):
            exprs.append({"key": key, "operator": "In", "values": [value]})
        elif op == "!=":
            exprs.append({"key": key, "operator": "NotIn", "values": [value]})
        elif setop:
            vals = [v.strip() for v in values.split(",") if v.strip()]
            exprs.append({"key": key, "operator": "In" if setop == "in" else "NotIn", "values": vals})
        else:
            exprs.append({"key": key, "operator": "DoesNotExist" if neg else "Exists"})
    return {"matchExpressions": exprs}


# -- what is made ----------------------------------------------------------------------


@dataclass(frozen=True)
class Made:
    """A ``kind`` (Secret or ConfigMap) named ``name`` that the cluster creates in
    ``namespaces`` because of ``maker``: ``how`` says what creates it (``ExternalSecret
    apps/db creates it``). ``keys`` are its data keys where the maker says them (None: any
    key may be there); ``data`` its values where they are known (a copy of an object of the
    repository), else every value is not evaluated."""

    kind: str
    name: str
    namespaces: Namespaces
    maker: AppliedObject = field(compare=False)
    how: str
    keys: frozenset[str] | None = None
    data: dict[str, Any] | None = field(default=None, compare=False)
    source: str = ""  # the controller behaviour it follows
    # the annotations the maker puts on what it makes (a copier's annotations among them)
    annotations: dict[str, Any] = field(default_factory=dict, compare=False)


Reader = Callable[["AppliedObject"], list[Made]]


def _own_ns(obj: AppliedObject) -> str:
    return obj.ref.namespace or obj.resource.namespace or ""


def _es_keys(spec: dict[str, Any]) -> frozenset[str] | None:
    """The data keys of the Secret an ExternalSecret (spec) makes: ``target.template.data``
    keys and ``data[].secretKey``; unknown (None) with ``dataFrom`` or ``templateFrom``."""
    target = as_dict(spec.get("target"))
    template = as_dict(target.get("template"))
    if as_list(spec.get("dataFrom")) or as_list(template.get("templateFrom")):
        return None
    keys = {str(k) for k in as_dict(template.get("data"))}
    if not template or as_str(template.get("mergePolicy")) == "Merge" or not template.get("data"):
        keys |= {as_str(as_dict(d).get("secretKey")) for d in as_list(spec.get("data"))}
    keys.discard("")
    return frozenset(keys)


def _es_made(spec: dict[str, Any], default_name: str) -> tuple[str, dict[str, Any]] | None:
    """(name, template metadata) of the Secret an ExternalSecret spec creates, or None when it
    creates none (``target.creationPolicy`` ``Merge``: into an existing one, or ``None``)."""
    target = as_dict(spec.get("target"))
    if as_str(target.get("creationPolicy")) in ("Merge", "None"):
        return None
    name = as_str(target.get("name")) or default_name
    return (name, as_dict(as_dict(target.get("template")).get("metadata"))) if name else None


def _external_secret(obj: AppliedObject) -> list[Made]:
    """external-secrets ``ExternalSecret``: a Secret named ``spec.target.name`` (default: the
    ExternalSecret's name) in its own namespace, unless ``creationPolicy`` is ``Merge`` or
    ``None`` (external-secrets apis/externalsecrets/v1 ``ExternalSecretTarget``)."""
    spec = as_dict(obj.data.get("spec"))
    made = _es_made(spec, obj.ref.name)
    if made is None:
        return []
    name, meta = made
    return [
        Made("Secret", name, one(_own_ns(obj)), obj, f"{obj.ref.kind} {_own_ns(obj)}/{obj.ref.name} creates it", _es_keys(spec),
             source="external-secrets ExternalSecret spec.target", annotations=_annotations(meta))
    ]


def _cluster_external_secret(obj: AppliedObject) -> list[Made]:
    """external-secrets ``ClusterExternalSecret``: an ExternalSecret named
    ``spec.externalSecretName`` (default: its own name) in every namespace that
    ``spec.namespaces`` lists or one of ``spec.namespaceSelectors`` (or the older
    ``spec.namespaceSelector``) selects, each making the Secret its ``externalSecretSpec``
    says (external-secrets apis/externalsecrets/v1 ``ClusterExternalSecretSpec``)."""
    spec = as_dict(obj.data.get("spec"))
    es_name = as_str(spec.get("externalSecretName")) or obj.ref.name
    es_spec = as_dict(spec.get("externalSecretSpec"))
    made = _es_made(es_spec, es_name)
    if made is None:
        return []
    name, meta = made
    selectors = tuple(as_dict(s) for s in as_list(spec.get("namespaceSelectors")))
    if isinstance(spec.get("namespaceSelector"), dict):
        selectors += (spec["namespaceSelector"],)
    names = frozenset(str(n) for n in as_list(spec.get("namespaces")))
    return [
        Made("Secret", name, Namespaces(names=names, selectors=selectors), obj, f"ClusterExternalSecret {obj.ref.name} creates it",
             _es_keys(es_spec), source="external-secrets ClusterExternalSecret", annotations=_annotations(meta))
    ]


def _sealed_secret(obj: AppliedObject) -> list[Made]:
    """bitnami ``SealedSecret``: a Secret named ``spec.template.metadata.name`` (default: its
    own), in its own namespace, with the keys of ``spec.encryptedData`` (sealed-secrets
    pkg/apis/sealedsecrets/v1alpha1)."""
    spec = as_dict(obj.data.get("spec"))
    meta = as_dict(as_dict(spec.get("template")).get("metadata"))
    name = as_str(meta.get("name")) or obj.ref.name
    keys = frozenset(str(k) for k in as_dict(spec.get("encryptedData"))) | frozenset(
        str(k) for k in as_dict(as_dict(spec.get("template")).get("data"))
    )
    return [Made("Secret", name, one(_own_ns(obj)), obj, f"SealedSecret {_own_ns(obj)}/{obj.ref.name} creates it", keys,
                 source="sealed-secrets SealedSecret", annotations=_annotations(meta))]


def _named_after_itself(label: str, source: str) -> Reader:
    def read(obj: AppliedObject) -> list[Made]:
        return [Made("Secret", obj.ref.name, one(_own_ns(obj)), obj, f"{label} {_own_ns(obj)}/{obj.ref.name} creates it", None, source=source)]

    return read


def _vault_destination(obj: AppliedObject) -> list[Made]:
    """Vault Secrets Operator ``VaultStaticSecret``/``VaultDynamicSecret``/``VaultPKISecret``/
    ``HCPVaultSecretsApp``: the Secret ``spec.destination.name``, created only with
    ``destination.create: true`` (default false: VSO then writes into a Secret that must
    exist; vault-secrets-operator api/v1beta1 ``Destination``)."""
    dest = as_dict(as_dict(obj.data.get("spec")).get("destination"))
    name = as_str(dest.get("name"))
    if not name or dest.get("create") is not True:
        return []
    return [Made("Secret", name, one(_own_ns(obj)), obj, f"{obj.ref.kind} {_own_ns(obj)}/{obj.ref.name} creates it", None,
                 source="vault-secrets-operator Destination", annotations=_annotations(dest))]


def _infisical(obj: AppliedObject) -> list[Made]:
    """Infisical ``InfisicalSecret``: ``spec.managedSecretReference`` (secretName, in
    secretNamespace, default its own)."""
    ref = as_dict(as_dict(obj.data.get("spec")).get("managedSecretReference"))
    name = as_str(ref.get("secretName"))
    if not name:
        return []
    ns = as_str(ref.get("secretNamespace")) or _own_ns(obj)
    return [Made("Secret", name, one(ns), obj, f"InfisicalSecret {_own_ns(obj)}/{obj.ref.name} creates it", None, source="infisical InfisicalSecret")]


def _certificate(obj: AppliedObject) -> list[Made]:
    """cert-manager ``Certificate``: a ``kubernetes.io/tls`` Secret ``spec.secretName`` in its
    own namespace (keys ``tls.crt``, ``tls.key``, ``ca.crt``), carrying
    ``spec.secretTemplate``'s labels and annotations (cert-manager apis/certmanager/v1)."""
    spec = as_dict(obj.data.get("spec"))
    name = as_str(spec.get("secretName"))
    if not name:
        return []
    return [Made("Secret", name, one(_own_ns(obj)), obj, f"Certificate {_own_ns(obj)}/{obj.ref.name} creates it",
                 frozenset({"tls.crt", "tls.key", "ca.crt"}), source="cert-manager Certificate spec.secretName",
                 annotations=_annotations(as_dict(spec.get("secretTemplate"))))]


_CNPG_APP_KEYS = frozenset({"username", "password", "host", "port", "dbname", "uri", "jdbc-uri", "pgpass", "fqdn-uri", "fqdn-jdbc-uri", "user"})


def _cnpg_cluster(obj: AppliedObject) -> list[Made]:
    """CloudNativePG ``Cluster``: ``<name>-app`` for the application owner when it bootstraps
    with ``initdb`` (the default) and names no ``initdb.secret`` of its own,
    ``<name>-superuser`` only with ``enableSuperuserAccess: true`` (off by default since 1.21),
    and its ``-ca``, ``-server`` and ``-replication`` certificates (CloudNativePG docs,
    "Connecting from an application" and "Certificates")."""
    spec = as_dict(obj.data.get("spec"))
    ns, name = _own_ns(obj), obj.ref.name
    how = f"CloudNativePG Cluster {ns}/{name} creates it"
    out: list[Made] = []
    bootstrap = as_dict(spec.get("bootstrap"))
    initdb = as_dict(bootstrap.get("initdb")) if "initdb" in bootstrap or not bootstrap else None
    if initdb is not None and not as_dict(initdb.get("secret")).get("name"):
        out.append(Made("Secret", f"{name}-app", one(ns), obj, how, _CNPG_APP_KEYS, source="CloudNativePG <cluster>-app"))
    if spec.get("enableSuperuserAccess") is True and not as_dict(spec.get("superuserSecret")).get("name"):
        out.append(Made("Secret", f"{name}-superuser", one(ns), obj, how, _CNPG_APP_KEYS, source="CloudNativePG <cluster>-superuser"))
    for suffix in ("ca", "server", "replication"):
        out.append(Made("Secret", f"{name}-{suffix}", one(ns), obj, how, None, source="CloudNativePG certificates"))
    return out


_REQUEST_NS = re.compile(r"^\{\{\s*request\.object\.metadata\.name\s*\}\}$")


def _kyverno_generate(obj: AppliedObject) -> list[Made]:
    """Kyverno ``ClusterPolicy``/``Policy`` ``generate`` rules that make a Secret or ConfigMap
    of a literal name: in the literal ``namespace``, or, for a rule that matches Namespaces
    and writes ``{{request.object.metadata.name}}``, in every namespace (a ``Policy``
    generates into its own namespace only). ``data`` gives the keys and values, ``clone`` the
    keys of the cloned object (kyverno docs, "Generate Resources")."""
    out: list[Made] = []
    spec = as_dict(obj.data.get("spec"))
    for rule in as_list(spec.get("rules")):
        rule = as_dict(rule)
        gen = as_dict(rule.get("generate"))
        kind, name = as_str(gen.get("kind")), as_str(gen.get("name"))
        if kind not in ("Secret", "ConfigMap") or not name or "{{" in name:
            continue
        ns = as_str(gen.get("namespace"))
        if obj.ref.kind == "Policy":
            where = one(_own_ns(obj))
        elif _REQUEST_NS.match(ns):
            where = Namespaces(every=True)
        elif ns and "{{" not in ns:
            where = one(ns)
        else:
            continue
        data = as_dict(as_dict(gen.get("data")).get("data"))
        keys = frozenset(str(k) for k in data) if gen.get("data") is not None else None
        out.append(Made(kind, name, where, obj, f"Kyverno {obj.ref.kind} {obj.ref.name} (rule {as_str(rule.get('name'))}) generates it",
                        keys, data=dict(data) if data and "{{" not in str(data) else None, source="kyverno generate"))
    return out


# (API group, kind) of the maker -> what it makes
MAKERS: dict[tuple[str, str], Reader] = {
    ("external-secrets.io", "ExternalSecret"): _external_secret,
    ("external-secrets.io", "ClusterExternalSecret"): _cluster_external_secret,
    ("bitnami.com", "SealedSecret"): _sealed_secret,
    # 1Password Connect operator: a Secret named after the item, its fields as keys
    ("onepassword.com", "OnePasswordItem"): _named_after_itself("OnePasswordItem", "1Password operator OnePasswordItem"),
    ("secrets.hashicorp.com", "VaultStaticSecret"): _vault_destination,
    ("secrets.hashicorp.com", "VaultDynamicSecret"): _vault_destination,
    ("secrets.hashicorp.com", "VaultPKISecret"): _vault_destination,
    ("secrets.hashicorp.com", "HCPVaultSecretsApp"): _vault_destination,
    ("secrets.infisical.com", "InfisicalSecret"): _infisical,
    ("cert-manager.io", "Certificate"): _certificate,
    ("postgresql.cnpg.io", "Cluster"): _cnpg_cluster,
    ("kyverno.io", "ClusterPolicy"): _kyverno_generate,
    ("kyverno.io", "Policy"): _kyverno_generate,
}


def _annotations(meta: dict[str, Any]) -> dict[str, Any]:
    """The annotations a maker's template (``metadata``, ``secretTemplate``, ``destination``)
    puts on what it makes."""
    return as_dict(meta.get("annotations"))


# -- copies into other namespaces ------------------------------------------------------

_REFLECTOR = "reflector.v1.k8s.emberstack.com/"
_REPLICATOR = "replicator.v1.mittwald.de/"


def _split(value: Any) -> list[str]:
    return [p.strip() for p in str(value or "").split(",") if p.strip()]


def _copied_into(annotations: dict[str, Any]) -> Namespaces | None:
    """Where the annotations of a Secret/ConfigMap make a controller copy it:

    * emberstack reflector: ``reflection-allowed: "true"`` with ``reflection-auto-enabled:
      "true"`` copies it into the namespaces ``reflection-auto-namespaces`` names (regular
      expressions, comma-separated), by default every namespace
      ``reflection-allowed-namespaces`` allows (by default every namespace) (reflector README,
      "Automatic mirror creation");
    * mittwald kubernetes-replicator: ``replicate-to`` (names or patterns, comma-separated)
      and ``replicate-to-matching`` (a label selector) push copies (replicator README);
    * appscode kubed / config-syncer: ``kubed.appscode.com/sync`` copies into every namespace
      (empty value) or those whose labels match it (a ``k=v`` selector).
    """
    a = {str(k): v for k, v in annotations.items()}
    if str(a.get(_REFLECTOR + "reflection-allowed", "")).lower() == "true" and str(
        a.get(_REFLECTOR + "reflection-auto-enabled", "")
    ).lower() == "true":
        auto = _split(a.get(_REFLECTOR + "reflection-auto-namespaces")) or _split(a.get(_REFLECTOR + "reflection-allowed-namespaces"))
        return Namespaces(patterns=tuple(auto)) if auto else Namespaces(every=True)
    if _REPLICATOR + "replicate-to" in a or _REPLICATOR + "replicate-to-matching" in a:
        pats = tuple(_split(a.get(_REPLICATOR + "replicate-to")))
        sel: tuple[dict[str, Any], ...] = ()
        matching = _split(a.get(_REPLICATOR + "replicate-to-matching"))
        if matching:
            sel = ({"matchLabels": dict(p.split("=", 1) for p in matching if "=" in p)},)
        return Namespaces(patterns=pats, selectors=sel)
    if "kubed.appscode.com/sync" in a:
        v = str(a.get("kubed.appscode.com/sync") or "")
        if not v:
            return Namespaces(every=True)
        return Namespaces(selectors=({"matchLabels": dict(p.split("=", 1) for p in _split(v) if "=" in p)},))
    return None


def _copies(kind: str, name: str, annotations: dict[str, Any], maker: AppliedObject,
            keys: frozenset[str] | None, data: dict[str, Any] | None, what: str) -> list[Made]:
    where = _copied_into(annotations)
    if where is None:
        return []
    return [Made(kind, name, where, maker, f"{what} is copied into {where.describe()} by its annotations", keys, data,
                 source="reflector / replicator / kubed annotations")]


def store_of(obj: AppliedObject) -> tuple[str, str, str] | None:
    """The store an external-secrets maker reads: (kind, namespace, name) of the
    ``SecretStore`` (in the maker's own namespace, the default kind) or ``ClusterSecretStore``
    (namespace "") its ``secretStoreRef`` names (external-secrets apis/externalsecrets/v1
    ``SecretStoreRef``: ``kind`` defaults to ``SecretStore``). None for other makers, for a
    ``sourceRef`` generator, or where the reference names no store."""
    ref = obj.ref
    if ref.group != "external-secrets.io":
        return None
    spec = as_dict(obj.data.get("spec"))
    if ref.kind == "ClusterExternalSecret":
        spec = as_dict(spec.get("externalSecretSpec"))
        own = ""  # each ExternalSecret it writes is in a selected namespace
    elif ref.kind == "ExternalSecret":
        own = _own_ns(obj)
    else:
        return None
    store = as_dict(spec.get("secretStoreRef"))
    name = as_str(store.get("name"))
    kind = as_str(store.get("kind")) or "SecretStore"
    if not name or kind not in ("SecretStore", "ClusterSecretStore") or (kind == "SecretStore" and not own):
        return None
    return kind, own if kind == "SecretStore" else "", name


# -- the index ---------------------------------------------------------------------------


def made_by(obj: AppliedObject) -> list[Made]:
    """Everything the cluster creates because of the applied object ``obj``: what a maker of
    ``MAKERS`` makes, and the copies its annotations (or those it puts on what it makes) ask
    for."""
    out: list[Made] = []
    ref = obj.ref
    reader = MAKERS.get((ref.group, ref.kind))
    if reader is not None:
        for m in reader(obj):
            out.append(m)
            if m.annotations:
                out.extend(_copies(m.kind, m.name, m.annotations, obj, m.keys, m.data, f"{m.kind} {m.name} ({m.how})"))
    if ref.group == "" and ref.kind in ("Secret", "ConfigMap"):
        ann = as_dict(as_dict(obj.data.get("metadata")).get("annotations"))
        if ann:
            data = _object_data(obj)
            out.extend(_copies(ref.kind, ref.name, ann, obj, frozenset(data), data, f"{ref.kind} {ref.namespace}/{ref.name}"))
    return out


def _object_data(obj: AppliedObject) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for sect in ("data", "stringData"):
        out.update({str(k): v for k, v in as_dict(obj.data.get(sect)).items()})
    return out


class MadeIndex:
    """The objects the cluster creates, by (target cluster, kind, name); ``add`` as objects
    are applied (the walk) or ``build`` over a model's objects (the checks)."""

    def __init__(self) -> None:
        self._by_name: dict[tuple[str, str, str], list[Made]] = {}
        self._labels: dict[tuple[str, str], dict[str, str]] = {}

    def add(self, obj: AppliedObject) -> None:
        ref = obj.ref
        if ref.kind == "Namespace" and ref.group == "":
            labels = as_dict(as_dict(obj.data.get("metadata")).get("labels"))
            self._labels[(ref.target, ref.name)] = {str(k): str(v) for k, v in labels.items()}
            return
        if (ref.group, ref.kind) not in MAKERS and not (ref.group == "" and ref.kind in ("Secret", "ConfigMap")):
            return
        for m in made_by(obj):
            self._by_name.setdefault((ref.target, m.kind, m.name), []).append(m)

    @classmethod
    def build(cls, objects: Iterable[AppliedObject]) -> MadeIndex:
        index = cls()
        for o in objects:
            index.add(o)
        return index

    def labels_of(self, target: str, namespace: str) -> dict[str, str] | None:
        """The labels of the Namespace object the cluster applies (None: it applies none)."""
        return self._labels.get((target, namespace))

    def find(self, kind: str, namespace: str, name: str, target: str = "") -> list[Made]:
        """What makes ``kind`` ``namespace``/``name`` in cluster ``target``. A namespace the
        cluster applies no Namespace object for has only its name label."""
        labels = self._labels.get((target, namespace))
        return [m for m in self._by_name.get((target, kind, name), ()) if m.namespaces.contains(namespace, labels)]
