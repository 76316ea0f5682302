"""Ownership and prune rules (GitHub issue 4): the decisions behind each rule, on small repos."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fluxgraph.engine import analyze

from .conftest import FIXTURES

OWNERSHIP_RULES = (
    "prunable-shared-namespace",
    "object-applied-twice",
    "prerequisite-without-depends-on",
    "renamed-namespace",
    "cascading-child-deletion",
    "cross-source-depends-on",
    "missing-source",
    "missing-path",
)

GOTK_SYNC = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m0s
  ref:
    branch: main
  url: ssh://git@github.com/example/fleet
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m0s
  path: ./clusters/test
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
"""

GOTK_COMPONENTS = """\
apiVersion: v1
kind: Namespace
metadata:
  name: flux-system
  labels:
    app.kubernetes.io/instance: flux-system
    app.kubernetes.io/part-of: flux
"""


def ks(
    name: str, path: str, extra: str = "", *, namespace: str = "flux-system", source: str = "flux-system"
) -> str:
    body = textwrap.indent(textwrap.dedent(extra).strip(), "  ") + "\n" if extra.strip() else ""
    return (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
        f"metadata:\n  name: {name}\n  namespace: {namespace}\n"
        f"spec:\n  interval: 10m\n  path: {path}\n  prune: true\n"
        f"  sourceRef:\n    kind: GitRepository\n    name: {source}\n" + body
    )


def kfile(*resources: str, namespace: str | None = None) -> str:
    ns = f"namespace: {namespace}\n" if namespace else ""
    return (
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        + ns
        + "resources:\n"
        + "".join(f"  - {r}\n" for r in resources)
    )


def ns(name: str, meta: str = "") -> str:
    return (
        f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n"
        + textwrap.indent(textwrap.dedent(meta).strip(), "  ")
        + "\n"
    )


def cm(name: str, namespace: str | None = None, meta: str = "") -> str:
    n = f"  namespace: {namespace}\n" if namespace else ""
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{n}"
        + textwrap.indent(textwrap.dedent(meta).strip(), "  ")
        + "\ndata:\n  a: b\n"
    )


def repo(tmp_path: Path, files: dict[str, str], *, bootstrap: bool = True) -> Path:
    all_files = dict(files)
    if bootstrap:
        all_files.setdefault("clusters/test/flux-system/gotk-sync.yaml", GOTK_SYNC)
        all_files.setdefault("clusters/test/flux-system/gotk-components.yaml", GOTK_COMPONENTS)
        all_files.setdefault(
            "clusters/test/flux-system/kustomization.yaml", kfile("gotk-components.yaml", "gotk-sync.yaml")
        )
    for rel, text in all_files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def findings(path: Path, rule: str):
    return [f for f in analyze(path, enabled={rule}).findings if f.rule == rule]


# -- the demo repository -------------------------------------------------------------------


def test_homelab_gets_hazard_1_and_nothing_else():
    report = analyze(FIXTURES / "repos" / "homelab", enabled=set(OWNERSHIP_RULES))
    got = [(f.rule, f.location.file, f.location.line, f.severity.value) for f in report.findings]
    assert got == [("prunable-shared-namespace", "platform/cilium/namespace.yaml", 4, "error")]
    msg = report.findings[0].message
    assert "Namespace network" in msg and "flux-system/platform" in msg
    assert "flux-system/apps" in msg and "platform/blocky/" in msg


# -- prunable-shared-namespace -----------------------------------------------------------


def _shared(meta: str = "", name: str = "shared") -> dict[str, str]:
    return {
        "clusters/test/infra.yaml": ks("infra", "./infra"),
        "clusters/test/apps.yaml": ks("apps", "./apps", "dependsOn:\n  - name: infra"),
        "infra/kustomization.yaml": kfile("ns.yaml"),
        "infra/ns.yaml": ns(name, meta),
        "apps/kustomization.yaml": kfile("cm.yaml"),
        "apps/cm.yaml": cm("x", name),
    }


def test_stock_bootstrap_namespace_is_not_reported(tmp_path):
    # every child Kustomization lives in flux-system, declared by the root in gotk-components
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("cm.yaml"),
        "apps/cm.yaml": cm("x", "flux-system"),
    }
    assert findings(repo(tmp_path, files), "prunable-shared-namespace") == []


