"""Nothing is executed or fetched.

Remote bases, remote components, ``helmCharts``, generator/transformer/validator plugins,
HelmReleases, OCI and Git sources of other repositories: all reported as not evaluated, with
the reason, while sockets, DNS, subprocesses, ``os.system``/``exec``/``spawn``/``fork`` are made
to fail and every attempt is recorded. Also a static check that only two modules of fluxgraph
can start a program at all (``gitrev`` for git, ``render.graph_formats`` for Graphviz dot) and
none opens a network connection.
"""

from __future__ import annotations

import ast
import os
import socket
import subprocess
from pathlib import Path

import pytest

import fluxgraph
from fluxgraph.api import load

from .conftest import check_json, flux_ks, make_repo, outputs, run_cli

REMOTE_KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - app.yaml
  - https://github.com/example/remote//deploy?ref=v1.0.0
  - github.com/example/other/base
  - git@github.com:example/private.git
  - ssh://git@example.com/repo.git//base
  - oci://ghcr.io/example/manifests
  - http://example.com/manifest.yaml
components:
  - https://github.com/example/components//monitoring
helmCharts:
  - name: podinfo
    repo: https://stefanprodan.github.io/podinfo
    version: 6.5.0
helmChartInflationGenerator:
  - chartName: x
generators:
  - generator.yaml
transformers:
  - transformer.yaml
validators:
  - validator.yaml
"""
PLUGIN = """\
apiVersion: builtin
kind: ExecPlugin
metadata:
  name: run-me
argsOneLiner: "sh -c 'touch /tmp/fluxgraph-pwned'"
"""
EXTERNAL_SOURCES = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: other
  namespace: flux-system
spec:
  interval: 1m
  url: https://github.com/example/other
  ref: {branch: main}
---
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata:
  name: oci
  namespace: flux-system
spec:
  interval: 1m
  url: oci://ghcr.io/example/manifests
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: default
spec:
  interval: 10m
  chart:
    spec:
      chart: podinfo
      sourceRef: {kind: HelmRepository, name: podinfo, namespace: flux-system}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: podinfo
  namespace: flux-system
spec:
  url: https://stefanprodan.github.io/podinfo
"""


@pytest.fixture
def hostile_remote_repo(tmp_path: Path) -> Path:
    other = flux_ks("remote-app", "./deploy").replace("name: flux-system\n", "name: other\n")
    oci = flux_ks("oci-app", "./").replace("kind: GitRepository\n    name: flux-system", "kind: OCIRepository\n    name: oci")
    return make_repo(
        tmp_path / "repo",
        {
            "apps/kustomization.yaml": REMOTE_KUSTOMIZATION,
            "apps/generator.yaml": PLUGIN,
            "apps/transformer.yaml": PLUGIN,
            "apps/validator.yaml": PLUGIN,
            "infra/sources.yaml": EXTERNAL_SOURCES,
            "clusters/prod/remote.yaml": other + "---\n" + oci,
        },
    )


@pytest.fixture
def no_exec_no_network(monkeypatch):
    """Every way to reach the network or start a program raises; attempts are recorded."""
    attempts: list[str] = []

    def refuse(what):
        def _refuse(*a, **k):
            attempts.append(f"{what}{a[:1]!r}")
            raise PermissionError(f"{what} is not allowed in this test")

        return _refuse

    class NoSocket(socket.socket):
        def __init__(self, *a, **k):
            attempts.append("socket.socket")
            raise PermissionError("sockets are not allowed in this test")

    monkeypatch.setattr(socket, "socket", NoSocket)
    for name in ("create_connection", "getaddrinfo", "gethostbyname", "socketpair", "fromfd"):
        monkeypatch.setattr(socket, name, refuse(f"socket.{name}"))
    monkeypatch.setattr(subprocess, "Popen", refuse("subprocess.Popen"))
    for name in ("system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "spawnv", "spawnve", "spawnvp",
                 "spawnvpe", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse(f"os.{name}"))
    return attempts


