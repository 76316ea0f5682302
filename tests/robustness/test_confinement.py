"""Nothing outside the repository is read.

Every test plants a secret beside the repository (``outside/``) and points at it in a
different way: symlinked files and directories, symlink loops and cycles, ``../`` and absolute
paths in every kustomize field that names a file, a climbing ``spec.path``, an
``ArtifactGenerator`` copy. The finding is asserted, the secret's content must not appear in
any output, and ``open``/``os.open``/``os.listdir``/``os.scandir`` are watched: no path under
``outside/`` is ever opened or listed.
"""

from __future__ import annotations

import builtins
import os
from pathlib import Path

import pytest

from fluxgraph.api import load
from fluxgraph.repofs import PathEscape, RepoFS

from .conftest import (
    all_problems,
    check_json,
    configmap,
    findings_of,
    flux_ks,
    infra_still_analysed,
    make_repo,
    outputs,
    run_cli,
)

SECRET = "TOPSECRET-7f3c9a-never-print-me"
SECRET_OBJECT = (
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: leaked\n  namespace: default\n"
    f"stringData:\n  token: {SECRET}\n"
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    (d / "base").mkdir(parents=True)
    (d / "secret.yaml").write_text(SECRET_OBJECT)
    (d / "token.env").write_text(f"TOKEN={SECRET}\n")
    (d / "base" / "kustomization.yaml").write_text("resources: [secret.yaml]\n")
    (d / "base" / "secret.yaml").write_text(SECRET_OBJECT)
    (d / "kustomization.yaml").write_text("resources: [secret.yaml]\n")
    return d


@pytest.fixture
def watch(monkeypatch, outside):
    """Record every path fluxgraph opens or lists under ``outside``."""
    touched: list[str] = []
    real_open, real_os_open, real_listdir, real_scandir = builtins.open, os.open, os.listdir, os.scandir
    prefix = os.path.realpath(outside)

    def note(path) -> None:
        if isinstance(path, int):
            return
        p = os.path.realpath(os.fsdecode(path))
        if p == prefix or p.startswith(prefix + os.sep):
            touched.append(p)

    def _open(file, *a, **k):
        note(file)
        return real_open(file, *a, **k)

    def _os_open(path, *a, **k):
        note(path)
        return real_os_open(path, *a, **k)

    def _listdir(path="."):
        note(path)
        return real_listdir(path)

    def _scandir(path="."):
        note(path)
        return real_scandir(path)

    monkeypatch.setattr(builtins, "open", _open)
    monkeypatch.setattr(os, "open", _os_open)
    monkeypatch.setattr(os, "listdir", _listdir)
    monkeypatch.setattr(os, "scandir", _scandir)
    return touched


def assert_not_leaked(repo: Path, touched: list[str]) -> dict:
    results = outputs(repo)
    for name, r in results.items():
        assert SECRET not in r.output, name
        assert "leaked" not in r.output, name
    assert touched == [], touched
    return results


def link(target: Path | str, at: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, at)


# -- symlinks -------------------------------------------------------------------------------


def test_symlinked_files_and_dirs_in_a_generated_kustomization(tmp_path, outside, watch):
    repo = make_repo(tmp_path / "repo")
    link(outside / "secret.yaml", repo / "apps/secret.yaml")
    link(outside, repo / "apps/shared")
    link("/etc/passwd", repo / "apps/passwd.yaml")
    link("/dev/zero", repo / "apps/zero.yaml")
    report = check_json(repo)
    escapes = findings_of(report, "path-escape")
    assert {f["file"] for f in escapes} == {"apps/secret.yaml", "apps/shared", "apps/passwd.yaml", "apps/zero.yaml"}
    assert all("leaves the repository root" in f["message"] for f in escapes)
    infra_still_analysed(load(repo))
    assert_not_leaked(repo, watch)


@pytest.mark.parametrize(
    "entry, expect",
    [
        ("secret.yaml", "path-escape"),
        ("shared", "path-escape"),
        ("shared/secret.yaml", "path-escape"),
        ("passwd.yaml", "path-escape"),
        ("loop1", "kustomize-build-error"),
        ("selfloop", "kustomize-build-error"),
        ("fifo.yaml", "kustomize-build-error"),
    ],
)
def test_symlinked_kustomize_resources(tmp_path, outside, watch, entry, expect):
    repo = make_repo(tmp_path / "repo", {"apps/kustomization.yaml": f"resources: [app.yaml, {entry}]\n"})
    link(outside / "secret.yaml", repo / "apps/secret.yaml")
    link(outside, repo / "apps/shared")
    link("/etc/passwd", repo / "apps/passwd.yaml")
    link(repo / "apps/loop2", repo / "apps/loop1")
    link(repo / "apps/loop1", repo / "apps/loop2")
    link("selfloop", repo / "apps/selfloop")
    os.mkfifo(repo / "apps/fifo.yaml")  # reading it would block forever
    report = check_json(repo)
    [f] = findings_of(report, expect)
    assert f["file"] == "apps/kustomization.yaml" and f["line"] == 1
    infra_still_analysed(load(repo))
    assert_not_leaked(repo, watch)


def test_symlinked_kustomization_file_and_gotk_sync(tmp_path, outside, watch):
    repo = make_repo(tmp_path / "repo", {"apps/kustomization.yaml": None})
    link(outside / "kustomization.yaml", repo / "apps/kustomization.yaml")
    report = check_json(repo)
    [f] = findings_of(report, "path-escape")
    assert f["file"] == "apps/kustomization.yaml"
    assert_not_leaked(repo, watch)


def test_symlinked_generator_patch_and_replacement_files(tmp_path, outside, watch):
    kustomizations = {
        "generator-file": "configMapGenerator:\n  - name: g\n    files: [token.env]\n",
        "generator-env": "secretGenerator:\n  - name: g\n    envs: [token.env]\n",
        "patch-path": "patches:\n  - path: secret.yaml\n",
        "psm": "patchesStrategicMerge:\n  - secret.yaml\n",
        "json6902-path": "patchesJson6902:\n  - target: {kind: ConfigMap, name: app-settings}\n    path: token.env\n",
        "replacement-path": "replacements:\n  - path: secret.yaml\n",
        "configurations": "configurations: [secret.yaml]\n",
    }
    for name, extra in kustomizations.items():
        repo = make_repo(tmp_path / name, {"apps/kustomization.yaml": "resources: [app.yaml]\n" + extra})
        link(outside / "token.env", repo / "apps/token.env")
        link(outside / "secret.yaml", repo / "apps/secret.yaml")
        report = check_json(repo)
        errors = findings_of(report, "path-escape") + findings_of(report, "kustomize-build-error")
        assert errors and all(f["file"] == "apps/kustomization.yaml" for f in errors), (name, report["findings"])
        assert any("symlink that leaves the repository root" in f["message"] for f in errors), (name, errors)
        infra_still_analysed(load(repo))
        assert_not_leaked(repo, watch)


def test_symlink_cycles_terminate(tmp_path, watch):
    """Directory symlinks back into the repository: walked once, never followed around."""
    repo = make_repo(tmp_path / "repo")
    for i in range(8):  # 8 ways up: exponential if followed
        link("..", repo / f"apps/up{i}")
    link("../../apps", repo / "apps/sub/back")
    link(repo, repo / "infra/root")
    model = load(repo)
    apps = model.clusters[0].kustomizations["flux-system/apps"]
    assert apps.status == "built"
    assert [o.ref.name for o in apps.objects] == ["app-settings"]
    assert len(model.clusters[0].kustomizations) == 3
    assert_not_leaked(repo, watch)


def test_symlinked_cluster_directory_is_refused_with_a_message(tmp_path, outside):
    repo = make_repo(tmp_path / "repo", base=False)
    (outside / "clusters/prod/flux-system").mkdir(parents=True)
    (outside / "clusters/prod/flux-system/gotk-sync.yaml").write_text("kind: x\n")
    link(outside / "clusters", repo / "clusters")
    r = run_cli("check", str(repo))
    assert r.exit_code == 2
    assert "clusters is a symlink that leaves the repository root; not read" in r.stderr


def test_repofs_refuses_every_escape(tmp_path, outside):
    repo = make_repo(tmp_path / "repo")
    link(outside / "secret.yaml", repo / "apps/secret.yaml")
    link(outside, repo / "apps/shared")
    fs = RepoFS(repo)
    for rel in ("apps/secret.yaml", "apps/shared/secret.yaml", "../outside/secret.yaml", "apps/../../outside/secret.yaml"):
        with pytest.raises(PathEscape):
            fs.read_bytes(rel)
        assert not fs.is_file(rel) and not fs.is_dir(rel)
    assert fs.listdir("apps/shared") == []
    assert fs.listdir("..") == []


# -- paths that climb or are absolute -----------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [
        "resources: [app.yaml, ../../outside/secret.yaml]\n",
        "resources: [app.yaml, ../../outside/base]\n",
        "resources: [app.yaml, /etc/passwd]\n",
        "bases: [../../outside/base]\n",
        "resources: [app.yaml]\ncomponents: [../../outside/base]\n",
        "resources: [app.yaml]\nconfigMapGenerator:\n  - name: g\n    files: [../../outside/token.env]\n",
        "resources: [app.yaml]\nconfigMapGenerator:\n  - name: g\n    files: [key=../../outside/token.env]\n",
        "resources: [app.yaml]\nsecretGenerator:\n  - name: g\n    envs: [/etc/passwd]\n",
        "resources: [app.yaml]\nsecretGenerator:\n  - name: g\n    env: ../../outside/token.env\n",
        "resources: [app.yaml]\npatches:\n  - path: ../../outside/secret.yaml\n",
        "resources: [app.yaml]\npatchesStrategicMerge: [../../outside/secret.yaml]\n",
        "resources: [app.yaml]\npatchesJson6902:\n  - target: {kind: ConfigMap, name: app-settings}\n    path: ../../outside/token.env\n",
        "resources: [app.yaml]\nreplacements:\n  - path: ../../outside/secret.yaml\n",
        "resources: [app.yaml]\nconfigurations: [../../outside/secret.yaml]\n",
    ],
    ids=[
        "resource-file", "resource-dir", "resource-absolute", "bases", "components", "generator-files",
        "generator-keyed-file", "generator-envs-absolute", "generator-env", "patch-path", "psm", "json6902-path",
        "replacement-path", "configurations",
    ],
)
def test_climbing_and_absolute_kustomize_paths(tmp_path, outside, watch, extra):
    repo = make_repo(tmp_path / "repo", {"apps/kustomization.yaml": extra})
    report = check_json(repo)
    [f] = findings_of(report, "path-escape")
    assert f["file"] == "apps/kustomization.yaml" and f["line"] >= 1
    assert "not read" in f["message"]
    infra_still_analysed(load(repo))
    assert_not_leaked(repo, watch)


