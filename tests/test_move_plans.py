"""Move plans that are complete and safe to follow as written (issue 25, part 3): each case here
was a plan that could not be followed before."""

from __future__ import annotations

import fluxgraph
from fluxgraph.cluster import SourceNode
from fluxgraph.explain import explain, resolve_target

from .conftest import flux_ks, gotk_sync, write_tree

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  a: b\n"


def _repo(tmp_path, files):
    base = {
        "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
        "clusters/prod/flux-system/kustomization.yaml": "resources:\n  - gotk-sync.yaml\n",
    }
    return write_tree(tmp_path / "repo", {**base, **files})


def _plan(repo, target, to):
    loaded = fluxgraph.load(repo)
    ex = explain(loaded, resolve_target(loaded, target), move_to=to)
    return ex.clusters[0].move


def test_no_alternative_depends_on_that_closes_a_cycle(tmp_path):
    """network dependsOn platform already: platform waiting for network would be a cycle."""
    repo = _repo(
        tmp_path,
        {
            "clusters/prod/platform.yaml": flux_ks("platform", "./platform"),
            "clusters/prod/network.yaml": flux_ks("network", "./network", "dependsOn:\n  - name: platform\n"),
            "platform/kustomization.yaml": "resources:\n  - lb.yaml\n",
            "platform/lb.yaml": CM.format(name="lb"),
            "network/kustomization.yaml": "resources:\n  - dns.yaml\n",
            "network/dns.yaml": CM.format(name="dns"),
        },
    )
    m = _plan(repo, "platform/lb.yaml", "network")
    assert m.alternatives == []
    assert any("cannot dependsOn flux-system/network" in n and "cycle" in n for n in m.notes), m.notes
    assert not any("dependsOn: [{name: network}]" in s for s in m.steps)


def test_a_new_kustomization_takes_what_the_old_one_applies_with(tmp_path):
    extra = (
        "interval: 30m\ntimeout: 3m\nserviceAccountName: deployer\nwait: true\n"
        "decryption:\n  provider: sops\n  secretRef:\n    name: sops-age\n"
    )
    repo = _repo(
        tmp_path,
        {
            "clusters/prod/apps.yaml": flux_ks("apps", "./apps", extra).replace("  interval: 10m\n", "", 1),
            "apps/kustomization.yaml": "resources:\n  - web\n  - db.yaml\n",
            "apps/db.yaml": CM.format(name="db"),
            "apps/web/kustomization.yaml": "resources:\n  - cm.yaml\n",
            "apps/web/cm.yaml": CM.format(name="web"),
        },
    )
    m = _plan(repo, "apps/web", "web")
    [add] = [s for s in m.steps if s.startswith("Add Kustomization flux-system/web")]
    for part in (
        "path: ./apps/web",
        "interval: 30m",
        "timeout: 3m",
        "serviceAccountName: deployer",
        "wait: true",
        'decryption: {"provider": "sops", "secretRef": {"name": "sops-age"}}',
    ):
        assert part in add, (part, add)


def test_a_source_path_is_relative_to_what_the_source_copies():
    git = SourceNode("GitRepository", "flux-system", "flux-system", repo_base="")
    assert git.spec_path_for("apps/web") == "apps/web"
    art = SourceNode("ExternalArtifact", "flux-system", "a", path_map=(("", "deploy/out"),))
    assert art.spec_path_for("deploy/out/web") == "web"
    assert art.spec_path_for("apps/web") is None
    assert SourceNode("GitRepository", "x", "y", repo_base="sub").spec_path_for("sub/apps") == "apps"


def unbuildable_target(tmp_path):
    """platform/lb.yaml, and a Kustomization network whose path does not exist."""
    return _repo(
        tmp_path,
        {
            "clusters/prod/platform.yaml": flux_ks("platform", "./platform"),
            "clusters/prod/network.yaml": flux_ks("network", "./nowhere"),
            "platform/kustomization.yaml": "resources:\n  - lb.yaml\n",
            "platform/lb.yaml": CM.format(name="lb"),
        },
    )


