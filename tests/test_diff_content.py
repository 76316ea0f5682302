"""diff's content diffs (issue 24): what changes inside a modified object, by field path, list
entries by key, multi-line strings as line diffs, Secret values never printed, render noise
left out; golden outputs for text, JSON and Markdown."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from fluxgraph.cli import main
from fluxgraph.contentdiff import object_changes

from .conftest import check_golden, flux_ks, gotk_sync, write_tree
from .test_diff import GIT_ENV

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

BASE = {
    "apps/web.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  annotations:
    checksum/config: 1a2b
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: ghcr.io/example/web:1.4.2
          ports: [{containerPort: 8080}, {containerPort: 9090}]
        - name: proxy
          image: ghcr.io/example/proxy:2.0
""",
    "apps/config.yaml": """apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: default
data:
  app.ini: |
    [server]
    port = 8080
    workers = 4
    [log]
    level = info
---
apiVersion: v1
kind: Secret
metadata:
  name: web-token
  namespace: default
stringData:
  token: s3cr3t-old
""",
}

HEAD = {
    "apps/web.yaml": BASE["apps/web.yaml"]
    .replace("checksum/config: 1a2b", "checksum/config: 9f8e")
    .replace("replicas: 2", "replicas: 3")
    .replace(
        """        - name: web
          image: ghcr.io/example/web:1.4.2
          ports: [{containerPort: 8080}, {containerPort: 9090}]
        - name: proxy
          image: ghcr.io/example/proxy:2.0
""",
        """        - name: proxy
          image: ghcr.io/example/proxy:2.0
          args: [--verbose]
        - name: web
          image: ghcr.io/example/web:1.5.0
          ports: [{containerPort: 9090}, {containerPort: 8080}]
""",
    ),
    "apps/config.yaml": BASE["apps/config.yaml"].replace("workers = 4", "workers = 8").replace("s3cr3t-old", "s3cr3t-new"),
}


def _history(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    common = {
        "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
        "clusters/prod/apps.yaml": flux_ks("apps", "./apps"),
    }
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)

    write_tree(repo, {**common, **BASE})
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    write_tree(repo, {**common, **HEAD})
    git("add", "-A")
    git("commit", "-q", "-m", "head")
    return repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return _history(tmp_path_factory.mktemp("content"))


@pytest.mark.parametrize(("fmt", "ext"), [("text", "txt"), ("json", "json"), ("markdown", "md")])
def test_content_diff_golden(repo, fmt, ext):
    res = CliRunner().invoke(main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--format", fmt])
    assert res.exit_code == 0, res.output
    assert "s3cr3t" not in res.output
    check_golden(f"diff/content.{ext}", res.output.replace(str(repo), "<repo>"))


def test_noise_is_kept_on_request(repo):
    res = CliRunner().invoke(main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--noise"])
    assert "checksum/config" in res.output
    res = CliRunner().invoke(main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD"])
    assert "checksum/config" not in res.output


def test_a_reorder_is_not_a_change():
    a = {"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}], "args": ["a", "b"]}}
    b = {"spec": {"ports": [{"port": 443, "name": "https"}, {"port": 80, "name": "http"}], "args": ["a", "b"]}}
    assert object_changes("Service", "", a, b) == []
    c = {"spec": {"ports": [{"port": 443, "name": "https"}], "args": ["b", "a"]}}
    assert [(x.path, x.op) for x in object_changes("Service", "", a, c)] == [
        ("spec.ports[name=http]", "removed"),
        ("spec.args", "changed"),
    ]


def test_markdown_fits_a_github_comment():
    from fluxgraph.render.diff_report import GITHUB_COMMENT_LIMIT, _fit

    text = "<details><summary>c</summary>\n\n```diff\n" + "+ spec.x: 1\n" * 20000 + "```\n</details>\n"
    out = _fit(text)
    assert len(out) <= GITHUB_COMMENT_LIMIT and out.count("```") % 2 == 0
    assert out.count("<details>") == out.count("</details>") and "was cut to fit a GitHub comment" in out
    assert _fit("short\n") == "short\n"


def test_full_shows_added_and_removed_objects(tmp_path):
    repo = tmp_path / "repo"
    env = {**os.environ, **GIT_ENV}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)

    common = {"clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"), "clusters/prod/apps.yaml": flux_ks("apps", "./apps")}
    write_tree(repo, {**common, "apps/config.yaml": BASE["apps/config.yaml"]})
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    (repo / "apps/config.yaml").unlink()
    write_tree(repo, {"apps/web.yaml": BASE["apps/web.yaml"]})
    git("add", "-A")
    git("commit", "-q", "-m", "head")
    args = ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD"]
    plain = CliRunner().invoke(main, args).output
    assert "+ Deployment/default/web" in plain and "image" not in plain
    full = CliRunner().invoke(main, [*args, "--full"]).output
    assert "+ spec.template.spec.containers[name=web].image: ghcr.io/example/web:1.4.2" in full
    assert "- data[app.ini]:" in full and "- stringData.token: (secret)" in full and "s3cr3t" not in full
