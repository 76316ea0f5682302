"""Flux objects with fields of the wrong type: a located `invalid-flux-object` finding at the
field, Flux's default for the field, and the rest of the repository analysed."""

from __future__ import annotations

import pytest

from fluxgraph import flux
from fluxgraph.api import load
from fluxgraph.kustomize.resource import Origin, Resource
from fluxgraph.yamlio import load_documents

from .conftest import assert_located, check_json, findings_of, infra_still_analysed, make_repo, outputs

HEAD = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: bad\n  namespace: flux-system\n"
SOURCE = "  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"

# spec body (under `spec:`), the line of the offending field, words of the message
SPECS = {
    "path-list": ("  path: [1, 2]\n" + SOURCE, 7, "spec.path"),
    "dependsOn-string": ("  path: ./apps\n  dependsOn: notalist\n" + SOURCE, 8, "spec.dependsOn"),
    "dependsOn-entry": ("  path: ./apps\n  dependsOn: [3]\n" + SOURCE, 8, "spec.dependsOn[0]"),
    "prune-maybe": ("  path: ./apps\n  prune: maybe\n" + SOURCE, 8, "spec.prune"),
    "wait-string": ("  path: ./apps\n  wait: 'yes'\n" + SOURCE, 8, "spec.wait"),
    "interval-list": ("  path: ./apps\n  interval: [1]\n" + SOURCE, 8, "spec.interval"),
    "timeout-int": ("  path: ./apps\n  timeout: 5\n" + SOURCE, 8, "spec.timeout"),
    "postBuild-list": ("  path: ./apps\n  postBuild: []\n" + SOURCE, 8, "spec.postBuild"),
    "substitute-list": ("  path: ./apps\n  postBuild: {substitute: [1]}\n" + SOURCE, 8, "postBuild.substitute"),
    "substitute-value-list": ("  path: ./apps\n  postBuild:\n    substitute:\n      A: [1]\n" + SOURCE, 10, "postBuild.substitute.A"),
    "substitute-value-int": ("  path: ./apps\n  postBuild:\n    substitute:\n      REPLICAS: 3\n" + SOURCE, 10, "postBuild.substitute.REPLICAS"),
    "substituteFrom-map": ("  path: ./apps\n  postBuild: {substituteFrom: {a: 1}}\n" + SOURCE, 8, "substituteFrom"),
    "substituteFrom-kind": ("  path: ./apps\n  postBuild: {substituteFrom: [{kind: Pod, name: x}]}\n" + SOURCE, 8, "kind must be"),
    "patches-string": ("  path: ./apps\n  patches: \"x\"\n" + SOURCE, 8, "spec.patches"),
    "patches-entry": ("  path: ./apps\n  patches: [x]\n" + SOURCE, 8, "spec.patches[0]"),
    "patches-no-patch": ("  path: ./apps\n  patches: [{target: {kind: ConfigMap}}]\n" + SOURCE, 8, "patch string"),
    "patches-target": ("  path: ./apps\n  patches: [{patch: x, target: 5}]\n" + SOURCE, 8, "target"),
    "images-entry": ("  path: ./apps\n  images: [3]\n" + SOURCE, 8, "spec.images[0]"),
    "components-entry": ("  path: ./apps\n  components: [3]\n" + SOURCE, 8, "spec.components[0]"),
    "healthChecks-map": ("  path: ./apps\n  healthChecks: {a: 1}\n" + SOURCE, 8, "spec.healthChecks"),
    "commonMetadata-list": ("  path: ./apps\n  commonMetadata: [1]\n" + SOURCE, 8, "spec.commonMetadata"),
    "decryption-string": ("  path: ./apps\n  decryption: sops\n" + SOURCE, 8, "spec.decryption"),
    "targetNamespace-map": ("  path: ./apps\n  targetNamespace: {a: 1}\n" + SOURCE, 8, "spec.targetNamespace"),
    "namePrefix-int": ("  path: ./apps\n  namePrefix: 3\n" + SOURCE, 8, "spec.namePrefix"),
    "sourceRef-int": ("  path: ./apps\n  sourceRef: 3\n", 8, "spec.sourceRef"),
    "sourceRef-kind": ("  path: ./apps\n  sourceRef: {kind: HelmRepository, name: flux-system}\n", 8, "sourceRef.kind"),
    "sourceRef-namespace": ("  path: ./apps\n  sourceRef: {name: flux-system, namespace: [1]}\n", 8, "sourceRef.namespace"),
}


