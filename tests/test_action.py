"""The GitHub Action's script, run as the runner would run it (GITHUB_OUTPUT etc. set)."""

import os
import shutil
import subprocess

import pytest

from fluxgraph.yamlio import load_text

from .conftest import FIXTURES, ROOT

SCRIPT = ROOT / "ci" / "github-action.sh"


def test_action_yml_is_consistent():
    [action] = load_text((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert any("upload-sarif" in str(s.get("uses", "")) for s in steps)
    scripts = [s["run"] for s in steps if "github-action.sh" in s.get("run", "")]
    assert any(" check" in s for s in scripts) and any(" graph" in s for s in scripts)
    assert any(s.rstrip().endswith(" fix") for s in scripts) and "fix-diff" in action["inputs"]
    hooks = load_text((ROOT / ".pre-commit-hooks.yaml").read_text())[0]
    assert hooks[0]["id"] == "fluxgraph-check" and hooks[0]["entry"] == "fluxgraph check"
    fix = next(h for h in hooks if h["id"] == "fluxgraph-fix")
    assert fix["entry"] == "fluxgraph fix" and "--write" not in fix.get("args", [])  # diff mode only
    diff = next(h for h in hooks if h["id"] == "fluxgraph-diff")
    assert diff["entry"] == "fluxgraph diff" and "--merge-base" in diff["args"]


@pytest.mark.skipif(shutil.which("fluxgraph") is None or shutil.which("bash") is None, reason="needs the installed CLI and bash")
@pytest.mark.parametrize("fixture,code", [("invalid-suppression/bad", "1"), ("invalid-suppression/good", "0")])
def test_check_step(tmp_path, fixture, code):
    out, summary = tmp_path / "out", tmp_path / "summary"
    env = dict(os.environ, RUNNER_TEMP=str(tmp_path), GITHUB_OUTPUT=str(out), GITHUB_STEP_SUMMARY=str(summary))
    env.update(FG_PATH=str(FIXTURES / fixture), FG_ARGS="")
    proc = subprocess.run(["bash", str(SCRIPT), "check"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert outputs["exit-code"] == code
    assert (tmp_path / "fluxgraph.sarif").exists() and outputs["sarif"].endswith("fluxgraph.sarif")
    assert "### fluxgraph check" in summary.read_text()
    if code == "1":
        assert "::error file=apps/kustomization.yaml,line=5" in proc.stdout


@pytest.mark.skipif(
    shutil.which("fluxgraph") is None or shutil.which("bash") is None or shutil.which("git") is None,
    reason="needs the installed CLI, bash and git",
)
def test_graph_step_writes_the_diff_and_mermaid(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "repos" / "homelab", repo)
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    (repo / "platform" / "blocky" / "service.yaml").unlink()
    k = repo / "platform" / "blocky" / "kustomization.yaml"
    k.write_text(k.read_text().replace("  - service.yaml\n", "").replace("  - ./service.yaml\n", ""))
    out, summary = tmp_path / "out", tmp_path / "summary"
    env = dict(os.environ, RUNNER_TEMP=str(tmp_path), GITHUB_OUTPUT=str(out), GITHUB_STEP_SUMMARY=str(summary))
    env.update(FG_PATH=str(repo), FG_BASE=base)
    env.pop("GH_TOKEN", None)
    proc = subprocess.run(["bash", str(SCRIPT), "graph"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = summary.read_text()
    assert "```mermaid" in text and "flowchart" in text
    assert "blocky" in text
    assert "::notice " in proc.stdout and "blocky" in proc.stdout  # the verdicts as annotations
    assert "comment=" in out.read_text()


@pytest.mark.skipif(shutil.which("fluxgraph") is None or shutil.which("bash") is None, reason="needs the installed CLI and bash")
def test_fix_step_reports_the_diff_and_writes_nothing(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "repos" / "homelab", repo)
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    out, summary = tmp_path / "out", tmp_path / "summary"
    env = dict(os.environ, RUNNER_TEMP=str(tmp_path), GITHUB_OUTPUT=str(out), GITHUB_STEP_SUMMARY=str(summary))
    env.update(FG_PATH=str(repo))
    proc = subprocess.run(["bash", str(SCRIPT), "fix"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert outputs["fix-exit-code"] == "1" and outputs["fix-diff"].endswith("fix.diff")
    assert "+    - name: cluster-settings" in proc.stdout
    assert "```diff" in summary.read_text() and "### fluxgraph fix" in summary.read_text()
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before
