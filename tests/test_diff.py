"""``fluxgraph diff``: verdicts on real two-commit git histories built from
fixtures/repos/moves/<scenario>/{base,head} (README there), plus the pure verdict logic of
``fluxgraph.gc``, the git reader's safety, the renderers and the CLI contract."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from fluxgraph import gc
from fluxgraph.cli import main
from fluxgraph.diff import diff_revisions
from fluxgraph.findings import Severity
from fluxgraph.flux import FluxKustomization, NamedRef
from fluxgraph.gitrev import _link_ok, _safe_rel, read_tree
from fluxgraph.model import FluxgraphError, Location
from fluxgraph.render.diff_graph import _mermaid_text, render_dot, render_mermaid
from fluxgraph.render.diff_report import render_markdown, render_text
from fluxgraph.revisions import affected_by, load_pair

from .conftest import FIXTURES

MOVES = FIXTURES / "repos" / "moves"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, env=env, text=True
    ).stdout


def _replace_tree(repo: Path, src: Path) -> None:
    for p in repo.iterdir():
        if p.name == ".git":
            continue
        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    shutil.copytree(src, repo, dirs_exist_ok=True)


def history(tmp_path: Path, scenario: str, *, base_edit=None, head_edit=None) -> Path:
    """A git repository with two commits: the scenario's base, then its head."""
    repo = tmp_path / scenario
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _replace_tree(repo, MOVES / scenario / "base")
    if base_edit:
        base_edit(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    _replace_tree(repo, MOVES / scenario / "head")
    if head_edit:
        head_edit(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "head")
    return repo


def run(repo: Path, *extra: str) -> tuple[int, dict]:
    res = CliRunner().invoke(
        main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--format", "json", *extra]
    )
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.output)


def effects(doc: dict, code: str | None = None) -> list[dict]:
    out = [e for c in doc["clusters"] for e in c["effects"]]
    return [e for e in out if code is None or e["code"] == code]


def by_object(doc: dict) -> dict[str, dict]:
    return {e["object"]: e for e in effects(doc) if e["code"] in gc.VERDICT_SEVERITY}


def edit(path: str, old: str, new: str):
    def f(repo: Path) -> None:
        p = repo / path
        text = p.read_text()
        assert old in text, f"{old!r} not in {path}"
        p.write_text(text.replace(old, new))

    return f


def both(*fs):
    def f(repo: Path) -> None:
        for g in fs:
            g(repo)

    return f


# -- splitting a component out of its parent ----------------------------------------------------


def test_split_with_parent_pruning_is_a_race_and_cascades(tmp_path):
    code, doc = run(history(tmp_path, "split"))
    assert code == 1
    v = by_object(doc)
    assert v["Namespace/network"]["code"] == gc.RACE
    assert v["ConfigMap/network/lb-pool"]["code"] == gc.RACE
    assert v["Namespace/network"]["from"] == "flux-system/platform"
    assert v["Namespace/network"]["to"] == "flux-system/network"
    assert "does not dependsOn flux-system/network" in v["Namespace/network"]["message"]
    [cascade] = effects(doc, "namespace-cascade")
    assert cascade["severity"] == "error"
    victims = {(x["owner"], x["object"]) for x in cascade["cascade"]["victims"]}
    assert ("flux-system/platform", "Deployment/network/dns") in victims
    moved = {o["object"]: (o["before"], o["after"]) for o in doc["clusters"][0]["objects"]["moved"]}
    assert moved["Namespace/network"] == (["flux-system/platform"], ["flux-system/network"])
    assert [k["id"] for k in doc["clusters"][0]["kustomizations"] if k["change"] == "added"] == [
        "flux-system/network"
    ]


def test_split_after_prune_was_disabled_in_an_earlier_merge_is_safe(tmp_path):
    off = edit("clusters/prod/platform.yaml", "prune: true", "prune: false")
    code, doc = run(history(tmp_path, "split", base_edit=off, head_edit=off))
    v = by_object(doc)
    assert v["Namespace/network"]["code"] == gc.SAFE
    assert v["ConfigMap/network/lb-pool"]["code"] == gc.SAFE
    assert "prune: false" in v["Namespace/network"]["message"]
    assert not effects(doc, "namespace-cascade")
    assert not [e for e in effects(doc) if e["severity"] == "error"]
    assert code == 0 or any(f["severity"] == "error" for c in doc["clusters"] for f in c["newFindings"])


def test_split_with_prune_disabled_in_the_same_commit_is_still_a_race(tmp_path):
    off = edit("clusters/prod/platform.yaml", "prune: true", "prune: false")
    code, doc = run(history(tmp_path, "split", head_edit=off))
    v = by_object(doc)
    assert code == 1
    assert v["Namespace/network"]["code"] == gc.RACE
    assert "same revision" in v["Namespace/network"]["message"]


def test_split_with_depends_on_added_in_the_same_commit_is_a_race(tmp_path):
    dep = edit(
        "clusters/prod/platform.yaml", "  postBuild:", "  dependsOn:\n    - name: network\n  postBuild:"
    )
    code, doc = run(history(tmp_path, "split", head_edit=dep))
    v = by_object(doc)
    assert v["Namespace/network"]["code"] == gc.RACE
    assert "dependsOn flux-system/network on the same source" in v["Namespace/network"]["message"]
    assert "same revision" in v["Namespace/network"]["message"]
    assert code == 1


