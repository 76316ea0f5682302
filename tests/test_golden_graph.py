"""``fluxgraph graph --format json`` of the demo and feature repositories against golden files
(tests/golden/graph/; FLUXGRAPH_UPDATE_GOLDEN=1 rewrites them for review), validated against
the schema documented in docs/graph-json.md."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from fluxgraph import __version__
from fluxgraph.cli import main

from .conftest import FIXTURES, ROOT, check_golden

REPOS = ["homelab", "features", "features-operator"]
SCHEMA = json.loads((ROOT / "docs" / "graph-v1.schema.json").read_text())


def graph_json(repo: str, *args: str) -> str:
    res = CliRunner().invoke(main, ["graph", str(FIXTURES / "repos" / repo), "--format", "json", *args])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("repo", REPOS)
def test_graph_json_golden(repo):
    check_golden(f"graph/{repo}.json", graph_json(repo))


@pytest.mark.parametrize("repo", REPOS)
def test_graph_json_validates_against_the_schema(repo):
    doc = json.loads(graph_json(repo))
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["fluxgraphVersion"] == __version__


@pytest.mark.parametrize("repo", REPOS)
def test_graph_json_is_stable(repo, tmp_path, monkeypatch):
    """Same bytes whatever the working directory or how the path is spelled."""
    first = graph_json(repo)
    monkeypatch.chdir(tmp_path)
    rel = os.path.relpath(FIXTURES / "repos" / repo, tmp_path)
    res = CliRunner().invoke(main, ["graph", rel + "/", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert res.output == first


@pytest.mark.parametrize("repo", REPOS)
def test_graph_json_paths_are_repo_relative(repo):
    doc = json.loads(graph_json(repo))
    root = FIXTURES / "repos" / repo
    files: list[str] = []
    for c in doc["clusters"]:
        for ks in c["kustomizations"]:
            files.append(ks["file"])
            files.extend(o["file"] for o in ks["inventory"])
            files.extend(v for o in ks["inventory"] for v in o["via"])
        files.extend(h["file"] for h in c["helmReleases"])
        files.extend(s["file"] for s in c["sources"] if s["file"])
        files.extend(p["file"] for p in c["problems"])
    assert files
    for f in files:
        assert not Path(f).is_absolute() and ".." not in Path(f).parts, f
        assert (root / f.replace("/<generated>", "").replace("<generated>", "")).exists(), f


def test_graph_json_orders():
    doc = json.loads(graph_json("features"))
    for c in doc["clusters"]:
        ids = [k["id"] for k in c["kustomizations"]]
        assert ids == sorted(ids)
        assert [s["id"] for s in c["sources"]] == sorted(s["id"] for s in c["sources"])
        for ks in c["kustomizations"]:
            keys = [(o["kind"], o["namespace"], o["name"]) for o in ks["inventory"]]
            assert keys == sorted(keys)
    assert [c["cluster"]["path"] for c in doc["clusters"]] == ["clusters/edge", "clusters/lab"]
