"""``fluxgraph explain``: target resolution, ownership chains, namespaces, variables,
dependencies, findings and move plans, on fixtures/repos/homelab and fixtures/repos/moves."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import fluxgraph
from fluxgraph import gc
from fluxgraph.cli import main
from fluxgraph.explain import explain, findings_for, resolve_target
from fluxgraph.model import FluxgraphError
from fluxgraph.render.explain_report import render_markdown, render_text

from .conftest import FIXTURES, flux_ks, gotk_sync, write_tree

HOMELAB = FIXTURES / "repos" / "homelab"
MOVES = FIXTURES / "repos" / "moves"


@pytest.fixture(scope="module")
def homelab():
    return fluxgraph.load(HOMELAB)


@pytest.fixture(scope="module")
def operator_repo():
    return fluxgraph.load(MOVES / "helmrelease-crd" / "base")


# -- what TARGET means ----------------------------------------------------------------------------


def test_resolve_target_forms(homelab):
    t = resolve_target(homelab, "platform/cilium")
    assert (t.kind, t.path, t.is_file) == ("path", "platform/cilium", False)
    t = resolve_target(homelab, "platform/cilium/namespace.yaml")
    assert (t.kind, t.path, t.is_file) == ("path", "platform/cilium/namespace.yaml", True)
    t = resolve_target(homelab, "./platform/cilium/")
    assert t.path == "platform/cilium"
    t = resolve_target(homelab, str(HOMELAB / "platform"), cwd=Path("/"))
    assert t.path == "platform"
    assert resolve_target(homelab, "flux-system/platform").ks_id == "flux-system/platform"
    assert (
        resolve_target(homelab, "monitoring").ks_id == "flux-system/monitoring"
    )  # no folder monitoring/ at the root
    assert resolve_target(homelab, "infra-configs").ks_id == "flux-system/infra-configs"
    assert resolve_target(homelab, "ks:apps").ks_id == "flux-system/apps"  # apps/ is also a folder
    assert resolve_target(homelab, "apps").kind == "path"
    t = resolve_target(homelab, "HelmRelease/kube-system/cilium")
    assert (t.kind, t.obj_kind, t.obj_namespace, t.obj_name) == (
        "object",
        "HelmRelease",
        "kube-system",
        "cilium",
    )
    t = resolve_target(homelab, "Namespace/network")
    assert (t.obj_kind, t.obj_namespace, t.obj_name) == ("Namespace", None, "network")
    for bad in ("nope", "flux-system/nope", "path:nope", "obj:lowercase"):
        with pytest.raises(FluxgraphError):
            resolve_target(homelab, bad)


def test_resolve_target_outside_the_repository_is_not_a_path(homelab, tmp_path):
    (tmp_path / "platform").mkdir()
    with pytest.raises(FluxgraphError):
        resolve_target(homelab, "path:../../etc", cwd=tmp_path)


# -- a folder ------------------------------------------------------------------------------------


def test_folder_owner_chain_objects_and_namespace(homelab):
    ex = explain(homelab, resolve_target(homelab, "platform/cilium"))
    [ce] = ex.clusters
    [owner] = ce.owners
    assert owner.ks_id == "flux-system/platform"
    assert "platform/kustomization.yaml" in owner.how
    assert [link.id for link in owner.chain] == ["flux-system/flux-system", "flux-system/platform"]
    plat = owner.chain[-1]
    assert (plat.prune, plat.wait, plat.timeout) == (True, False, "5m")
    assert "substituteFrom ConfigMap/cluster-settings" in (plat.post_build or "")
    assert [str(o.ref) for o in owner.objects][0] == "Namespace/network"  # Namespaces first
    [ns] = [n for n in ce.namespaces if n.name == "network"]
    assert ns.declared_here
    assert [d[0] for d in ns.declarations] == ["flux-system/platform"]
    assert "Deployment/network/cloudflared" in {str(r) for r in ns.residents["flux-system/apps"]}
    assert "Deployment/network/blocky" in {str(r) for r in ns.residents["flux-system/platform"]}


def test_folder_variables_and_their_sources(homelab):
    ex = explain(homelab, resolve_target(homelab, "platform/cilium"))
    vs = {v.name: v for v in ex.clusters[0].variables}
    assert set(vs) == {"LB_POOL_START", "LB_POOL_STOP"}
    [src] = vs["LB_POOL_START"].sources
    assert (src.owner, src.origin, src.provider) == (
        "flux-system/platform",
        "ConfigMap/flux-system/cluster-settings",
        ["flux-system/cluster-settings"],
    )
    assert vs["LB_POOL_START"].uses[0].field == "spec.blocks[0].start"


def test_variables_of_an_owner_without_post_build_are_not_substituted(homelab):
    ex = explain(homelab, resolve_target(homelab, "platform/monitoring"))
    vs = {v.name: v for v in ex.clusters[0].variables}
    assert vs["K3S_API_HOST"].sources[0].substituted is False
    assert ex.clusters[0].owners[0].how.startswith("builds this folder")


def test_dependencies_in_and_out(homelab):
    ex = explain(homelab, resolve_target(homelab, "platform/cilium"))
    [dv] = ex.clusters[0].dependencies
    assert dv.depends_on == {
        "flux-system/cluster-settings": 1,
        "flux-system/infra-configs": 1,
        "flux-system/infra-controllers": 2,
    }
    assert dv.dependents == {"flux-system/apps": 1}


def test_helmrelease_object_and_its_dependents(homelab):
    ex = explain(homelab, resolve_target(homelab, "HelmRelease/kube-system/cilium"))
    [ce] = ex.clusters
    assert [o.ks_id for o in ce.owners] == ["flux-system/infra-controllers"]
    [h] = ce.dependencies[0].helm
    assert h.dependents == [
        "cert-manager/cert-manager",
        "ingress-nginx/ingress-nginx",
        "longhorn-system/longhorn",
    ]
    assert h.depends_on == []


def test_kustomization_target_lists_its_children_and_findings(homelab):
    t = resolve_target(homelab, "flux-system/flux-system")
    ex = explain(homelab, t, findings=findings_for(homelab, t))
    [owner] = ex.clusters[0].owners
    assert "flux-system/apps" in owner.children
    t = resolve_target(homelab, "flux-system/monitoring")
    ex = explain(homelab, t, findings=findings_for(homelab, t))
    rules = {f.rule for f in ex.clusters[0].findings}
    assert "unsubstituted-flux-variable" in rules
    assert all(
        f.kustomization == "flux-system/monitoring" or f.location.file.startswith("platform/monitoring")
        for f in ex.clusters[0].findings
    )


def test_findings_are_filtered_to_the_target(homelab):
    t = resolve_target(homelab, "apps/home-automation")
    ex = explain(homelab, t, findings=findings_for(homelab, t))
    files = {f.location.file for f in ex.clusters[0].findings}
    assert files == {"apps/home-automation/home-assistant/deployment.yaml"}


def test_field_set_by_a_parents_patches_is_marked(tmp_path):
    repo = tmp_path / "r"
    shutil.copytree(MOVES / "rename" / "base", repo)
    k = repo / "clusters/prod/flux-system/gotk-sync.yaml"
    k.write_text(
        k.read_text()
        + "  patches:\n    - patch: |-\n        apiVersion: kustomize.toolkit.fluxcd.io/v1\n        kind: Kustomization\n"
        "        metadata:\n          name: _\n        spec:\n          prune: false\n      target:\n        kind: Kustomization\n"
    )
    loaded = fluxgraph.load(repo)
    ex = explain(loaded, resolve_target(loaded, "apps"), move_to="applications")
    link = ex.clusters[0].owners[0].chain[-1]
    assert link.id == "flux-system/apps" and link.prune is False and "prune" in link.from_parent
    assert all(m.verdict == gc.SAFE for m in ex.clusters[0].move.objects)


# -- moving ---------------------------------------------------------------------------------------


def test_moving_a_component_out_of_a_pruning_parent(homelab):
    ex = explain(homelab, resolve_target(homelab, "platform/cilium"), move_to="network")
    m = ex.clusters[0].move
    assert m is not None
    assert (m.new_owner, m.exists, m.new_path, m.old_owners) == (
        "flux-system/network",
        False,
        "platform/cilium",
        ["flux-system/platform"],
    )
    assert {str(o.ref): o.verdict for o in m.objects} == {
        "Namespace/network": gc.RACE,
        "CiliumL2AnnouncementPolicy/lan": gc.RACE,
        "CiliumLoadBalancerIPPool/lan": gc.RACE,
    }
    [c] = m.cascades
    assert c.cause == "Namespace/network"
    assert ("flux-system/apps", "Deployment/network/cloudflared") in {(o, str(r)) for o, r in c.victims}
    assert {v.name: v.origin for v in m.missing_variables} == {
        "LB_POOL_START": "ConfigMap/flux-system/cluster-settings",
        "LB_POOL_STOP": "ConfigMap/flux-system/cluster-settings",
    }
    assert {n.provider for n in m.needs} == {"flux-system/cluster-settings", "flux-system/infra-configs"}
    assert m.dependents == [("flux-system/apps", "Namespace network")]
    steps = "\n".join(m.steps)
    assert "`prune: false`" in steps and "Merge this on its own" in steps
    assert "postBuild.substituteFrom: {kind: ConfigMap, name: cluster-settings}" in steps
    assert "remove it from platform/kustomization.yaml" in steps
    assert "Restore `prune: true` on flux-system/platform (clusters/homelab/platform.yaml:3)" in steps
    # each step that edits a Kustomization names where it is declared
    assert "Make flux-system/apps (clusters/homelab/apps.yaml:2) dependsOn flux-system/network" in steps


def test_moving_into_an_owner_the_parent_waits_for_is_safe():
    repo = fluxgraph.load(MOVES / "split-depends" / "base")
    ex = explain(repo, resolve_target(repo, "platform/network"), move_to="flux-system/network")
    m = ex.clusters[0].move
    assert m.exists
    assert {o.verdict for o in m.objects} == {gc.SAFE}
    assert not m.missing_variables  # network substitutes LB_RANGE too
    steps = "\n".join(m.steps)
    assert "prune: false" not in steps and "Restore" not in steps


def _split_base(tmp_path: Path, platform_extra: str = "", sync_extra: str = "") -> Path:
    repo = tmp_path / "r"
    shutil.copytree(MOVES / "split" / "base", repo)
    k = repo / "clusters/prod/platform.yaml"
    k.write_text(k.read_text().replace("  sourceRef:", platform_extra + "  sourceRef:"))
    sync = repo / "clusters/prod/flux-system/gotk-sync.yaml"
    sync.write_text(sync.read_text() + sync_extra)
    return repo


def _move_steps(repo: Path) -> str:
    loaded = fluxgraph.load(repo)
    ex = explain(loaded, resolve_target(loaded, "platform/network"), move_to="network")
    m = ex.clusters[0].move
    # the move itself (without protection) races either way: the steps differ
    assert {o.verdict for o in m.objects} == {gc.RACE}
    # an alternative is never numbered as a step: it names the step it replaces
    assert not any(s.startswith("Or, instead") for s in m.steps)
    return "\n".join([*m.steps, *(f"alternative to step {i}: {t}" for i, t in m.alternatives)])


def test_protection_can_share_the_commit_when_the_old_owner_waits_for_its_parent(tmp_path):
    steps = _move_steps(_split_base(tmp_path, "  dependsOn:\n    - name: flux-system\n"))
    assert "This can be part of the commit that moves the objects" in steps
    assert (
        "flux-system/platform dependsOn flux-system/flux-system, which applies it, on the same source "
        "(flux-system/platform -> flux-system/flux-system)" in steps
    )
    assert "Merge this on its own" not in steps
    assert (
        "alternative to step 1: make flux-system/platform wait for flux-system/network: add `dependsOn: [{name: network}]` "
        "to flux-system/platform (clusters/prod/platform.yaml:1) in the commit that moves the objects" in steps
    )
    assert "Restore `prune: true` on flux-system/platform" in steps


def test_protection_is_merged_first_without_that_dependency(tmp_path):
    steps = _move_steps(_split_base(tmp_path))
    assert "Merge this on its own and let it apply" in steps
    assert "part of the commit" not in steps
    assert "to flux-system/platform (clusters/prod/platform.yaml:1) in a merge before the move" in steps


def test_protection_set_by_the_parents_patches_is_merged_first(tmp_path):
    patch = (
        "  patches:\n    - patch: |-\n        apiVersion: kustomize.toolkit.fluxcd.io/v1\n        kind: Kustomization\n"
        "        metadata:\n          name: _\n        spec:\n          prune: true\n      target:\n"
        "        kind: Kustomization\n        name: platform\n"
    )
    repo = _split_base(tmp_path, "  dependsOn:\n    - name: flux-system\n", patch)
    k = repo / "clusters/prod/platform.yaml"
    k.write_text(k.read_text().replace("prune: true", "prune: false"))  # the patch turns it on
    steps = _move_steps(repo)
    assert "prune is set by the patches of flux-system/flux-system, so override it there" in steps
    assert "Merge this on its own (the patches are flux-system/flux-system's own spec" in steps
    assert "part of the commit" not in steps


def test_moving_an_operator_and_its_crd(operator_repo):
    ex = explain(
        operator_repo,
        resolve_target(operator_repo, "infra/widget-operator"),
        move_to="operators",
        move_path="operators",
    )
    m = ex.clusters[0].move
    v = {str(o.ref): o.verdict for o in m.objects}
    assert v["Namespace/widget-system"] == gc.SAFE
    assert v["CustomResourceDefinition/widgets.example.com"] == gc.RACE
    assert v["HelmRelease/widget-system/widget-operator"] == gc.RACE
    kinds = {c.kind: c for c in m.cascades}
    assert [str(r) for _, r in kinds["crd"].victims] == ["Widget/default/hello"]
    assert "uninstalls" in kinds["helmrelease"].note
    assert ("flux-system/apps", "the CRD of Widget") in m.dependents
    # the chart source stays with the old owner: the new one depends on it, so the old one cannot depend back
    assert any(n.provider == "flux-system/infra" for n in m.needs)
    assert not any("instead of step" in s for s in m.steps)
    [dv] = ex.clusters[0].dependencies
    assert dv.helm[0].dependents == ["default/widget-dashboard"]


def test_escapes_and_newly_substituted_variables():
    repo = fluxgraph.load(HOMELAB)
    ex = explain(
        repo, resolve_target(repo, "apps/home-automation/mosquitto"), move_to="flux-system/monitoring"
    )
    m = ex.clusters[0].move
    assert m.escapes  # $${MQTT_...} would stay doubled: monitoring has no postBuild
    ex = explain(repo, resolve_target(repo, "platform/monitoring"), move_to="flux-system/platform")
    assert "K3S_API_HOST" in ex.clusters[0].move.newly_substituted


# -- output and CLI ------------------------------------------------------------------------------


def test_text_and_markdown(homelab):
    ex = explain(homelab, resolve_target(homelab, "platform/cilium"), move_to="network")
    text = render_text(ex)
    assert text.startswith("folder platform/cilium\n")
    assert "Moving it to flux-system/network (new, path ./platform/cilium)" in text
    assert "Safe procedure (Flux FAQ" in text
    md = render_markdown(ex)
    assert md.startswith("### fluxgraph explain: `folder platform/cilium`")
    assert "| `flux-system/platform` | `./platform` | true | false | 5m |" in md


def test_cli_json(tmp_path):
    res = CliRunner().invoke(
        main, ["explain", "platform/cilium", str(HOMELAB), "--format", "json", "--to", "network"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["target"]["kind"] == "path"
    [c] = doc["clusters"]
    assert c["owners"][0]["chain"][-1]["prune"] is True
    assert c["objects"][0]["object"] == "Namespace/network"
    assert c["move"]["verdict"] == "race"
    assert c["move"]["objects"][0]["severity"] == "error"
    assert c["variables"][0]["sources"][0]["appliedBy"] == ["flux-system/cluster-settings"]
    out = tmp_path / "ex.md"
    res = CliRunner().invoke(
        main, ["explain", "ks:flux-system/apps", str(HOMELAB), "--format", "markdown", "-o", str(out)]
    )
    assert res.exit_code == 0 and out.read_text().startswith("### fluxgraph explain")


def test_cli_errors():
    res = CliRunner().invoke(main, ["explain", "no/such/thing", str(HOMELAB)])
    assert res.exit_code == 2 and "is not a file or folder" in res.output
    res = CliRunner().invoke(main, ["explain", "platform", str(HOMELAB), "--to-path", "x"])
    assert res.exit_code == 2 and "--to-path needs --to" in res.output


def test_target_in_no_cluster(homelab):
    ex = explain(homelab, resolve_target(homelab, "components"))
    assert ex.clusters == [] or all(not ov.objects for c in ex.clusters for ov in c.owners)


def test_a_folder_holds_what_its_kustomization_takes_from_a_component_outside(tmp_path):
    files = {
        "clusters/lab/flux-system/gotk-sync.yaml": gotk_sync("lab"),
        "clusters/lab/platform.yaml": flux_ks("platform", "./platform"),
        "platform/kustomization.yaml": "resources:\n  - cilium\n",
        "platform/cilium/kustomization.yaml": "resources:\n  - cm.yaml\ncomponents:\n  - ../../components/network\n",
        "platform/cilium/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cilium\n  namespace: network\n",
        "components/network/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n  - ns.yaml\n",
        "components/network/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: network\n",
    }
    loaded = fluxgraph.load(write_tree(tmp_path, files))
    ex = explain(loaded, resolve_target(loaded, "platform/cilium"))
    [owner] = ex.clusters[0].owners
    # the Namespace's file is outside the folder; the folder's kustomization includes it
    assert [str(o.ref) for o in owner.objects] == ["Namespace/network", "ConfigMap/network/cilium"]


@pytest.mark.parametrize(
    ("target", "lister"),
    [
        ("platform/cilium", "platform/kustomization.yaml"),  # a folder the build enters
        ("platform/blocky", "platform/kustomization.yaml"),  # a folder whose files it lists
    ],
)
def test_a_move_says_which_kustomization_file_lists_the_folder(tmp_path, target, lister):
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n  namespace: default\n"
    files = {
        "clusters/lab/flux-system/gotk-sync.yaml": gotk_sync("lab"),
        "clusters/lab/platform.yaml": flux_ks("platform", "./platform"),
        "platform/kustomization.yaml": "resources:\n  - cilium\n  - blocky/cm.yaml\n",
        "platform/cilium/kustomization.yaml": "resources:\n  - policy.yaml\n",
        "platform/cilium/policy.yaml": cm.format("policy"),
        "platform/blocky/cm.yaml": cm.format("blocky"),
    }
    loaded = fluxgraph.load(write_tree(tmp_path, files))
    ex = explain(loaded, resolve_target(loaded, target), move_to="moved")
    steps = "\n".join(ex.clusters[0].move.steps)
    assert f"remove it from {lister})" in steps