def test_a_move_into_a_kustomization_that_does_not_build_is_blocked(tmp_path):
    repo = unbuildable_target(tmp_path)
    m = _plan(repo, "platform/lb.yaml", "network")
    assert m.steps == [] and m.alternatives == []
    [b] = m.blocked
    assert "flux-system/network does not build" in b and "missing-path" in b


def test_a_health_check_on_a_moved_object_gets_its_own_step(tmp_path):
    hc = "healthChecks:\n  - apiVersion: v1\n    kind: ConfigMap\n    name: lb\n    namespace: default\n"
    repo = _repo(
        tmp_path,
        {
            "clusters/prod/platform.yaml": flux_ks("platform", "./platform", hc),
            "clusters/prod/network.yaml": flux_ks("network", "./network", "dependsOn:\n  - name: platform\n"),
            "platform/kustomization.yaml": "resources:\n  - lb.yaml\n  - other.yaml\n",
            "platform/lb.yaml": CM.format(name="lb"),
            "platform/other.yaml": CM.format(name="other"),
            "network/kustomization.yaml": "resources:\n  - dns.yaml\n",
            "network/dns.yaml": CM.format(name="dns"),
        },
    )
    m = _plan(repo, "platform/lb.yaml", "network")
    [step] = [s for s in m.steps if "healthChecks[0]" in s]
    assert "ConfigMap default/lb" in step and "clusters/prod/platform.yaml" in step and "deadlock" in step


def test_an_old_owner_left_empty_names_what_depends_on_it(tmp_path):
    files = {
        "clusters/prod/old.yaml": flux_ks("old", "./old"),
        "clusters/prod/new.yaml": flux_ks("new", "./new"),
        "old/kustomization.yaml": "resources:\n  - cm.yaml\n",
        "old/cm.yaml": CM.format(name="moving"),
        "new/kustomization.yaml": "resources:\n  - n.yaml\n",
        "new/n.yaml": CM.format(name="n"),
    }
    for i in range(3):
        files[f"clusters/prod/app{i}.yaml"] = flux_ks(f"app{i}", f"./app{i}", "dependsOn:\n  - name: old\n")
        files[f"app{i}/kustomization.yaml"] = "resources:\n  - cm.yaml\n"
        files[f"app{i}/cm.yaml"] = CM.format(name=f"app{i}")
    m = _plan(_repo(tmp_path, files), "old/cm.yaml", "new")
    [note] = [n for n in m.notes if "dependsOn flux-system/old" in n]
    assert note.startswith("3 Kustomization(s)") and all(f"flux-system/app{i}" in note for i in range(3))


def test_objects_a_move_does_not_carry_are_named(tmp_path):
    """The old owner's spec.components adds a ConfigMap to the folder's build, and the
    kustomization above the folder sets a namespace: neither goes with the folder."""
    repo = _repo(
        tmp_path,
        {
            "clusters/prod/apps.yaml": flux_ks("apps", "./apps", "components:\n  - ../components/backup\n"),
            "clusters/prod/web.yaml": flux_ks("web", "./other"),
            "other/kustomization.yaml": "resources:\n  - o.yaml\n",
            "other/o.yaml": CM.format(name="o"),
            "apps/kustomization.yaml": "namespace: shop\nresources:\n  - web\n",
            "apps/web/kustomization.yaml": "resources:\n  - cm.yaml\n",
            "apps/web/cm.yaml": CM.format(name="web"),
            "components/backup/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n  - backup.yaml\n",
            "components/backup/backup.yaml": CM.format(name="backup"),
        },
    )
    loaded = fluxgraph.load(repo)
    moved = explain(loaded, resolve_target(loaded, "apps"), move_to="web").clusters[0].move
    [comp] = [d for d in moved.differences if d.startswith("not files of apps")]
    assert "ConfigMap/shop/backup" in comp and "ConfigMap/shop/web" not in comp
    web = explain(loaded, resolve_target(loaded, "apps/web"), move_to="web").clusters[0].move
    [shaped] = [d for d in web.differences if d.startswith("shaped by the build around apps/web")]
    assert "apps/kustomization.yaml" in shaped and "ConfigMap/shop/web" in shaped


