"""Built-in kinds' fields (issue 23): the schemas fluxgraph reads from kubernetes-validate
(fluxgraph/k8sapi.py) and unknown-kubernetes-field."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxgraph import k8sapi
from fluxgraph.engine import analyze

from .conftest import flux_ks, gotk_sync, write_tree

RULE = "unknown-kubernetes-field"


def _repo(tmp_path: Path, objects: str) -> Path:
    return write_tree(
        tmp_path,
        {
            "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
            "clusters/prod/apps.yaml": flux_ks("apps", "./apps"),
            "apps/objects.yaml": objects,
        },
    )


def _findings(repo: Path):
    report = analyze(repo)
    return report, [f for f in report.findings if f.rule == RULE]


def test_the_newest_release_of_the_package_is_read():
    s = k8sapi.builtin_schemas()
    assert not isinstance(s, str), s
    major, minor = (int(x) for x in s.version.split("."))
    assert (major, minor) >= (1, 31)
    assert s.schema("apps", "v1", "Deployment") is not None
    assert s.schema("", "v1", "ConfigMap") is not None
    assert s.schema("batch", "v1beta1", "CronJob") is None  # removed in Kubernetes 1.25
    assert ("batch", "CronJob") in s.group_kinds


def test_recursive_definitions_reduce_to_shared_references():
    s = k8sapi.builtin_schemas()
    assert not isinstance(s, str)
    props = s.definition("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")["p"]
    assert props["properties"]["a"] is s.definition("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")


def test_a_misspelt_field_deep_in_a_pod_template_is_found_at_its_line(tmp_path):
    repo = _repo(
        tmp_path,
        """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  annotations: {anything: goes}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx
          livenessProbe:
            httpGet: {path: /, port: 80}
            initialDelaySecond: 5
""",
    )
    _, found = _findings(repo)
    assert [(f.location.file, f.location.line) for f in found] == [("apps/objects.yaml", 18)]
    assert "spec.template.spec.containers[0].livenessProbe.initialDelaySecond" in found[0].message
    assert "did you mean spec.template.spec.containers[0].livenessProbe.initialDelaySeconds?" in found[0].message


def test_maps_open_fields_sops_and_the_objects_own_metadata_are_not_fields(tmp_path):
    repo = _repo(
        tmp_path,
        """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
  labels: {any: label}
  weird: kept-by-the-api-server-rules-not-the-schema
data:
  any-key: value
---
apiVersion: v1
kind: Secret
metadata:
  name: token
  namespace: default
stringData:
  token: ENC[AES256_GCM,data:abc=,type:str]
sops:
  version: 3.9.0
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.org
spec:
  group: example.org
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-preserve-unknown-fields: true
""",
    )
    report, found = _findings(repo)
    assert found == []
    assert report.assertions > 0


def test_an_api_version_the_schemas_do_not_serve_is_not_evaluated(tmp_path):
    repo = _repo(
        tmp_path,
        """apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: nightly
  namespace: default
spec:
  schedule: "0 3 * * *"
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: Never}}}}
""",
    )
    report, found = _findings(repo)
    assert found == []
    [p] = [p for p in report.not_evaluated if p.code == "not-evaluated-kubernetes-fields"]
    assert "batch/v1beta1 CronJob" in p.message and (p.location.file, p.location.line) == ("apps/objects.yaml", 1)


def test_without_the_package_the_fields_are_not_evaluated(tmp_path, monkeypatch):
    repo = _repo(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\ndata: {a: b}\n")
    monkeypatch.setattr(k8sapi, "builtin_schemas", lambda: "the kubernetes-validate package is not installed")
    report, found = _findings(repo)
    assert found == []
    [p] = [p for p in report.not_evaluated if p.code == "not-evaluated-kubernetes-fields"]
    assert "not installed" in p.message


@pytest.mark.parametrize("kind_group", [("Kustomization", "kustomize.toolkit.fluxcd.io/v1")])
def test_flux_kinds_are_left_to_unknown_flux_field(tmp_path, kind_group):
    kind, api = kind_group
    repo = _repo(tmp_path, f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: x, namespace: flux-system}}\nspec:\n  interval: 1m\n  path: ./x\n  prune: true\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n  dependOn: []\n")
    _, found = _findings(repo)
    assert found == []