def test_flux_namespace_declared_by_a_child_is_reported(tmp_path):
    # flux-operator#391: a Kustomization other than the root takes over flux-system
    files = {
        "clusters/test/flux-system/gotk-components.yaml": "# generated by flux bootstrap\n",
        "clusters/test/namespaces.yaml": ks("namespaces", "./namespaces"),
        "namespaces/kustomization.yaml": kfile("flux-system.yaml"),
        "namespaces/flux-system.yaml": ns("flux-system"),
    }
    [f] = findings(repo(tmp_path, files), "prunable-shared-namespace")
    assert f.severity.value == "error" and "Namespace flux-system" in f.message


def test_shared_namespace_reported_and_protection_is_case_insensitive(tmp_path):
    [f] = findings(repo(tmp_path / "a", _shared()), "prunable-shared-namespace")
    assert f.location.file == "infra/ns.yaml" and "Kustomization flux-system/apps" in f.message
    for meta in (
        "annotations:\n  kustomize.toolkit.fluxcd.io/prune: Disabled",
        "labels:\n  kustomize.toolkit.fluxcd.io/prune: disabled",
        "annotations:\n  kustomize.toolkit.fluxcd.io/ssa: ignore",
        "annotations:\n  kustomize.toolkit.fluxcd.io/reconcile: DISABLED",
    ):
        d = tmp_path / str(abs(hash(meta)))
        assert findings(repo(d, _shared(meta)), "prunable-shared-namespace") == [], meta


def test_prune_false_declarer_is_not_reported(tmp_path):
    files = _shared()
    files["clusters/test/infra.yaml"] = ks("infra", "./infra").replace("prune: true", "prune: false")
    assert findings(repo(tmp_path, files), "prunable-shared-namespace") == []


def test_immortal_namespace_is_a_warning(tmp_path):
    files = {
        "clusters/test/infra.yaml": ks("infra", "./infra"),
        "infra/kustomization.yaml": kfile("ns.yaml"),
        "infra/ns.yaml": ns("kube-system", "labels:\n  pod-security.kubernetes.io/enforce: privileged"),
    }
    [f] = findings(repo(tmp_path, files), "prunable-shared-namespace")
    assert f.severity.value == "warning" and "NamespaceLifecycle" in f.message


def test_shared_between_folders_of_one_kustomization(tmp_path):
    files = {
        "clusters/test/platform.yaml": ks("platform", "./platform"),
        "platform/kustomization.yaml": kfile("cilium", "blocky"),
        "platform/cilium/kustomization.yaml": kfile("ns.yaml"),
        "platform/cilium/ns.yaml": ns("network"),
        "platform/blocky/kustomization.yaml": kfile("cm.yaml"),
        "platform/blocky/cm.yaml": cm("blocky", "network"),
    }
    [f] = findings(repo(tmp_path, files), "prunable-shared-namespace")
    assert "platform/blocky/" in f.message


def test_namespace_at_the_top_of_its_kustomization_is_not_shared(tmp_path):
    files = {
        "clusters/test/app.yaml": ks("app", "./app"),
        "app/kustomization.yaml": kfile("ns.yaml", "web", "db"),
        "app/ns.yaml": ns("app"),
        "app/web/kustomization.yaml": kfile("cm.yaml"),
        "app/web/cm.yaml": cm("web", "app"),
        "app/db/kustomization.yaml": kfile("cm.yaml"),
        "app/db/cm.yaml": cm("db", "app"),
    }
    assert findings(repo(tmp_path, files), "prunable-shared-namespace") == []


def test_namespace_from_a_component_outside_the_build_is_not_a_folder_of_its_own(tmp_path):
    files = {
        "clusters/test/app.yaml": ks("app", "./apps/app"),
        "apps/app/kustomization.yaml": kfile("web")
        + "components:\n  - ../../components/namespace\nnamespace: app\n",
        "apps/app/web/kustomization.yaml": kfile("cm.yaml"),
        "apps/app/web/cm.yaml": cm("web"),
        "components/namespace/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n  - ns.yaml\n",
        "components/namespace/ns.yaml": ns("app"),
    }
    assert findings(repo(tmp_path, files), "prunable-shared-namespace") == []


# -- object-applied-twice -----------------------------------------------------------------


def test_cluster_scoped_object_ignores_namespace(tmp_path):
    role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n  namespace: {ns}\nrules: []\n"
    files = {
        "clusters/test/a.yaml": ks("a", "./a"),
        "clusters/test/b.yaml": ks("b", "./b"),
        "a/kustomization.yaml": kfile("r.yaml"),
        "a/r.yaml": role.format(ns="one"),
        "b/kustomization.yaml": kfile("r.yaml"),
        "b/r.yaml": role.format(ns="two"),
    }
    [f] = findings(repo(tmp_path, files), "object-applied-twice")
    assert "ClusterRole/reader is applied by 2 Kustomizations" in f.message


