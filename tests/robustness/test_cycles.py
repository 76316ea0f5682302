"""Cycles terminate and are detected: kustomize resource cycles, Flux Kustomizations that apply
themselves or each other, dependsOn cycles, and all of them at once."""

from __future__ import annotations

import time

import networkx as nx
import pytest

from fluxgraph.api import load

from .conftest import check_json, findings_of, flux_ks, infra_still_analysed, make_repo, outputs


@pytest.mark.parametrize(
    "files, cycle",
    [
        ({"apps/kustomization.yaml": "resources: [app.yaml, b]\n", "apps/b/kustomization.yaml": "resources: [../]\n"}, "apps -> apps/b -> apps"),
        ({"apps/kustomization.yaml": "resources: [app.yaml, .]\n"}, "apps -> apps"),
        ({"apps/kustomization.yaml": "resources: [app.yaml, ./]\n"}, "apps -> apps"),
        (
            {
                "apps/kustomization.yaml": "resources: [app.yaml, ../lib/a]\n",
                "lib/a/kustomization.yaml": "resources: [../b]\n",
                "lib/b/kustomization.yaml": "resources: [../c]\n",
                "lib/c/kustomization.yaml": "resources: [../a]\n",
            },
            "lib/a -> lib/b -> lib/c -> lib/a",
        ),
        (
            {
                "apps/kustomization.yaml": "resources: [app.yaml]\ncomponents: [../comp]\n",
                "comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncomponents: [../comp]\n",
            },
            "comp -> comp",
        ),
    ],
    ids=["a-b-a", "self-dot", "self-slash", "three", "component"],
)
def test_kustomize_resource_cycles(tmp_path, files, cycle):
    repo = make_repo(tmp_path / "repo", files)
    t = time.process_time()
    report = check_json(repo)
    assert time.process_time() - t < 10
    [f] = findings_of(report, "kustomize-build-error")
    assert cycle in f["message"] and f["line"] >= 1
    infra_still_analysed(load(repo))


def test_flux_kustomization_that_applies_itself(tmp_path):
    repo = make_repo(tmp_path / "repo", {"apps/self.yaml": flux_ks("self", "./apps")})
    model = load(repo)
    c = model.clusters[0]
    node = c.kustomizations["flux-system/self"]
    assert node.parent == "flux-system/apps" and node.status == "built"
    # it declares itself again: recorded, not walked again
    assert [p for p, _loc in node.other_declarations] == ["flux-system/self"]
    assert len(c.kustomizations) == 4
    outputs(repo)


def test_flux_kustomizations_that_apply_each_other(tmp_path):
    files = {"apps/a.yaml": flux_ks("a", "./other"), "other/b.yaml": flux_ks("b", "./apps")}
    repo = make_repo(tmp_path / "repo", files)
    model = load(repo)
    c = model.clusters[0]
    assert {"flux-system/a", "flux-system/b"} <= set(c.kustomizations)
    # apps applies a, a applies b, b applies a again: walked once, the second declaration recorded
    assert c.kustomizations["flux-system/b"].parent == "flux-system/a"
    assert [p for p, _ in c.kustomizations["flux-system/a"].other_declarations] == ["flux-system/b"]
    outputs(repo)


def test_root_applied_again_by_a_child(tmp_path):
    sync = flux_ks("flux-system", "./clusters/prod")
    repo = make_repo(tmp_path / "repo", {"apps/again.yaml": sync})
    model = load(repo)
    root = model.clusters[0].kustomizations["flux-system/flux-system"]
    assert ("flux-system/apps" in [p for p, _ in root.other_declarations])
    outputs(repo)


def test_depends_on_cycles(tmp_path):
    x = flux_ks("x", "./apps", "  dependsOn: [{name: y}]\n")
    y = flux_ks("y", "./infra", "  dependsOn: [{name: z}]\n")
    z = flux_ks("z", "./infra", "  dependsOn: [{name: x}]\n")
    me = flux_ks("me", "./infra", "  dependsOn: [{name: me}]\n")
    repo = make_repo(tmp_path / "repo", {"clusters/prod/cycle.yaml": "---\n".join([x, y, z, me])})
    t = time.process_time()
    model = load(repo)
    report = check_json(repo)
    assert time.process_time() - t < 20
    g = model.clusters[0].graph
    deps = nx.DiGraph((a, b) for a, b, kind in g.edges(data="kind") if kind == "dependsOn")
    cycles = sorted(sorted(c) for c in nx.simple_cycles(deps))
    assert ["ks:flux-system/me"] in cycles
    assert ["ks:flux-system/x", "ks:flux-system/y", "ks:flux-system/z"] in cycles
    if "dependency-cycle" in {r for r in report["summary"]["rules"]}:
        assert findings_of(report, "dependency-cycle")
    outputs(repo)


def test_helmrelease_depends_on_cycle(tmp_path):
    hr = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: {n}, namespace: default}}\n"
        "spec: {{dependsOn: [{{name: {d}}}], chart: {{spec: {{chart: x, sourceRef: {{kind: HelmRepository, name: r}}}}}}}}\n"
    )
    repo = make_repo(tmp_path / "repo", {"apps/hr.yaml": hr.format(n="a", d="b") + "---\n" + hr.format(n="b", d="a")})
    model = load(repo)
    assert {"default/a", "default/b"} <= set(model.clusters[0].helm_releases)
    outputs(repo)


def test_every_cycle_at_once(tmp_path):
    files = {
        "apps/kustomization.yaml": "resources: [app.yaml, b, self.yaml]\n",
        "apps/b/kustomization.yaml": "resources: [../]\n",
        "apps/self.yaml": flux_ks("self", "./apps", "  dependsOn: [{name: self}]\n"),
        "infra/loop.yaml": flux_ks("loop", "./infra", "  dependsOn: [{name: infra}]\n"),
        "clusters/prod/infra.yaml": flux_ks("infra", "./infra", "  dependsOn: [{name: loop}]\n"),
    }
    repo = make_repo(tmp_path / "repo", files)
    t = time.process_time()
    outputs(repo)
    assert time.process_time() - t < 30
