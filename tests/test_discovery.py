"""Discovery: which self-applying Kustomizations are real roots, and the Flux Kustomizations no
cluster applies (fixtures/repos/unapplied, described in its README)."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

import fluxgraph
from fluxgraph.cli import main
from fluxgraph.engine import analyze

from .conftest import FIXTURES

UNAPPLIED = FIXTURES / "repos" / "unapplied"


def _not_applied(problems):
    return [p for p in problems if p.code == "not-applied"]


def test_a_commented_out_self_applying_ks_is_not_a_cluster():
    repo = fluxgraph.load(UNAPPLIED)
    assert [(c.root_dir, c.discovered_by) for c in repo.clusters] == [
        ("clusters/prod", "flux bootstrap (gotk-sync.yaml)"),
        # nobody's child: no cluster reads a kustomization file in standalone/ or above
        ("standalone/tools", "self-applying root Kustomization"),
    ]
    assert "flux-system/wiki" not in repo.clusters[0].kustomizations


def test_unapplied_kustomizations_are_reported_once_per_excluding_file():
    repo = fluxgraph.load(UNAPPLIED)
    by_file = {p.location.file: p for p in _not_applied(repo.problems)}
    assert sorted(by_file) == [".archive/apps/old/ks.yaml", "apps/kustomization.yaml"]
    apps = by_file["apps/kustomization.yaml"]
    assert apps.not_evaluated and apps.location.line == 5  # the commented-out entry
    assert "flux-system/wiki (apps/wiki/ks.yaml, commented out at line 5)" in apps.message
    assert "flux-system/notes (apps/notes/ks.yaml)" in apps.message
    assert "2 Flux Kustomizations" in apps.message
    archive = by_file[".archive/apps/old/ks.yaml"]
    assert archive.message.startswith("1 Flux Kustomization in .archive/ (1 file) is applied by no cluster")


def test_check_has_no_verdict_on_an_unapplied_kustomization():
    """wiki's dependsOn names a Kustomization that does not exist: Flux never applies wiki, so
    that is no dangling-dependency; the file is listed as not evaluated instead."""
    report = analyze(UNAPPLIED)
    assert report.findings == []
    assert [p.location.file for p in report.not_evaluated if p.code == "not-applied"] == [
        ".archive/apps/old/ks.yaml",
        "apps/kustomization.yaml",
    ]
    res = CliRunner().invoke(main, ["check", str(UNAPPLIED), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert {e["code"] for e in doc["notEvaluated"]} == {"not-applied"}
    assert doc["summary"]["notEvaluated"] == 2


def test_a_check_scoped_to_one_cluster_does_not_judge_the_rest():
    repo = fluxgraph.load(UNAPPLIED, cluster="clusters/prod")
    assert _not_applied(repo.problems) == []


def test_a_self_applying_ks_in_a_directory_a_cluster_reads_is_a_child(tmp_path):
    """notes/ks.yaml applying its own directory is not listed by apps/kustomization.yaml, which
    the cluster reads: it is somebody's child that the parent leaves out, not a root."""
    repo_dir = tmp_path / "repo"
    shutil.copytree(UNAPPLIED, repo_dir)
    ks = repo_dir / "apps/notes/ks.yaml"
    ks.write_text(ks.read_text().replace("path: ./apps/notes/app", "path: ./apps/notes"))
    repo = fluxgraph.load(repo_dir)
    assert [c.root_dir for c in repo.clusters] == ["clusters/prod", "standalone/tools"]
    [apps] = [p for p in _not_applied(repo.problems) if p.location.file == "apps/kustomization.yaml"]
    assert "flux-system/notes (apps/notes/ks.yaml)" in apps.message


def test_listing_the_entry_again_applies_it(tmp_path):
    repo_dir = tmp_path / "repo"
    shutil.copytree(UNAPPLIED, repo_dir)
    k = repo_dir / "apps/kustomization.yaml"
    k.write_text(k.read_text().replace("  # - ./wiki/ks.yaml", "  - ./wiki/ks.yaml"))
    repo = fluxgraph.load(repo_dir)
    prod = repo.clusters[0]
    assert prod.kustomizations["flux-system/wiki"].parent == "flux-system/apps"
    [apps] = [p for p in _not_applied(repo.problems) if p.location.file == "apps/kustomization.yaml"]
    assert "wiki" not in apps.message and apps.location.line == 1
    # now Flux does apply it, and its dependsOn names nothing: a real verdict
    assert any(f.rule == "dangling-dependency" for f in analyze(repo_dir).findings)


def test_a_kustomization_read_as_a_patch_is_not_unapplied(tmp_path):
    repo_dir = tmp_path / "repo"
    shutil.copytree(UNAPPLIED, repo_dir)
    (repo_dir / "apps/web-patch.yaml").write_text(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: web\n"
        "  namespace: flux-system\nspec:\n  interval: 5m\n"
    )
    k = repo_dir / "apps/kustomization.yaml"
    k.write_text(k.read_text() + "patches:\n  - path: web-patch.yaml\n")
    repo = fluxgraph.load(repo_dir)
    assert repo.clusters[0].kustomizations["flux-system/web"].spec.interval == 300.0  # 5m, from the patch
    assert all("web-patch" not in p.message for p in _not_applied(repo.problems))


