"""Objects applied to another cluster through ``spec.kubeConfig`` (fixtures/repos/hub-spoke,
described in its README): an object's identity includes the cluster it lands on."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

import fluxgraph
from fluxgraph.cli import main
from fluxgraph.engine import analyze
from fluxgraph.export import to_json

from .conftest import FIXTURES

HUB = FIXTURES / "repos" / "hub-spoke"
STAGING = "Secret/staging/cluster-kubeconfig"
PRODUCTION = "Secret/production/cluster-kubeconfig"


@pytest.fixture(scope="module")
def hub():
    [cluster] = fluxgraph.load(HUB).clusters
    return cluster


def test_each_kustomization_knows_where_its_objects_land(hub):
    targets = {k: (ks.home, ks.target) for k, ks in hub.kustomizations.items()}
    assert targets["staging/tenants"] == ("", STAGING)
    assert targets["production/infra-configs"] == ("", PRODUCTION)
    # no kubeConfig: its objects (the HelmRelease objects) stay in the hub
    assert targets["staging/infra-controllers"] == ("", "")
    assert targets["flux-system/hub-infra"] == ("", "")
    # the HelmReleases themselves are patched with the kubeConfig: installed in the spoke
    assert hub.helm_releases["staging/cert-manager"].target == STAGING
    assert hub.helm_releases["staging/cert-manager"].obj.ref.target == ""


def test_the_same_object_on_three_clusters_is_three_objects(hub):
    issuers = sorted(o.ref for o in hub.objects() if o.ref.kind == "ClusterIssuer")
    assert [r.target for r in issuers] == ["", PRODUCTION, STAGING]
    assert len({r.key for r in issuers}) == 3
    assert str(issuers[2]) == f"ClusterIssuer/letsencrypt (kubeConfig {STAGING})"


def test_substitute_from_reads_the_cluster_the_kustomization_lives_in(hub):
    """kustomize-controller builds with ``SubstituteVariables(ctx, r.Client, ...)``: the hub's
    client, whatever the kubeConfig of the apply."""
    ks = hub.kustomizations["staging/infra-configs"]
    assert ks.variables["ACME_EMAIL"] == "ops@example.com"
    assert ks.variable_origin["ACME_EMAIL"] == "ConfigMap/staging/cluster-settings"


def test_depends_on_across_targets_is_kept(hub):
    g = hub.depends_on_graph()
    assert g.has_edge("ks:staging/infra-configs", "ks:staging/infra-controllers")
    assert g.has_edge("ks:staging/infra-configs", "ks:flux-system/hub-infra")


def test_no_finding_on_the_hub_and_spokes():
    assert [(f.rule, f.message) for f in analyze(HUB).findings] == []


def test_without_kubeconfig_the_spokes_objects_are_one_object(tmp_path):
    """The control: the same two Kustomizations applying to the hub fight over one Namespace."""
    repo = tmp_path / "repo"
    shutil.copytree(HUB, repo)
    for env in ("staging", "production"):
        p = repo / "hub" / f"{env}.yaml"
        text = p.read_text()
        tenants, rest = text.split("---\n", 1)
        p.write_text(tenants.replace("  kubeConfig:\n    secretRef:\n      name: cluster-kubeconfig\n", "") + "---\n" + rest)
    twice = [f for f in analyze(repo).findings if f.rule == "object-applied-twice"]
    assert [f.obj and str(f.obj) for f in twice] == ["Namespace/cert-manager"]


def test_a_configmap_applied_to_a_spoke_does_not_feed_a_hub_substitution(tmp_path):
    """Move cluster-settings into the spoke (through a kubeConfig Kustomization): the hub's
    controller cannot read it, so nothing in the repository provides the variables."""
    repo = tmp_path / "repo"
    shutil.copytree(HUB, repo)
    (repo / "clusters/hub/hub-infra.yaml").write_text(
        (repo / "clusters/hub/hub-infra.yaml").read_text()
        + "  kubeConfig:\n    secretRef:\n      name: spoke\n"
    )
    report = analyze(repo)
    missing = sorted(f.message.split(",")[0] for f in report.findings if f.rule == "missing-substitute-from")
    assert missing == [
        "Kustomization production/infra-configs substitutes from ConfigMap production/cluster-settings",
        "Kustomization staging/infra-configs substitutes from ConfigMap staging/cluster-settings",
    ]


def test_kubeconfig_forms():
    from fluxgraph.flux import kube_config_target
    from fluxgraph.kustomize.resource import Origin, Resource

    def target(kc):
        res = Resource({"kind": "Kustomization", "metadata": {"name": "a", "namespace": "ns"}}, Origin("f.yaml", 1))
        problems: list = []
        return kube_config_target(res, {"kubeConfig": kc}, "ns", "Kustomization", problems), [p.message for p in problems]

    assert target({"secretRef": {"name": "kc"}}) == ("Secret/ns/kc", [])
    assert target({"secretRef": {"name": "kc", "key": "value"}}) == ("Secret/ns/kc", [])  # the default key
    assert target({"secretRef": {"name": "kc", "key": "value.yaml"}}) == ("Secret/ns/kc#value.yaml", [])
    assert target({"configMapRef": {"name": "aks"}}) == ("ConfigMap/ns/aks", [])
    assert target({"provider": "aws", "cluster": "arn:aws:eks:eu-west-1:1:cluster/a"}) == (
        "aws:arn:aws:eks:eu-west-1:1:cluster/a",
        [],
    )
    none, problems = target({"provider": "generic"})
    assert none is None and "names no secretRef" in problems[0]


def test_outputs_show_the_target():
    res = CliRunner().invoke(main, ["graph", str(HUB), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    [cluster] = doc["clusters"]
    by_id = {k["id"]: k for k in cluster["kustomizations"]}
    assert by_id["staging/tenants"]["kubeConfig"] == STAGING
    assert by_id["staging/infra-controllers"]["kubeConfig"] is None
    hrs = {h["id"]: h for h in cluster["helmReleases"]}
    assert hrs["production/cert-manager"]["kubeConfig"] == PRODUCTION
    assert doc == json.loads(json.dumps(to_json(fluxgraph.load(HUB).clusters, [])))

    text = CliRunner().invoke(main, ["graph", str(HUB)]).output
    assert f"staging/tenants  ./deploy/tenants  (prune, wait, kubeConfig={STAGING})" in text
    for fmt in ("mermaid", "dot"):
        out = CliRunner().invoke(main, ["graph", str(HUB), "--format", fmt]).output
        assert f"applies to kubeConfig {STAGING}" in out, fmt

    explained = CliRunner().invoke(main, ["explain", "deploy/tenants", str(HUB), "--format", "json"])
    assert explained.exit_code == 0, explained.output
    ex = json.loads(explained.output)
    links = [link for c in ex["clusters"] for owner in c["owners"] for link in owner["chain"]]
    assert {link["id"]: link["targetCluster"] for link in links}["staging/tenants"] == STAGING
    text = CliRunner().invoke(main, ["explain", "deploy/tenants", str(HUB)]).output
    assert f"Namespace/cert-manager (kubeConfig {STAGING})" in text
    assert f"applies to the cluster of kubeConfig {STAGING}" in text
