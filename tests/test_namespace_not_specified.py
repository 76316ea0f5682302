"""namespace-not-specified (GitHub issue 14, part 1): a namespaced object that reaches the API
server without a namespace, and missing-substitute-from pointing at it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxgraph.engine import analyze

from .conftest import FIXTURES
from .test_ownership_rules import cm, kfile, ks, repo

RULE = "namespace-not-specified"


def findings(path: Path, *rules: str):
    wanted = set(rules or (RULE,))
    return [f for f in analyze(path, enabled=wanted).findings if f.rule in wanted]


def _one(tmp_path: Path, files: dict[str, str]):
    return findings(repo(tmp_path, files))


WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  scope: {scope}
  versions:
    - name: v1
      served: true
      storage: true
"""


def widget(name: str = "blue") -> str:
    return f"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: {name}\nspec: {{}}\n"


# -- the incident -------------------------------------------------------------------------


def test_moved_configmap_that_others_substitute_from():
    report = analyze(FIXTURES / RULE / "bad")
    mine = [f for f in report.findings if f.rule == RULE and f.obj is not None and f.obj.kind == "ConfigMap"]
    assert len(mine) == 1
    f = mine[0]
    assert f.severity.value == "error"
    assert (f.location.file, f.location.line) == ("settings/cluster-settings.yaml", 4)
    assert f.kustomization == "flux-system/settings"
    assert "'ConfigMap/cluster-settings namespace not specified'" in f.message
    assert "Kustomization flux-system/apps substitutes from ConfigMap cluster-settings in namespace flux-system" in f.message
    assert "the build of flux-system/apps fails" in f.message
    # the consumer's finding points at the object, not only at "nothing applies it"
    [msf] = [f for f in report.findings if f.rule == "missing-substitute-from"]
    assert "settings/cluster-settings.yaml:1" in msf.message and "namespace-not-specified" in msf.message
    assert "which nothing in this repository applies" not in msf.message


def test_optional_consumer_builds_without_the_variables(tmp_path):
    got = _one(
        tmp_path,
        {
            "clusters/test/settings.yaml": ks("settings", "./settings"),
            "clusters/test/apps.yaml": ks(
                "apps", "./apps", "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: vars\n      optional: true"
            ),
            "settings/kustomization.yaml": kfile("cm.yaml"),
            "settings/cm.yaml": cm("vars"),
            "apps/kustomization.yaml": kfile("cm.yaml"),
            "apps/cm.yaml": cm("app", "default"),
        },
    )
    [f] = got
    assert "optional" in f.message and "they build without its variables" in f.message


# -- what gives an object a namespace -----------------------------------------------------


@pytest.mark.parametrize(
    "files",
    [
        # spec.targetNamespace
        {"clusters/test/apps.yaml": ks("apps", "./apps", "targetNamespace: team"), "apps/kustomization.yaml": kfile("cm.yaml")},
        # a kustomize namespace: in the build dir's kustomization
        {"clusters/test/apps.yaml": ks("apps", "./apps"), "apps/kustomization.yaml": kfile("cm.yaml", namespace="team")},
        # a kustomize namespace: further in (a base)
        {
            "clusters/test/apps.yaml": ks("apps", "./apps"),
            "apps/kustomization.yaml": kfile("base"),
            "apps/base/kustomization.yaml": kfile("../cm.yaml", namespace="team"),
        },
    ],
    ids=["targetNamespace", "kustomization-namespace", "base-namespace"],
)
def test_namespace_from_the_build_is_enough(tmp_path, files):
    files = {**files, "apps/cm.yaml": cm("settings")}
    assert _one(tmp_path, files) == []


def test_namespace_from_substitution(tmp_path):
    base = {
        "apps/kustomization.yaml": kfile("cm.yaml"),
        "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n  namespace: ${NS}\ndata: {}\n",
    }
    ok = dict(base, **{"clusters/test/apps.yaml": ks("apps", "./apps", "postBuild:\n  substitute:\n    NS: team")})
    assert _one(tmp_path / "ok", ok) == []
    empty = dict(base, **{"clusters/test/apps.yaml": ks("apps", "./apps", "postBuild:\n  substitute:\n    NS: ''")})
    [f] = _one(tmp_path / "empty", empty)
    assert "has metadata.namespace '${NS}', empty after substitution" in f.message


def test_unresolved_namespace_is_not_judged(tmp_path):
    files = {
        # the variable comes from a ConfigMap only the cluster has: ${NS} stays unresolved
        "clusters/test/apps.yaml": ks(
            "apps", "./apps", "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: from-the-cluster"
        ),
        "apps/kustomization.yaml": kfile("cm.yaml"),
        "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n  namespace: ${NS}\ndata: {}\n",
    }
    assert _one(tmp_path, files) == []


# -- scope --------------------------------------------------------------------------------


