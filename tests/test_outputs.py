"""Report formats, exit codes, configuration, suppression and baseline, through the CLI."""

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from fluxgraph.cli import main
from fluxgraph.engine import analyze

from .conftest import FIXTURES, check_golden

SARIF_SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json").read_text())
HOMELAB = FIXTURES / "repos" / "homelab"
BAD = FIXTURES / "invalid-suppression" / "bad"
GOOD = FIXTURES / "invalid-suppression" / "good"
FORMATS = ["text", "json", "sarif", "junit", "github"]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("repo", ["homelab", "invalid-suppression-bad"])
def test_format_golden(fmt, repo):
    path = HOMELAB if repo == "homelab" else BAD
    res = run("check", path, "--format", fmt)
    assert res.exit_code in (0, 1), res.output
    ext = {"text": "txt", "json": "json", "sarif": "sarif", "junit": "xml", "github": "txt"}[fmt]
    check_golden(f"formats/{repo}.{fmt}.{ext}", res.output)


BAD_FIXTURES = sorted(p.parent.name for p in FIXTURES.glob("*/bad") if p.is_dir())


@pytest.mark.parametrize("fmt", ["text", "github", "junit"])
@pytest.mark.parametrize("rule", BAD_FIXTURES)
def test_bad_fixture_format_golden(fmt, rule):
    """Every bad fixture in the human and CI formats (JSON findings are in tests/golden/rules)."""
    res = run("check", FIXTURES / rule / "bad", "--format", fmt)
    assert res.exit_code in (0, 1), res.output
    ext = {"text": "txt", "github": "txt", "junit": "xml"}[fmt]
    check_golden(f"formats/bad/{rule}.{fmt}.{ext}", res.output)


