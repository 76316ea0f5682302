"""The Flux reconcile model of fixtures/repos/features (and features-operator) through
``fluxgraph.load`` and the ``graph`` command: discovery, effective specs, substitution,
sources, selection and errors. What each part of the fixture models is in its README.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import fluxgraph
from fluxgraph.cli import main
from fluxgraph.envsubst import UNKNOWN
from fluxgraph.export import to_json
from fluxgraph.model import FluxgraphError

from .conftest import FIXTURES

FEATURES = FIXTURES / "repos" / "features"
OPERATOR = FIXTURES / "repos" / "features-operator"


@pytest.fixture(scope="module")
def repo():
    return fluxgraph.load(FEATURES)


@pytest.fixture(scope="module")
def lab(repo):
    return next(c for c in repo.clusters if c.name == "clusters/lab")


@pytest.fixture(scope="module")
def edge(repo):
    return next(c for c in repo.clusters if c.name == "clusters/edge")


def objects(ks):
    return {str(o.ref): o for o in ks.objects}


def test_discovers_both_clusters(repo):
    assert [(c.root_dir, c.root_id, c.discovered_by) for c in repo.clusters] == [
        ("clusters/edge", "flux-system/flux-system", "flux bootstrap (gotk-sync.yaml)"),
        ("clusters/lab", "flux-system/flux-system", "flux bootstrap (gotk-sync.yaml)"),
    ]
    assert all(c.strict for c in repo.clusters)


def test_lab_kustomizations(lab):
    assert {k: (n.parent, n.status) for k, n in lab.kustomizations.items()} == {
        "flux-system/flux-system": (None, "built"),
        "flux-system/apps": ("flux-system/flux-system", "built"),
        "flux-system/podinfo": ("flux-system/apps", "built"),
        "flux-system/cluster-vars": ("flux-system/flux-system", "built"),
        "flux-system/artifacts": ("flux-system/flux-system", "built"),
        "flux-system/policies": ("flux-system/flux-system", "built"),
        "flux-system/external-sources": ("flux-system/flux-system", "built"),
        "flux-system/podinfo-oci": ("flux-system/external-sources", "external"),
        "flux-system/platform": ("flux-system/external-sources", "external"),
        "flux-system/decommissioned": ("flux-system/flux-system", "missing-path"),
        "flux-system/target-namespace": ("flux-system/flux-system", "built"),
        "flux-system/prefixed": ("flux-system/flux-system", "built"),
        "flux-system/overlay": ("flux-system/flux-system", "built"),
        **{
            f"flux-system/kustomize-{f}": ("flux-system/flux-system", "built")
            for f in (
                "generated",
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
                "helm-charts",
                "remote",
            )
        },
    }


def test_root_builds_a_generated_kustomization(lab):
    root = lab.kustomizations["flux-system/flux-system"]
    assert root.build_dir == "clusters/lab"
    assert "clusters/lab/flux-system/kustomization.yaml" in root.files
    # the root declares itself again through flux-system/gotk-sync.yaml
    assert root.declared_at.file == "clusters/lab/flux-system/gotk-sync.yaml"
    assert {o.ref.kind for o in root.objects} == {"GitRepository", "Kustomization"}


def test_parent_patches_inject_postbuild_and_prune(lab):
    """The onedr0p pattern: `apps` patches every child Kustomization it applies."""
    child = lab.kustomizations["flux-system/podinfo"]
    spec = child.spec
    assert spec.prune is True  # the child declares no prune (default false)
    assert spec.decryption == {"provider": "sops", "secretRef": {"name": "sops-age"}}
    assert spec.post_build is not None
    assert [(s.kind, s.name) for s in spec.post_build.substitute_from] == [("ConfigMap", "cluster-vars"), ("Secret", "cluster-secrets")]
    assert (child.declared_at.file, child.declared_at.line) == ("flux/apps/app.yaml", 3)


def test_parent_substitution_resolves_child_name_and_path(lab):
    child = lab.kustomizations["flux-system/podinfo"]
    # metadata.name ${APP}, spec.path ./apps/${CLUSTER}, targetNamespace ${APP}
    assert child.spec.path == "./apps/lab"
    assert child.build_dir == "apps/lab"
    assert child.spec.target_namespace == "podinfo"
    assert "Kustomization/flux-system/${APP}" not in {o.ref.key for o in lab.kustomizations["flux-system/apps"].objects}
    applied = lab.kustomizations["flux-system/apps"].objects[0]
    assert applied.ref.name == "podinfo" and applied.pre_substitution["metadata"]["name"] == "${APP}"
    # the Namespace `_` of apps/base is renamed to the targetNamespace
    assert set(objects(child)) == {
        "Namespace/podinfo",
        "Deployment/podinfo/podinfo",
        "Service/podinfo/podinfo",
        "Ingress/podinfo/podinfo",
        "ConfigMap/podinfo/podinfo-alerts",
        "ConfigMap/podinfo/podinfo-dashboard",
    }


def test_substitute_from_an_object_another_kustomization_applies(lab):
    apps = lab.kustomizations["flux-system/apps"]
    assert apps.variables == {"CLUSTER": "lab", "APP": "podinfo", "DOMAIN": "lab.example.com", "REPLICAS": "2"}
    assert set(apps.variable_origin.values()) == {"ConfigMap/flux-system/cluster-vars"}
    assert not apps.missing_substitute_from
    producer = lab.find_objects("ConfigMap", "flux-system", "cluster-vars")
    assert [o.owner for o in producer] == ["flux-system/cluster-vars"]


def test_sops_values_are_unknown(lab):
    child = lab.kustomizations["flux-system/podinfo"]
    assert child.variables["ALERT_WEBHOOK"] is UNKNOWN
    assert child.variables["SMTP_PASSWORD"] is UNKNOWN
    assert child.variable_origin["ALERT_WEBHOOK"] == "Secret/flux-system/cluster-secrets"
    assert not child.substitution_errors
    objs = objects(child)
    deploy = objs["Deployment/podinfo/podinfo"].data
    assert deploy["spec"]["replicas"] == 2  # "${REPLICAS:=1}" re-read as an integer
    host = objs["Ingress/podinfo/podinfo"].data["spec"]["rules"][0]["host"]
    assert host == "podinfo.lab.example.com"
    assert objs["ConfigMap/podinfo/podinfo-alerts"].data["data"]["cluster"] == "lab"


def test_substitution_opt_out(lab):
    dash = objects(lab.kustomizations["flux-system/podinfo"])["ConfigMap/podinfo/podinfo-dashboard"]
    assert dash.substitution == "disabled"
    assert "${DS_PROMETHEUS}" in dash.data["data"]["podinfo.json"]


def test_target_namespace(lab):
    ks = lab.kustomizations["flux-system/target-namespace"]
    assert set(objects(ks)) == {
        "Namespace/tools",
        "Deployment/tools/it-tools",
        "ConfigMap/tools/it-tools-config",
        "PriorityClass/tools-low",
    }


def test_name_prefix_and_suffix(lab):
    ks = lab.kustomizations["flux-system/prefixed"]
    objs = objects(ks)
    assert set(objs) == {"Namespace/canary", "ConfigMap/canary/lab-echo-config-canary", "Deployment/canary/lab-echo-canary"}
    env_from = objs["Deployment/canary/lab-echo-canary"].data["spec"]["template"]["spec"]["containers"][0]["envFrom"]
    assert env_from == [{"configMapRef": {"name": "lab-echo-config-canary"}}]


def test_patches_images_components_and_common_metadata(lab):
    ks = lab.kustomizations["flux-system/overlay"]
    objs = objects(ks)
    page = objs["Deployment/status/status-page"].data
    probe = objs["Deployment/status/status-probe"].data
    web = page["spec"]["template"]["spec"]["containers"][0]
    # spec.images replaces the kustomization.yaml entry of the same name
    assert web["image"] == "ghcr.io/example/status-page:2.0.1"
    # spec.patches: a labelSelector target (both) and a JSON 6902 one (status-page)
    for d in (page, probe):
        assert d["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/arch": "arm64"}
    assert page["spec"]["replicas"] == 2 and "replicas" not in probe["spec"]
    # spec.components, relative to spec.path
    assert web["readinessProbe"] == {"httpGet": {"path": "/healthz", "port": "http"}}
    assert "flux/components/probes/kustomization.yaml" in ks.files
    # commonMetadata on every object, after the build
    for d in (page, probe):
        assert d["metadata"]["labels"]["example.com/managed-by"] == "flux"
        assert d["metadata"]["annotations"] == {"example.com/contact": "ops@example.com"}


def test_artifact_generator_maps_the_external_artifact(lab):
    src = lab.sources["ExternalArtifact/flux-system/shared-policies"]
    assert src.in_repo and src.path_map == (("", "shared/policies"),)
    assert src.location.file == "flux/artifacts/artifactgenerator.yaml"
    ks = lab.kustomizations["flux-system/policies"]
    assert (ks.source_id, ks.build_dir) == ("ExternalArtifact/flux-system/shared-policies", "shared/policies")
    assert set(objects(ks)) == {"LimitRange/default/default-limits"}


def test_external_sources_are_shown_not_walked(lab):
    for ks_id, src_id, url in (
        ("flux-system/podinfo-oci", "OCIRepository/flux-system/podinfo-manifests", "oci://ghcr.io/stefanprodan/manifests/podinfo"),
        ("flux-system/platform", "GitRepository/flux-system/platform", "https://github.com/example/platform"),
    ):
        ks = lab.kustomizations[ks_id]
        assert (ks.status, ks.incomplete, ks.build_dir, ks.objects) == ("external", True, None, [])
        [p] = ks.problems
        assert p.code == "not-evaluated-source" and p.not_evaluated and src_id in p.message
        src = lab.sources[src_id]
        assert (src.in_repo, src.url, src.owner) == (False, url, "flux-system/external-sources")


def test_missing_path_is_reported_with_file_and_line(lab):
    ks = lab.kustomizations["flux-system/decommissioned"]
    [p] = ks.problems
    assert p.code == "missing-path" and not p.not_evaluated
    assert (p.location.file, p.location.line) == ("clusters/lab/missing-path.yaml", 3)
    assert "'./flux/decommissioned'" in p.message and "kustomization path not found" in p.message


def test_not_evaluated_kustomize_features_mark_the_kustomization_incomplete(lab):
    for f, code in (("helm-charts", "not-evaluated-plugin"), ("remote", "not-evaluated-remote")):
        ks = lab.kustomizations[f"flux-system/kustomize-{f}"]
        assert ks.status == "built" and ks.incomplete
        assert [(p.code, p.kustomization) for p in ks.problems] == [(code, ks.id)]


def test_edge_cluster(edge):
    assert sorted(edge.kustomizations) == ["flux-system/flux-system", "flux-system/podinfo"]
    ks = edge.kustomizations["flux-system/podinfo"]
    assert (ks.build_dir, ks.variables) == ("apps/edge", {"DOMAIN": "edge.example.com"})
    deploy = objects(ks)["Deployment/podinfo/podinfo"].data
    assert deploy["spec"]["replicas"] == 1  # ${REPLICAS:=1}
    assert deploy["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"memory": "64Mi"}}


def test_flux_operator_layout():
    repo = fluxgraph.load(OPERATOR)
    [c] = repo.clusters
    assert (c.root_dir, c.discovered_by) == ("kubernetes/flux/cluster", "flux-operator FluxInstance sync.path")
    root = c.kustomizations[c.root_id]
    assert root.spec.path == "./kubernetes/flux/cluster"
    assert c.sources["GitRepository/flux-system/flux-system"].url == "https://github.com/example/operator-lab.git"
    echo = c.kustomizations["flux-system/echo"]
    assert echo.parent == "flux-system/cluster-apps"
    assert echo.spec.effective_timeout == 300  # injected by the parent's patch
    assert echo.variables == {"CLUSTER_DOMAIN": "operator.example.com"}
    ingress = next(o for o in echo.objects if o.ref.kind == "Ingress")
    assert ingress.data["spec"]["rules"][0]["host"] == "echo.operator.example.com"
    assert {str(o.ref) for o in echo.objects} == {"Deployment/echo/echo", "Service/echo/echo", "Ingress/echo/echo"}


# -- selection and errors --------------------------------------------------------------


def test_env_and_cluster_select_one_cluster():
    assert [c.name for c in fluxgraph.load(FEATURES, env="edge").clusters] == ["clusters/edge"]
    assert [c.name for c in fluxgraph.load(FEATURES, cluster="clusters/lab").clusters] == ["clusters/lab"]
    assert [c.name for c in fluxgraph.load(FEATURES, cluster="./clusters/lab/").clusters] == ["clusters/lab"]


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"env": "staging"}, "clusters/staging: no such cluster directory"),
        ({"cluster": "clusters/nope"}, "clusters/nope: no such cluster directory"),
        ({"cluster": "clusters/lab", "env": "edge"}, "either --cluster or --env"),
        ({"cluster": "../outside"}, "--cluster ../outside"),
    ],
)
def test_bad_selection(kwargs, needle):
    with pytest.raises(FluxgraphError) as e:
        fluxgraph.load(FEATURES, **kwargs)
    assert needle in str(e.value)


@pytest.fixture
def no_cluster(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "configmap.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lonely\n")
    return tmp_path


def test_a_path_with_no_cluster(no_cluster):
    with pytest.raises(FluxgraphError) as e:
        fluxgraph.load(no_cluster)
    assert str(e.value).startswith(f"{no_cluster}: no Flux cluster found")


def test_cli_exit_2_without_a_cluster(no_cluster):
    res = CliRunner().invoke(main, ["graph", str(no_cluster)])
    assert res.exit_code == 2
    assert f"fluxgraph: error: {no_cluster}: no Flux cluster found" in res.output
    res = CliRunner().invoke(main, ["graph", str(no_cluster / "missing")])
    assert res.exit_code == 2
    assert str(no_cluster / "missing") in res.output


def test_cli_graph_text():
    res = CliRunner().invoke(main, ["graph", str(FEATURES), "--env", "lab"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "cluster clusters/lab (flux bootstrap (gotk-sync.yaml)): 27 Kustomizations, 1 HelmReleases, 118 objects"
    assert lines[1].startswith("flux-system/flux-system  ./clusters/lab  (prune)")
    assert "├── flux-system/apps  ./flux/apps  (prune, postBuild)  1 objects dependsOn: flux-system/cluster-vars" in lines
    assert "│   └── flux-system/podinfo  ./apps/lab  (prune, postBuild, ns=podinfo)  6 objects" in lines
    assert "├── flux-system/decommissioned  ./flux/decommissioned  (prune)  0 objects [missing-path]" in lines
    assert "│   ├── flux-system/platform  ./deploy/lab  (prune)  0 objects [external]" in lines
    assert "├── flux-system/kustomize-remote  ./kustomize/remote  (prune)  1 objects [incomplete]" in lines


def test_cli_graph_json():
    res = CliRunner().invoke(main, ["graph", str(FEATURES), "--format", "json", "--cluster", "clusters/edge"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    edge = fluxgraph.load(FEATURES, env="edge")
    assert doc == json.loads(json.dumps(to_json(edge.clusters, edge.problems)))
    assert doc["problems"] == []  # a check scoped to one cluster judges nothing else
    [cluster] = doc["clusters"]
    assert cluster["cluster"]["path"] == "clusters/edge"
    podinfo = next(k for k in cluster["kustomizations"] if k["id"] == "flux-system/podinfo")
    assert podinfo["postBuild"] == {"substitute": {"DOMAIN": "edge.example.com"}, "substituteFrom": [], "substituteStrategy": "WithVariables"}
    assert [(o["kind"], o["namespace"], o["name"]) for o in podinfo["inventory"]] == [
        ("Deployment", "podinfo", "podinfo"),
        ("Ingress", "podinfo", "podinfo"),
        ("Namespace", "", "podinfo"),
        ("Service", "podinfo", "podinfo"),
    ]


def test_discovery_does_not_parse_application_directories_whole(tmp_path):
    """A clusters/<name> directory is a cluster when it holds Flux objects only: the first other
    object settles it, and files without a sync block's source kind are not parsed for
    FluxInstance syncs (a repository of 300 application files cost 0.14 s of parsing)."""
    from fluxgraph.discovery import discover
    from fluxgraph.filecache import FileCache
    from fluxgraph.repofs import RepoFS

    lab = tmp_path / "clusters" / "lab"
    lab.mkdir(parents=True)
    (lab / "apps.yaml").write_text(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n"
        "spec:\n  path: ./apps\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )
    apps = tmp_path / "clusters" / "apps"
    apps.mkdir()
    (apps / "a-deploy.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\n")
    for i in range(20):
        (apps / f"cm-{i}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  volsync: x\n")
    cache = FileCache(RepoFS(tmp_path))
    assert [r.dir for r in discover(cache)] == ["clusters/lab"]
    assert sorted(cache._docs) == ["clusters/apps/a-deploy.yaml", "clusters/lab/apps.yaml"]


def _walk_ks(name: str, path: str, extra: str = "") -> str:
    return (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
        f"metadata:\n  name: {name}\n  namespace: flux-system\n"
        f"spec:\n  interval: 10m\n  path: {path}\n  prune: true\n"
        "  sourceRef:\n    kind: GitRepository\n    name: flux-system\n" + extra
    )


def test_the_walk_holds_back_again_after_a_forced_build(tmp_path):
    """The root applies `waits` (it substitutes from a ConfigMap nothing applies: held back,
    then forced) and `waits` applies `c` (it substitutes from y) before `d` (it applies y).
    After the forced build, `c` is held back again until `d` has applied y, so it is built
    with y's values: no "not in the repository" for y (issue 22)."""
    from fluxgraph.api import load

    from .conftest import gotk_sync, write_tree

    sub = "  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: {}\n"
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n  namespace: {}\ndata:\n  {}\n"
    write_tree(
        tmp_path,
        {
            "clusters/lab/flux-system/gotk-sync.yaml": gotk_sync("lab"),
            "clusters/lab/waits.yaml": _walk_ks("waits", "./waits", sub.format("nowhere")),
            "waits/a-c.yaml": _walk_ks("c", "./c", sub.format("y")),
            "waits/b-d.yaml": _walk_ks("d", "./d"),
            "c/cm.yaml": cm.format("out", "default", "v: ${VALUE}"),
            "d/y.yaml": cm.format("y", "flux-system", "VALUE: from-y"),
        },
    )
    [cluster] = load(tmp_path).clusters
    c = cluster.kustomizations["flux-system/c"]
    [out] = [o for o in c.objects if o.ref.name == "out"]
    assert out.data["data"]["v"] == "from-y"
    assert not any("y" in p.message and "not in the repository" in p.message for p in c.problems)