@pytest.mark.parametrize("path", ["../../outside", "../../../../outside", "/../outside"])
def test_climbing_spec_path_is_clamped_like_securejoin(tmp_path, outside, watch, path):
    repo = make_repo(tmp_path / "repo", {"clusters/prod/escape.yaml": flux_ks("escape", path)})
    report = check_json(repo)
    model = load(repo)
    ks = model.clusters[0].kustomizations["flux-system/escape"]
    assert ks.build_dir == "outside"  # clamped at the root: ./outside of the repository
    assert ks.status == "missing-path"
    if path.startswith(".."):
        [f] = findings_of(report, "path-escape")
        assert f["file"] == "clusters/prod/escape.yaml" and "clamps it to 'outside'" in f["message"]
    infra_still_analysed(model)
    assert_not_leaked(repo, watch)


def test_artifact_generator_copy_from_above_the_source(tmp_path, outside, watch):
    ag = (
        "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n"
        "  name: gen\n  namespace: flux-system\nspec:\n  sources:\n"
        "    - {alias: repo, kind: GitRepository, name: flux-system}\n  artifacts:\n"
        "    - name: stolen\n      copy:\n        - {from: '@repo/../../outside/**', to: '@artifact/'}\n"
    )
    consumer = flux_ks("consumer", "./").replace("kind: GitRepository\n    name: flux-system", "kind: ExternalArtifact\n    name: stolen")
    repo = make_repo(tmp_path / "repo", {"apps/gen.yaml": ag, "apps/consumer.yaml": consumer})
    model = load(repo)
    ks = model.clusters[0].kustomizations.get("flux-system/consumer")
    assert ks is not None and ks.status != "built"
    assert_not_leaked(repo, watch)


