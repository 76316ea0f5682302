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
from fluxgraph.model import Location, Problem, as_dict, as_list, as_str

KUSTOMIZE_GROUP = "kustomize.toolkit.fluxcd.io"
HELM_GROUP = "helm.toolkit.fluxcd.io"
SOURCE_GROUP = "source.toolkit.fluxcd.io"
SOURCE_EXT_GROUP = "source.extensions.fluxcd.io"
SOURCE_KINDS = frozenset({"GitRepository", "OCIRepository", "HelmRepository", "Bucket", "HelmChart", "ExternalArtifact"})
KNOWN_KUSTOMIZE_VERSIONS = frozenset({"v1", "v1beta2", "v1beta1"})

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

    @property
    def id(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def effective_timeout(self) -> float:
        """``GetTimeout``: spec.timeout, else interval - 30s, never below 30s."""
        if self.timeout is not None:
            return self.timeout
        interval = self.interval if self.interval is not None else 600.0
        return max(interval - 30.0, 30.0)


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

    @property
    def id(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def effective_timeout(self) -> float:
        return self.timeout if self.timeout is not None else 300.0


def _problem(res: Resource, path: tuple[Any, ...], msg: str, code: str = "invalid-field") -> Problem:
    return Problem(code, msg, res.position(path))


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


def parse_kustomization(res: Resource, problems: list[Problem], *, default_namespace: str = "") -> FluxKustomization | None:
    md = res.metadata
    name = md.get("name")
    if not isinstance(name, str) or not name:
        problems.append(_problem(res, ("metadata",), "Flux Kustomization without metadata.name", "invalid-object"))
        return None
    ns = res.namespace or default_namespace
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
    if isinstance(sref, dict) and isinstance(sref.get("name"), str):
        kind = as_str(sref.get("kind")) or "GitRepository"
        sns = as_str(sref.get("namespace")) or ns
        source_ref = SourceRef(kind, sref["name"], sns)
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
    hc = spec.get("healthChecks")
    comps = spec.get("components")
    common = spec.get("commonMetadata")
    dec = spec.get("decryption")
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
        health_checks=tuple(x for x in hc if isinstance(x, dict)) if isinstance(hc, list) else (),
        patches=tuple(as_list(spec.get("patches"))),
        images=tuple(as_list(spec.get("images"))),
        components=tuple(c for c in comps if isinstance(c, str)) if isinstance(comps, list) else (),
        name_prefix=_str_field(res, spec, "namePrefix", problems) or "",
        name_suffix=_str_field(res, spec, "nameSuffix", problems) or "",
        common_metadata=common if isinstance(common, dict) else None,
        decryption=dec if isinstance(dec, dict) else None,
        service_account=_str_field(res, spec, "serviceAccountName", problems) or None,
        location=res.origin.location,
        spec=spec,
    )


def _scalar_str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return str(v)


def _int(v: Any, default: int) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def parse_helmrelease(res: Resource, problems: list[Problem]) -> FluxHelmRelease | None:
    name = res.name
    if not name:
        return None
    ns = res.namespace
    spec = res.data.get("spec")
    if not isinstance(spec, dict):
        problems.append(_problem(res, ("spec",), f"HelmRelease {ns}/{name} has no spec mapping", "invalid-object"))
        spec = {}
    chart_source = None
    chart_name = chart_version = None
    chart = spec.get("chart")
    if isinstance(chart, dict) and isinstance(chart.get("spec"), dict):
        cs = chart["spec"]
        chart_name = cs.get("chart") if isinstance(cs.get("chart"), str) else None
        chart_version = str(cs.get("version")) if cs.get("version") is not None else None
        sr = cs.get("sourceRef")
        if isinstance(sr, dict) and isinstance(sr.get("name"), str):
            chart_source = SourceRef(
                str(sr.get("kind") or "HelmRepository"),
                sr["name"],
                as_str(sr.get("namespace")) or ns,
            )
    cr = spec.get("chartRef")
    if isinstance(cr, dict) and isinstance(cr.get("name"), str):
        chart_source = SourceRef(
            str(cr.get("kind") or "OCIRepository"),
            cr["name"],
            as_str(cr.get("namespace")) or ns,
        )
    vf: list[tuple[str, str, bool]] = []
    for e in spec.get("valuesFrom") or [] if isinstance(spec.get("valuesFrom"), list) else []:
        if isinstance(e, dict) and isinstance(e.get("name"), str):
            vf.append((str(e.get("kind") or "ConfigMap"), e["name"], bool(e.get("optional", False))))
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
    )