def test_if_not_present_side_is_not_a_conflict(tmp_path):
    files = {
        "clusters/test/a.yaml": ks("a", "./a"),
        "clusters/test/b.yaml": ks("b", "./b"),
        "a/kustomization.yaml": kfile("cm.yaml"),
        "a/cm.yaml": cm("seed", "default"),
        "b/kustomization.yaml": kfile("cm.yaml"),
        "b/cm.yaml": cm("seed", "default", "annotations:\n  kustomize.toolkit.fluxcd.io/ssa: IfNotPresent"),
    }
    assert findings(repo(tmp_path, files), "object-applied-twice") == []


def test_kustomization_whose_path_holds_its_own_manifest(tmp_path):
    # no kustomization.yaml in apps/x: Flux lists ks.yaml too, so x applies itself
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("x/ks.yaml"),
        "apps/x/ks.yaml": ks("x", "./apps/x"),
        "apps/x/app/kustomization.yaml": kfile("cm.yaml"),
        "apps/x/app/cm.yaml": cm("x", "default"),
    }
    [f] = findings(repo(tmp_path, files), "object-applied-twice")
    assert "Kustomization flux-system/x is applied by 2 Kustomizations" in f.message


def test_root_applying_itself_is_one_declaration(tmp_path):
    assert findings(repo(tmp_path, {}), "object-applied-twice") == []


# -- prerequisite-without-depends-on ------------------------------------------------------


def _prereq(apps_extra: str = "") -> dict[str, str]:
    return {
        "clusters/test/infra.yaml": ks("infra", "./infra"),
        "clusters/test/configs.yaml": ks("configs", "./configs", "dependsOn:\n  - name: infra"),
        "clusters/test/apps.yaml": ks("apps", "./apps", apps_extra),
        "infra/kustomization.yaml": kfile("ns.yaml"),
        "infra/ns.yaml": ns("team", "annotations:\n  kustomize.toolkit.fluxcd.io/prune: disabled"),
        "configs/kustomization.yaml": kfile("cm.yaml"),
        "configs/cm.yaml": cm("c", "default"),
        "apps/kustomization.yaml": kfile("cm.yaml"),
        "apps/cm.yaml": cm("a", "team"),
    }


def test_transitive_depends_on_orders_the_namespace(tmp_path):
    assert len(findings(repo(tmp_path / "a", _prereq()), "prerequisite-without-depends-on")) == 1
    assert (
        findings(
            repo(tmp_path / "b", _prereq("dependsOn:\n  - name: configs")), "prerequisite-without-depends-on"
        )
        == []
    )


def test_parent_declared_namespace_is_ordered_before_children(tmp_path):
    files = {
        "clusters/test/team-ns.yaml": ns(
            "team", "annotations:\n  kustomize.toolkit.fluxcd.io/prune: disabled"
        ),
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("cm.yaml"),
        "apps/cm.yaml": cm("a", "team"),
    }
    assert findings(repo(tmp_path, files), "prerequisite-without-depends-on") == []


def test_namespace_declared_by_own_child_is_a_dead_end(tmp_path):
    files = {
        "clusters/test/secret.yaml": cm("token", "team"),
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("ns.yaml"),
        "apps/ns.yaml": ns("team", "annotations:\n  kustomize.toolkit.fluxcd.io/prune: disabled"),
    }
    [f] = findings(repo(tmp_path, files), "prerequisite-without-depends-on")
    assert f.kustomization == "flux-system/flux-system" and "on a new cluster" in f.message


# -- renamed-namespace -------------------------------------------------------------------


def test_placeholder_and_template_renames_are_intentional(tmp_path):
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("a", "b", "c"),
        "apps/a/kustomization.yaml": kfile("ns.yaml", namespace="flux-system"),
        "apps/a/ns.yaml": ns("_", "annotations:\n  kustomize.toolkit.fluxcd.io/prune: disabled"),
        # one template Namespace ("not-used") renamed into two namespaces
        "apps/b/kustomization.yaml": kfile("../../tmpl", namespace="b"),
        "apps/c/kustomization.yaml": kfile("../../tmpl", "cm.yaml", namespace="c"),
        "apps/c/cm.yaml": cm("c"),
        "tmpl/kustomization.yaml": kfile("ns.yaml"),
        "tmpl/ns.yaml": ns("not-used"),
    }
    assert findings(repo(tmp_path, files), "renamed-namespace") == []


