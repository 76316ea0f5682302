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