# -- the old owner waits for the Kustomization that applies it: its new spec is in force ------------

PLATFORM = "clusters/prod/platform.yaml"
PRUNE_OFF = edit(PLATFORM, "prune: true", "prune: false")


def depends(*names: str, where: str = PLATFORM, extra: str = ""):
    items = "".join(f"    - name: {n}\n{extra}" for n in names)
    return edit(where, "  sourceRef:", f"  dependsOn:\n{items}  sourceRef:")


def other_source(repo: Path) -> None:
    """platform builds from a second GitRepository (the same repository, another source object)."""
    sync = repo / "clusters/prod/flux-system/gotk-sync.yaml"
    sync.write_text(
        sync.read_text()
        + "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: platform-src\n"
        "  namespace: flux-system\nspec:\n  interval: 1m0s\n  ref:\n    branch: main\n"
        "  url: https://github.com/example/moves\n"
    )
    edit(PLATFORM, "    name: flux-system", "    name: platform-src")(repo)


def infra(repo: Path) -> None:
    """A Kustomization infra (same source) that waits for flux-system."""
    (repo / "infra").mkdir()
    (repo / "infra/cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: infra\n  namespace: default\ndata: {}\n"
    )
    (repo / "clusters/prod/infra.yaml").write_text(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: infra\n"
        "  namespace: flux-system\nspec:\n  interval: 1h\n  path: ./infra\n  prune: true\n"
        "  dependsOn:\n    - name: flux-system\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )


def stack(repo: Path) -> None:
    """platform's declaration moves under a Kustomization stack (applied by flux-system)."""
    (repo / "stack").mkdir()
    (repo / PLATFORM).rename(repo / "stack/platform.yaml")
    (repo / "clusters/prod/stack.yaml").write_text(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: stack\n"
        "  namespace: flux-system\nspec:\n  interval: 1h\n  path: ./stack\n  prune: true\n"
        "  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )


def parent_patch_prune_off(repo: Path) -> None:
    """flux-system's patches set prune: false on every Kustomization it applies."""
    k = repo / "clusters/prod/flux-system/gotk-sync.yaml"
    k.write_text(
        k.read_text()
        + "  patches:\n    - patch: |-\n        apiVersion: kustomize.toolkit.fluxcd.io/v1\n        kind: Kustomization\n"
        "        metadata:\n          name: _\n        spec:\n          prune: false\n      target:\n"
        "        kind: Kustomization\n        name: platform\n"
    )


@pytest.mark.parametrize(
    ("name", "base_edit", "head_edit", "verdict", "says"),
    [
        # flux-system applies platform's object; platform waits for it on the same source
        (
            "depends-on-parent",
            depends("flux-system"),
            both(depends("flux-system"), PRUNE_OFF),
            gc.SAFE,
            "flux-system/platform has prune: false; that is the spec flux-system/platform reconciles this revision "
            "with: flux-system/platform dependsOn flux-system/flux-system, which applies it, on the same source "
            "(flux-system/platform -> flux-system/flux-system), so it starts the revision only after "
            "flux-system/flux-system has applied it, new spec included",
        ),
        # the same through an intermediate Kustomization on the same source
        (
            "through-infra",
            both(infra, depends("infra")),
            both(infra, depends("infra"), PRUNE_OFF),
            gc.SAFE,
            "waits through dependsOn for flux-system/flux-system, which applies it, on the same source "
            "(flux-system/platform -> flux-system/infra -> flux-system/flux-system)",
        ),
        # no dependsOn: platform may run the revision with prune: true
        ("no-depends-on", None, PRUNE_OFF, gc.RACE, "may reconcile the revision with its previous spec"),
        # the dependsOn arrives with the move: the current spec (without it) is the one that runs
        (
            "depends-on-in-the-same-commit",
            None,
            both(depends("flux-system"), PRUNE_OFF),
            gc.RACE,
            "may reconcile the revision with its previous spec",
        ),
        # another source: checkDependencies does not compare revisions
        (
            "other-source",
            both(other_source, depends("flux-system")),
            both(other_source, depends("flux-system"), PRUNE_OFF),
            gc.RACE,
            "may reconcile the revision with its previous spec",
        ),
        # readyExpr replaces the built-in check, revision included
        (
            "ready-expr",
            depends("flux-system", extra="      readyExpr: dep.status.observedGeneration > 0\n"),
            both(depends("flux-system", extra="      readyExpr: dep.status.observedGeneration > 0\n"), PRUNE_OFF),
            gc.RACE,
            "may reconcile the revision with its previous spec",
        ),
        # flux-system applies stack, stack applies platform: waiting for flux-system is not enough
        (
            "grandparent",
            both(stack, depends("flux-system", where="stack/platform.yaml")),
            both(stack, depends("flux-system", where="stack/platform.yaml"), edit("stack/platform.yaml", "prune: true", "prune: false")),
            gc.RACE,
            "may reconcile the revision with its previous spec",
        ),
        (
            "stack-parent",
            both(stack, depends("stack", where="stack/platform.yaml")),
            both(stack, depends("stack", where="stack/platform.yaml"), edit("stack/platform.yaml", "prune: true", "prune: false")),
            gc.SAFE,
            "(flux-system/platform -> flux-system/stack)",
        ),
        # the protection comes from the parent's patches: the parent may still build with the old ones
        (
            "parent-patches",
            depends("flux-system"),
            both(depends("flux-system"), parent_patch_prune_off),
            gc.RACE,
            "flux-system/flux-system changes its own spec.patches in the same revision",
        ),
        # protection removed in the same commit: the new spec (prune: true) is the one that runs
        (
            "protection-removed",
            both(depends("flux-system"), PRUNE_OFF),
            depends("flux-system"),
            gc.RACE,
            "runs first it deletes the object; that is the spec flux-system/platform reconciles this revision with",
        ),
    ],
)
def test_old_owner_that_waits_for_its_parent_reconciles_the_move_with_its_new_spec(
    tmp_path, name, base_edit, head_edit, verdict, says
):
    code, doc = run(history(tmp_path, "split", base_edit=base_edit, head_edit=head_edit))
    v = by_object(doc)
    for ref in ("Namespace/network", "ConfigMap/network/lb-pool"):
        assert v[ref]["code"] == verdict, v[ref]["message"]
        assert says in v[ref]["message"]
    if verdict == gc.SAFE:
        assert not effects(doc, "namespace-cascade")
        assert not [e for e in effects(doc) if e["severity"] == "error"]
        assert code == 0
    else:
        assert code == 1


def test_split_into_an_existing_owner_the_parent_waits_for_is_safe(tmp_path):
    code, doc = run(history(tmp_path, "split-depends"))
    v = by_object(doc)
    assert v["Namespace/network"]["code"] == gc.SAFE
    assert v["ConfigMap/network/lb-pool"]["code"] == gc.SAFE
    assert "flux-system/platform -> flux-system/network" in v["Namespace/network"]["message"]
    assert code == 0
    # a finding whose file moved with its object is neither new nor fixed
    for c in doc["clusters"]:
        assert not [f for f in c["newFindings"] if f["object"] == "Namespace/network"]


def test_a_dependency_with_ready_expr_does_not_wait_for_the_revision(tmp_path):
    # readyExpr replaces checkDependencies' built-in check, revision included (unless the
    # AdditiveCELDependencyCheck gate, off by default, is on)
    cel = edit(
        "clusters/prod/platform.yaml",
        "    - name: network\n",
        "    - name: network\n      readyExpr: dep.metadata.generation > 0\n",
    )
    code, doc = run(history(tmp_path, "split-depends", base_edit=cel, head_edit=cel))
    v = by_object(doc)
    assert v["Namespace/network"]["code"] == gc.RACE
    assert code == 1


def test_new_owner_declared_inside_the_old_owners_path_is_deleted_and_recreated(tmp_path):
    def inside(repo: Path) -> None:
        (repo / "clusters/prod/network.yaml").rename(repo / "platform/network-ks.yaml")
        edit("platform/kustomization.yaml", "  - dns", "  - dns\n  - network-ks.yaml")(repo)

    code, doc = run(history(tmp_path, "split", head_edit=inside))
    v = by_object(doc)
    assert v["Namespace/network"]["code"] == gc.RECREATE
    assert (
        "creates flux-system/network and prunes in the same reconciliation"
        in v["Namespace/network"]["message"]
    )
    assert code == 1


def test_old_owner_waiting_for_a_new_owner_it_creates_itself_is_blocked(tmp_path):
    def inside(repo: Path) -> None:
        (repo / "clusters/prod/network.yaml").rename(repo / "platform/network-ks.yaml")
        edit("platform/kustomization.yaml", "  - dns", "  - dns\n  - network-ks.yaml")(repo)

    off = edit(
        "clusters/prod/platform.yaml", "  postBuild:", "  dependsOn:\n    - name: network\n  postBuild:"
    )
    # the dependency exists before the move (in the base), so only the deadlock remains
    code, doc = run(history(tmp_path, "split", base_edit=off, head_edit=both(off, inside)))
    v = by_object(doc)
    assert v["Namespace/network"]["code"] == gc.BLOCKED
    assert "only it can create" in v["Namespace/network"]["message"]


def test_a_kustomization_that_stops_building_applies_and_prunes_nothing(tmp_path):
    broken = edit("platform/kustomization.yaml", "  - dns", "  - dns\n  - does-not-exist.yaml")
    code, doc = run(history(tmp_path, "split", head_edit=broken))
    assert code == 1
    [na] = effects(doc, "not-applied")
    assert na["from"] == "flux-system/platform" and na["severity"] == "error"
    assert "applies and prunes nothing" in na["message"]
    # platform's objects are not reported deleted: its inventory stays as it was
    assert "Deployment/network/dns" not in by_object(doc)
    assert not [
        o for o in doc["clusters"][0]["objects"]["removed"] if o["object"] == "Deployment/network/dns"
    ]
    changed = {k["id"]: k for k in doc["clusters"][0]["kustomizations"]}
    assert ("status", "built", "failed") in {
        (f["field"], f["before"], f["after"]) for f in changed["flux-system/platform"]["fields"]
    }


# -- deleting a Namespace that others use ---------------------------------------------------------


def test_deleting_a_namespace_that_others_use_cascades(tmp_path):
    code, doc = run(history(tmp_path, "namespace-delete"))
    assert code == 1
    v = by_object(doc)
    assert v["Namespace/media"]["code"] == gc.DELETE
    assert v["Deployment/media/jellyfin"]["code"] == gc.DELETE
    [cascade] = effects(doc, "namespace-cascade")
    assert cascade["severity"] == "error"
    assert [x["object"] for x in cascade["cascade"]["victims"]] == [
        "PersistentVolumeClaim/media/media-library"
    ]
    assert cascade["cascade"]["victims"][0]["owner"] == "flux-system/media-storage"


def test_deleting_a_prune_protected_namespace_orphans_it(tmp_path):
    protect = edit(
        "apps/media/namespace.yaml",
        "  name: media",
        "  name: media\n  annotations:\n    kustomize.toolkit.fluxcd.io/prune: disabled",
    )
    code, doc = run(history(tmp_path, "namespace-delete", base_edit=protect))
    v = by_object(doc)
    assert v["Namespace/media"]["code"] == gc.ORPHAN
    assert not effects(doc, "namespace-cascade")
    assert code == 0


def test_removing_an_app_with_its_namespace_holds_the_gate_until_acknowledged(tmp_path):
    """Deleting a Namespace deletes everything in it, what no Kustomization shows included
    (issue 24): an error, which the change can acknowledge in its .fluxgraph.yaml."""

    def drop_pvc_user(repo: Path) -> None:
        (repo / "clusters/prod/media-storage.yaml").unlink()
        shutil.rmtree(repo / "media-storage")

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    code, doc = run(history(tmp_path / "a", "namespace-delete", base_edit=drop_pvc_user, head_edit=drop_pvc_user))
    assert not effects(doc, "namespace-cascade")
    [ns] = effects(doc, "delete-data")
    assert ns["object"] == "Namespace/media" and ns["severity"] == "error"
    assert "everything in the namespace goes with it" in ns["message"]
    assert {e["code"] for e in effects(doc)} == {gc.DELETE, "delete-data"}
    assert code == 1

    def acknowledge(repo: Path) -> None:
        drop_pvc_user(repo)
        (repo / ".fluxgraph.yaml").write_text(
            "diff:\n  acknowledge:\n    - object: Namespace/media\n      reason: the media app is retired\n"
            "    - object: PersistentVolumeClaim/media/gone\n      reason: stale\n"
        )

    repo = history(tmp_path / "b", "namespace-delete", base_edit=drop_pvc_user, head_edit=acknowledge)
    code, doc = run(repo)
    assert code == 0
    assert effects(doc, "delete-data")[0]["acknowledged"] == "the media app is retired"
    assert doc["summary"]["counts"]["acknowledged"] == 1
    assert any("PersistentVolumeClaim/media/gone" in n for n in doc["notes"])
    res = CliRunner().invoke(main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--fail-on", "info"])
    assert res.exit_code == 1  # the Deployment's deletion is still info
    assert "(acknowledged: the media app is retired)" in res.output


# -- renaming a Kustomization ---------------------------------------------------------------------


def test_renaming_a_pruning_kustomization_races_its_finalizer(tmp_path):
    code, doc = run(history(tmp_path, "rename"))
    assert code == 1
    [ks] = [k for k in doc["clusters"][0]["kustomizations"] if k["change"] == "renamed"]
    assert (ks["id"], ks["renamedTo"]) == ("flux-system/apps", "flux-system/applications")
    assert "finalizer" in ks["fate"]
    v = by_object(doc)
    assert v["Deployment/default/paperless"]["code"] == gc.RACE
    assert v["PersistentVolumeClaim/default/paperless-data"]["code"] == gc.RACE
    assert "data is lost" in v["PersistentVolumeClaim/default/paperless-data"]["message"]
    assert v["Kustomization/flux-system/apps"]["code"] == gc.DELETE


def test_renaming_a_kustomization_with_deletion_policy_orphan_is_safe(tmp_path):
    orphan = edit("clusters/prod/apps.yaml", "  prune: true", "  prune: true\n  deletionPolicy: Orphan")
    code, doc = run(history(tmp_path, "rename", base_edit=orphan))
    v = by_object(doc)
    assert v["Deployment/default/paperless"]["code"] == gc.SAFE
    assert "Orphan" in v["Deployment/default/paperless"]["message"]
    assert not [e for e in effects(doc) if e["severity"] == "error"]


def test_removed_kustomization_whose_parent_does_not_prune_stays(tmp_path):
    root_no_prune = edit("clusters/prod/flux-system/gotk-sync.yaml", "  prune: true", "  prune: false")
    code, doc = run(history(tmp_path, "rename", base_edit=root_no_prune, head_edit=root_no_prune))
    [orph] = effects(doc, "orphaned-kustomization")
    assert orph["severity"] == "warning"
    assert "stays in the cluster" in orph["message"]


# -- an operator's HelmRelease and CRD changing owner ------------------------------------------------


def test_moving_a_helmrelease_and_its_crd_to_a_kustomization_that_waits_for_the_old_one(tmp_path):
    code, doc = run(history(tmp_path, "helmrelease-crd"))
    assert code == 1
    v = by_object(doc)
    crd = v["CustomResourceDefinition/widgets.example.com"]
    assert crd["code"] == gc.RECREATE and "dependsOn flux-system/infra" in crd["message"]
    hr = v["HelmRelease/widget-system/widget-operator"]
    assert hr["code"] == gc.RECREATE and "uninstalls" in hr["message"]
    assert v["Namespace/widget-system"]["code"] == gc.SAFE  # prune: disabled
    [cascade] = effects(doc, "crd-cascade")
    assert [(x["owner"], x["object"]) for x in cascade["cascade"]["victims"]] == [
        ("flux-system/apps", "Widget/default/hello")
    ]
    [h] = doc["clusters"][0]["helmReleases"]
    assert (h["id"], h["change"], h["before"], h["after"]) == (
        "widget-system/widget-operator",
        "moved",
        "flux-system/infra",
        "flux-system/operators",
    )
    assert {
        "kind": "Kustomization",
        "from": "flux-system/operators",
        "to": "flux-system/infra",
        "change": "added",
    } in doc["clusters"][0]["dependsOn"]


def test_moving_the_crd_owner_without_ordering_is_a_race(tmp_path):
    nodep = edit("clusters/prod/operators.yaml", "  dependsOn:\n    - name: infra\n", "")
    code, doc = run(history(tmp_path, "helmrelease-crd", head_edit=nodep))
    v = by_object(doc)
    assert v["CustomResourceDefinition/widgets.example.com"]["code"] == gc.RACE
    assert effects(doc, "crd-cascade")


# -- other changes --------------------------------------------------------------------------------


def test_findings_new_at_head_use_the_check_schema_and_fail(tmp_path):
    repo = tmp_path / "dangling"
    repo.mkdir()
    git(repo, "init", "-q")
    _replace_tree(repo, MOVES / "rename" / "base")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    edit(
        "clusters/prod/apps.yaml", "  prune: true", "  prune: true\n  dependsOn:\n    - name: does-not-exist"
    )(repo)
    res = CliRunner().invoke(
        main, ["diff", str(repo), "--base", "HEAD", "--format", "json"]
    )  # head: the working tree
    assert res.exit_code == 1, res.output
    doc = json.loads(res.output)
    new = doc["clusters"][0]["newFindings"]
    assert [f["rule"] for f in new] == ["dangling-dependency"]
    assert set(new[0]) == {
        "rule",
        "headline",
        "notes",
        "severity",
        "file",
        "line",
        "column",
        "cluster",
        "kustomization",
        "kustomizations",
        "object",
        "message",
        "related",
        "fingerprint",
    }
    assert doc["head"] == {"rev": "working tree", "commit": None}
    assert doc["summary"]["exitCode"] == 1
    assert {
        "kind": "Kustomization",
        "from": "flux-system/apps",
        "to": "flux-system/does-not-exist",
        "change": "added",
    } in doc["clusters"][0]["dependsOn"]
    # reverting fixes it
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dangling")
    _replace_tree(repo, MOVES / "rename" / "base")
    code, doc = run_wt(repo)
    assert [f["rule"] for f in doc["clusters"][0]["fixedFindings"]] == ["dangling-dependency"]
    assert code == 0


def test_substitution_and_variable_changes(tmp_path):
    more = edit(
        "clusters/prod/network.yaml",
        "      LB_RANGE: 192.168.20.200-192.168.20.250",
        "      LB_RANGE: 10.0.0.1-10.0.0.9\n      EXTRA: x",
    )
    repo = history(tmp_path, "split-depends", head_edit=more)
    _, doc = run(repo)
    c = doc["clusters"][0]
    assert {"kustomization": "flux-system/network", "change": "added", "what": "substitute EXTRA"} in c[
        "substitution"
    ]
    changed = {
        (v["name"], v["change"]) for v in c["variables"] if v["kustomization"] == "flux-system/network"
    }
    assert ("LB_RANGE", "changed") in changed and ("EXTRA", "added") in changed
    lb = next(
        v for v in c["variables"] if v["name"] == "LB_RANGE" and v["kustomization"] == "flux-system/network"
    )
    assert "10.0.0.1-10.0.0.9" in lb["after"]


def test_unchanged_history_reports_nothing(tmp_path):
    repo = history(tmp_path, "rename", head_edit=lambda r: _replace_tree(r, MOVES / "rename" / "base"))
    code, doc = run(repo)
    assert code == 0
    assert [c["status"] for c in doc["clusters"]] == ["unchanged"]


def test_skipping_unaffected_clusters_gives_the_same_report(tmp_path):
    """A second cluster that reads nothing the change touches is not rebuilt at base."""

    def staging(repo: Path) -> None:  # the same at both revisions
        shutil.copytree(MOVES / "split/base/clusters/prod", repo / "clusters/staging")
        shutil.copytree(MOVES / "split/base/platform", repo / "platform-staging")
        for f in (repo / "clusters/staging").rglob("*.yaml"):
            f.write_text(
                f.read_text()
                .replace("./clusters/prod", "./clusters/staging")
                .replace("./platform", "./platform-staging")
            )

    repo = history(tmp_path, "split", base_edit=staging, head_edit=staging)
    fast = diff_revisions(repo, "HEAD~1", "HEAD")
    assert {c.cluster: c.reused for c in fast.clusters} == {"clusters/prod": False, "clusters/staging": True}

    import fluxgraph.revisions as d

    orig = d.affected_by
    try:
        d.affected_by = lambda model, changed: set(changed)  # every cluster affected: full rebuild
        slow = diff_revisions(repo, "HEAD~1", "HEAD")
    finally:
        d.affected_by = orig
    assert not any(c.reused for c in slow.clusters)
    assert render_text(fast).replace(" (nothing it reads changed)", "") == render_text(slow)


def test_affected_by_sees_new_files_below_a_build_dir(tmp_path):
    from fluxgraph.api import load

    repo = load(MOVES / "split" / "head")
    [c] = repo.clusters
    assert affected_by(c, {"platform/network/new.yaml"})  # generated kustomization lists it
    assert affected_by(c, {"platform/kustomization.yaml"})
    assert not affected_by(c, {"docs/README.md"})


# -- the verdict logic alone ----------------------------------------------------------------------


def _spec(**kw) -> FluxKustomization:
    base = dict(
        namespace="flux-system",
        name="old",
        api_version="kustomize.toolkit.fluxcd.io/v1",
        path="./x",
        source_ref=None,
        depends_on=(),
        prune=True,
        wait=False,
        interval=600.0,
        timeout=None,
        retry_interval=None,
        target_namespace=None,
        post_build=None,
        suspend=False,
        deletion_policy="MirrorPrune",
        health_checks=(),
        patches=(),
        images=(),
        components=(),
        name_prefix="",
        name_suffix="",
        common_metadata=None,
        decryption=None,
        service_account=None,
        location=Location("x.yaml"),
    )
    base.update(kw)
    return FluxKustomization(**base)  # type: ignore[arg-type]


NEW = gc.NewOwnerState("flux-system/new", exists_before=False, created_by_old=False, waits_for_old=False)


@pytest.mark.parametrize(
    ("before", "after", "chain_before", "chain_after", "new", "data", "verdict"),
    [
        (_spec(), _spec(), None, None, NEW, {}, gc.RACE),
        (_spec(prune=False), _spec(prune=False), None, None, NEW, {}, gc.SAFE),
        (_spec(), _spec(prune=False), None, None, NEW, {}, gc.RACE),  # prune off in the same revision
        (_spec(prune=False), _spec(), None, None, NEW, {}, gc.RACE),  # prune back on in the same revision
        (_spec(), _spec(), ["old", "new"], ["old", "new"], NEW, {}, gc.SAFE),
        (_spec(), _spec(), None, ["old", "new"], NEW, {}, gc.RACE),
        (_spec(suspend=True), _spec(suspend=True), None, None, NEW, {}, gc.SAFE),
        (_spec(), _spec(), None, None, gc.NewOwnerState("n", False, True, False), {}, gc.RECREATE),
        (_spec(), _spec(), None, None, gc.NewOwnerState("n", True, False, True), {}, gc.RECREATE),
        (_spec(), _spec(), ["o", "n"], ["o", "n"], gc.NewOwnerState("n", False, True, False), {}, gc.BLOCKED),
        (
            _spec(),
            _spec(),
            None,
            None,
            NEW,
            {"metadata": {"labels": {"kustomize.toolkit.fluxcd.io/prune": "Disabled"}}},
            gc.SAFE,
        ),
        (
            _spec(),
            _spec(),
            None,
            None,
            NEW,
            {"metadata": {"annotations": {"kustomize.toolkit.fluxcd.io/ssa": "ignore"}}},
            gc.SAFE,
        ),
        (
            _spec(),
            _spec(),
            None,
            None,
            NEW,
            {"metadata": {"annotations": {"kustomize.toolkit.fluxcd.io/prune": ""}}},
            gc.RACE,
        ),
    ],
)
def test_judge_move(before, after, chain_before, chain_after, new, data, verdict):
    j = gc.judge_move(
        data, gc.OldOwnerState("flux-system/old", before, after, chain_before, chain_after), new
    )
    assert j.verdict == verdict, j.reason


def test_judge_move_with_the_old_owner_waiting_for_its_parent():
    carrier = gc.SpecCarrier("flux-system/old", "flux-system/p", ("flux-system/old", "flux-system/p"))
    changed = gc.SpecCarrier("flux-system/old", "flux-system/p", carrier.chain, ("spec.patches",))

    def judge(before, after, c, chain_after=None):
        return gc.judge_move({}, gc.OldOwnerState("flux-system/old", before, after, None, chain_after, c), NEW)

    # only the new spec runs the revision
    assert judge(_spec(), _spec(prune=False), carrier).verdict == gc.SAFE
    assert judge(_spec(suspend=False), _spec(suspend=True), carrier).verdict == gc.SAFE
    assert judge(_spec(prune=False), _spec(), carrier).verdict == gc.RACE
    dep = _spec(depends_on=(NamedRef("flux-system", "new"),))
    assert judge(_spec(), dep, carrier, ["flux-system/old", "flux-system/new"]).verdict == gc.SAFE
    # the parent's own spec changes too, or there is no new spec: as without it
    j = judge(_spec(), _spec(prune=False), changed)
    assert j.verdict == gc.RACE and "changes its own spec.patches" in j.reason
    assert judge(_spec(), None, carrier).verdict == gc.RACE
    assert judge(_spec(), _spec(), carrier).verdict == gc.RACE
    assert judge(_spec(), _spec(prune=False), None).verdict == gc.RACE


def test_judge_removal_and_finalizer():
    assert gc.judge_removal({}, "o", [_spec()], "Namespace", "kube-system").verdict == gc.REFUSED
    assert gc.judge_removal({}, "o", [_spec()], "Namespace", "media").verdict == gc.DELETE
    assert gc.judge_removal({}, "o", [_spec(prune=False)], "Deployment", "x").verdict == gc.ORPHAN
    assert gc.judge_removal({}, "o", [_spec(suspend=True)], "Deployment", "x").verdict == gc.DEFERRED
    assert (
        gc.judge_finalizer(
            {}, _spec(deletion_policy="Delete", prune=False), "Deployment", "x", moved_to=None
        ).verdict
        == gc.DELETE
    )
    assert (
        gc.judge_finalizer({}, _spec(deletion_policy="Orphan"), "Deployment", "x", moved_to="n").verdict
        == gc.SAFE
    )
    assert (
        gc.judge_finalizer(
            {}, _spec(deletion_policy="WaitForTermination"), "Deployment", "x", moved_to="n"
        ).verdict
        == gc.RACE
    )
    assert (
        gc.judge_finalizer(
            {}, _spec(suspend=True, deletion_policy="Delete"), "Deployment", "x", moved_to=None
        ).verdict
        == gc.ORPHAN
    )
    assert gc.VERDICT_SEVERITY[gc.RACE] is Severity.ERROR


# -- git access -----------------------------------------------------------------------------------


def test_not_a_git_repository_and_unknown_revision_exit_2(tmp_path):
    shutil.copytree(MOVES / "rename" / "base", tmp_path / "plain")
    res = CliRunner().invoke(main, ["diff", str(tmp_path / "plain"), "--base", "HEAD"])
    assert res.exit_code == 2 and "not inside a git repository" in res.output
    repo = history(tmp_path, "rename")
    res = CliRunner().invoke(main, ["diff", str(repo), "--base", "no-such-branch"])
    assert res.exit_code == 2 and "unknown revision 'no-such-branch'" in res.output
    res = CliRunner().invoke(main, ["diff", str(repo), "--base", "--upload-pack=x"])
    assert res.exit_code == 2


def test_read_tree_refuses_unsafe_paths_and_escaping_links(tmp_path):
    assert _safe_rel("a/b.yaml") == "a/b.yaml"
    for bad in ("/etc/passwd", "../x", "a/../../x", "a//b", ".git/config", "a/.GIT/x", "", "a\\b"):
        assert _safe_rel(bad) is None, bad
    assert _link_ok("a/link", "../b/c")
    assert not _link_ok("a/link", "../../outside")
    assert not _link_ok("link", "/etc/passwd")
    repo = tmp_path / "r"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "sub" / "a.yaml").write_text("x: 1\n")
    os.symlink("../../../etc/passwd", repo / "sub" / "evil")
    os.symlink("a.yaml", repo / "sub" / "good")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    tree = read_tree(repo / "sub", "HEAD")
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written
    assert tree.files == {"a.yaml": b"x: 1\n"}
    assert tree.links == {"good": "a.yaml"}
    assert any("evil" in s for s in tree.skipped)
    fs = tree.fs()
    assert fs.read_bytes("good") == b"x: 1\n"
    assert not fs.exists("evil")
    with pytest.raises(FluxgraphError):
        read_tree(repo, "nope")


def test_a_subfolder_of_the_repository_is_compared_on_its_own(tmp_path):
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q")
    shutil.copytree(MOVES / "split" / "base", outer / "gitops")
    (outer / "README.md").write_text("not flux\n")
    git(outer, "add", "-A")
    git(outer, "commit", "-qm", "base")
    _replace_tree(outer / "gitops", MOVES / "split" / "head")
    code, doc = run_wt(outer / "gitops")
    assert code == 1
    assert by_object(doc)["Namespace/network"]["code"] == gc.RACE


def run_wt(path: Path) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["diff", str(path), "--base", "HEAD", "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.output)


def test_base_without_any_cluster_makes_everything_new(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("empty\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "empty")
    shutil.copytree(MOVES / "rename" / "base", repo, dirs_exist_ok=True)
    code, doc = run_wt(repo)
    assert [c["status"] for c in doc["clusters"]] == ["added"]
    assert any("no Flux cluster found" in n for n in doc["notes"])


# -- renderers --------------------------------------------------------------------------------------


def test_text_markdown_and_graph_formats(tmp_path):
    repo = history(tmp_path, "split")
    r = diff_revisions(repo, "HEAD~1", "HEAD")
    text = render_text(r)
    assert "race" in text and "namespace-cascade" in text and "Namespace/network" in text
    md = render_markdown(r)
    assert md.startswith("### fluxgraph diff `HEAD~1` → `HEAD`")
    [row] = [ln for ln in md.splitlines() if ln.startswith("| 🔴 error | `clusters/prod` | race |")]
    assert "`Namespace/network`" in row and "`ConfigMap/network/lb-pool`" in row
    assert "flux-system/platform → flux-system/network: " in row
    assert "| 🔴 error | `clusters/prod` | namespace-cascade | `Namespace/network` |" in md
    assert "<details>" in md
    mm = render_mermaid(r)
    assert mm.startswith("flowchart LR\n")
    ids = re.findall(r"^\s+(\w+)\[", mm, re.M)
    assert ids and all(re.fullmatch(r"[A-Za-z0-9_]+", i) for i in ids)
    assert "moves 2 object(s): race" in mm
    assert "classDef added" in mm
    dot = render_dot(r)
    assert dot.startswith("digraph fluxgraph_diff {") and dot.rstrip().endswith("}")
    assert 'label="moves 2 object(s): race"' in dot
    for fmt in ("text", "markdown", "mermaid", "dot"):
        res = CliRunner().invoke(
            main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--format", fmt]
        )
        assert res.exit_code == 1, res.output


def test_graph_labels_are_escaped():
    assert _mermaid_text('a"b<c>|d]') == "a#34;b#60;c#62;#124;d#93;"
    assert _mermaid_text("x\ny") == "x<br/>y"


def test_load_pair_checks_only_affected_clusters(tmp_path):
    repo = history(tmp_path, "split")
    base_tree = read_tree(repo, "HEAD~1")
    seen = []

    def checks(r):
        seen.append([c.name for c in r.clusters])
        return []

    base, head = load_pair(base_tree, repo, load_kwargs={}, checks=checks)
    assert seen == [["clusters/prod"], ["clusters/prod"]]
    assert base.reused == []


def test_the_configuration_selects_the_rules_of_diff_explain_and_graph(tmp_path):
    """`.fluxgraph.yaml` is read by every command, not only check and fix (issue 22): with the
    demo's error rules disabled there, `diff` from the fixed demo to the demo exits 0 and
    lists none of their findings, `explain` lists none, and `graph` colours no node by them."""
    repo = tmp_path / "demo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _replace_tree(repo, FIXTURES / "repos" / "homelab-fixed")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    _replace_tree(repo, FIXTURES / "repos" / "homelab")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "head")
    off = ("hook-fails-on-success", "unescaped-shell-variable", "unsubstituted-flux-variable")
    code, doc = run(repo)
    assert code == 1 and {f["rule"] for c in doc["clusters"] for f in c["newFindings"]} >= set(off)
    (repo / ".fluxgraph.yaml").write_text("rules:\n  disable: [" + ", ".join(off) + "]\n")
    code, doc = run(repo)
    assert code == 0 and not {f["rule"] for c in doc["clusters"] for f in c["newFindings"]} & set(off)
    runner = CliRunner()
    res = runner.invoke(main, ["explain", "apps/nextcloud", str(repo), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert "unescaped-shell-variable" not in res.output
    (repo / ".fluxgraph.yaml").unlink()
    res = runner.invoke(main, ["explain", "apps/nextcloud", str(repo), "--format", "json"])
    assert "unescaped-shell-variable" in res.output
    # --config names a file anywhere, for every command
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("rules:\n  disable: [" + ", ".join(off) + "]\n")
    res = runner.invoke(main, ["explain", "apps/nextcloud", str(repo), "--format", "json", "--config", str(cfg)])
    assert res.exit_code == 0 and "unescaped-shell-variable" not in res.output
    plain = runner.invoke(main, ["graph", str(repo), "--format", "dot"])
    configured = runner.invoke(main, ["graph", str(repo), "--format", "dot", "--config", str(cfg)])
    assert plain.exit_code == configured.exit_code == 0
    assert "findings (error)" in plain.output and "findings (error)" not in configured.output


@pytest.mark.parametrize("scenario", sorted(p.name for p in MOVES.iterdir() if p.is_dir()))
def test_shared_builds_give_the_same_report(tmp_path, scenario):
    """diff shares the kustomize builds a change cannot reach between its two revisions
    (kustomize.build.SharedBuilds): the report is the one of two full builds."""
    from fluxgraph.diff import diff_revisions
    from fluxgraph.render.diff_report import render_json

    repo = history(tmp_path, scenario)
    shared = render_json(diff_revisions(repo, "HEAD~1", "HEAD", share_builds=True))
    full = render_json(diff_revisions(repo, "HEAD~1", "HEAD", share_builds=False))
    assert shared == full


def _histories() -> list[Path]:
    root = os.environ.get("FLUXGRAPH_HISTORIES")
    return sorted(p for p in Path(root).iterdir() if (p / ".git").exists()) if root and Path(root).is_dir() else []


@pytest.mark.heavy
@pytest.mark.skipif(not _histories(), reason="FLUXGRAPH_HISTORIES names no folder of git clones")
@pytest.mark.parametrize("clone", _histories(), ids=lambda p: p.name)
def test_shared_builds_on_real_histories(clone):
    """The last commits of real clones (FLUXGRAPH_HISTORIES: a folder of clones, e.g. of the
    corpus repositories' sources) give the same report with and without shared builds."""
    from fluxgraph.diff import diff_revisions
    from fluxgraph.render.diff_report import render_json

    commits = subprocess.run(
        ["git", "rev-list", "--first-parent", "--max-count=5", "HEAD"], cwd=clone, check=True, capture_output=True, text=True
    ).stdout.split()
    for c in commits:
        try:
            shared = render_json(diff_revisions(clone, f"{c}^", c, share_builds=True))
        except FluxgraphError:
            continue  # no cluster found by discovery, a root commit: nothing to compare
        assert shared == render_json(diff_revisions(clone, f"{c}^", c, share_builds=False)), c
