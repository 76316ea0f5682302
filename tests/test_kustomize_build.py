"""The static kustomize build, feature by feature, on fixtures/repos/features/kustomize/.

Each feature directory is built by fluxgraph and, where kubectl is installed, by
``kubectl kustomize --load-restrictor LoadRestrictionsNone`` (kustomize v5.5, the reference):
identities and whole objects must be equal. The assertions that need no kubectl pin the exact
identities and the fields each feature is about. ``helmCharts`` and remote resources cannot be
built offline: they must be reported as not evaluated, and never fetched.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import fluxgraph
from fluxgraph.api import _ignore_matcher
from fluxgraph.filecache import FileCache
from fluxgraph.kustomize.build import Builder, BuildResult
from fluxgraph.repofs import RepoFS
from fluxgraph.yamlio import load_text

from . import corpus_fidelity
from .conftest import FIXTURES

FEATURES = FIXTURES / "repos" / "features"
OPERATOR = FIXTURES / "repos" / "features-operator"
KUBECTL = shutil.which("kubectl")
def needs_kubectl(f):
    """A comparison with kubectl's kustomize: the ``kubectl`` tier, skipped where it is absent."""
    return pytest.mark.kubectl(pytest.mark.skipif(KUBECTL is None, reason="kubectl (reference kustomize) not installed")(f))

Identity = tuple[str, str, str]

# kustomize/<feature> directories that have a kustomization.yaml (kubectl builds them as they are)
BUILDABLE = [
    "resources",
    "components",
    "namespace",
    "prefix-suffix",
    "patches",
    "legacy-patches",
    "images",
    "labels",
    "replicas",
    "generators",
    "replacements",
    "local-config",
    "builtin-transformers",
]


def build(rel: str, root: Path = FEATURES) -> BuildResult:
    fs = RepoFS(root)
    return Builder(FileCache(fs, _ignore_matcher(fs))).build(rel)


def identities(docs: list[dict[str, Any]]) -> list[Identity]:
    out = []
    for d in docs:
        md = d.get("metadata") or {}
        out.append((str(d.get("kind")), str(md.get("namespace") or ""), str(md.get("name") or "")))
    return sorted(out)


def ours(result: BuildResult) -> list[dict[str, Any]]:
    # plain JSON values, as kubectl prints them
    return [json.loads(json.dumps(r.data)) for r in result.resources]