def test_moving_a_kustomization_whose_inventory_is_external_names_the_cascade(tmp_path):
    """A Kustomization object that builds from a source outside the repository: its inventory is
    not known, and a race that deletes it deletes all of it (its finalizer)."""
    remote = (
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: vendor\n  namespace: flux-system\n"
        "spec:\n  interval: 1h\n  url: https://example.com/vendor\n  ref:\n    branch: main\n"
    )
    repo = _repo(
        tmp_path,
        {
            "clusters/prod/platform.yaml": flux_ks("platform", "./platform"),
            "platform/kustomization.yaml": "resources:\n  - source.yaml\n  - vendor.yaml\n",
            "platform/source.yaml": remote,
            "platform/vendor.yaml": flux_ks("vendor", "./deploy", source="vendor"),
        },
    )
    m = _plan(repo, "platform/vendor.yaml", "vendored")
    [c] = [c for c in m.cascades if c.cause == "Kustomization/flux-system/vendor"]
    assert c.victims == [] and "does not know (external" in c.note and "everything it applied" in c.note


def _into_existing(tmp_path, extra: dict[str, str]):
    files = {
        "clusters/prod/platform.yaml": flux_ks("platform", "./platform"),
        "clusters/prod/network.yaml": flux_ks("network", "./network"),
        "platform/kustomization.yaml": "resources:\n  - dns\n  - other.yaml\n",
        "platform/other.yaml": CM.format(name="other"),
        "platform/dns/kustomization.yaml": "resources:\n  - cm.yaml\n",
        "platform/dns/cm.yaml": CM.format(name="dns"),
        "network/kustomization.yaml": "resources:\n  - lb.yaml\n",
        "network/lb.yaml": CM.format(name="lb"),
        **extra,
    }
    return _plan(_repo(tmp_path, files), "platform/dns", "network")


def test_a_folder_moved_into_an_existing_kustomization_is_listed_there(tmp_path):
    m = _into_existing(tmp_path, {})
    [step] = [s for s in m.steps if s.startswith("Move folder platform/dns")]
    assert "to network/dns and add `- dns` to the resources of network/kustomization.yaml" in step


def test_a_folder_moved_onto_one_that_exists_is_blocked(tmp_path):
    m = _into_existing(tmp_path, {"network/dns/cm.yaml": CM.format(name="dns2")})
    assert m.steps == [] and any("network/dns exists already" in b for b in m.blocked)


def test_a_parents_patch_of_the_old_owner_is_named(tmp_path):
    """The parent patches the old owner by name (its postBuild): a new Kustomization beside it does
    not get that patch."""
    patch = (
        "patches:\n  - target:\n      kind: Kustomization\n      name: platform\n    patch: |\n"
        "      - op: add\n        path: /spec/timeout\n        value: 7m\n"
    )
    repo = _repo(
        tmp_path,
        {
            "clusters/prod/tiers.yaml": flux_ks("tiers", "./tiers", patch),
            "tiers/kustomization.yaml": "resources:\n  - platform.yaml\n",
            "tiers/platform.yaml": flux_ks("platform", "./platform"),
            "platform/kustomization.yaml": "resources:\n  - lb.yaml\n  - other.yaml\n",
            "platform/lb.yaml": CM.format(name="lb"),
            "platform/other.yaml": CM.format(name="other"),
        },
    )
    m = _plan(repo, "platform/lb.yaml", "lb")
    [note] = [n for n in m.notes if n.startswith("the patches of flux-system/tiers")]
    assert "timeout" in note and "by name" in note
