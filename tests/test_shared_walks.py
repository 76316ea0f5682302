"""diff's second revision takes the first's walk of a Kustomization whose build and inputs are
unchanged (``cluster.WalkRecord``), its ``.sourceignore`` matcher and its discovered roots
(``revisions.discovery_same``): the report must be the one of two loads that share nothing, and
the walk must be taken only where its inputs are equal."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fluxgraph.diff import diff_revisions
from fluxgraph.gitrev import read_tree
from fluxgraph.kustomize.build import SharedBuilds
from fluxgraph.render.diff_report import render_json
from fluxgraph.repofs import RepoFS
from fluxgraph.revisions import discovery_same, load_pair

KS = (
    "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\n"
    "spec:\n  interval: 10m\n  path: ./apps/{name}\n  prune: true\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
    "  targetNamespace: {name}\n  postBuild:\n    substitute: {{APP: {name}}}\n"
    "    substituteFrom: [{{kind: ConfigMap, name: settings}}]\n"
)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo, check=True, capture_output=True)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _repo(tmp_path: Path, apps: int = 4) -> Path:
    root = tmp_path / "repo"
    files = {
        "clusters/prod/flux-system/gotk-sync.yaml": (
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\n"
            "spec: {interval: 1m, url: 'ssh://git@example.com/r', ref: {branch: main}}\n---\n"
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\n"
            "spec: {interval: 10m, path: ./clusters/prod, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n"
        ),
        "clusters/prod/flux-system/kustomization.yaml": "resources: [gotk-sync.yaml]\n",
        "clusters/prod/settings.yaml": (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: flux-system}\ndata: {DOMAIN: example.com}\n"
        ),
    }
    for i in range(apps):
        name = f"app-{i}"
        files[f"clusters/prod/{name}.yaml"] = KS.format(name=name)
        files[f"apps/{name}/kustomization.yaml"] = "resources: [ns.yaml, config.yaml]\n"
        files[f"apps/{name}/ns.yaml"] = "apiVersion: v1\nkind: Namespace\nmetadata: {name: _}\n"
        files[f"apps/{name}/config.yaml"] = (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '${APP}-config'}\ndata: {url: 'https://${APP}.${DOMAIN}'}\n"
        )
    _write(root, files)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    return root


def _commit(root: Path, files: dict[str, str]) -> None:
    _write(root, files)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "change")


def _reused(root: Path) -> SharedBuilds:
    """The sharing of a diff of HEAD~1 against HEAD, as load_pair does it."""
    captured: list[SharedBuilds] = []
    import fluxgraph.revisions as revisions

    real = revisions.SharedBuilds

    def spy() -> SharedBuilds:
        captured.append(real())
        return captured[-1]

    revisions.SharedBuilds = spy  # type: ignore[misc,assignment]
    try:
        load_pair(read_tree(root, "HEAD~1"), read_tree(root, "HEAD"), load_kwargs={}, checks=lambda r: [])
    finally:
        revisions.SharedBuilds = real  # type: ignore[misc]
    return captured[0]


def _same_report(root: Path) -> dict:
    shared = render_json(diff_revisions(root, "HEAD~1", "HEAD", share_builds=True))
    assert shared == render_json(diff_revisions(root, "HEAD~1", "HEAD", share_builds=False))
    return shared


CHANGES = {
    # one app's content: only that Kustomization is walked again
    "content": {"apps/app-1/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '${APP}-config'}\ndata: {url: changed}\n"},
    # the ConfigMap every app substitutes from: every app's variables differ, none is taken again
    "variables": {
        "clusters/prod/settings.yaml": (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: flux-system}\ndata: {DOMAIN: example.org}\n"
        )
    },
    # a CRD that makes a kind of the other apps cluster-scoped: their identities are this walk's
    "scope": {
        "apps/app-0/kustomization.yaml": "resources: [ns.yaml, config.yaml, crd.yaml]\n",
        "apps/app-0/crd.yaml": (
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n"
            "spec: {group: example.com, scope: Cluster, names: {kind: Widget, plural: widgets}, "
            "versions: [{name: v1, served: true, storage: true}]}\n"
        ),
        "apps/app-3/widget.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: app-3}\n",
        "apps/app-3/kustomization.yaml": "resources: [ns.yaml, config.yaml, widget.yaml]\n",
    },
    # one app's spec, in the file its parent builds: the parent is walked again
    "spec": {
        "clusters/prod/app-2.yaml": KS.format(name="app-2").replace("interval: 10m\n", "interval: 5m\n"),
    },
    # a comment only
    "comment": {"apps/app-2/config.yaml": "# a comment\n" + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '${APP}-config'}\ndata: {url: 'https://${APP}.${DOMAIN}'}\n"},
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_shared_walks_give_the_report_of_two_full_loads(tmp_path, change):
    root = _repo(tmp_path)
    _commit(root, CHANGES[change])
    _same_report(root)


def test_only_the_changed_kustomization_is_walked_again(tmp_path):
    root = _repo(tmp_path)
    _commit(root, CHANGES["content"])
    shared = _reused(root)
    # five Kustomizations (the root, which builds clusters/prod, and four apps): all but app-1
    assert shared.walks_reused == 5 - 1
    assert shared.discovery_same


def test_changed_variables_are_not_taken_again(tmp_path):
    root = _repo(tmp_path)
    _commit(root, CHANGES["variables"])
    shared = _reused(root)
    # the root reads settings.yaml: built again; every app's DOMAIN differs
    assert shared.walks_reused == 0


def test_discovery_is_not_taken_where_the_change_can_reach_it(tmp_path):
    root = _repo(tmp_path)
    base = RepoFS(root)
    assert discovery_same(base, base, {"apps/app-1/config.yaml"})
    assert not discovery_same(base, base, {"clusters/prod/app-1.yaml"})  # a folder discovery reads
    assert not discovery_same(base, base, {"apps/app-9/config.yaml"})  # absent: added or removed
    (root / "apps" / "app-1" / "link.yaml").symlink_to("config.yaml")
    assert not discovery_same(base, base, {"apps/app-1/link.yaml"})
    (root / "apps" / "app-1" / "sync.yaml").write_text("kind: Kustomization\napiVersion: kustomize.toolkit.fluxcd.io/v1\n")
    assert not discovery_same(base, base, {"apps/app-1/sync.yaml"})  # a file discovery parses
    (root / "apps" / "flux-system").mkdir()
    (root / "apps" / "flux-system" / "gotk-sync.yaml").write_text("# placeholder\n")
    assert not discovery_same(base, base, {"apps/flux-system/gotk-sync.yaml"})
