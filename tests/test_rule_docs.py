"""docs/rules/ is generated from rules/*.md; this test fails when it is stale."""

from click.testing import CliRunner

from fluxgraph.cli import main

from .conftest import ROOT


def test_docs_rules_are_fresh(tmp_path):
    res = CliRunner().invoke(main, ["rules", "--format", "markdown", "--output-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    generated = {p.name: p.read_text() for p in tmp_path.glob("*.md")}
    committed = {p.name: p.read_text() for p in (ROOT / "docs" / "rules").glob("*.md")}
    stale = sorted(n for n in generated.keys() | committed.keys() if generated.get(n) != committed.get(n))
    assert not stale, f"docs/rules is stale ({stale}): run `fluxgraph rules --format markdown --output-dir docs/rules`"


def test_rules_command_prints_one_rule():
    res = CliRunner().invoke(main, ["rules", "unused-suppression"])
    assert res.exit_code == 0 and "## What it does" in res.output
    assert CliRunner().invoke(main, ["rules", "nope"]).exit_code == 2
