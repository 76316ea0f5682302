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


# what the per-object helpers of the checks look at (``checks._memo.per_object``): a postStart
# hook that fails on success, a shell script reading a Flux variable, an unknown field
WORKLOAD = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n"
    "  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n"
    "        command: [sh, -c, 'echo ${APP}; exec nginx']\n        lifecycle:\n          postStart:\n            exec:\n"
    "              command: [sh, -c, 'p=0; [ \"$p\" -ge 15 ] && exit 1']\n  replicaz: 2\n"
)


def _with_workloads(tmp_path: Path) -> Path:
    root = _repo(tmp_path)
    files = {}
    for i in range(4):
        files[f"apps/app-{i}/kustomization.yaml"] = "resources: [ns.yaml, config.yaml, web.yaml]\n"
        files[f"apps/app-{i}/web.yaml"] = WORKLOAD
    _commit(root, files)
    return root


def test_the_base_takes_the_heads_per_object_work(tmp_path, monkeypatch):
    """The shell-script scan is a function of an object's content: with the walks shared, the
    base's checks take what the head's computed for the objects it shares, and the report is
    the one of two loads that share nothing (the findings at both revisions included)."""
    import fluxgraph.checks._subst as subst

    root = _with_workloads(tmp_path)
    # app-1's workload changes: its findings stay, its object is walked again
    _commit(root, {"apps/app-1/web.yaml": WORKLOAD.replace("replicaz: 2", "replicaz: 3")})
    real, calls = subst.shell_scripts, []

    def counted(data):
        calls.append(data)
        return real(data)

    monkeypatch.setattr(subst, "shell_scripts", counted)
    unshared = render_json(diff_revisions(root, "HEAD~1", "HEAD", share_builds=False))
    n_unshared, calls[:] = len(calls), []
    shared = render_json(diff_revisions(root, "HEAD~1", "HEAD", share_builds=True))
    assert shared == unshared
    # per revision: each app's ConfigMap and Deployment; shared: the head's, and app-1's two again
    assert n_unshared == 2 * 8
    assert len(calls) == 8 + 2


def test_per_object_with_keeps_one_value_per_argument_object():
    from fluxgraph.checks._memo import per_object_with
    from fluxgraph.cluster import AppliedObject
    from fluxgraph.kustomize.resource import Origin, Resource
    from fluxgraph.model import ObjRef

    seen: list[object] = []

    @per_object_with
    def probe(obj: AppliedObject, schema: dict) -> int:
        seen.append(schema)
        return len(seen)

    res = Resource({"kind": "ConfigMap", "metadata": {"name": "x"}}, Origin("x.yaml", 1))
    obj = AppliedObject(res, "ks", ObjRef("ConfigMap", "default", "x"))
    a, b = {"p": {}}, {"p": {}}  # equal, not the same object: a revision's schema is not the other's
    assert probe(obj, a) == probe(obj, a) == 1
    assert probe(obj, b) == 2
    assert probe(obj, a) == 1