def test_protected_target_namespace_rename_is_a_warning(tmp_path):
    files = {
        "clusters/test/develop.yaml": ks("develop", "./develop", "targetNamespace: flux-system"),
        "develop/kustomization.yaml": kfile("ns.yaml"),
        "develop/ns.yaml": ns("develop-test", "annotations:\n  kustomize.toolkit.fluxcd.io/prune: disabled"),
    }
    [f] = findings(repo(tmp_path, files), "renamed-namespace")
    assert f.severity.value == "warning" and "takes over flux-system" in f.message


def test_existing_namespace_renamed_into_the_app_namespace(tmp_path):
    # a copy of the flux-system Namespace in a build with targetNamespace: flux-system no longer
    # declares flux-system (nothing else does): it becomes Namespace app
    files = {
        "clusters/test/flux-system/gotk-components.yaml": "# generated by flux bootstrap\n",
        "clusters/test/app.yaml": ks("app", "./app", "targetNamespace: app"),
        "app/kustomization.yaml": kfile("ns.yaml", "cm.yaml"),
        "app/ns.yaml": ns("flux-system"),
        "app/cm.yaml": cm("settings"),
    }
    [f] = findings(repo(tmp_path, files), "renamed-namespace")
    assert f.severity.value == "error"
    assert "flux-system is in use" in f.message and "no other object declares it" in f.message


def test_overlay_renaming_a_base_namespace_declared_elsewhere(tmp_path):
    files = {
        "clusters/test/prod.yaml": ks("prod", "./base"),
        "clusters/test/staging.yaml": ks("staging", "./staging"),
        "staging/kustomization.yaml": kfile("../base", namespace="podinfo-staging"),
        "base/kustomization.yaml": kfile("ns.yaml", "cm.yaml"),
        "base/ns.yaml": ns("podinfo"),
        "base/cm.yaml": cm("x", "podinfo"),
    }
    assert findings(repo(tmp_path, files), "renamed-namespace") == []


def test_rename_into_unused_namespace_is_an_overlay(tmp_path):
    files = {
        "clusters/test/app.yaml": ks("app", "./overlay"),
        "overlay/kustomization.yaml": kfile("../base", namespace="app-staging"),
        "base/kustomization.yaml": kfile("ns.yaml", "cm.yaml"),
        "base/ns.yaml": ns("app"),
        "base/cm.yaml": cm("x", "app"),
    }
    assert findings(repo(tmp_path, files), "renamed-namespace") == []


def test_renamed_namespace_is_not_reported_twice(tmp_path):
    files = {
        "clusters/test/flux-system/gotk-components.yaml": "# generated by flux bootstrap\n",
        "clusters/test/develop.yaml": ks("develop", "./develop", "targetNamespace: flux-system"),
        "develop/kustomization.yaml": kfile("ns.yaml"),
        "develop/ns.yaml": ns("develop-test"),
    }
    report = analyze(repo(tmp_path, files), enabled=set(OWNERSHIP_RULES))
    assert [f.rule for f in report.findings] == ["renamed-namespace"]


# -- cascading-child-deletion --------------------------------------------------------------

PVC = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: default\n{meta}spec:\n  accessModes: [ReadWriteOnce]\n{spec}  resources:\n    requests:\n      storage: 1Gi\n"


def _cascade(
    child_extra: str = "", pvc_meta: str = "", pvc_spec: str = "", parent_prune: bool = True
) -> dict[str, str]:
    files = {
        "clusters/test/data.yaml": ks("data", "./data", child_extra),
        "data/kustomization.yaml": kfile("pvc.yaml"),
        "data/pvc.yaml": PVC.format(meta=pvc_meta, spec=pvc_spec),
    }
    if not parent_prune:
        files["clusters/test/flux-system/gotk-sync.yaml"] = GOTK_SYNC.replace("prune: true", "prune: false")
    return files


@pytest.mark.parametrize(
    ("kwargs", "fires"),
    [
        ({}, True),
        ({"child_extra": "deletionPolicy: Orphan"}, False),
        ({"child_extra": "suspend: true"}, False),
        ({"child_extra": "deletionPolicy: Delete"}, True),
        ({"parent_prune": False}, False),
        ({"pvc_meta": "  annotations:\n    kustomize.toolkit.fluxcd.io/prune: disabled\n"}, False),
        (
            {
                "pvc_spec": "  dataSourceRef:\n    apiGroup: volsync.backube\n    kind: ReplicationDestination\n    name: data-dst\n"
            },
            False,
        ),
    ],
)
def test_cascading_child_deletion_policy(tmp_path, kwargs, fires):
    got = findings(repo(tmp_path, _cascade(**kwargs)), "cascading-child-deletion")
    assert bool(got) == fires, kwargs


