"""Flux objects as frozen dataclasses, parsed from (built, substituted) resource data.

``parse_kustomization`` and friends never raise: a field of the wrong type becomes a
``Problem`` located at that field, and the field takes the value Flux's defaulting would give
(or the object is skipped where Flux would reject it outright).

Defaults follow kustomize-controller ``api/v1/kustomization_types.go`` (``GetTimeout``: timeout,
else interval minus 30s with a 30s floor; ``GetRetryInterval``: interval) and helm-controller
``api/v2/helmrelease_types.go`` (``GetTimeout``: 5m).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fluxgraph.kustomize.resource import Resource
from fluxgraph.model import Location, Problem, as_dict, as_str

KUSTOMIZE_GROUP = "kustomize.toolkit.fluxcd.io"
HELM_GROUP = "helm.toolkit.fluxcd.io"
SOURCE_GROUP = "source.toolkit.fluxcd.io"
SOURCE_EXT_GROUP = "source.extensions.fluxcd.io"
SOURCE_KINDS = frozenset({"GitRepository", "OCIRepository", "HelmRepository", "Bucket", "HelmChart", "ExternalArtifact"})
KNOWN_KUSTOMIZE_VERSIONS = frozenset({"v1", "v1beta2", "v1beta1"})
KUSTOMIZATION_SOURCE_KINDS = frozenset({"GitRepository", "OCIRepository", "Bucket", "ExternalArtifact"})

_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: Any) -> float | None:
    """Go ``time.ParseDuration`` for the forms Kubernetes accepts; None when invalid."""
    if not isinstance(text, str) or not text:
        return None
    s = text.strip()
    sign = 1.0
    if s[0] in "+-":
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    pos = 0
    total = 0.0
    for m in _DURATION_RE.finditer(s):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
    if pos != len(s) or pos == 0:
        return None
    return sign * total


def format_duration(seconds: float) -> str:
    s = int(seconds)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    out = ""
    if h:
        out += f"{h}h"
    if m:
        out += f"{m}m"
    if sec or not out:
        out += f"{sec}s"
    return out


@dataclass(frozen=True, order=True)
class NamedRef:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class SourceRef:
    kind: str
    name: str
    namespace: str

    @property
    def id(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"


@dataclass(frozen=True)
class SubstituteFrom:
    kind: str
    name: str
    optional: bool = False


@dataclass(frozen=True)
class PostBuild:
    substitute: tuple[tuple[str, str], ...] = ()
    substitute_from: tuple[SubstituteFrom, ...] = ()
    strategy: str = "WithVariables"  # or "Always" (KC v1.9 substituteStrategy)


@dataclass(frozen=True)
class FluxKustomization:
    namespace: str
    name: str
    api_version: str
    path: str  # spec.path as written (after substitution by the parent)
    source_ref: SourceRef | None
    depends_on: tuple[NamedRef, ...]
    prune: bool
    wait: bool
    interval: float | None
    timeout: float | None  # explicit spec.timeout
    retry_interval: float | None
    target_namespace: str | None
    post_build: PostBuild | None
    suspend: bool
    deletion_policy: str
    health_checks: tuple[dict[str, Any], ...]
    patches: tuple[Any, ...]
    images: tuple[Any, ...]
    components: tuple[str, ...]
    name_prefix: str
    name_suffix: str
    common_metadata: dict[str, Any] | None
    decryption: dict[str, Any] | None
    service_account: str | None
    location: Location
    spec: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)
    # spec.kubeConfig: the other cluster the objects are applied to (``kube_config_target``)
    kube_config: str | None = None
    # spec.ignoreMissingComponents (Flux 2.7): components whose path does not exist are left out
    ignore_missing_components: bool = False

    @property
    def id(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def effective_retry_interval(self) -> float:
        """``GetRetryInterval``: spec.retryInterval, else the interval (default 10m): how soon
        kustomize-controller tries again after a failed reconcile."""
        if self.retry_interval is not None:
            return self.retry_interval
        return self.interval if self.interval is not None else 600.0

    @property
    def effective_timeout(self) -> float:
        """``GetTimeout``: spec.timeout, else interval - 30s, never below 30s."""
        if self.timeout is not None:
            return self.timeout
        interval = self.interval if self.interval is not None else 600.0
        return max(interval - 30.0, 30.0)

    def flags(self, *, suspend: bool = True) -> list[str]:
        """The one short wording of the spec's switches, for the text tree and the diagrams:
        ``prune``/``no-prune``, ``wait``, ``suspended`` (left out with ``suspend=False``, where
        the caller shows it otherwise), ``postBuild``, ``ns=<targetNamespace>``."""
        out = ["prune" if self.prune else "no-prune"]
        if self.wait:
            out.append("wait")
        if self.suspend and suspend:
            out.append("suspended")
        if self.post_build is not None:
            out.append("postBuild")
        if self.target_namespace:
            out.append(f"ns={self.target_namespace}")
        return out


@dataclass(frozen=True)
class FluxHelmRelease:
    namespace: str
    name: str
    api_version: str
    depends_on: tuple[NamedRef, ...]
    chart_source: SourceRef | None
    chart_name: str | None
    chart_version: str | None
    timeout: float | None
    install_retries: int
    upgrade_retries: int
    values_from: tuple[tuple[str, str, bool], ...]  # (kind, name, optional)
    suspend: bool
    target_namespace: str | None
    location: Location
    # spec.kubeConfig: the other cluster the release is installed in (``kube_config_target``)
    kube_config: str | None = None
    service_account: str | None = None

    @property
    def id(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def effective_timeout(self) -> float:
        return self.timeout if self.timeout is not None else 300.0


def _problem(res: Resource, path: tuple[Any, ...], msg: str, code: str = "invalid-field") -> Problem:
    """A problem with the field at ``path`` of the Flux object ``res``: its subject is the
    object and the field."""
    return Problem(code, msg, res.position(path), subject=f"{res.kind}/{res.namespace}/{res.name}:{'.'.join(map(str, path))}")


def _str_field(res: Resource, spec: dict[str, Any], key: str, problems: list[Problem], default: str | None = None) -> str | None:
    v = spec.get(key, default)
    if v is None or isinstance(v, str):
        return v
    problems.append(_problem(res, ("spec", key), f"spec.{key} of {res.kind} {res.namespace}/{res.name} must be a string, not {type(v).__name__}"))
    return default


def _bool_field(res: Resource, spec: dict[str, Any], key: str, problems: list[Problem], default: bool) -> bool:
    v = spec.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    problems.append(
        _problem(res, ("spec", key), f"spec.{key} of {res.kind} {res.namespace}/{res.name} must be true or false, not {v!r}")
    )
    return default


def _duration_field(res: Resource, spec: dict[str, Any], key: str, problems: list[Problem]) -> float | None:
    v = spec.get(key)
    if v is None:
        return None
    d = parse_duration(v)
    if d is None:
        problems.append(
            _problem(res, ("spec", key), f"spec.{key} of {res.kind} {res.namespace}/{res.name} is not a duration: {v!r}")
        )
    return d


def _depends_on(res: Resource, spec: dict[str, Any], problems: list[Problem]) -> tuple[NamedRef, ...]:
    raw = spec.get("dependsOn")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.append(_problem(res, ("spec", "dependsOn"), f"spec.dependsOn of {res.kind} {res.namespace}/{res.name} must be a list"))
        return ()
    out = []
    for i, d in enumerate(raw):
        if not isinstance(d, dict) or not isinstance(d.get("name"), str) or not d.get("name"):
            problems.append(_problem(res, ("spec", "dependsOn", i), f"spec.dependsOn[{i}] of {res.kind} {res.namespace}/{res.name} needs a name"))
            continue
        ns = as_str(d.get("namespace")) or res.namespace
        out.append(NamedRef(ns, d["name"]))
    return tuple(out)


def _identity(res: Resource, problems: list[Problem], default_namespace: str) -> tuple[str, str] | None:
    """(namespace, name) of a Flux object; None (with a problem) where the API server would
    refuse the object outright: no metadata mapping, no string name, a namespace that is not a
    string."""
    raw_md = res.data.get("metadata")
    if not isinstance(raw_md, dict):
        what = "no metadata" if raw_md is None else f"metadata that is a {type(raw_md).__name__}, not a mapping"
        problems.append(_problem(res, ("metadata",), f"{res.kind} with {what}", "invalid-object"))
        return None
    name = raw_md.get("name")
    if not isinstance(name, str) or not name:
        msg = f"{res.kind} without metadata.name" if name is None or name == "" else f"metadata.name of {res.kind} must be a string, not {type(name).__name__}"
        problems.append(_problem(res, ("metadata", "name") if "name" in raw_md else ("metadata",), msg, "invalid-object"))
        return None
    ns = raw_md.get("namespace")
    if ns is not None and not isinstance(ns, str):
        problems.append(
            _problem(res, ("metadata", "namespace"), f"metadata.namespace of {res.kind} {name} must be a string, not {type(ns).__name__}", "invalid-object")
        )
        return None
    return ns or default_namespace, name


def _list_field(res: Resource, spec: dict[str, Any], key: str, problems: list[Problem], item: type, what: str) -> tuple[Any, ...]:
    """The entries of a list field that have the type the CRD requires; a problem for the field
    when it is not a list, and for each entry of the wrong type."""
    raw = spec.get(key)
    if raw is None:
        return ()
    who = f"{res.kind} {res.namespace}/{res.name}"
    if not isinstance(raw, list):
        problems.append(_problem(res, ("spec", key), f"spec.{key} of {who} must be a list, not {type(raw).__name__}"))
        return ()
    out = []
    for i, x in enumerate(raw):
        if isinstance(x, item):
            out.append(x)
        else:
            problems.append(_problem(res, ("spec", key, i), f"spec.{key}[{i}] of {who} must be {what}, not {type(x).__name__}"))
    return tuple(out)


def _map_field(res: Resource, spec: dict[str, Any], key: str, problems: list[Problem]) -> dict[str, Any] | None:
    raw = spec.get(key)
    if raw is None or isinstance(raw, dict):
        return raw
    problems.append(_problem(res, ("spec", key), f"spec.{key} of {res.kind} {res.namespace}/{res.name} must be a mapping, not {type(raw).__name__}"))
    return None


def _patches(res: Resource, spec: dict[str, Any], problems: list[Problem]) -> tuple[Any, ...]:
    """``spec.patches``: mappings with a string ``patch`` and an optional mapping ``target``."""
    out = []
    for i, p in enumerate(_list_field(res, spec, "patches", problems, dict, "a mapping with patch and target")):
        if not isinstance(p.get("patch"), str):
            problems.append(_problem(res, ("spec", "patches", i), f"spec.patches[{i}] of Kustomization {res.namespace}/{res.name} needs a patch string"))
            continue
        if p.get("target") is not None and not isinstance(p.get("target"), dict):
            problems.append(_problem(res, ("spec", "patches", i, "target"), f"spec.patches[{i}].target of Kustomization {res.namespace}/{res.name} must be a mapping"))
            continue
        out.append(p)
    return tuple(out)


def parse_kustomization(res: Resource, problems: list[Problem], *, default_namespace: str = "") -> FluxKustomization | None:
    ident = _identity(res, problems, default_namespace)
    if ident is None:
        return None
    ns, name = ident
    version = res.api_version.rsplit("/", 1)[-1]
    if version not in KNOWN_KUSTOMIZE_VERSIONS:
        problems.append(
            _problem(res, ("apiVersion",), f"Kustomization {ns}/{name} uses unknown API version {res.api_version}", "unknown-api-version")
        )
    spec = res.data.get("spec")
    if not isinstance(spec, dict):
        problems.append(_problem(res, ("spec",), f"Kustomization {ns}/{name} has no spec mapping", "invalid-object"))
        spec = {}
    path = spec.get("path", "")
    if path is None:
        path = ""
    if not isinstance(path, str):
        problems.append(_problem(res, ("spec", "path"), f"spec.path of Kustomization {ns}/{name} must be a string, not {type(path).__name__}"))
        path = ""
    sref = spec.get("sourceRef")
    source_ref: SourceRef | None = None
    if isinstance(sref, dict) and isinstance(sref.get("name"), str) and sref["name"]:
        kind = sref.get("kind") if sref.get("kind") is not None else "GitRepository"
        sns = sref.get("namespace") if sref.get("namespace") is not None else ns
        if kind not in KUSTOMIZATION_SOURCE_KINDS:
            problems.append(
                _problem(
                    res,
                    ("spec", "sourceRef", "kind"),
                    f"spec.sourceRef.kind of Kustomization {ns}/{name} must be one of {', '.join(sorted(KUSTOMIZATION_SOURCE_KINDS))}, not {kind!r}",
                )
            )
        elif not isinstance(sns, str):
            problems.append(
                _problem(res, ("spec", "sourceRef", "namespace"), f"spec.sourceRef.namespace of Kustomization {ns}/{name} must be a string, not {type(sns).__name__}")
            )
        else:
            source_ref = SourceRef(kind, sref["name"], sns or ns)
    else:
        problems.append(_problem(res, ("spec", "sourceRef"), f"Kustomization {ns}/{name} has no valid spec.sourceRef", "invalid-field"))
    pb = spec.get("postBuild")
    post_build: PostBuild | None = None
    if pb is not None:
        if not isinstance(pb, dict):
            problems.append(_problem(res, ("spec", "postBuild"), f"spec.postBuild of Kustomization {ns}/{name} must be a mapping"))
            post_build = PostBuild()
        else:
            subst: list[tuple[str, str]] = []
            raw_sub = pb.get("substitute")
            if isinstance(raw_sub, dict):
                for k, v in raw_sub.items():
                    if not isinstance(v, str):
                        # map[string]string in the CRD: the API server refuses `N: 3` and `N:`
                        problems.append(
                            _problem(
                                res,
                                ("spec", "postBuild", "substitute", str(k)),
                                f"postBuild.substitute.{k} of Kustomization {ns}/{name} must be a string, not {'null' if v is None else type(v).__name__}",
                            )
                        )
                        if isinstance(v, (dict, list)):
                            continue
                    subst.append((str(k), _scalar_str(v)))
            elif raw_sub is not None:
                problems.append(_problem(res, ("spec", "postBuild", "substitute"), "postBuild.substitute must be a mapping of strings"))
            sfrom: list[SubstituteFrom] = []
            raw_from = pb.get("substituteFrom")
            if isinstance(raw_from, list):
                for i, e in enumerate(raw_from):
                    if isinstance(e, dict) and isinstance(e.get("name"), str):
                        kind = as_str(e.get("kind"))
                        if kind not in ("ConfigMap", "Secret"):
                            problems.append(
                                _problem(res, ("spec", "postBuild", "substituteFrom", i), f"substituteFrom[{i}].kind must be ConfigMap or Secret")
                            )
                            continue
                        sfrom.append(SubstituteFrom(kind, e["name"], bool(e.get("optional", False))))
                    else:
                        problems.append(_problem(res, ("spec", "postBuild", "substituteFrom", i), f"substituteFrom[{i}] needs kind and name"))
            elif raw_from is not None:
                problems.append(_problem(res, ("spec", "postBuild", "substituteFrom"), "postBuild.substituteFrom must be a list"))
            strategy = "Always" if pb.get("substituteStrategy") == "Always" else "WithVariables"
            post_build = PostBuild(tuple(subst), tuple(sfrom), strategy)
    health_checks = _list_field(res, spec, "healthChecks", problems, dict, "a mapping")
    patches = _patches(res, spec, problems)
    images = _list_field(res, spec, "images", problems, dict, "a mapping")
    components = _list_field(res, spec, "components", problems, str, "a string")
    common = _map_field(res, spec, "commonMetadata", problems)
    dec = _map_field(res, spec, "decryption", problems)
    return FluxKustomization(
        namespace=ns,
        name=name,
        api_version=res.api_version,
        path=path,
        source_ref=source_ref,
        depends_on=_depends_on(res, spec, problems),
        prune=_bool_field(res, spec, "prune", problems, False),
        wait=_bool_field(res, spec, "wait", problems, False),
        interval=_duration_field(res, spec, "interval", problems),
        timeout=_duration_field(res, spec, "timeout", problems),
        retry_interval=_duration_field(res, spec, "retryInterval", problems),
        target_namespace=_str_field(res, spec, "targetNamespace", problems) or None,
        post_build=post_build,
        suspend=_bool_field(res, spec, "suspend", problems, False),
        deletion_policy=_str_field(res, spec, "deletionPolicy", problems) or "MirrorPrune",
        health_checks=health_checks,
        patches=patches,
        images=images,
        components=components,
        ignore_missing_components=_bool_field(res, spec, "ignoreMissingComponents", problems, False),
        name_prefix=_str_field(res, spec, "namePrefix", problems) or "",
        name_suffix=_str_field(res, spec, "nameSuffix", problems) or "",
        common_metadata=common,
        decryption=dec,
        service_account=_str_field(res, spec, "serviceAccountName", problems) or None,
        location=res.origin.location,
        spec=spec,
        kube_config=kube_config_target(res, spec, ns, "Kustomization", problems),
    )


def kube_config_target(res: Resource, spec: dict[str, Any], ns: str, what: str, problems: list[Problem]) -> str | None:
    """The cluster ``spec.kubeConfig`` applies to, as an identity: ``Secret/<ns>/<name>`` (with
    ``#<key>`` unless the key is the default ``value``), ``ConfigMap/<ns>/<name>``, or for a
    cloud provider ``<provider>:<cluster>`` (and ``@<address>``). None without a kubeConfig.

    fluxcd/pkg ``apis/meta`` ``KubeConfigReference``: ``secretRef`` (name, key; key defaults to
    ``value``) for the generic provider, ``configMapRef``, or ``provider`` (aws, azure, gcp) with
    ``cluster`` and ``address``. The referenced object is read in the object's own namespace.
    kustomize-controller builds the apply client from it (``runtimeClient.WithKubeConfig`` in
    ``reconcile()``); postBuild ``substituteFrom`` still reads the controller's own cluster
    (``SubstituteVariables(ctx, r.Client, ...)``)."""
    kc = spec.get("kubeConfig")
    if kc is None:
        return None
    if not isinstance(kc, dict):
        problems.append(_problem(res, ("spec", "kubeConfig"), f"spec.kubeConfig of {what} {ns}/{as_str(as_dict(res.data.get('metadata')).get('name'))} must be a mapping"))
        return None
    provider = as_str(kc.get("provider")) or "generic"
    sref, cref = as_dict(kc.get("secretRef")), as_dict(kc.get("configMapRef"))
    if isinstance(sref.get("name"), str) and sref["name"]:
        key = as_str(sref.get("key"))
        return f"Secret/{ns}/{sref['name']}" + (f"#{key}" if key and key != "value" else "")
    if isinstance(cref.get("name"), str) and cref["name"]:
        return f"ConfigMap/{ns}/{cref['name']}"
    if provider != "generic" and as_str(kc.get("cluster")):
        address = as_str(kc.get("address"))
        return f"{provider}:{kc['cluster']}" + (f"@{address}" if address else "")
    problems.append(
        _problem(
            res,
            ("spec", "kubeConfig"),
            f"spec.kubeConfig of {what} {ns}/{as_str(as_dict(res.data.get('metadata')).get('name'))} names no secretRef, "
            "configMapRef or provider cluster",
        )
    )
    return None


def _scalar_str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return str(v)


def _int(v: Any, default: int) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _ref(res: Resource, raw: Any, path: tuple[Any, ...], default_kind: str, ns: str, problems: list[Problem]) -> SourceRef | None:
    """A cross-object reference (``chart.spec.sourceRef``, ``chartRef``): a mapping with a string
    ``name`` and optional string ``kind``/``namespace``."""
    field_name = ".".join(str(p) for p in path)
    who = f"{res.kind} {ns}/{res.name}"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        problems.append(_problem(res, path, f"{field_name} of {who} must be a mapping with a name"))
        return None
    kind, rns = raw.get("kind", default_kind), raw.get("namespace")
    for key, v in (("kind", kind), ("namespace", rns)):
        if v is not None and not isinstance(v, str):
            problems.append(_problem(res, (*path, key), f"{field_name}.{key} of {who} must be a string, not {type(v).__name__}"))
            return None
    return SourceRef(kind or default_kind, raw["name"], rns or ns)


def parse_helmrelease(res: Resource, problems: list[Problem]) -> FluxHelmRelease | None:
    ident = _identity(res, problems, "")
    if ident is None:
        return None
    ns, name = ident
    spec = res.data.get("spec")
    if not isinstance(spec, dict):
        problems.append(_problem(res, ("spec",), f"HelmRelease {ns}/{name} has no spec mapping", "invalid-object"))
        spec = {}
    chart_source = None
    chart_name = chart_version = None
    chart = spec.get("chart")
    if chart is not None:
        cs = chart.get("spec") if isinstance(chart, dict) else None
        if not isinstance(cs, dict):
            problems.append(_problem(res, ("spec", "chart"), f"spec.chart of HelmRelease {ns}/{name} must be a mapping with a spec mapping"))
        else:
            if isinstance(cs.get("chart"), str):
                chart_name = cs["chart"]
            else:
                problems.append(_problem(res, ("spec", "chart", "spec", "chart"), f"spec.chart.spec.chart of HelmRelease {ns}/{name} must be a string"))
            chart_version = _scalar_str(cs.get("version")) if isinstance(cs.get("version"), (str, int, float)) else None
            chart_source = _ref(res, cs.get("sourceRef"), ("spec", "chart", "spec", "sourceRef"), "HelmRepository", ns, problems)
    cr = spec.get("chartRef")
    if cr is not None:
        chart_source = _ref(res, cr, ("spec", "chartRef"), "OCIRepository", ns, problems) or chart_source
    vf: list[tuple[str, str, bool]] = []
    for i, e in enumerate(_list_field(res, spec, "valuesFrom", problems, dict, "a mapping")):
        if isinstance(e.get("name"), str) and isinstance(e.get("kind", "ConfigMap"), str):
            vf.append((e.get("kind") or "ConfigMap", e["name"], bool(e.get("optional", False))))
        else:
            problems.append(_problem(res, ("spec", "valuesFrom", i), f"spec.valuesFrom[{i}] of HelmRelease {ns}/{name} needs a string kind and name"))
    install = as_dict(spec.get("install"))
    upgrade = as_dict(spec.get("upgrade"))
    irem = as_dict(install.get("remediation"))
    urem = as_dict(upgrade.get("remediation"))
    return FluxHelmRelease(
        namespace=ns,
        name=name,
        api_version=res.api_version,
        depends_on=_depends_on(res, spec, problems),
        chart_source=chart_source,
        chart_name=chart_name,
        chart_version=chart_version,
        timeout=_duration_field(res, spec, "timeout", problems),
        install_retries=_int(irem.get("retries"), 0),
        upgrade_retries=_int(urem.get("retries"), 0),
        values_from=tuple(vf),
        suspend=_bool_field(res, spec, "suspend", problems, False),
        target_namespace=_str_field(res, spec, "targetNamespace", problems) or None,
        location=res.origin.location,
        kube_config=kube_config_target(res, spec, ns, "HelmRelease", problems),
        service_account=_str_field(res, spec, "serviceAccountName", problems) or None,
    )