@pytest.mark.parametrize("case", sorted(SPECS))
def test_wrong_field_type_is_located(tmp_path, case):
    body, line, words = SPECS[case]
    repo = make_repo(tmp_path / "repo", {"clusters/prod/bad.yaml": HEAD + "spec:\n" + body})
    report = check_json(repo)
    mine = findings_of(report, "invalid-flux-object")
    assert mine, report["findings"]
    assert any(f["file"] == "clusters/prod/bad.yaml" and f["line"] == line and words in f["message"] for f in mine), mine
    assert_located(report["findings"])
    infra_still_analysed(load(repo))
    outputs(repo)


@pytest.mark.parametrize(
    "doc, line, words",
    [
        ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: bad\n  namespace: flux-system\nspec: []\n", 6, "no spec mapping"),
        ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: 5\n  namespace: flux-system\nspec: {}\n", 4, "metadata.name"),
        ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: bad\n  namespace: [x]\nspec: {}\n", 5, "metadata.namespace"),
        ("apiVersion: kustomize.toolkit.fluxcd.io/v9\nkind: Kustomization\nmetadata:\n  name: bad\n  namespace: flux-system\n"
         "spec:\n  path: ./apps\n" + SOURCE, 1, "unknown API version"),
    ],
    ids=["spec-list", "name-int", "namespace-list", "unknown-api-version"],
)
def test_invalid_object_shape(tmp_path, doc, line, words):
    repo = make_repo(tmp_path / "repo", {"clusters/prod/bad.yaml": doc})
    report = check_json(repo)
    mine = findings_of(report, "invalid-flux-object")
    assert any(f["line"] == line and words in f["message"] for f in mine), report["findings"]
    infra_still_analysed(load(repo))


def test_metadata_scalar_is_a_build_error(tmp_path):
    """`metadata: 5` is not a Kubernetes object at all: kustomize refuses the file."""
    doc = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: 5\nspec: {}\n"
    repo = make_repo(tmp_path / "repo", {"clusters/prod/bad.yaml": doc})
    report = check_json(repo)
    [f] = findings_of(report, "kustomize-build-error")
    assert f["file"] == "clusters/prod/bad.yaml" and "metadata.name" in f["message"]


HR = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\n  namespace: default\nspec:\n"


@pytest.mark.parametrize(
    "body, words",
    [
        ("  chart: 5\n", "spec.chart"),
        ("  chart: {spec: {chart: [1], sourceRef: {kind: HelmRepository, name: r}}}\n", "spec.chart.spec.chart"),
        ("  chart: {spec: {chart: x, sourceRef: 3}}\n", "sourceRef"),
        ("  chart: {spec: {chart: x, sourceRef: {kind: [1], name: r}}}\n", "sourceRef.kind"),
        ("  chartRef: {kind: OCIRepository}\n", "spec.chartRef"),
        ("  valuesFrom: 5\n", "spec.valuesFrom"),
        ("  valuesFrom: [{kind: ConfigMap}]\n", "spec.valuesFrom[0]"),
        ("  dependsOn: notalist\n", "spec.dependsOn"),
        ("  timeout: forever\n", "spec.timeout"),
        ("  suspend: maybe\n", "spec.suspend"),
    ],
)
def test_helmrelease_wrong_field_types(tmp_path, body, words):
    repo = make_repo(tmp_path / "repo", {"apps/hr.yaml": HR + body})
    report = check_json(repo)
    mine = findings_of(report, "invalid-flux-object")
    assert any(f["file"] == "apps/hr.yaml" and words in f["message"] for f in mine), report["findings"]
    assert_located(report["findings"])


def test_all_wrong_at_once(tmp_path):
    """Every wrong field in one object: one finding per field, one object, no crash."""
    body = "".join(b.replace(SOURCE, "") for b, _l, _w in SPECS.values() if "path:" in b)
    body = "\n".join(dict.fromkeys(ln for ln in body.splitlines() if not ln.startswith("  path:"))) + "\n"
    docs = load_documents("x.yaml", (HEAD + "spec:\n  path: ./apps\n" + body + SOURCE).encode()).documents
    # duplicate keys were merged by the parser; feed what parsed
    res = Resource(docs[0].data, Origin("x.yaml", docs[0].line), docs[0])
    problems: list = []
    spec = flux.parse_kustomization(res, problems)
    assert spec is not None and problems
    assert_located(problems)


def test_parsers_never_raise_on_non_mapping_documents():
    for data in ([], [1], "x", 5, None, {"metadata": []}, {"metadata": {"name": []}}, {"spec": 5}):
        res = Resource(data if isinstance(data, dict) else {"value": data}, Origin("x.yaml", 1))
        problems: list = []
        flux.parse_kustomization(res, problems)
        flux.parse_helmrelease(res, problems)
        assert_located(problems)