def kubectl_build(path: Path) -> list[dict[str, Any]]:
    assert KUBECTL is not None
    proc = subprocess.run(
        [KUBECTL, "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if proc.returncode != 0:
        raise AssertionError(f"kubectl kustomize {path} failed: {proc.stderr.strip()}")
    return [d for d in load_text(proc.stdout) if isinstance(d, dict)]


def kubectl_fails(path: Path) -> str:
    assert KUBECTL is not None
    proc = subprocess.run([KUBECTL, "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(path)], capture_output=True, text=True)
    assert proc.returncode != 0, f"kubectl kustomize {path} unexpectedly succeeded"
    return proc.stderr


def by_id(docs: list[dict[str, Any]]) -> dict[Identity, dict[str, Any]]:
    return {identities([d])[0]: d for d in docs}


def obj(result: BuildResult, kind: str, name: str) -> dict[str, Any]:
    found = [r.data for r in result.resources if r.kind == kind and r.name == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} objects in {[str(r.ref) for r in result.resources]}"
    return found[0]


def container(data: dict[str, Any], name: str) -> dict[str, Any]:
    spec = data["spec"]["template"]["spec"]
    return next(c for c in spec.get("containers", []) + spec.get("initContainers", []) if c["name"] == name)


# -- against the reference ---------------------------------------------------------------


@needs_kubectl
@pytest.mark.parametrize("feature", BUILDABLE)
def test_feature_matches_kubectl(feature):
    result = build(f"kustomize/{feature}")
    assert not result.problems
    ref = kubectl_build(FEATURES / "kustomize" / feature)
    assert identities(ours(result)) == identities(ref)
    # not only the identities: every field of every object
    mine = by_id(ours(result))
    for ident, doc in by_id(ref).items():
        assert mine[ident] == doc, f"{ident} differs from kubectl kustomize"


def _flux_builds() -> list[tuple[Path, str, str]]:
    out = []
    for root in (FEATURES, OPERATOR):
        for c in fluxgraph.load(root).clusters:
            for ks in c.kustomizations.values():
                if ks.status == "built" and not ks.incomplete:
                    out.append((root, c.name, ks.id))
    return out


@needs_kubectl
@pytest.mark.parametrize(("root", "cluster", "ks_id"), _flux_builds(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_flux_build_matches_kubectl(root, cluster, ks_id):
    """Every Flux Kustomization of the feature repos, built the way kustomize-controller does:
    Flux's generated kustomization where there is none, and the Kustomization's own
    targetNamespace, patches, images, components, namePrefix/nameSuffix written into it
    (tests/corpus_fidelity.py makes the wrapper)."""
    repo = fluxgraph.load(root)
    ks = next(c for c in repo.clusters if c.name == cluster).kustomizations[ks_id]
    cache = FileCache(RepoFS(root))
    cache.ignore = _ignore_matcher(cache.fs)
    ref, err = corpus_fidelity.reference_build(corpus_fidelity._wrapper(root, ks, cache))
    assert err is None, err
    assert corpus_fidelity.our_identities(ks) == ref


# -- exact results, no kubectl needed ----------------------------------------------------

EXPECTED: dict[str, list[Identity]] = {
    "generated": [
        ("ConfigMap", "generated", "feature-flags"),
        ("ConfigMap", "generated", "settings"),
        ("Deployment", "generated", "bundle-echo"),
        ("Namespace", "", "generated"),
        ("Service", "generated", "bundle-echo"),
    ],
    "resources": [
        ("ConfigMap", "store", "store-banner"),
        ("ConfigMap", "store", "store-config"),
        ("ConfigMap", "store", "store-footer"),
        ("Deployment", "store", "api"),
        ("Deployment", "store", "storefront"),
        ("Namespace", "", "store"),
        ("Role", "store", "reader"),
        ("RoleBinding", "store", "reader"),
        ("Service", "store", "storefront"),
        ("ServiceAccount", "store", "reader"),
        ("StatefulSet", "store", "db"),
    ],
    "components": [
        ("ConfigMap", "catalog", "scrape-config-8k5dm98bt9"),
        ("Deployment", "catalog", "catalog"),
        ("PodDisruptionBudget", "catalog", "catalog"),
        ("Service", "catalog", "metrics"),
    ],
    "namespace": [
        ("ClusterRole", "", "node-reader"),
        ("ClusterRoleBinding", "", "payments-node-reader"),
        ("Deployment", "payments", "ledger"),
        ("Namespace", "", "payments"),
        ("PersistentVolumeClaim", "payments", "ledger-data"),
        ("Role", "payments", "reader"),
        ("RoleBinding", "payments", "reader"),
        ("ServiceAccount", "payments", "reader"),
        ("StorageClass", "", "ledger-fast"),
    ],
    "prefix-suffix": [
        ("APIService", "", "v1beta1.metrics.blog.example.com"),
        ("ClusterRole", "", "blog-ghost-reader-v2"),
        ("ClusterRoleBinding", "", "blog-ghost-reader-v2"),
        ("ConfigMap", "blog", "blog-settings-v2"),
        ("CustomResourceDefinition", "", "themes.blog.example.com"),
        ("Deployment", "blog", "blog-ghost-v2"),
        ("Ingress", "blog", "blog-ghost-v2"),
        ("Namespace", "", "blog"),
        ("Service", "blog", "blog-ghost-v2"),
        ("ServiceAccount", "blog", "blog-writer-v2"),
    ],
    "patches": [
        ("Deployment", "shop", "orders"),
        ("Deployment", "shop", "web-cart"),
        ("Deployment", "shop", "web-search"),
        ("Service", "shop", "web-cart"),
    ],
    "legacy-patches": [("Deployment", "wiki", "wiki"), ("Service", "wiki", "wiki")],
    "images": [("CronJob", "media", "cleanup"), ("Deployment", "media", "media")],
    "labels": [("CronJob", "forum", "digest"), ("Deployment", "forum", "forum"), ("Service", "forum", "forum")],
    "replicas": [("ConfigMap", "queue", "worker"), ("Deployment", "queue", "worker"), ("StatefulSet", "queue", "broker")],
    "generators": [
        ("ConfigMap", "observability", "grafana-dashboards-h78m95hkd8"),
        ("ConfigMap", "observability", "grafana-env-fd565454tm"),
        ("ConfigMap", "observability", "grafana-plugins-c9f8gbm584"),
        ("ConfigMap", "observability", "grafana-settings-6ft4b5mm27"),
        ("ConfigMap", "observability", "grafana-static"),
        ("ConfigMap", "observability", "loki-values-77875tb7g4"),
        ("Deployment", "observability", "grafana"),
        ("HelmRelease", "observability", "loki"),
        ("HelmRepository", "observability", "grafana"),
        ("Secret", "observability", "grafana-admin-k2467ftm44"),
        ("Secret", "observability", "grafana-tls-kmc5gc5749"),
    ],
    "replacements": [
        ("ConfigMap", "newsletter", "app-identity"),
        ("Deployment", "newsletter", "listmonk"),
        ("Service", "newsletter", "listmonk"),
    ],
    # station-defaults (a base's) and station-codec (a component's) feed the replacements and
    # are left out with stream-notes and radio-scratch; "false" keeps stream-kept
    "local-config": [("ConfigMap", "radio", "stream"), ("ConfigMap", "radio", "stream-kept")],
    "helm-charts": [("Namespace", "", "cache")],
    "remote": [("ConfigMap", "ingress", "ingress-tuning")],
}


@pytest.mark.parametrize("feature", sorted(EXPECTED))
def test_feature_identities(feature):
    result = build(f"kustomize/{feature}")
    assert not result.failed, result.problems
    assert identities(ours(result)) == EXPECTED[feature]


def test_generated_kustomization():
    """No kustomization.yaml: every .yaml/.yml below, bundle/ (own kustomization) as one unit;
    .sops.yaml is left out of the artifact by source-controller, notes.txt is not YAML."""
    result = build("kustomize/generated")
    assert not result.problems
    assert "kustomize/generated/.sops.yaml" not in result.files
    assert "kustomize/generated/config/notes.txt" not in result.files
    assert "kustomize/generated/bundle/unlisted.yaml" not in result.files
    assert {"kustomize/generated/config/settings.yml", "kustomize/generated/bundle/kustomization.yaml"} <= result.files
    echo = next(r for r in result.resources if r.name == "bundle-echo" and r.kind == "Deployment")
    # via: the kustomization files that brought the listing kustomization in, outermost first
    assert (echo.origin.file, echo.origin.via) == ("kustomize/generated/bundle/deployment.yaml", ("kustomize/generated/<generated>",))


def test_resources_files_dirs_and_nested_kustomizations():
    result = build("kustomize/resources")
    # a v1 List is flattened into its items
    assert obj(result, "ConfigMap", "store-footer")["data"] == {"text": "(c) Example Store"}
    # the RoleBinding subject in `default` follows the namespace
    assert obj(result, "RoleBinding", "reader")["subjects"][0]["namespace"] == "store"
    db = next(r for r in result.resources if r.name == "db")
    assert db.origin.file == "kustomize/resources/backend/db/statefulset.yaml"
    assert db.origin.via == ("kustomize/resources/kustomization.yaml", "kustomize/resources/backend/kustomization.yaml")
    reader = next(r for r in result.resources if r.kind == "ServiceAccount")
    assert reader.origin.file == "kustomize/shared/rbac/rbac.yaml"
    assert reader.origin.via == ("kustomize/resources/kustomization.yaml", "kustomize/resources/backend/kustomization.yaml")


def test_components_run_in_order_over_the_accumulated_resources():
    result = build("kustomize/components")
    catalog = obj(result, "Deployment", "catalog")
    assert catalog["spec"]["replicas"] == 3
    assert [p["name"] for p in container(catalog, "catalog")["ports"]] == ["http", "metrics"]
    assert catalog["spec"]["template"]["metadata"]["annotations"] == {"prometheus.io/scrape": "true"}
    assert obj(result, "Service", "metrics")["metadata"]["namespace"] == "catalog"


def test_namespace_renames_the_underscore_namespace():
    result = build("kustomize/namespace")
    ns = obj(result, "Namespace", "payments")
    assert ns["metadata"]["annotations"] == {"kustomize.toolkit.fluxcd.io/prune": "disabled"}
    assert "namespace" not in obj(result, "StorageClass", "ledger-fast")["metadata"]
    assert obj(result, "Deployment", "ledger")["metadata"]["namespace"] == "payments"
    subjects = obj(result, "ClusterRoleBinding", "payments-node-reader")["subjects"]
    assert subjects == [
        {"kind": "ServiceAccount", "name": "reader", "namespace": "payments"},
        {"kind": "ServiceAccount", "name": "auditor", "namespace": "audit"},
    ]


def test_prefix_suffix_and_what_they_do_not_rename():
    result = build("kustomize/prefix-suffix")
    names = {r.name for r in result.resources}
    # never renamed: Namespace, CustomResourceDefinition, APIService
    assert {"blog", "themes.blog.example.com", "v1beta1.metrics.blog.example.com"} <= names
    ghost = obj(result, "Deployment", "blog-ghost-v2")
    pod = ghost["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "blog-writer-v2"
    # references follow the objects in the build, not the Secret created out of band
    assert pod["containers"][0]["envFrom"] == [{"configMapRef": {"name": "blog-settings-v2"}}, {"secretRef": {"name": "ghost-mail"}}]
    ingress = obj(result, "Ingress", "blog-ghost-v2")
    assert ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == "blog-ghost-v2"
    assert obj(result, "ClusterRoleBinding", "blog-ghost-reader-v2")["roleRef"]["name"] == "blog-ghost-reader-v2"
    assert obj(result, "APIService", "v1beta1.metrics.blog.example.com")["spec"]["service"]["name"] == "blog-ghost-v2"


def test_patches():
    result = build("kustomize/patches")
    cart = obj(result, "Deployment", "web-cart")
    # 1: inline strategic merge by name; 6: $patch: delete on one container
    assert [c["name"] for c in cart["spec"]["template"]["spec"]["containers"]] == ["app"]
    assert container(cart, "app")["resources"] == {"limits": {"memory": "256Mi"}}
    # 2: regex target: both web-* Deployments, not orders
    for name, has in (("web-cart", True), ("web-search", True), ("orders", False)):
        spec = obj(result, "Deployment", name)["spec"]["template"]["spec"]
        assert ("topologySpreadConstraints" in spec) is has, name
    # 3: labelSelector target: only the backend
    orders = obj(result, "Deployment", "orders")
    assert orders["spec"]["replicas"] == 3
    assert orders["metadata"]["annotations"] == {"example.com/tier": "backend"}
    assert obj(result, "Deployment", "web-search")["spec"]["replicas"] == 1
    # 4: JSON 6902 from a file
    svc = obj(result, "Service", "web-cart")
    assert svc["spec"]["ports"][0]["targetPort"] == 8081 and svc["spec"]["type"] == "ClusterIP"
    # 5: $patch: delete removed the CronJob
    assert not [r for r in result.resources if r.kind == "CronJob"]


def test_legacy_patch_fields():
    result = build("kustomize/legacy-patches")
    wiki = obj(result, "Deployment", "wiki")
    assert wiki["spec"]["strategy"] == {"type": "Recreate"}
    assert container(wiki, "wiki")["resources"]["requests"] == {"cpu": "100m", "memory": "256Mi"}
    assert container(wiki, "wiki")["env"] == [{"name": "DB_TYPE", "value": "postgres"}]
    assert obj(result, "Service", "wiki")["spec"]["sessionAffinity"] == "ClientIP"


def test_images():
    result = build("kustomize/images")
    media = obj(result, "Deployment", "media")
    assert container(media, "proxy")["image"] == "docker.io/library/nginx:1.27.2-alpine"
    assert container(media, "transcoder")["image"] == "registry.example.com/mirror/transcoder:0.4.2"
    assert container(media, "wait")["image"] == (
        "docker.io/library/busybox@sha256:768e5c6f5cb6db0794eec98dc7a967f40631746c32232b78a3105fb946f3ab83"
    )
    job = obj(result, "CronJob", "cleanup")["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert job["containers"][0]["image"] == "docker.io/library/nginx:1.27.2-alpine"


def test_labels_and_annotations():
    result = build("kustomize/labels")
    forum = obj(result, "Deployment", "forum")
    assert forum["metadata"]["labels"] == {
        "app.kubernetes.io/instance": "forum-main",
        "app.kubernetes.io/part-of": "forum",
        "environment": "lab",
        "example.com/team": "community",
    }
    # selectors: includeSelectors and commonLabels only
    assert forum["spec"]["selector"]["matchLabels"] == {"app": "forum", "app.kubernetes.io/instance": "forum-main", "environment": "lab"}
    tpl = forum["spec"]["template"]["metadata"]
    assert tpl["labels"] == {"app": "forum", "app.kubernetes.io/instance": "forum-main", "environment": "lab", "example.com/team": "community"}
    # commonAnnotations reach pod templates too
    assert tpl["annotations"] == {"example.com/owner": "community@example.com"}
    assert obj(result, "Service", "forum")["spec"]["selector"] == {"app": "forum", "app.kubernetes.io/instance": "forum-main", "environment": "lab"}
    cron = obj(result, "CronJob", "digest")["spec"]["jobTemplate"]
    assert cron["metadata"]["labels"] == {"app.kubernetes.io/instance": "forum-main", "environment": "lab", "example.com/team": "community"}
    assert cron["spec"]["template"]["metadata"]["annotations"] == {"example.com/owner": "community@example.com"}


def test_replicas_only_touch_workloads():
    result = build("kustomize/replicas")
    assert obj(result, "Deployment", "worker")["spec"]["replicas"] == 5
    assert obj(result, "StatefulSet", "broker")["spec"]["replicas"] == 3
    assert "spec" not in obj(result, "ConfigMap", "worker")


def test_generators_hash_suffixes_and_rewritten_references():
    result = build("kustomize/generators")
    assert not result.problems
    grafana = obj(result, "Deployment", "grafana")
    c = container(grafana, "grafana")
    assert [e["configMapRef"]["name"] for e in c["envFrom"]] == ["grafana-settings-6ft4b5mm27", "grafana-env-fd565454tm", "grafana-static"]
    assert c["env"][0]["valueFrom"]["secretKeyRef"]["name"] == "grafana-admin-k2467ftm44"
    assert c["env"][1]["valueFrom"]["configMapKeyRef"]["name"] == "grafana-plugins-c9f8gbm584"
    volumes = grafana["spec"]["template"]["spec"]["volumes"]
    assert volumes == [
        {"name": "dashboards", "configMap": {"name": "grafana-dashboards-h78m95hkd8"}},
        {"name": "tls", "secret": {"secretName": "grafana-tls-kmc5gc5749"}},
    ]
    # configurations: taught kustomize HelmRelease spec.valuesFrom
    values_from = obj(result, "HelmRelease", "loki")["spec"]["valuesFrom"]
    assert [v["name"] for v in values_from] == ["loki-values-77875tb7g4", "loki-s3-credentials"]
    # literals, files (with and without a key), envs, behavior: merge, generatorOptions
    assert obj(result, "ConfigMap", "grafana-env-fd565454tm")["data"] == {"GF_LOG_LEVEL": "debug", "GF_LOG_MODE": "console"}
    assert sorted(obj(result, "ConfigMap", "grafana-dashboards-h78m95hkd8")["data"]) == ["cluster.json", "overview.json"]
    assert obj(result, "ConfigMap", "grafana-plugins-c9f8gbm584")["data"] == {
        "GF_INSTALL_PLUGINS": "grafana-piechart-panel,grafana-clock-panel",
        "GF_PLUGINS_PREINSTALL_DISABLED": "false",
    }
    assert obj(result, "ConfigMap", "grafana-static")["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "kustomize"}
    tls = obj(result, "Secret", "grafana-tls-kmc5gc5749")
    assert tls["type"] == "kubernetes.io/tls"
    # kustomize cuts base64 into 70-column lines
    assert tls["data"]["tls.crt"].endswith("\n") and all(len(x) <= 70 for x in tls["data"]["tls.crt"].splitlines())


def test_replacements_rename_objects():
    result = build("kustomize/replacements")
    app = obj(result, "Deployment", "listmonk")
    assert container(app, "app")["env"] == [{"name": "APP_NAME", "value": "listmonk"}]
    # the second replacement selects the Service by the name it had before the first one
    # renamed it (namespace: stored that previous id)
    assert container(app, "app")["ports"][0]["containerPort"] == 9000


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to reach the network or run a program fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"fluxgraph tried to fetch or execute something: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)


@pytest.mark.parametrize(
    ("feature", "code", "line", "needle"),
    [
        ("helm-charts", "not-evaluated-plugin", 9, "helmCharts in kustomize/helm-charts/kustomization.yaml is not evaluated"),
        ("remote", "not-evaluated-remote", 7, "'https://github.com/example/ingress-base//deploy/overlays/lab?ref=v1.4.0'"),
    ],
)
def test_not_evaluated_and_never_fetched(no_network, feature, code, line, needle):
    result = build(f"kustomize/{feature}")
    assert result.incomplete and not result.failed
    [p] = result.problems
    assert (p.code, p.not_evaluated, p.location.file, p.location.line) == (code, True, f"kustomize/{feature}/kustomization.yaml", line)
    assert needle in p.message
    # what is local still builds (namespace: applied)
    assert identities(ours(result)) == EXPECTED[feature]


def test_flux_repo_loads_without_network(no_network):
    repo = fluxgraph.load(FEATURES)
    assert len(repo.clusters) == 2


# -- regressions for the kustomize behaviours found with these fixtures -------------------


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


DEPLOY = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: worker}\nspec: {replicas: 1}\n"


def test_replicas_matching_nothing_fails_the_build(tmp_path):
    write(tmp_path, {"k/kustomization.yaml": "resources: [d.yaml]\nreplicas:\n  - name: scheduler\n    count: 2\n", "k/d.yaml": DEPLOY})
    result = build("k", tmp_path)
    assert result.failed
    assert "resource with name scheduler does not match a config" in result.problems[0].message
    if KUBECTL:
        assert "resource with name scheduler does not match a config" in kubectl_fails(tmp_path / "k")


REPLACEMENT_APP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: ident}
data: {N: listmonk}
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec: {ports: [{port: 9000}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  rules:
    - http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 9000}}}}
"""
RENAME = """\
resources: [../app.yaml]
replacements:
  - source: {kind: ConfigMap, name: ident, fieldPath: data.N}
    targets:
      - select: {kind: Service, name: app}
        fieldPaths: [metadata.name]
"""


@pytest.mark.parametrize(("namespace", "backend"), [(False, "app"), (True, "listmonk")])
def test_a_name_changed_by_replacements_and_back_references(tmp_path, namespace, backend):
    """kustomize's namespace transformer stores every resource's previous id; only then do the
    back references follow a rename made by replacements."""
    write(tmp_path, {"app.yaml": REPLACEMENT_APP, "k/kustomization.yaml": RENAME + ("namespace: x\n" if namespace else "")})
    result = build("k", tmp_path)
    assert not result.problems
    ingress = obj(result, "Ingress", "web")
    assert ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == backend
    if KUBECTL:
        assert by_id(kubectl_build(tmp_path / "k")) == by_id(ours(result))


def test_replacement_source_by_its_previous_name_needs_a_stored_id(tmp_path):
    again = "  - source: {kind: Service, name: app, fieldPath: spec.ports.0.port}\n    targets:\n      - select: {kind: ConfigMap}\n        fieldPaths: [data.PORT]\n        options: {create: true}\n"
    write(tmp_path, {"app.yaml": REPLACEMENT_APP, "k/kustomization.yaml": RENAME + again})
    result = build("k", tmp_path)
    assert result.failed and "source selects 0 resources" in result.problems[0].message
    if KUBECTL:
        assert "nothing selected by Service" in kubectl_fails(tmp_path / "k")


@pytest.mark.parametrize("size", [51, 52, 53, 105, 200])
def test_secret_generator_base64_lines(tmp_path, size):
    """kustomize's base64 for Secret data: 70-column lines from 70 characters on, which
    changes the value and the hash suffix."""
    write(tmp_path, {"k/kustomization.yaml": "secretGenerator:\n  - name: s\n    files: [v]\n", "k/v": "x" * size})
    result = build("k", tmp_path)
    [secret] = ours(result)
    encoded = secret["data"]["v"]
    assert ("\n" in encoded) is (size >= 52)  # 52 bytes encode to 72 characters
    if KUBECTL:
        assert ours(result) == kubectl_build(tmp_path / "k")


def test_inline_yaml_is_parsed_once_and_copied_for_each_use(tmp_path, monkeypatch):
    import fluxgraph.kustomize.build as build_mod
    from fluxgraph.filecache import FileCache
    from fluxgraph.kustomize.build import Builder
    from fluxgraph.repofs import RepoFS

    calls = []
    real = build_mod.load_text
    monkeypatch.setattr(build_mod, "load_text", lambda text: calls.append(text) or real(text))
    b = Builder(FileCache(RepoFS(tmp_path)))
    text = "- op: add\n  path: /spec/x\n  value: {a: [1]}\n"
    first, second = b._load_text(text), b._load_text(text)
    assert first == second == [[{"op": "add", "path": "/spec/x", "value": {"a": [1]}}]]
    first[0][0]["value"]["a"].append(2)  # a caller's copy is its own
    assert b._load_text(text) == second and calls == [text]
    with pytest.raises(Exception, match="expected"):
        b._load_text("a: [1\n")


def test_local_config_objects_feed_the_build_and_leave_its_output():
    result = build("kustomize/local-config")
    # read by the replacements before the end of the build, from a base and from a component
    assert obj(result, "ConfigMap", "stream")["data"] == {"bitrate": "320", "codec": "opus"}
    names = {r.name for r in result.resources}
    assert not names & {"station-defaults", "station-codec", "stream-notes", "radio-scratch"}


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        ('"true"', False),
        ("true", False),
        ('"yes"', False),
        ('""', False),
        ("~", False),
        ("0", False),
        ('"false"', True),
        ("false", True),  # yaml.v3's boolean; its text is "false", as kyaml compares it
    ],
)
def test_local_config_annotation_values(tmp_path, value, kept):
    (tmp_path / "kustomization.yaml").write_text("resources:\n- cm.yaml\n")
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n"
        f"  annotations:\n    config.kubernetes.io/local-config: {value}\n"
    )
    result = build("", tmp_path)
    assert not result.problems
    assert [r.name for r in result.resources] == (["notes"] if kept else [])
    if KUBECTL is not None:
        assert identities(kubectl_build(tmp_path)) == identities(ours(result))


def test_local_config_objects_are_not_in_the_flux_model(tmp_path):
    from .conftest import flux_ks

    (tmp_path / "clusters/test").mkdir(parents=True)
    (tmp_path / "clusters/test/apps.yaml").write_text(flux_ks("apps", "./apps", ns="flux-system", source="flux-system"))
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps/kustomization.yaml").write_text("resources:\n- cm.yaml\n")
    (tmp_path / "apps/cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n  namespace: default\n"
        "  annotations:\n    config.kubernetes.io/local-config: 'true'\n"
    )
    [cluster] = fluxgraph.load(tmp_path, cluster="clusters/test").clusters
    assert [o.ref.name for o in cluster.kustomizations["flux-system/apps"].objects] == []


# -- builtin transformers, remote generator inputs, what source-controller leaves out ------


def test_builtin_transformer_configurations_run():
    """The ``transformers:`` field's builtin NamespaceTransformer (its namespace from the
    kustomization that builds its configuration, its own fieldSpecs), an inline
    AnnotationsTransformer and a LabelTransformer file, as kubectl kustomize v5.5 builds them."""
    result = build("kustomize/builtin-transformers")
    assert not result.problems
    assert identities(ours(result)) == [
        ("ConfigMap", "team-a", "settings"),
        ("Namespace", "", "team-a"),
        ("RoleBinding", "team-a", "reader"),
        ("ServiceAccount", "team-a", "reader"),
        ("Widget", "team-a", "gadget"),
    ]
    ns = obj(result, "Namespace", "team-a")
    assert ns["metadata"] == {"name": "team-a", "labels": {"team": "a"}, "annotations": {"kustomize.toolkit.fluxcd.io/prune": "disabled"}}
    assert obj(result, "Widget", "gadget")["spec"] == {"size": 3, "targetNamespace": "team-a"}
    assert obj(result, "RoleBinding", "reader")["subjects"] == [
        {"kind": "ServiceAccount", "name": "default", "namespace": "team-a"},
        {"kind": "ServiceAccount", "name": "reader", "namespace": "team-a"},
        {"kind": "ServiceAccount", "name": "auditor", "namespace": "audit"},
    ]


def test_namespace_field_sets_subjects_named_default_only(tmp_path):
    """kustomize's roleBindingHack: a subject named ``default`` gets the namespace, whatever
    its kind or namespace; another subject keeps its own unless it names a ServiceAccount
    of the build that moves (kubectl kustomize v5.5)."""
    rb = (
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: r}\n"
        "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}\nsubjects:\n"
        "  - {kind: ServiceAccount, name: x, namespace: default}\n  - {kind: ServiceAccount, name: y}\n"
        "  - {kind: User, name: default, namespace: other}\n"
    )
    write(tmp_path, {"k/kustomization.yaml": "namespace: team-a\nresources: [rb.yaml]\n", "k/rb.yaml": rb})
    result = build("k", tmp_path)
    assert obj(result, "RoleBinding", "r")["subjects"] == [
        {"kind": "ServiceAccount", "name": "x", "namespace": "default"},
        {"kind": "ServiceAccount", "name": "y"},
        {"kind": "User", "name": "default", "namespace": "team-a"},
    ]


def test_an_unknown_transformer_configuration_is_not_evaluated(tmp_path):
    write(
        tmp_path,
        {
            "k/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [t.yaml]\n",
            "k/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            "k/t.yaml": "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata: {name: p}\nprefix: x-\n",
        },
    )
    result = build("k", tmp_path)
    assert result.incomplete and not result.failed
    [p] = result.problems
    assert (p.code, p.not_evaluated) == ("not-evaluated-plugin", True)
    assert "transformers[0] in k/kustomization.yaml (PrefixSuffixTransformer) is not evaluated" in p.message


def test_a_remote_generator_input_is_not_evaluated_never_fetched(tmp_path, no_network):
    """kustomize's file loader fetches an http(s) ``files:``/``envs:`` source; fluxgraph
    never does: the generated object is still built (its other keys are known), the remote
    value is reported not evaluated, and the build does not fail."""
    write(
        tmp_path,
        {
            "k/kustomization.yaml": (
                "configMapGenerator:\n  - name: dashboards\n    files:\n      - local.json\n"
                "      - flux.json=https://raw.githubusercontent.com/example/dashboards/main/flux.json\n"
                "    envs:\n      - https://example.com/settings.env\n"
            ),
            "k/local.json": "{}\n",
        },
    )
    result = build("k", tmp_path)
    assert not result.failed and result.incomplete
    cm = next(r.data for r in result.resources if r.kind == "ConfigMap")
    assert cm["data"] == {"flux.json": "", "local.json": "{}\n"}
    assert [p.code for p in result.problems] == ["not-evaluated-remote", "not-evaluated-remote"]
    text = " ".join(p.message for p in result.problems)
    assert "https://example.com/settings.env, a remote input" in text and "the keys and values of ConfigMap dashboards are" in text
    assert "the value of key flux.json of ConfigMap dashboards is not evaluated (nor the name suffix" in text


@pytest.mark.parametrize(
    ("sourceignore", "shipped"),
    [
        (None, False),  # no .sourceignore: source-controller's defaults leave out images
        ("docs/\n", True),  # a .sourceignore replaces the defaults (SourceIgnoreFilter)
        ("*.png\n", False),
    ],
)
def test_images_are_in_the_artifact_only_where_the_defaults_do_not_apply(tmp_path, sourceignore, shipped):
    files = {
        "k/kustomization.yaml": "configMapGenerator:\n  - name: icons\n    files: [icons/logo.png]\n",
        "k/icons/logo.png": "\x89PNG",
    }
    if sourceignore is not None:
        files[".sourceignore"] = sourceignore
    write(tmp_path, files)
    result = build("k", tmp_path)
    assert result.failed != shipped, result.problems
    if not shipped:
        assert "leaves it out of the artifact" in result.problems[0].message