def test_cluster_option_cannot_leave_the_repository(tmp_path, outside, watch):
    repo = make_repo(tmp_path / "repo")
    for value in ("../outside", "/etc", "clusters/../../outside"):
        r = run_cli("graph", str(repo), "--cluster", value)
        assert r.exit_code == 2 and "Traceback" not in r.output
        assert SECRET not in r.output
    assert watch == []


def test_problems_name_the_link_not_its_target(tmp_path, outside):
    """Messages carry repository paths only: where a symlink points is never printed."""
    repo = make_repo(tmp_path / "repo")
    link(outside / "secret.yaml", repo / "apps/secret.yaml")
    for p in all_problems(load(repo)):
        assert str(outside) not in p.message and "outside" not in p.location.file


def test_sourceignore_hides_symlinks_like_any_file(tmp_path, outside, watch):
    repo = make_repo(tmp_path / "repo", {".sourceignore": "apps/secret.yaml\n"})
    link(outside / "secret.yaml", repo / "apps/secret.yaml")
    report = check_json(repo)
    assert findings_of(report, "path-escape") == []
    assert_not_leaked(repo, watch)


def test_secret_inside_repo_is_analysed_normally(tmp_path):
    """The control: the same Secret inside the repository is read (so the tests above prove
    confinement, not a broken pipeline)."""
    repo = make_repo(tmp_path / "repo", {"apps/secret.yaml": SECRET_OBJECT})
    model = load(repo)
    assert "leaked" in {o.ref.name for o in model.clusters[0].objects()}
    assert configmap  # keep the helper import used


