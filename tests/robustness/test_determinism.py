"""Deterministic output: the same repository gives byte-identical ``graph --format json`` and
``check --format json`` whatever ``PYTHONHASHSEED`` and whatever order the file system lists
directory entries in."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import configmap, flux_ks, make_repo, run_cli

HOMELAB = Path(__file__).resolve().parents[2] / "fixtures" / "repos" / "homelab"


@pytest.fixture(scope="module")
def mixed_repo(tmp_path_factory) -> Path:
    """The homelab demo plus a second cluster full of hostile and broken input."""
    root = tmp_path_factory.mktemp("det") / "repo"
    shutil.copytree(HOMELAB, root)
    files: dict[str, str | bytes | None] = {
        "clusters/hostile/flux-system/gotk-sync.yaml": flux_ks("flux-system", "./clusters/hostile"),
        "clusters/hostile/flux-system/kustomization.yaml": "resources: [gotk-sync.yaml]\n",
        "clusters/hostile/apps.yaml": flux_ks("apps", "./hostile", "  dependsOn: [{name: infra}, {name: apps}]\n  prune: maybe\n"),
        "clusters/hostile/infra.yaml": flux_ks("infra", "./hostile-infra", "  dependsOn: [{name: apps}]\n"),
        "hostile/kustomization.yaml": (
            "resources: [a.yaml, b.yaml, ../../escape, https://github.com/x/y//z, sub]\n"
            "helmCharts: [{name: x}]\nconfigMapGenerator: [{name: g, literals: [b=2, a=1]}]\n"
        ),
        "hostile/a.yaml": configmap("a", x="1", y="2"),
        "hostile/b.yaml": configmap("b"),
        "hostile/sub/kustomization.yaml": "resources: [../]\n",
        "hostile-infra/dup.yaml": configmap("d") + "kind: Secret\n",
        "hostile-infra/bin.yaml": bytes(range(256)),
        "hostile-infra/deep.yaml": "x: " + "[" * 400 + "]" * 400 + "\n",
    }
    for i in range(60):  # enough entries for listing order to matter
        files[f"hostile-infra/many/f{i:02d}.yaml"] = configmap(f"m{i}", k=str(i))
    return make_repo(root, files, base=False)


def _run(repo: Path, seed: str, *args: str) -> bytes:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    proc = subprocess.run([sys.executable, "-m", "fluxgraph", *args, str(repo), "--format", "json"], env=env, capture_output=True, timeout=300, check=False)
    assert proc.returncode in (0, 1), proc.stderr.decode()[-2000:]
    assert b"Traceback" not in proc.stderr
    return proc.stdout


@pytest.mark.parametrize("command", ["graph", "check"])
def test_same_bytes_whatever_the_hash_seed(mixed_repo, command):
    outs = {seed: _run(mixed_repo, seed, command) for seed in ("0", "1", "4242", "987654321")}
    first = outs["0"]
    assert len(first) > 1000
    for seed, out in outs.items():
        assert out == first, f"{command} output differs with PYTHONHASHSEED={seed}"


@pytest.mark.parametrize("order", ["reversed", "shuffled"])
def test_same_bytes_whatever_the_listing_order(mixed_repo, monkeypatch, order):
    baseline = {cmd: run_cli(cmd, str(mixed_repo), "--format", "json").stdout for cmd in ("graph", "check")}
    real_listdir, real_scandir = os.listdir, os.scandir
    rng = random.Random(7)

    def permute(names: list) -> list:
        names = list(names)
        if order == "reversed":
            names.reverse()
        else:
            rng.shuffle(names)
        return names

    class _Scan:
        def __init__(self, it):
            self._entries = permute(list(it))
            it.close()

        def __iter__(self):
            return iter(self._entries)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def close(self):
            pass

    monkeypatch.setattr(os, "listdir", lambda path=".": permute(real_listdir(path)))
    monkeypatch.setattr(os, "scandir", lambda path=".": _Scan(real_scandir(path)))
    for cmd, expected in baseline.items():
        got = run_cli(cmd, str(mixed_repo), "--format", "json").stdout
        assert got == expected, f"{cmd} output depends on the directory listing order ({order})"


def test_findings_are_sorted_and_stable_in_text(mixed_repo):
    a = run_cli("check", str(mixed_repo)).stdout
    b = run_cli("check", str(mixed_repo)).stdout
    assert a == b and "hostile" in a


def test_repository_path_spelling_does_not_change_the_report(mixed_repo, tmp_path):
    link = tmp_path / "alias"
    os.symlink(mixed_repo, link)
    direct = run_cli("check", str(mixed_repo), "--format", "json").stdout
    via_link = run_cli("check", str(link), "--format", "json").stdout
    assert direct == via_link
    assert make_repo  # helper kept imported for symmetry with the other modules