def test_cluster_scoped_kinds_need_none(tmp_path):
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("crd.yaml", "widget.yaml", "role.yaml", "issuer.yaml"),
        "apps/crd.yaml": WIDGET_CRD.format(scope="Cluster"),
        "apps/widget.yaml": widget(),
        "apps/role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules: []\n",
        "apps/issuer.yaml": "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: ca\nspec: {}\n",
    }
    assert _one(tmp_path, files) == []


def test_namespaced_crd_kind_is_an_error(tmp_path):
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("crd.yaml", "widget.yaml"),
        "apps/crd.yaml": WIDGET_CRD.format(scope="Namespaced"),
        "apps/widget.yaml": widget(),
    }
    [f] = _one(tmp_path, files)
    assert f.severity.value == "error" and "does not know" not in f.message


def test_unknown_kind_is_a_warning_that_says_so(tmp_path):
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("widget.yaml"),
        "apps/widget.yaml": widget(),
    }
    [f] = _one(tmp_path, files)
    assert f.severity.value == "warning"
    assert "Widget.example.com is a kind fluxgraph does not know" in f.message


# -- objects Flux never applies -----------------------------------------------------------


@pytest.mark.parametrize(
    ("meta", "reported"),
    [
        ("annotations:\n  kustomize.toolkit.fluxcd.io/reconcile: disabled", False),
        ("labels:\n  kustomize.toolkit.fluxcd.io/ssa: ignore", False),  # compared case-insensitively
        ("annotations:\n  config.kubernetes.io/local-config: 'true'", False),
        ("annotations:\n  config.kubernetes.io/local-config: 'false'", True),
        ("annotations:\n  kustomize.toolkit.fluxcd.io/ssa: IfNotPresent", True),  # still applied once
    ],
)
def test_objects_flux_never_applies(tmp_path, meta, reported):
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("cm.yaml"),
        "apps/cm.yaml": cm("s", meta=meta),
    }
    assert bool(_one(tmp_path, files)) is reported


# -- one cause, located where a person must change it -------------------------------------


def test_many_objects_of_one_kustomization_are_one_finding(tmp_path):
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("a.yaml", "b.yaml", "c.yaml"),
        "apps/a.yaml": cm("a"),
        "apps/b.yaml": cm("b"),
        "apps/c.yaml": cm("c"),
    }
    [f] = _one(tmp_path, files)
    assert (f.location.file, f.location.line) == ("clusters/test/apps.yaml", 7)  # the first line of its spec
    assert "3 objects: ConfigMap/a, ConfigMap/b, ConfigMap/c" in f.message
    assert {loc.file for loc in f.related} >= {"apps/a.yaml", "apps/b.yaml", "apps/c.yaml"}


def test_generated_configmap_and_child_kustomization(tmp_path):
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - child.yaml\n"
            "configMapGenerator:\n  - name: gen\n    literals:\n      - a=b\n"
        ),
        # a Flux Kustomization object is namespaced too
        "apps/child.yaml": ks("child", "./child").replace("  namespace: flux-system\n", "", 1),
        "child/kustomization.yaml": kfile("cm.yaml"),
        "child/cm.yaml": cm("c", "default"),
    }
    [f] = _one(tmp_path, files)
    assert "2 objects" in f.message and "ConfigMap/gen-" in f.message and "Kustomization/child" in f.message


def test_remote_target_is_judged_the_same(tmp_path):
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps", "kubeConfig:\n  secretRef:\n    name: edge-kubeconfig"),
        "apps/kustomization.yaml": kfile("cm.yaml"),
        "apps/cm.yaml": cm("s"),
    }
    [f] = _one(tmp_path, files)
    assert f.obj is not None and f.obj.target == "Secret/flux-system/edge-kubeconfig"


def test_a_build_not_evaluated_in_full_is_not_judged(tmp_path):
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        # a PatchTransformer fluxgraph does not run could set the namespace
        "apps/kustomization.yaml": kfile("cm.yaml") + "transformers:\n  - namespace.yaml\n",
        "apps/namespace.yaml": (
            "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: ns\n"
            "patch: '[{\"op\": \"add\", \"path\": \"/metadata/namespace\", \"value\": \"team\"}]'\n"
            "target:\n  kind: ConfigMap\n"
        ),
        "apps/cm.yaml": cm("s"),
    }
    report = analyze(repo(tmp_path, files), enabled={RULE})
    assert [f for f in report.findings if f.rule == RULE] == []
    assert report.not_evaluated  # said, not silent


def test_a_builtin_namespace_transformer_gives_the_namespace(tmp_path):
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps"),
        "apps/kustomization.yaml": kfile("cm.yaml") + "transformers:\n  - namespace.yaml\n",
        "apps/namespace.yaml": (
            "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata:\n  name: ns\n  namespace: team\n"
        ),
        "apps/cm.yaml": cm("s"),
    }
    report = analyze(repo(tmp_path, files), enabled={RULE})
    assert report.findings == [] and report.not_evaluated == []
    [c] = report.repo.clusters
    assert [o.ref.namespace for o in c.kustomizations["flux-system/apps"].objects] == ["team"]