@pytest.mark.parametrize("path", [HOMELAB, GOOD, *(FIXTURES / r / "bad" for r in BAD_FIXTURES)])
def test_sarif_validates_against_the_schema(path):
    res = run("check", path, "--format", "sarif")
    doc = json.loads(res.output)
    jsonschema.validate(doc, SARIF_SCHEMA, cls=jsonschema.Draft4Validator)
    run_ = doc["runs"][0]
    rule_ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    for r in run_["results"]:
        assert rule_ids[r["ruleIndex"]] == r["ruleId"]
        region = r["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert r["partialFingerprints"]["fluxgraph/v1"]


def test_junit_counts():
    res = run("check", BAD, "--format", "junit")
    root = ET.fromstring(res.output.split("\n", 1)[1])
    failures = sum(int(s.get("failures")) for s in root.iter("testsuite"))
    assert failures == int(root.get("failures")) == 3
    cases = list(root.iter("testcase"))
    assert len(cases) == int(root.get("tests"))
    assert any(c.find("failure") is None for c in cases)  # passed assertions are test cases too


def test_github_annotations_are_escaped():
    res = run("check", BAD, "--format", "github")
    lines = [ln for ln in res.output.splitlines() if ln.startswith("::")]
    assert lines and all(ln.startswith(("::error ", "::warning ", "::notice ")) for ln in lines)
    assert any("file=apps/kustomization.yaml,line=5,col=5" in ln for ln in lines)
    # the title is the headline; the body carries the notes and the rule
    assert any(
        ln.startswith("::warning file=apps/kustomization.yaml,line=5,col=21,title=comment suppressing kustomize-build-error")
        and ln.endswith("%0Arule: invalid-suppression (warning; `fluxgraph rules invalid-suppression`)")
        for ln in lines
    )


def test_json_report_shape():
    doc = json.loads(run("check", BAD, "--format", "json").output)
    assert doc["$schema"].endswith("findings-v1.json")
    f = doc["findings"][0]
    assert set(f) >= {"rule", "severity", "file", "line", "column", "kustomization", "object", "message"}
    assert doc["summary"]["findings"] == {"error": 1, "warning": 2, "info": 0}


def test_exit_codes():
    assert run("check", GOOD).exit_code == 0
    assert run("check", BAD).exit_code == 1  # an error finding
    unused = FIXTURES / "unused-suppression" / "bad"
    assert run("check", unused).exit_code == 0  # advice only, default --fail-on error
    assert run("check", unused, "--fail-on", "warning").exit_code == 0
    assert run("check", unused, "--fail-on", "info").exit_code == 1
    res = run("check", "/nonexistent/repo")
    assert res.exit_code == 2 and "no such directory" in res.output
    assert run("check", BAD, "--enable", "no-such-rule").exit_code == 2
    assert run("check", BAD, "--format", "json", "--format", "sarif").exit_code == 2


def test_several_formats_to_files(tmp_path):
    out1, out2 = tmp_path / "r.sarif", tmp_path / "r.xml"
    res = run("check", BAD, "--format", "sarif", "--output", out1, "--format", "junit", "--output", out2)
    assert res.exit_code == 1
    assert json.loads(out1.read_text())["version"] == "2.1.0"
    assert out2.read_text().startswith("<?xml")
    assert res.stdout == ""


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "repo"
    shutil.copytree(src, dst)
    return dst


def test_config_file(tmp_path):
    repo = _copy(BAD, tmp_path)
    (repo / ".fluxgraph.yaml").write_text(
        "rules:\n  disable: [invalid-suppression]\n  severity: {kustomize-build-error: warning}\nfail-on: error\n"
    )
    res = run("check", repo, "--format", "json")
    doc = json.loads(res.output)
    assert res.exit_code == 0
    assert {f["rule"]: f["severity"] for f in doc["findings"]} == {"kustomize-build-error": "warning"}
    (repo / ".fluxgraph.yaml").write_text("exclude: ['apps/**']\n")
    assert json.loads(run("check", repo, "--format", "json").output)["findings"] == []
    (repo / ".fluxgraph.yaml").write_text("bogus: 1\n")
    res = run("check", repo)
    assert res.exit_code == 2 and "unknown key" in res.output


def test_baseline_survives_line_moves(tmp_path):
    repo = _copy(BAD, tmp_path)
    base = tmp_path / "baseline.json"
    assert run("check", repo, "--write-baseline", base).exit_code == 0
    assert len(json.loads(base.read_text())["findings"]) == 3
    k = repo / "apps" / "kustomization.yaml"
    k.write_text("# a new comment moves every line down\n\n" + k.read_text())
    res = run("check", repo, "--baseline", base, "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["findings"] == []


def test_suppression_by_comment_and_annotation(tmp_path):
    repo = _copy(BAD, tmp_path)
    k = repo / "apps" / "kustomization.yaml"
    k.write_text(k.read_text().replace("ignore[kustomize-build-error]", "ignore[kustomize-build-error] generated in CI"))
    cm = repo / "apps" / "configmap.yaml"
    cm.write_text(cm.read_text().replace('"no-such-rule: a typo in the rule name"', '"kustomize-build-error: not here"'))
    report = analyze(repo)
    assert [(f.rule, f.location.file) for f in report.findings] == [("unused-suppression", "apps/configmap.yaml")]
    assert [f.rule for f in report.suppressed] == ["kustomize-build-error"]


def test_exclude_reads_gitignore_lines():
    """`exclude` is matched as .gitignore lines (pathspec), not as shell globs (issue 22)."""
    from fluxgraph.config import Config

    cfg = Config(exclude=["archive/**", "*.bak", "apps/*.yaml", "!apps/keep.yaml", "**/testdata/"])
    assert cfg.excluded("archive/a/b.yaml") and not cfg.excluded("x/archive/a.yaml")
    assert cfg.excluded("deep/down/old.bak")
    assert cfg.excluded("apps/a.yaml") and not cfg.excluded("apps/x/a.yaml")  # * stops at /
    assert not cfg.excluded("apps/keep.yaml")
    assert cfg.excluded("a/b/testdata/c.yaml")