def test_delete_policy_without_prune_still_deletes(tmp_path):
    files = _cascade("deletionPolicy: WaitForTermination")
    files["clusters/test/data.yaml"] = files["clusters/test/data.yaml"].replace("prune: true", "prune: false")
    [f] = findings(repo(tmp_path, files), "cascading-child-deletion")
    assert "deletionPolicy WaitForTermination" in f.message


# -- cross-source-depends-on --------------------------------------------------------------


def _cross(url: str) -> dict[str, str]:
    src = (
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: other\n  namespace: flux-system\n"
        f"spec:\n  interval: 10m\n  ref:\n    tag: v1.0.0\n  url: {url}\n"
    )
    return {
        "clusters/test/src.yaml": src,
        "clusters/test/infra.yaml": ks("infra", "./infra", source="other"),
        "clusters/test/apps.yaml": ks("apps", "./apps", "dependsOn:\n  - name: infra"),
        "infra/kustomization.yaml": kfile("cm.yaml"),
        "infra/cm.yaml": cm("i", "default"),
        "apps/kustomization.yaml": kfile("cm.yaml"),
        "apps/cm.yaml": cm("a", "default"),
    }


def test_cross_source_only_within_this_repository(tmp_path):
    [f] = findings(
        repo(tmp_path / "same", _cross("https://github.com/example/fleet.git")), "cross-source-depends-on"
    )
    assert f.severity.value == "info" and f.location.file == "clusters/test/apps.yaml"
    assert (
        findings(
            repo(tmp_path / "other", _cross("https://github.com/example/platform")), "cross-source-depends-on"
        )
        == []
    )


# -- missing-source / missing-path --------------------------------------------------------


def test_flux_operator_root_source_is_not_missing(tmp_path):
    files = {
        "bootstrap/flux-instance.yaml": (
            "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n  namespace: flux-system\n"
            "spec:\n  distribution:\n    version: 2.x\n  sync:\n    kind: GitRepository\n    url: https://github.com/example/fleet\n"
            "    ref: refs/heads/main\n    path: kubernetes/flux\n"
        ),
        "kubernetes/flux/apps.yaml": ks("apps", "./kubernetes/apps"),
        "kubernetes/apps/kustomization.yaml": kfile("cm.yaml"),
        "kubernetes/apps/cm.yaml": cm("a", "default"),
    }
    path = repo(tmp_path, files, bootstrap=False)
    report = analyze(path, enabled={"missing-source"})
    assert report.repo.clusters[0].discovered_by.startswith("flux-operator")
    assert report.findings == []


def test_source_created_by_an_applied_flux_instance_or_resource_set(tmp_path):
    files = {
        "clusters/test/instance.yaml": (
            "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n  namespace: tenants\n"
            "spec:\n  sync:\n    kind: OCIRepository\n    url: oci://ghcr.io/example/fleet\n    ref: latest\n    path: ./\n"
        ),
        "clusters/test/rset.yaml": (
            "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata:\n  name: previews\n  namespace: flux-system\n"
            "spec:\n  resources:\n    - apiVersion: source.toolkit.fluxcd.io/v1\n      kind: GitRepository\n"
            "      metadata:\n        name: pr-<< inputs.id >>\n        namespace: flux-system\n"
        ),
        "clusters/test/a.yaml": ks("a", "./apps", source="pr-42"),
        "clusters/test/b.yaml": ks("b", "./apps", namespace="tenants").replace(
            "kind: GitRepository\n    name: flux-system", "kind: OCIRepository\n    name: tenants"
        ),
        "clusters/test/c.yaml": ks("c", "./apps", source="nowhere"),
        "apps/kustomization.yaml": kfile("cm.yaml"),
        "apps/cm.yaml": cm("a", "default"),
    }
    got = findings(repo(tmp_path, files), "missing-source")
    assert [f.kustomization for f in got] == ["flux-system/c"]


def test_path_with_cluster_only_variable_is_not_judged(tmp_path):
    parent = ks(
        "apps",
        "./apps",
        "postBuild:\n  substituteFrom:\n    - kind: Secret\n      name: cluster-secrets",
    )
    files = {
        "clusters/test/apps.yaml": parent,
        "apps/kustomization.yaml": kfile("child.yaml"),
        "apps/child.yaml": ks("child", "./deploy/${CLUSTER_NAME}"),
    }
    assert findings(repo(tmp_path, files), "missing-path") == []
    # without substitution by the parent the literal ${CLUSTER_NAME} directory is looked for
    files["clusters/test/apps.yaml"] = ks("apps", "./apps")
    [f] = findings(repo(tmp_path / "literal", files), "missing-path")
    assert "${CLUSTER_NAME}" in f.message
