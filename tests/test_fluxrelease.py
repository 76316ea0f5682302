"""The Flux a cluster runs, read from the repository (fluxgraph.fluxrelease), and what follows:
strict substitution is the default from Flux 2.9 (kustomize-controller v1.9)."""

from __future__ import annotations

import pytest

import fluxgraph
from fluxgraph.fluxrelease import FluxRelease, parse_minor

from .conftest import flux_ks, gotk_sync, write_tree

APP = {
    "clusters/prod/apps.yaml": flux_ks("apps", "./apps", "postBuild:\n  substitute:\n    A: a\n"),
    "apps/kustomization.yaml": "resources: [cm.yaml]\n",
    "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {b: '${B}'}\n",
}


@pytest.mark.parametrize(
    ("version", "minor", "strict"),
    [("v0.31.5", (0, 31), False), ("2.2.3", (2, 2), False), ("2.9.4", (2, 9), True), ("2.x", (2, 9), True), ("2.7.x", (2, 7), False)],
)
def test_versions(version, minor, strict):
    assert parse_minor(version) == minor and FluxRelease(version).strict is strict


def _cluster(tmp_path, files):
    write_tree(tmp_path, {"clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"), **APP, **files})
    [c] = fluxgraph.load(tmp_path).clusters
    return c


def test_the_gotk_components_header(tmp_path):
    c = _cluster(tmp_path, {
        "clusters/prod/flux-system/gotk-components.yaml": "# Flux Version: v0.41.2\n# Components: source-controller\n",
        "clusters/prod/flux-system/kustomization.yaml": "resources: [gotk-sync.yaml, gotk-components.yaml]\n",
    })
    assert (c.flux.version, c.strict) == ("0.41.2", False)
    assert "gotk-components.yaml: # Flux Version" in c.flux.describe()


def test_a_flux_instance_and_the_feature_gate(tmp_path):
    instance = (
        "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\n"
        "spec:\n  distribution: {version: 2.9.x}\n  kustomize:\n    patches:\n      - patch: |\n"
        "          - op: add\n            path: /spec/template/spec/containers/0/args/-\n"
        "            value: --feature-gates=StrictPostBuildSubstitutions=false\n"
        "        target: {kind: Deployment, name: kustomize-controller}\n"
    )
    c = _cluster(tmp_path, {"clusters/prod/flux-instance.yaml": instance})
    assert (c.flux.version, c.flux.strict_gate, c.strict) == ("2.9.x", False, False)


def test_no_version_is_the_latest_and_the_command_line_wins(tmp_path):
    c = _cluster(tmp_path, {})
    assert (c.flux.version, c.strict) == (None, True)
    assert "assumed" in c.flux.describe()
    [c] = fluxgraph.load(tmp_path, flux_version="2.3").clusters
    assert (c.flux.version, c.strict) == ("2.3", False)


@pytest.mark.parametrize(
    ("distribution", "version", "strict"),
    [
        # 2.x against an operator artifact that carries Flux 2.8 at most (flux-operator v0.46.0)
        ("{version: 2.x, artifact: 'oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:v0.46.0'}", "2.8.x", False),
        # the chart's default version (2.x) when only the artifact is written
        ("{artifact: 'oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:v0.40.0'}", "2.7.x", False),
        # an artifact that carries 2.9, latest, or an exact version: no cap
        ("{version: 2.x, artifact: 'oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:v0.53.0'}", "2.x", True),
        ("{version: 2.x, artifact: 'oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:latest'}", "2.x", True),
        ("{version: 2.9.4, artifact: 'oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:v0.46.0'}", "2.9.4", True),
    ],
)
def test_a_pinned_operator_artifact_caps_a_version_range(tmp_path, distribution, version, strict):
    instance = f"apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {{name: flux, namespace: flux-system}}\nspec:\n  distribution: {distribution}\n"
    c = _cluster(tmp_path, {"clusters/prod/flux-instance.yaml": instance})
    assert (c.flux.version, c.strict) == (version, strict)
    if version.endswith(".x") and version != "2.x":
        assert "the newest in flux-operator-manifests v0." in c.flux.describe()
