"""TreeFS (a git revision served from memory) must answer every RepoFS question as RepoFS
answers it for the same files checked out on disk: existence, kinds, listings, contents,
walks, escapes through chains of symlinks, cycles and loops."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fluxgraph.api import load
from fluxgraph.gitrev import read_tree
from fluxgraph.repofs import FileTooLarge, PathEscape, RepoFS

from .conftest import write_tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, check=True, capture_output=True)


def make_tree(root: Path) -> None:
    files = {
        "a.yaml": "a: 1\n",
        "apps/kustomization.yaml": "resources: [x.yaml]\n",
        "apps/x.yaml": "kind: ConfigMap\n",
        "apps/sub/deep/y.yml": "y: 2\n",
        "x/z.yaml": "z: 3\n",
        "empty.yaml": "",
    }
    write_tree(root, files)
    links = {
        "apps/link-file": "x.yaml",  # to a file
        "apps/link-dir": "sub",  # to a directory
        "apps/chain": "link-file",  # link -> link -> file
        "apps/up": "..",  # a cycle: apps/up/apps/up/...
        "loop-a": "loop-b",  # a loop
        "loop-b": "loop-a",
        "x/d": "..",  # to the root
        "sneaky": "x/d/..",  # lexically inside (x), really above the root
        "dangling": "nowhere.yaml",
        "x/via": "../apps/link-dir/deep/y.yml",  # through a directory link
    }
    for rel, target in links.items():
        os.symlink(target, root / rel)


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple[RepoFS, RepoFS]:
    root = tmp_path_factory.mktemp("repo")
    make_tree(root)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "x")
    tree = read_tree(root, "HEAD")
    assert tree.skipped == []  # every link above is lexically inside
    checkout = tmp_path_factory.mktemp("checkout") / "repo"
    shutil.copytree(root, checkout, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    return RepoFS(checkout), tree.fs()


PATHS = [
    "", "a.yaml", "apps", "apps/x.yaml", "apps/sub", "apps/sub/deep", "apps/sub/deep/y.yml", "apps/link-file",
    "apps/link-dir", "apps/link-dir/deep", "apps/link-dir/deep/y.yml", "apps/chain", "apps/up", "apps/up/a.yaml",
    "apps/up/apps/up/apps/x.yaml", "loop-a", "loop-a/x", "x/d", "x/d/a.yaml", "x/d/x/z.yaml", "sneaky", "sneaky/a.yaml",
    "dangling", "x/via", "missing", "missing/deeper", "a.yaml/not-a-dir", "empty.yaml", "x",
]


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except PathEscape:
        return ("escape", None)
    except FileTooLarge:
        return ("too-large", None)
    except OSError as e:
        return ("oserror", type(e).__name__ if not isinstance(e, FileNotFoundError) else "missing")


@pytest.mark.parametrize("rel", PATHS)
def test_treefs_answers_like_the_checked_out_tree(pair, rel):
    disk, mem = pair
    for q in ("exists", "is_file", "is_dir", "is_symlink", "escapes"):
        assert getattr(mem, q)(rel) == getattr(disk, q)(rel), (q, rel)
    assert mem.listdir(rel) == disk.listdir(rel), rel
    d, m = outcome(disk.read_bytes, rel), outcome(mem.read_bytes, rel)
    # the error classes may differ (ENOTDIR vs ENOENT), never the verdict
    assert (m[0], m[1] if m[0] == "ok" else None) == (d[0], d[1] if d[0] == "ok" else None), rel


def test_walks_and_problems_agree(pair):
    disk, mem = pair
    assert mem.walk_files("") == disk.walk_files("")
    assert mem.walk_files("apps") == disk.walk_files("apps")
    assert mem.escaping == disk.escaping
    assert [(p.code, p.location.file) for p in mem.problems] == [(p.code, p.location.file) for p in disk.problems]


def test_a_revision_in_memory_builds_the_same_model(tmp_path):
    from .conftest import FIXTURES

    src = FIXTURES / "repos" / "homelab"
    repo = tmp_path / "homelab"
    shutil.copytree(src, repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x")
    on_disk = load(repo)
    in_memory = load(read_tree(repo, "HEAD").fs())
    from fluxgraph.export import to_json

    assert to_json(in_memory.clusters) == to_json(on_disk.clusters)


def test_the_tricky_cases_are_what_they_claim(pair):
    """Guard the differential test: the cases above really exercise escapes, cycles, loops."""
    disk, mem = pair
    for fs in (disk, mem):
        assert fs.escapes("sneaky") and not fs.exists("sneaky/a.yaml")
        assert not fs.exists("loop-a")
        assert fs.read_bytes("x/via") == b"y: 2\n"
        assert fs.read_bytes("apps/chain") == b"kind: ConfigMap\n"
        assert not fs.exists("apps/up/apps/up/apps/x.yaml")  # the cycle is refused
        assert "apps/link-dir" not in fs.walk_files("")  # symlinked dirs are not descended