# -- every cluster, once (issue 21, part 3): fixtures/repos/discovery/<case>, each with a README

DISCOVERY = FIXTURES / "repos" / "discovery"


def _dirs(repo):
    return [(c.root_dir, c.discovered_by) for c in repo.clusters]


def test_a_cluster_folder_before_flux_system_is_committed_is_a_cluster():
    """flux bootstrap --path=clusters/dev before flux-system/ is committed: Flux
    Kustomizations and the ConfigMap they substitute from."""
    repo = fluxgraph.load(DISCOVERY / "bootstrap-pending")
    assert _dirs(repo) == [("clusters/dev", "directory of Flux Kustomizations")]
    apps = repo.clusters[0].kustomizations["flux-system/apps"]
    assert apps.variables["DOMAIN"] == "dev.example.com"


def test_a_folder_another_cluster_builds_is_not_a_cluster_of_its_own():
    repo = fluxgraph.load(DISCOVERY / "shared-base")
    assert _dirs(repo) == [("clusters/dev", "flux bootstrap (gotk-sync.yaml)")]
    assert "flux-system/apps" in repo.clusters[0].kustomizations
    assert _not_applied(repo.problems) == []


def test_one_cluster_reached_from_two_roots_is_one_cluster_with_two_owners():
    repo = fluxgraph.load(DISCOVERY / "two-roots")
    [c] = repo.clusters
    assert (c.root_dir, c.roots) == ("flux", ["flux-system/cluster", "flux-system/flux-system"])
    assert c.kustomizations["flux-system/flux-system"].build_dir == "flux/cluster"
    report = analyze(DISCOVERY / "two-roots")
    [f] = report.findings
    assert f.rule == "object-applied-twice"
    assert "flux-system/cluster-apps is applied by 2 Kustomizations: flux-system/cluster" in f.message
    assert "flux-system/flux-system" in f.message


def test_a_failed_root_leaves_what_it_would_apply_not_evaluated():
    report = analyze(DISCOVERY / "failed-root")
    assert [(f.rule, f.location.file) for f in report.findings] == [("invalid-yaml", "apps/broken/config.yaml")]
    assert report.findings[0].message == "unknown anchor 'name' referenced"  # yaml.v3's words
    [p] = report.not_evaluated
    assert p.code == "not-evaluated-failed-build"
    assert "flux-system/flux-system (cluster clusters/prod) fails, so the 1 Flux Kustomization it would apply" in p.message
    assert "flux-system/web (apps/web/ks.yaml)" in p.message
    assert _not_applied(report.repo.problems) == []


def test_a_cluster_folder_whose_build_fails_at_the_root_is_not_yet_bootstrapped():
    repo = fluxgraph.load(DISCOVERY / "half-bootstrapped")
    assert _dirs(repo) == [("clusters/live", "flux bootstrap (gotk-sync.yaml)")]
    [p] = repo.problems
    assert (p.code, p.not_evaluated, p.location.file) == ("not-a-cluster", True, "clusters/next/apps.yaml")
    assert "clusters/next holds Flux Kustomizations like a cluster folder, but its own build fails" in p.message
    assert "'./flux-system'" in p.message


def test_a_tenant_repository_says_what_it_is_and_which_folders_cluster_takes():
    res = CliRunner().invoke(main, ["check", str(DISCOVERY / "tenant")])
    assert res.exit_code == 2
    assert "it looks like a tenant repository that a fleet's Flux Kustomizations build (1 HelmRelease, 1 OCIRepository" in res.output
    assert "--cluster DIR, e.g. apps/podinfo/production, apps/podinfo/staging (" in res.output
    # --cluster on an overlay: the namespace is the fleet's Kustomization's to give
    report = analyze(DISCOVERY / "tenant", cluster="apps/podinfo/production")
    assert report.findings == []
    assert [p.code for p in report.not_evaluated] == ["not-evaluated-root"]


def test_an_argo_cd_repository_says_so():
    res = CliRunner().invoke(main, ["check", str(DISCOVERY / "argocd")])
    assert res.exit_code == 2
    assert "it looks like an Argo CD repository (1 argoproj.io object and no Flux Kustomization)" in res.output


def test_the_configuration_names_the_clusters_where_discovery_cannot_tell():
    assert [c.root_dir for c in fluxgraph.load(DISCOVERY / "configured").clusters] == ["clusters/old", "clusters/prod"]
    repo = fluxgraph.load(DISCOVERY / "configured", clusters=["clusters/prod"])
    assert _dirs(repo) == [("clusters/prod", "flux bootstrap (gotk-sync.yaml)")]
    res = CliRunner().invoke(main, ["check", str(DISCOVERY / "configured"), "--format", "json"])
    assert json.loads(res.output)["summary"]["clusters"] == ["clusters/prod"]
    # the command line wins
    res = CliRunner().invoke(main, ["check", str(DISCOVERY / "configured"), "--cluster", "clusters/old", "--format", "json"])
    assert json.loads(res.output)["summary"]["clusters"] == ["clusters/old"]