# -- fluxgraph's own files named by the repository -----------------------------------------------


@pytest.mark.parametrize(
    "baseline, words",
    [
        ("/etc/passwd", "absolute path"),
        ("../outside/secret.yaml", "leaves the repository root"),
        ("/dev/zero", "absolute path"),
        ("fifo.json", "not a regular file"),
        ("link.json", "symlink that leaves"),
    ],
)
def test_baseline_named_by_repository_config_is_confined(tmp_path, outside, watch, baseline, words):
    """A `.fluxgraph.yaml` in the pull request may name a baseline: it is read like any other
    repository file (a FIFO would block, /dev/zero would never end, a symlink would leak)."""
    repo = make_repo(tmp_path / "repo", {".fluxgraph.yaml": f"baseline: {baseline}\n"})
    os.mkfifo(repo / "fifo.json")
    link(outside / "secret.yaml", repo / "link.json")
    r = run_cli("check", str(repo))
    assert r.exit_code == 2 and words in r.stderr and "not read" in r.stderr
    assert r.stderr.count("\n") == 1 and SECRET not in r.output
    assert watch == []


def test_repository_config_that_is_a_device_or_link_out_is_not_read(tmp_path, outside, watch):
    repo = make_repo(tmp_path / "repo")
    link(outside / "secret.yaml", repo / ".fluxgraph.yaml")
    (repo / ".git").mkdir()
    r = run_cli("check", str(repo))
    assert r.exit_code == 2 and "configuration file .fluxgraph.yaml" in r.stderr and SECRET not in r.output
    assert watch == []


def test_escaping_flux_component_is_located_at_the_flux_object(tmp_path):
    """A Flux spec.components entry that climbs out fails the build (kustomize's secure file
    system), reported at the entry of the Flux Kustomization, not at the build dir."""
    repo = make_repo(tmp_path / "repo", {"clusters/prod/apps.yaml": flux_ks("apps", "./apps", "  components: [../../../etc]\n")})
    [f] = findings_of(check_json(repo), "path-escape")
    assert (f["file"], f["line"], f["column"]) == ("clusters/prod/apps.yaml", 13, 16)
    assert "spec.components[0]" in f["message"] and "build fails" in f["message"]
