"""Which Helm charts install the CustomResourceDefinitions of which API groups.

A chart's CRDs are not in the repository (they come with the chart, fetched by source-controller
at run time), so ``chart-crd-not-awaited`` matches a custom resource's API group to the chart a
HelmRelease installs through this small table, each entry with the chart file that installs the
CRDs. A chart is found by its name: ``spec.chart.spec.chart`` (the last path segment for a chart
in a Git repository or bucket), or the last path segment of the OCIRepository URL that
``spec.chartRef`` names. Where no entry names the group, a chart whose name (less an
``-operator``, ``-crds`` or ``-controller`` suffix) is one of the group's DNS labels is taken as
its installer, and the finding says it is a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fluxgraph.cluster import ClusterModel, HelmReleaseNode
from fluxgraph.model import Location, as_dict

if TYPE_CHECKING:
    from fluxgraph.api import Repository


@dataclass(frozen=True)
class ChartCRDs:
    charts: tuple[str, ...]
    groups: tuple[str, ...]
    source: str
    # values that turn the chart's CRDs on or off: (path, default); the chart installs the CRDs
    # when any of them is true (a value the HelmRelease does not set inline takes its default)
    gates: tuple[tuple[tuple[str, ...], bool], ...] = ()


CHART_CRDS: tuple[ChartCRDs, ...] = (
    ChartCRDs(
        ("cert-manager",),
        ("cert-manager.io", "acme.cert-manager.io"),
        "cert-manager deploy/charts/cert-manager/templates/crd-*.yaml, rendered only "
        "`if or .Values.crds.enabled .Values.installCRDs` (both false by default)",
        ((("crds", "enabled"), False), (("installCRDs",), False)),
    ),
    ChartCRDs(
        ("external-secrets",),
        ("external-secrets.io", "generators.external-secrets.io"),
        "external-secrets deploy/charts/external-secrets/templates/crds/*.yaml, rendered "
        "`if .Values.installCRDs` (true by default)",
        ((("installCRDs",), True),),
    ),
    ChartCRDs(
        ("kube-prometheus-stack",),
        ("monitoring.coreos.com",),
        "prometheus-community/helm-charts charts/kube-prometheus-stack: the `crds` subchart "
        "(condition `crds.enabled`, true by default)",
        ((("crds", "enabled"), True),),
    ),
    ChartCRDs(
        ("prometheus-operator-crds",),
        ("monitoring.coreos.com",),
        "prometheus-community/helm-charts charts/prometheus-operator-crds: the chart is the CRDs",
    ),
    ChartCRDs(
        ("rook-ceph",),
        ("ceph.rook.io", "objectbucket.io"),
        "rook deploy/charts/rook-ceph/templates/resources.yaml, rendered `if .Values.crds.enabled` "
        "(true by default)",
        ((("crds", "enabled"), True),),
    ),
    ChartCRDs(
        ("cloudnative-pg",),
        ("postgresql.cnpg.io",),
        "cloudnative-pg/charts charts/cloudnative-pg/templates/crds/crds.yaml, rendered "
        "`if .Values.crds.create` (true by default)",
        ((("crds", "create"), True),),
    ),
    ChartCRDs(
        ("traefik",),
        ("traefik.io", "traefik.containo.us", "hub.traefik.io"),
        "traefik/traefik-helm-chart traefik/crds/",
    ),
    ChartCRDs(
        ("gateway-helm",),
        ("gateway.envoyproxy.io",),
        "envoyproxy/gateway charts/gateway-helm/crds/generated/",
    ),
    ChartCRDs(
        ("grafana-operator",),
        ("grafana.integreatly.org",),
        "grafana/grafana-operator deploy/helm/grafana-operator/crds/",
    ),
    ChartCRDs(
        ("longhorn",),
        ("longhorn.io",),
        "longhorn/charts charts/longhorn/templates/crds.yaml",
    ),
    ChartCRDs(
        ("kyverno",),
        ("kyverno.io", "reports.kyverno.io", "wgpolicyk8s.io", "policies.kyverno.io"),
        "kyverno/kyverno charts/kyverno: the `crds` subchart (condition `crds.install`, true by default)",
        ((("crds", "install"), True),),
    ),
    ChartCRDs(
        ("metallb",),
        ("metallb.io",),
        "metallb/metallb charts/metallb: the `crds` subchart (condition `crds.enabled`, true by default)",
        ((("crds", "enabled"), True),),
    ),
    ChartCRDs(
        ("keda",),
        ("keda.sh", "eventing.keda.sh"),
        "kedacore/charts keda/templates/crds/ (rendered `if .Values.crds.install`, true by default)",
        ((("crds", "install"), True),),
    ),
    ChartCRDs(
        ("cilium",),
        ("cilium.io",),
        "cilium: the CRDs are registered by cilium-operator when it starts (the chart renders none); "
        "the HelmRelease is Ready once the operator runs",
    ),
)

_BY_GROUP: dict[str, ChartCRDs] = {g: e for e in CHART_CRDS for g in e.groups}
_SUFFIX = re.compile(r"-(operator|crds|controller)$")
# DNS labels too common to say anything about a chart
_COMMON_LABELS = frozenset(
    {"io", "com", "dev", "org", "net", "sh", "app", "apps", "k8s", "x-k8s", "kubernetes", "cloud", "github"}
)


def chart_name(cluster: ClusterModel, hr: HelmReleaseNode) -> str | None:
    name = hr.spec.chart_name
    if isinstance(name, str) and name:
        return name.rstrip("/").rsplit("/", 1)[-1] or None
    src = cluster.sources.get(hr.spec.chart_source.id) if hr.spec.chart_source is not None else None
    if src is not None and src.kind == "OCIRepository" and src.url:
        last = src.url.rstrip("/").rsplit("/", 1)[-1]
        return last or None
    return None


def _value(values: dict[str, Any], path: tuple[str, ...]) -> Any:
    cur: Any = values
    for p in path:
        if not isinstance(cur, dict) or p not in cur:
            return None
        cur = cur[p]
    return cur


@dataclass(frozen=True)
class Provider:
    hr: HelmReleaseNode
    chart: str
    guess: bool
    source: str


@dataclass(frozen=True)
class Release:
    """A HelmRelease with what ``provides`` reads of it, computed once."""

    hr: HelmReleaseNode
    chart: str | None
    stem: str


def releases(cluster: ClusterModel) -> list[Release]:
    out = []
    for hr in sorted(cluster.helm_releases.values(), key=lambda h: h.id):
        name = chart_name(cluster, hr)
        out.append(Release(hr, name, _SUFFIX.sub("", name) if name else ""))
    return out


def provides(rel: Release, group: str) -> Provider | None:
    """Whether the HelmRelease of ``rel`` installs the CRDs of API ``group`` (see the module doc).

    Not a provider: a suspended release; ``install.crds: Skip`` (for a chart whose CRDs are in
    its ``crds/`` directory helm then installs none; fluxgraph does not know which charts render
    them as templates instead, and stays silent); a chart whose CRD values are off, or not known
    to be on (a value that may come from ``valuesFrom``)."""
    hr, name = rel.hr, rel.chart
    if hr.spec.suspend or name is None:
        return None
    spec = as_dict(hr.obj.data.get("spec"))
    if as_dict(spec.get("install")).get("crds") == "Skip":
        return None
    entry = _BY_GROUP.get(group)
    if entry is not None:
        if name not in entry.charts:
            return None
        if entry.gates:
            values = as_dict(spec.get("values"))
            has_values_from = bool(spec.get("valuesFrom"))
            on = False
            for path, default in entry.gates:
                v = _value(values, path)
                if v is None:
                    if has_values_from:
                        return None  # the value may come from a ConfigMap or Secret: not known
                    v = default
                on = on or v is True
            if not on:
                return None
        return Provider(hr, name, False, entry.source)
    stem = rel.stem
    labels = [lbl for lbl in group.split(".") if lbl not in _COMMON_LABELS]
    if stem and any(lbl == stem or (lbl.startswith(stem) and len(stem) >= 5) for lbl in labels):
        return Provider(hr, name, True, f"a guess from the chart's name {name!r} and the API group {group}")
    return None


def crds_turned_off(cluster: ClusterModel, hr: HelmReleaseNode) -> str | None:
    """The table's reason why the chart of ``hr`` renders no CRD with the values the release
    declares inline, if it renders none: every value that turns the chart's CRDs on is false
    (or left at a false default). None when the chart is not in the table, has no such value,
    or takes values from ``valuesFrom`` (not known)."""
    name = chart_name(cluster, hr)
    spec = as_dict(hr.obj.data.get("spec"))
    if name is None or spec.get("valuesFrom"):
        return None
    values = as_dict(spec.get("values"))
    for entry in CHART_CRDS:
        if name not in entry.charts or not entry.gates:
            continue
        off = []
        for path, default in entry.gates:
            v = _value(values, path)
            if (default if v is None else v) is not False:
                return None
            off.append(".".join(path) + (": false" if v is False else " (false by default)"))
        return f"its values turn the chart's CRDs off ({', '.join(off)}; {entry.source})"
    return None


# -- charts installed outside Flux ----------------------------------------------------------------


# The charts of a cluster's network plugin (CNI): Flux's own controllers need pod networking to
# start, so the bootstrap installs the plugin before Flux runs (Talos ``cniConfig: none``, k3s
# ``--flannel-backend=none``, a kustomize --enable-helm step) and the HelmRelease only adopts it;
# its CRDs exist before Flux's first reconcile (the operator registers them at start-up).
NETWORK_PLUGIN_CHARTS = frozenset({"cilium", "tigera-operator", "calico", "canal", "flannel", "antrea", "kube-ovn", "kube-router"})


@dataclass(frozen=True)
class OutOfBand:
    location: Location | None
    how: str


def installed_out_of_band(repo: Repository, p: Provider) -> OutOfBand | None:
    """How ``p``'s release or chart is installed before Flux, if it is: a helmfile of the
    repository (``Repository.helmfile_releases``), a kustomize ``helmCharts`` bootstrap Flux does
    not build (``Repository.bootstrap_charts``), or the chart is the cluster's network plugin."""
    spec = as_dict(p.hr.obj.data.get("spec"))
    candidates = [p.hr.spec.name, p.chart]
    rn = spec.get("releaseName")
    if isinstance(rn, str) and rn:
        candidates.append(rn)
    for names, how in ((repo.helmfile_releases, "a helmfile of this repository installs that release or chart outside Flux"),
                       (repo.bootstrap_charts, "a kustomize helmCharts bootstrap of this repository, which Flux does not build, renders that chart")):
        for c in candidates:
            if c in names:
                return OutOfBand(names[c], how)
    if p.chart in NETWORK_PLUGIN_CHARTS:
        return OutOfBand(None, f"chart {p.chart} is the cluster's network plugin, which must run before Flux's controllers can, so the bootstrap installs it first")
    return None
