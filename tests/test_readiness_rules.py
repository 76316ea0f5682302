"""Health gates and readiness (issue 14, parts 3 and 4): health-check-never-runs,
generated-secret-not-awaited, chart-crd-not-awaited."""

from __future__ import annotations

from pathlib import Path

from fluxgraph.engine import analyze

from .test_ordering_rules import HELMREPO, cm, hr, ks, repo

CNPG = """\
apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata:
  name: pg
  namespace: default
spec:
  instances: 1
"""

EXPR = """\
healthCheckExprs:
  - apiVersion: postgresql.cnpg.io/v1
    kind: Cluster
    current: status.phase == 'Cluster in healthy state'
"""


def findings(path: Path, rule: str) -> list[tuple[str, str, str]]:
    report = analyze(path, enabled={rule})
    return [(str(f.location), f.severity.value, f.message) for f in report.findings if f.rule == rule]


def app(name: str, extra: str = "") -> dict[str, str]:
    return {f"clusters/demo/{name}.yaml": ks(name, f"./{name}", extra=extra), f"{name}/cm.yaml": cm(name)}


# -- health-check-never-runs --------------------------------------------------------------


def test_expression_without_any_health_check_is_info(tmp_path):
    files = {"clusters/demo/db.yaml": ks("db", "./db", extra=EXPR), "db/cluster.yaml": CNPG}
    [(loc, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "info" and loc.startswith("clusters/demo/db.yaml:")
    assert "without wait: true or healthChecks" in msg and "no Kustomization waits for it" in msg


def test_expression_without_any_health_check_stays_info_with_dependents(tmp_path):
    # the Kustomization says plainly that it does not wait: dead configuration, not a broken gate
    files = {
        "clusters/demo/db.yaml": ks("db", "./db", extra=EXPR),
        "db/cluster.yaml": CNPG,
        **app("web", "dependsOn:\n  - name: db\n"),
    }
    [(_, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "info" and "flux-system/web waits for it to be Ready" in msg


def test_expression_read_under_wait_for_an_applied_object(tmp_path):
    files = {"clusters/demo/db.yaml": ks("db", "./db", extra="wait: true\n" + EXPR), "db/cluster.yaml": CNPG}
    assert findings(repo(tmp_path, files), "health-check-never-runs") == []


def test_health_check_entry_on_an_object_the_chart_creates_is_polled(tmp_path):
    # checkHealth polls healthChecks entries whether or not the Kustomization applies them: the
    # issue's claim that such an entry "can never trip" holds only under wait: true
    extra = (
        "healthChecks:\n"
        "  - apiVersion: helm.toolkit.fluxcd.io/v2\n    kind: HelmRelease\n    name: pg\n    namespace: flux-system\n"
        "  - apiVersion: postgresql.cnpg.io/v1\n    kind: Cluster\n    name: pg\n    namespace: default\n" + EXPR
    )
    files = {
        "clusters/demo/db.yaml": ks("db", "./db", extra=extra),
        "db/repo.yaml": HELMREPO,
        "db/release.yaml": hr("pg", "flux-system"),
        **app("web", "dependsOn:\n  - name: db\n"),
    }
    assert findings(repo(tmp_path, files), "health-check-never-runs") == []


def test_wait_ignores_health_check_on_chart_object_warning_when_relied_on(tmp_path):
    extra = "wait: true\nhealthChecks:\n  - apiVersion: postgresql.cnpg.io/v1\n    kind: Cluster\n    name: pg\n    namespace: default\n"
    files = {
        "clusters/demo/db.yaml": ks("db", "./db", extra=extra),
        "db/repo.yaml": HELMREPO,
        "db/release.yaml": hr("pg", "flux-system"),
        **app("web", "dependsOn:\n  - name: db\n"),
    }
    [(loc, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "warning"
    assert "healthChecks[0] (Cluster default/pg)" in msg and "ignores healthChecks" in msg
    assert loc.startswith("clusters/demo/db.yaml:16:")  # the entry


def test_wait_ignores_health_check_info_when_nothing_waits(tmp_path):
    extra = "wait: true\nhealthChecks:\n  - apiVersion: postgresql.cnpg.io/v1\n    kind: Cluster\n    name: pg\n    namespace: default\n"
    files = {
        "clusters/demo/db.yaml": ks("db", "./db", extra=extra),
        "db/repo.yaml": HELMREPO,
        "db/release.yaml": hr("pg", "flux-system"),
    }
    [(_, sev, _msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "info"


def test_wait_ignored_entry_for_a_kind_helm_waits_for_is_info(tmp_path):
    extra = "wait: true\nhealthChecks:\n  - kind: Deployment\n    name: pg-operator\n    namespace: flux-system\n"
    files = {
        "clusters/demo/db.yaml": ks("db", "./db", extra=extra),
        "db/repo.yaml": HELMREPO,
        "db/release.yaml": hr("pg", "flux-system"),
        **app("web", "dependsOn:\n  - name: db\n"),
    }
    [(_, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "info" and "helm's own wait for HelmRelease flux-system/pg covers it" in msg


def test_wait_entry_naming_an_applied_object_is_polled_anyway(tmp_path):
    extra = "wait: true\nhealthChecks:\n  - apiVersion: postgresql.cnpg.io/v1\n    kind: Cluster\n    name: pg\n    namespace: default\n"
    files = {"clusters/demo/db.yaml": ks("db", "./db", extra=extra + EXPR), "db/cluster.yaml": CNPG}
    assert findings(repo(tmp_path, files), "health-check-never-runs") == []


def test_wait_entry_without_namespace_for_an_applied_object_is_not_reported(tmp_path):
    extra = "wait: true\nhealthChecks:\n  - apiVersion: postgresql.cnpg.io/v1\n    kind: Cluster\n    name: pg\n"
    files = {"clusters/demo/db.yaml": ks("db", "./db", extra=extra), "db/cluster.yaml": CNPG, **app("web", "dependsOn:\n  - name: db\n")}
    assert findings(repo(tmp_path, files), "health-check-never-runs") == []


def test_expression_for_a_kind_healthchecks_does_not_name_warns_when_relied_on(tmp_path):
    extra = "healthChecks:\n  - apiVersion: v1\n    kind: ConfigMap\n    name: db\n    namespace: default\n" + EXPR
    files = {
        "clusters/demo/db.yaml": ks("db", "./db", extra=extra),
        "db/cluster.yaml": CNPG,
        "db/cm.yaml": cm("db"),
        **app("web", "dependsOn:\n  - name: db\n"),
    }
    [(_, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "warning"
    assert "none is a Cluster of postgresql.cnpg.io (it applies Cluster default/pg)" in msg


def test_core_group_expression_matches_a_core_object(tmp_path):
    pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: default\nspec:\n  resources:\n    requests:\n      storage: 1Gi\n"
    extra = "wait: true\nhealthCheckExprs:\n  - apiVersion: v1\n    kind: PersistentVolumeClaim\n    current: status.phase == 'Bound'\n"
    files = {"clusters/demo/db.yaml": ks("db", "./db", extra=extra), "db/pvc.yaml": pvc}
    assert findings(repo(tmp_path, files), "health-check-never-runs") == []


def test_wait_on_a_kustomization_that_was_not_built_is_not_evaluated(tmp_path):
    files = {"clusters/demo/db.yaml": ks("db", "./missing", extra="wait: true\n" + EXPR)}
    assert findings(repo(tmp_path, files), "health-check-never-runs") == []


def test_parent_patch_that_adds_expressions_is_reported_once_at_the_patch(tmp_path):
    patch = """\
patches:
  - patch: |-
      apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata:
        name: _
      spec:
        healthCheckExprs:
          - apiVersion: postgresql.cnpg.io/v1
            kind: Cluster
            current: status.phase == 'ready'
    target:
      kind: Kustomization
"""
    files = {
        "clusters/demo/apps.yaml": ks("apps", "./apps", extra=patch),
        "apps/a.yaml": ks("a", "./a"),
        "apps/b.yaml": ks("b", "./b"),
        "a/cluster.yaml": CNPG,
        "b/cluster.yaml": CNPG.replace("name: pg", "name: pg-b"),
    }
    [(loc, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert loc.startswith("clusters/demo/apps.yaml:") and sev == "info"
    assert "flux-system/a" in msg and "flux-system/b" in msg


# -- generated-secret-not-awaited ---------------------------------------------------------

EXTERNAL_SECRET = """\
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: cluster-secrets
  namespace: flux-system
spec:
  secretStoreRef:
    kind: ClusterSecretStore
    name: vault
  target:
    name: cluster-secrets
  dataFrom:
    - extract:
        key: cluster
"""

SUBST = "postBuild:\n  substituteFrom:\n    - kind: Secret\n      name: cluster-secrets\n"


def secrets_tier(extra: str = "") -> dict[str, str]:
    return {"clusters/demo/secrets.yaml": ks("secrets", "./secrets", extra=extra), "secrets/es.yaml": EXTERNAL_SECRET}


def test_generated_secret_reported_at_the_dependency(tmp_path):
    files = {**secrets_tier(), **app("web", "dependsOn:\n  - name: secrets\n" + SUBST)}
    [(loc, sev, msg)] = findings(repo(tmp_path, files), "generated-secret-not-awaited")
    assert loc.startswith("clusters/demo/secrets.yaml:") and sev == "warning"
    assert "ExternalSecret cluster-secrets makes" in msg and "substitute from 'Secret/cluster-secrets' error" in msg


def test_generated_secret_waited_with_wait_true(tmp_path):
    files = {**secrets_tier("wait: true\n"), **app("web", "dependsOn:\n  - name: secrets\n" + SUBST)}
    assert findings(repo(tmp_path, files), "generated-secret-not-awaited") == []


def test_generated_secret_waited_through_a_health_check_on_the_secret(tmp_path):
    hc = "healthChecks:\n  - apiVersion: v1\n    kind: Secret\n    name: cluster-secrets\n    namespace: flux-system\n"
    files = {**secrets_tier(hc), **app("web", "dependsOn:\n  - name: secrets\n" + SUBST)}
    assert findings(repo(tmp_path, files), "generated-secret-not-awaited") == []


def test_generated_secret_waited_by_another_dependency(tmp_path):
    # `gate` polls the ExternalSecret; web depends on both
    hc = (
        "dependsOn:\n  - name: secrets\nhealthChecks:\n  - apiVersion: external-secrets.io/v1\n"
        "    kind: ExternalSecret\n    name: cluster-secrets\n    namespace: flux-system\n"
    )
    files = {
        **secrets_tier(),
        **app("gate", hc),
        **app("web", "dependsOn:\n  - name: secrets\n  - name: gate\n" + SUBST),
    }
    assert findings(repo(tmp_path, files), "generated-secret-not-awaited") == []


def test_generated_secret_read_by_an_earlier_dependency_exists_by_then(tmp_path):
    # `infra` substitutes from the same Secret: it cannot be Ready before the Secret exists
    files = {
        **secrets_tier(),
        **app("infra", "dependsOn:\n  - name: secrets\n" + SUBST),
        **app("web", "dependsOn:\n  - name: infra\n" + SUBST),
    }
    [(_, _, msg)] = findings(repo(tmp_path, files), "generated-secret-not-awaited")
    assert "flux-system/infra substitutes" in msg  # infra itself is reported, web is not


def test_generated_secret_through_a_chain_names_the_link(tmp_path):
    files = {
        **secrets_tier(),
        **app("infra", "dependsOn:\n  - name: secrets\n"),
        **app("web", "dependsOn:\n  - name: infra\n" + SUBST),
    }
    [(_, _, msg)] = findings(repo(tmp_path, files), "generated-secret-not-awaited")
    assert "is ordered after flux-system/infra, which depends on flux-system/secrets" in msg


def test_generated_secret_without_depends_on_is_substitute_from_race(tmp_path):
    files = {**secrets_tier(), **app("web", SUBST)}
    assert findings(repo(tmp_path, files), "generated-secret-not-awaited") == []


def test_generated_secret_also_applied_as_a_secret_is_not_reported(tmp_path):
    secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-secrets\n  namespace: flux-system\nstringData:\n  A: b\n"
    files = {
        **secrets_tier(),
        "secrets/secret.yaml": secret,
        **app("web", "dependsOn:\n  - name: secrets\n" + SUBST),
    }
    assert findings(repo(tmp_path, files), "generated-secret-not-awaited") == []


def test_generated_secret_optional_builds_with_empty_values(tmp_path):
    files = {**secrets_tier(), **app("web", "dependsOn:\n  - name: secrets\n" + SUBST + "      optional: true\n")}
    [(_, _, msg)] = findings(repo(tmp_path, files), "generated-secret-not-awaited")
    assert "builds without the Secret's variables (optional: true)" in msg


# -- chart-crd-not-awaited ----------------------------------------------------------------

ISSUER = "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: selfsigned\nspec:\n  selfSigned: {}\n"
CRDS_ON = "values:\n  crds:\n    enabled: true\n"


def cert_manager(ks_extra: str = "", hr_extra: str = CRDS_ON) -> dict[str, str]:
    return {
        "clusters/demo/cert-manager.yaml": ks("cert-manager", "./cert-manager", extra=ks_extra),
        "cert-manager/repo.yaml": HELMREPO,
        "cert-manager/release.yaml": hr("cert-manager", "flux-system", hr_extra),
    }


def issuers(extra: str = "dependsOn:\n  - name: cert-manager\n") -> dict[str, str]:
    return {"clusters/demo/issuers.yaml": ks("issuers", "./issuers", extra=extra), "issuers/issuer.yaml": ISSUER}


def test_chart_crd_reported_at_the_dependency(tmp_path):
    [(loc, sev, msg)] = findings(repo(tmp_path, {**cert_manager(), **issuers()}), "chart-crd-not-awaited")
    assert loc.startswith("clusters/demo/cert-manager.yaml:") and sev == "warning"
    assert "ClusterIssuer selfsigned of cert-manager.io" in msg and "no matches for kind ClusterIssuer" in msg


def test_chart_crd_waited_through_health_check(tmp_path):
    hc = "healthChecks:\n  - apiVersion: helm.toolkit.fluxcd.io/v2\n    kind: HelmRelease\n    name: cert-manager\n    namespace: flux-system\n"
    assert findings(repo(tmp_path, {**cert_manager(hc), **issuers()}), "chart-crd-not-awaited") == []


def test_chart_crd_cert_manager_without_crds_value_installs_none(tmp_path):
    assert findings(repo(tmp_path, {**cert_manager(hr_extra=""), **issuers()}), "chart-crd-not-awaited") == []


def test_chart_crd_value_that_may_come_from_values_from_is_not_judged(tmp_path):
    vf = "valuesFrom:\n  - kind: ConfigMap\n    name: cert-manager-values\n"
    assert findings(repo(tmp_path, {**cert_manager(hr_extra=vf), **issuers()}), "chart-crd-not-awaited") == []


def test_chart_crd_install_crds_skip_is_not_a_provider(tmp_path):
    skip = CRDS_ON + "install:\n  crds: Skip\n"
    assert findings(repo(tmp_path, {**cert_manager(hr_extra=skip), **issuers()}), "chart-crd-not-awaited") == []


def test_chart_crd_only_through_another_dependency_is_not_judged(tmp_path):
    files = {
        **cert_manager(),
        **app("middle", "dependsOn:\n  - name: cert-manager\n"),
        **issuers("dependsOn:\n  - name: middle\n"),
    }
    assert findings(repo(tmp_path, files), "chart-crd-not-awaited") == []


def test_chart_crd_dependency_of_the_parent_counts(tmp_path):
    files = {
        **cert_manager(),
        "clusters/demo/config.yaml": ks("config", "./config", extra="dependsOn:\n  - name: cert-manager\n"),
        "config/issuers.yaml": ks("issuers", "./issuers"),
        "issuers/issuer.yaml": ISSUER,
    }
    [(_, _, msg)] = findings(repo(tmp_path, files), "chart-crd-not-awaited")
    assert "flux-system/issuers is applied by flux-system/config, which depends on flux-system/cert-manager" in msg


def test_chart_crd_applied_by_a_kustomization_is_prerequisites(tmp_path):
    crd = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: clusterissuers.cert-manager.io\n"
        "spec:\n  group: cert-manager.io\n  names:\n    kind: ClusterIssuer\n    plural: clusterissuers\n  scope: Cluster\n"
        "  versions:\n    - name: v1\n      served: true\n      storage: true\n"
    )
    files = {**cert_manager(), "cert-manager/crd.yaml": crd, **issuers()}
    assert findings(repo(tmp_path, files), "chart-crd-not-awaited") == []


def test_chart_crd_installed_by_a_bootstrap_helmfile_is_info(tmp_path):
    helmfile = "releases:\n  - name: cert-manager\n    namespace: cert-manager\n    chart: oci://quay.io/jetstack/charts/cert-manager\n"
    files = {**cert_manager(), **issuers(), "bootstrap/helmfile.yaml": helmfile}
    [(_, sev, msg)] = findings(repo(tmp_path, files), "chart-crd-not-awaited")
    assert sev == "info" and "bootstrap/helmfile.yaml:2" in msg and "outside Flux" in msg


def test_chart_crd_external_secrets_turned_off_inline(tmp_path):
    es = EXTERNAL_SECRET
    files = {
        "clusters/demo/eso.yaml": ks("eso", "./eso"),
        "eso/repo.yaml": HELMREPO,
        "eso/release.yaml": hr("external-secrets", "flux-system", "values:\n  installCRDs: false\n"),
        "clusters/demo/secrets.yaml": ks("secrets", "./secrets", extra="dependsOn:\n  - name: eso\n"),
        "secrets/es.yaml": es,
    }
    assert findings(repo(tmp_path, files), "chart-crd-not-awaited") == []
    files["eso/release.yaml"] = hr("external-secrets", "flux-system")
    [(_, sev, msg)] = findings(repo(tmp_path, files), "chart-crd-not-awaited")
    assert sev == "warning" and "chart external-secrets" in msg


# -- a gate that wait: true ignores but that holds elsewhere (the wide corpus's review) ------

HC_DEPLOY = "wait: true\nhealthChecks:\n  - apiVersion: apps/v1\n    kind: Deployment\n    name: operator\n    namespace: flux-system\n"


def test_ignored_entry_held_by_a_dependency_that_waits_for_the_release(tmp_path):
    files = {
        "clusters/demo/operator.yaml": ks("operator", "./operator", extra="wait: true\n"),
        "operator/repo.yaml": HELMREPO,
        "operator/release.yaml": hr("operator", "flux-system"),
        "clusters/demo/storage.yaml": ks("storage", "./storage", extra=HC_DEPLOY + "dependsOn:\n  - name: operator\n"),
        "storage/cm.yaml": cm("storage"),
        **app("web", "dependsOn:\n  - name: storage\n"),
    }
    [(_, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "info" and "the gate holds all the same: its dependency flux-system/operator waits for HelmRelease" in msg


def test_ignored_entry_held_by_a_child_that_waits_for_the_release(tmp_path):
    files = {
        "clusters/demo/tier.yaml": ks("tier", "./tier", extra=HC_DEPLOY),
        "tier/child.yaml": ks("child", "./child", extra="wait: true\n"),
        "child/repo.yaml": HELMREPO,
        "child/release.yaml": hr("operator", "flux-system"),
        **app("web", "dependsOn:\n  - name: tier\n"),
    }
    [(_, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "info" and "child Kustomization flux-system/child, which it polls, waits for HelmRelease" in msg


def test_ignored_entry_on_a_secret_its_own_external_secret_writes(tmp_path):
    extra = "wait: true\nhealthChecks:\n  - apiVersion: v1\n    kind: Secret\n    name: cluster-secrets\n    namespace: flux-system\n"
    files = {**secrets_tier(extra), **app("web", "dependsOn:\n  - name: secrets\n")}
    [(_, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "info" and "ExternalSecret flux-system/cluster-secrets creates it, and wait: true polls that maker" in msg


def _misnamed(release_elsewhere: bool) -> dict[str, str]:
    extra = "wait: true\nhealthChecks:\n  - apiVersion: helm.toolkit.fluxcd.io/v2\n    kind: HelmRelease\n    name: operator\n    namespace: operators\n"
    files = {
        "clusters/demo/operator.yaml": ks("operator", "./operator", extra=extra),
        "operator/repo.yaml": HELMREPO,
        "operator/release.yaml": hr("operator-chart", "flux-system"),
        **app("web", "dependsOn:\n  - name: operator\n"),
    }
    if release_elsewhere:
        files["clusters/demo/other.yaml"] = ks("other", "./other")
        files["other/release.yaml"] = hr("operator", "operators")
    return files


def test_ignored_entry_naming_nothing_the_cluster_has_is_advice(tmp_path):
    # a misspelt name: no Kustomization applies HelmRelease operators/operator, and wait: true
    # polls the HelmRelease the Kustomization does apply
    [(_, sev, msg)] = findings(repo(tmp_path, _misnamed(False)), "health-check-never-runs")
    assert sev == "info"
    assert "no Kustomization of the cluster applies or makes HelmRelease operators/operator (a misspelt name" in msg
    assert "wait: true polls the HelmRelease flux-system/operator-chart" in msg


def test_ignored_entry_naming_an_object_another_kustomization_applies_stays_a_warning(tmp_path):
    [(_, sev, msg)] = findings(repo(tmp_path, _misnamed(True)), "health-check-never-runs")
    assert sev == "warning" and "no Kustomization of the cluster applies or makes" not in msg


def test_ignored_entry_naming_nothing_is_not_judged_past_a_blind_spot(tmp_path):
    # a Kustomization the model could not build could apply the named release
    files = {**_misnamed(False), "clusters/demo/broken.yaml": ks("broken", "./missing")}
    [(_, sev, _msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "warning"


POOL = "apiVersion: cilium.io/v2alpha1\nkind: CiliumL2AnnouncementPolicy\nmetadata:\n  name: l2\nspec: {}\n"


def _cilium(extra_files: dict[str, str] | None = None, chart: str = "cilium") -> dict[str, str]:
    return {
        "clusters/demo/cni.yaml": ks("cni", "./cni"),
        "cni/repo.yaml": HELMREPO,
        "cni/release.yaml": hr(chart, "kube-system"),
        "clusters/demo/pools.yaml": ks("pools", "./pools", extra="dependsOn:\n  - name: cni\n"),
        "pools/pool.yaml": POOL,
        **(extra_files or {}),
    }


def test_chart_crd_of_the_network_plugin_exists_before_flux(tmp_path):
    """Flux's controllers need pod networking: the bootstrap installs the CNI first, and its
    operator registers the CRDs at start-up, so a cold boot does not wait for the HelmRelease."""
    [(_, sev, msg)] = findings(repo(tmp_path, _cilium()), "chart-crd-not-awaited")
    assert sev == "info" and "chart cilium is the cluster's network plugin" in msg


def test_chart_crd_rendered_by_a_kustomize_helmcharts_bootstrap(tmp_path):
    boot = {
        "bootstrap/cni/kustomization.yaml": "helmCharts:\n  - name: cilium\n    repo: https://helm.cilium.io\n    version: 1.16.0\n    releaseName: cilium\n",
    }
    files = _cilium(boot)
    [(_, sev, msg)] = findings(repo(tmp_path, files), "chart-crd-not-awaited")
    assert sev == "info" and "a kustomize helmCharts bootstrap of this repository" in msg and "bootstrap/cni/kustomization.yaml" in msg


def test_ignored_entry_without_namespace_on_a_secret_its_own_external_secret_writes(tmp_path):
    extra = "wait: true\nhealthChecks:\n  - apiVersion: v1\n    kind: Secret\n    name: cluster-secrets\n"
    files = {**secrets_tier(extra), **app("web", "dependsOn:\n  - name: secrets\n")}
    [(_, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "info" and "ExternalSecret flux-system/cluster-secrets creates it, and wait: true polls that maker" in msg


MAP_V1BETA1 = (
    "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicy\nmetadata:\n  name: ttl\n"
    "spec:\n  matchConstraints: {}\n"
)


def test_ignored_entry_on_an_api_service_the_kustomization_applies_objects_of(tmp_path):
    """An APIService v1beta1.admissionregistration.k8s.io gate on a Kustomization that applies a
    MutatingAdmissionPolicy of that version: the apply fails until the API is served."""
    extra = (
        "wait: true\nhealthChecks:\n  - apiVersion: apiregistration.k8s.io/v1\n    kind: APIService\n"
        "    name: v1beta1.admissionregistration.k8s.io\n"
    )
    files = {
        "clusters/demo/policies.yaml": ks("policies", "./policies", extra=extra),
        "policies/map.yaml": MAP_V1BETA1,
        **app("web", "dependsOn:\n  - name: policies\n"),
    }
    [(_, sev, msg)] = findings(repo(tmp_path, files), "health-check-never-runs")
    assert sev == "info" and "applies MutatingAdmissionPolicy ttl of admissionregistration.k8s.io/v1beta1" in msg
    files["policies/map.yaml"] = MAP_V1BETA1.replace("v1beta1", "v1")
    [(_, sev, _msg)] = findings(repo(tmp_path / "v1", files), "health-check-never-runs")
    assert sev == "warning"


def test_chart_crd_gap_a_quick_retry_repairs_is_advice(tmp_path):
    """The consumer retries a failed apply within 5 minutes: on a cold boot the gap costs one
    retry. A consumer that retries at its 10m default interval keeps the warning."""
    dep = "dependsOn:\n  - name: cert-manager\n"
    [(_, sev, msg)] = findings(repo(tmp_path, {**cert_manager(), **issuers(dep + "retryInterval: 1m\n")}), "chart-crd-not-awaited")
    assert sev == "info" and "flux-system/issuers retries a failed apply every 1m (retryInterval)" in msg
    [(_, sev, _msg)] = findings(repo(tmp_path / "slow", {**cert_manager(), **issuers(dep + "retryInterval: 10m\n")}), "chart-crd-not-awaited")
    assert sev == "warning"
