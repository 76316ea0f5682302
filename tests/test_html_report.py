"""The HTML report (``graph``/``check`` ``--format html``): one self-contained file whose data
cannot break out of its script block, drawn and clicked in a real browser (headless Chromium,
tests/browser.py; skipped where Chromium is absent, installed in CI by .ci/run)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fluxgraph.cli import main
from fluxgraph.render import graph_formats

from .browser import Browser
from .conftest import FIXTURES, flux_ks, gotk_sync, write_tree

HOMELAB = FIXTURES / "repos" / "homelab"
HAS_DOT = shutil.which("dot") is not None
needs_browser = pytest.mark.skipif(Browser.find() is None or not HAS_DOT, reason="needs Chromium and Graphviz's dot")


def _report(tmp_path: Path, *args: str, repo: Path = HOMELAB) -> Path:
    out = tmp_path / "report.html"
    res = CliRunner().invoke(main, [*args, str(repo), "--format", "html", "--output", str(out)])
    assert res.exit_code in (0, 1), res.output
    return out


def _data(text: str) -> dict:
    m = re.search(r'<script type="application/json" id="fluxgraph-data">(.*?)</script>', text, re.S)
    assert m
    return json.loads(m.group(1))


@pytest.mark.parametrize("command", ["check", "graph"])
def test_the_report_is_one_file_with_nothing_to_fetch(tmp_path, command):
    text = _report(tmp_path, command).read_text()
    assert text.startswith("<!DOCTYPE html>")
    # no script, style sheet, image or font from anywhere: the file is all there is
    assert not re.search(r"""<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=""", text, re.I)
    assert "@import" not in text and "url(" not in text
    data = _data(text)
    assert {f["rule"] for f in data["findings"]} >= {"unescaped-shell-variable", "prunable-shared-namespace"}
    assert all(f["headline"] and f["notes"] for f in data["findings"])


def test_names_cannot_break_out_of_the_page(tmp_path):
    evil = "x</script><script>alert(1)</script>"
    repo = write_tree(
        tmp_path / "repo",
        {
            "clusters/lab/flux-system/gotk-sync.yaml": gotk_sync("lab", "lab"),
            "clusters/lab/flux-system/kustomization.yaml": "resources:\n  - gotk-sync.yaml\n  - apps.yaml\n",
            "clusters/lab/flux-system/apps.yaml": flux_ks("apps", "./apps", f"dependsOn:\n  - name: '{evil}'\n"),
            "apps/kustomization.yaml": "resources: []\n",
        },
    )
    text = _report(tmp_path, "check", repo=repo).read_text()
    assert text.count("<script") == 2 and evil not in text
    assert evil in json.dumps(_data(text))


def test_without_graphviz_the_page_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_formats, "dot_binary", lambda: None)
    text = _report(tmp_path, "check").read_text()
    assert "The graph is not drawn: Graphviz" in text and "<svg" not in text
    assert len(_data(text)["findings"]) == 7


@needs_browser
def test_the_report_in_a_browser(tmp_path):
    report = _report(tmp_path, "check")
    with Browser.open(report) as page:
        page.wait_for("document.body && document.body.dataset.ready")
        keys = page.eval("[...document.querySelectorAll('#graph g.node[data-key]')].map(g => g.dataset.key)")
        assert {"ks:flux-system/apps", "ks:flux-system/platform", "ks:flux-system/monitoring"} <= set(keys)
        assert page.eval("document.querySelectorAll('#rows tr.finding').length") == 7
        # a click on a Kustomization shows its inputs, its objects and its findings
        page.eval(
            "document.querySelector('g.node[data-key=\"ks:flux-system/apps\"]')"
            ".dispatchEvent(new MouseEvent('click', {bubbles: true}))"
        )
        panel = page.eval("document.getElementById('panel').innerText")
        assert "flux-system/apps" in panel and "Objects (" in panel and "Findings (2)" in panel
        assert "Flux substitutes ${NEXTCLOUD_OIDC_CLIENT_SECRET:-}" in panel
        # the table filters by severity and by rule
        page.eval("{ const s = document.getElementById('severity'); s.value = 'warning'; s.dispatchEvent(new Event('change')) }")
        assert page.eval("[...document.querySelectorAll('#rows tr.finding')].map(r => r.dataset.rule)") == ["prunable-shared-namespace"]
        page.eval(
            "{ const s = document.getElementById('severity'); s.value = ''; s.dispatchEvent(new Event('change'));"
            " const r = document.getElementById('rule'); r.value = 'unsubstituted-flux-variable'; r.dispatchEvent(new Event('change')) }"
        )
        assert page.eval("document.querySelectorAll('#rows tr.finding').length") == 3
        # search marks the matching nodes and dims the rest
        page.eval("{ const q = document.getElementById('search'); q.value = 'monitoring'; q.dispatchEvent(new Event('input')) }")
        assert page.eval("[...document.querySelectorAll('g.node.hit')].map(g => g.dataset.key)") == ["ks:flux-system/monitoring"]
        assert page.eval("document.querySelectorAll('g.node.dim').length") >= 6
        # zoom changes the viewBox
        before = page.eval("document.querySelector('#graph svg').getAttribute('viewBox')")
        page.eval("document.getElementById('zin').click()")
        assert page.eval("document.querySelector('#graph svg').getAttribute('viewBox')") != before
        shot = tmp_path / "report.png"
        page.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_html_shows_the_verdicts_and_the_change(tmp_path):
    from .test_diff_verdicts import _dep, _history

    repo = _history(tmp_path, _dep(), _dep(app="frontend"))
    out = tmp_path / "diff.html"
    res = CliRunner().invoke(main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--format", "html", "-o", str(out)])
    assert res.exit_code == 1, res.output
    text = out.read_text()
    data = _data(text)
    [row] = [r for r in data["findings"] if r["rule"] == "immutable-field"]
    assert row["severity"] == "error" and (row["file"], row["line"]) == ("apps/web.yaml", 8) and "spec.selector" in row["headline"]
    assert "The change" in text and "Deployment/default/web" in text
    if Browser.find() is not None and HAS_DOT:
        with Browser.open(out) as page:
            page.wait_for("document.body && document.body.dataset.ready")
            assert page.eval("document.querySelectorAll('#rows tr.finding').length") == len(data["findings"])