def test_graph_and_check_start_nothing_and_connect_nowhere(hostile_remote_repo, no_exec_no_network):
    results = outputs(hostile_remote_repo)
    for fmt in ("dot", "mermaid"):
        results[fmt] = run_cli("graph", str(hostile_remote_repo), "--format", fmt)
    assert no_exec_no_network == []
    assert not Path("/tmp/fluxgraph-pwned").exists()
    assert all("Traceback" not in r.output for r in results.values())


def test_remote_and_plugin_content_is_reported_not_evaluated(hostile_remote_repo, no_exec_no_network):
    report = check_json(hostile_remote_repo)
    reasons = {(n["code"], n["reason"]) for n in report["notEvaluated"]}
    codes = {c for c, _ in reasons}
    assert {"not-evaluated-remote", "not-evaluated-plugin", "not-evaluated-source"} <= codes, reasons
    text = " ".join(r for _, r in reasons)
    for remote in ("https://github.com/example/remote//deploy?ref=v1.0.0", "github.com/example/other/base",
                   "git@github.com:example/private.git", "oci://ghcr.io/example/manifests",
                   "https://github.com/example/components//monitoring"):
        assert remote in text, remote
    for key in ("helmCharts", "helmChartInflationGenerator", "generators", "validators"):
        assert f"{key} in apps/kustomization.yaml is not evaluated" in text, key
    # a transformer configuration that is not one of the builtin ones fluxgraph runs
    assert "transformers[0] in apps/kustomization.yaml (ExecPlugin) is not evaluated" in text, text
    assert "GitRepository/flux-system/other, which is not this repository" in text
    assert report["summary"]["notEvaluated"] == len(report["notEvaluated"])
    for n in report["notEvaluated"]:
        assert n["file"] and n["line"] >= 1
    text_report = run_cli("check", str(hostile_remote_repo)).stdout
    assert "not evaluated:" in text_report and "is not fetched" in text_report
    assert no_exec_no_network == []


def test_not_evaluated_does_not_hide_the_rest(hostile_remote_repo, no_exec_no_network):
    model = load(hostile_remote_repo)
    apps = model.clusters[0].kustomizations["flux-system/apps"]
    assert apps.status == "built" and apps.incomplete
    assert [o.ref.name for o in apps.objects] == ["app-settings"]
    assert model.clusters[0].kustomizations["flux-system/remote-app"].status == "external"
    assert no_exec_no_network == []


# -- static: which modules can start programs or open connections --------------------------------

_EXEC_MODULES = {"subprocess", "pty", "multiprocessing", "concurrent.futures", "asyncio"}
_NET_MODULES = {"socket", "ssl", "http", "urllib", "ftplib", "smtplib", "requests", "httpx", "aiohttp", "urllib3", "xmlrpc", "telnetlib"}
_OS_EXEC = {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp",
            "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "startfile"}
ALLOWED_EXEC = {"fluxgraph/gitrev.py": "git, for `fluxgraph diff`", "fluxgraph/render/graph_formats.py": "Graphviz dot, for SVG/PNG"}


def _imports(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def test_only_gitrev_and_graphviz_can_start_programs_and_nothing_opens_sockets():
    root = Path(fluxgraph.__file__).parent
    execs, nets, os_calls = {}, {}, {}
    for f in sorted(root.rglob("*.py")):
        rel = "fluxgraph/" + f.relative_to(root).as_posix()
        tree = ast.parse(f.read_text(encoding="utf-8"))
        mods = _imports(tree)
        if hit := {m for m in mods if m.split(".")[0] in _EXEC_MODULES or m in _EXEC_MODULES}:
            execs[rel] = hit
        if hit := {m for m in mods if m.split(".")[0] in _NET_MODULES}:
            nets[rel] = hit
        calls = {
            n.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr in _OS_EXEC and isinstance(n.value, ast.Name) and n.value.id == "os"
        }
        if calls:
            os_calls[rel] = calls
    assert set(execs) <= set(ALLOWED_EXEC), execs
    assert nets == {}, nets
    assert os_calls == {}, os_calls
    # pydot starts `dot` itself from Dot.create()/write_*(); fluxgraph only builds DOT text with it
    runs_dot = {"create", "create_svg", "create_png", "write", "write_svg", "write_png", "write_raw"}
    for f in sorted(root.rglob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        if "pydot" in _imports(tree):
            used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            assert not used & runs_dot, (f, used & runs_dot)
