"""One finding per cause (engine.group_by_cause): every output format shows the grouped finding
once, and a suppression or a baseline entry works per cause."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from fluxgraph.cli import main
from fluxgraph.engine import analyze
from fluxgraph.suppress import read_baseline, write_baseline

from .conftest import flux_ks, gotk_sync

SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-settings
  namespace: flux-system
data:
  DOMAIN: lab.example.org
"""


def _consumer(name: str) -> str:
    return flux_ks(name, f"./{name}", "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n")


def _repo(root: Path, consumers: tuple[str, ...], settings: str = SETTINGS) -> Path:
    """The root applies cluster-settings and the consumers, which substitute from it without
    a dependsOn on the root: substitute-from-race, one cause."""
    files = {
        "clusters/lab/flux-system/gotk-sync.yaml": gotk_sync("lab", "lab"),
        "clusters/lab/flux-system/kustomization.yaml": "resources:\n  - gotk-sync.yaml\n",
        "clusters/lab/cluster-settings.yaml": settings,
    }
    for name in consumers:
        files[f"clusters/lab/{name}.yaml"] = _consumer(name)
        files[f"{name}/cm.yaml"] = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  url: https://{name}.${{DOMAIN}}\n"
        files[f"{name}/kustomization.yaml"] = "resources:\n  - cm.yaml\n"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_every_format_shows_the_grouped_finding_once(tmp_path):
    repo = _repo(tmp_path / "repo", ("apps", "tools", "web"))
    run = CliRunner()
    doc = json.loads(run.invoke(main, ["check", str(repo), "--format", "json"]).output)
    [f] = doc["findings"]
    assert (f["rule"], f["file"], f["line"]) == ("substitute-from-race", "clusters/lab/cluster-settings.yaml", 1)
    assert f["kustomizations"] == ["flux-system/apps", "flux-system/tools", "flux-system/web"]
    assert f["kustomization"] is None
    assert {r["file"] for r in f["related"]} == {"clusters/lab/apps.yaml", "clusters/lab/tools.yaml", "clusters/lab/web.yaml"}
    sarif = json.loads(run.invoke(main, ["check", str(repo), "--format", "sarif"]).output)
    [result] = sarif["runs"][0]["results"]
    assert result["properties"]["kustomizations"] == f["kustomizations"]
    assert result["message"]["text"] == f["headline"]
    assert result["properties"]["message"] == f["message"]
    assert {"label": "affected", "text": "3 Kustomizations", "items": f["kustomizations"]} in f["notes"]
    assert len(result["relatedLocations"]) == 3
    junit = run.invoke(main, ["check", str(repo), "--format", "junit"]).output
    assert junit.count("<failure") == 1 and "3 Kustomizations: flux-system/apps" in junit
    text = run.invoke(main, ["check", str(repo)]).output
    assert text.count("substitute-from-race") == 1 and "3 Kustomizations" in text


def test_a_baseline_entry_holds_per_cause(tmp_path):
    repo = _repo(tmp_path / "repo", ("apps", "tools"))
    baseline = tmp_path / "baseline.json"
    write_baseline(baseline, analyze(repo).findings)
    # a third Kustomization reads the same ConfigMap: the same cause, still baselined
    _repo(repo, ("apps", "tools", "web"))
    report = analyze(repo, baseline=read_baseline(baseline))
    assert report.findings == []
    [f] = report.baselined
    assert f.kustomizations == ("flux-system/apps", "flux-system/tools", "flux-system/web")


def test_a_suppression_at_the_cause_covers_every_member(tmp_path):
    settings = "# fluxgraph: ignore[substitute-from-race] the values change only with a rollout\n" + SETTINGS
    repo = _repo(tmp_path / "repo", ("apps", "tools"), settings)
    report = analyze(repo)
    assert report.findings == []
    [f] = report.suppressed
    assert f.kustomizations == ("flux-system/apps", "flux-system/tools")


def test_a_cause_with_one_member_stays_a_plain_finding(tmp_path):
    repo = _repo(tmp_path / "repo", ("apps",))
    [f] = analyze(repo).findings
    assert (f.location.file, f.kustomization, f.kustomizations) == ("clusters/lab/apps.yaml", "flux-system/apps", ())


def test_a_grouped_finding_of_mixed_severity_names_the_members_that_carry_it(tmp_path):
    root = _repo(tmp_path, ("web", "docs"))
    # docs uses none of the variables: its member is advice, web's a warning
    (root / "docs/cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: docs\n  namespace: default\ndata:\n  url: https://docs\n")
    [f] = [f for f in analyze(root).findings if f.rule == "substitute-from-race"]
    assert f.severity.value == "warning"
    assert f.message.endswith("; warning for flux-system/web (the others: info)")
