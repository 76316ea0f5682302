"""Hostile inputs that once crashed, hung or were misreported, kept as regression tests.

Each test is the exact case that failed (docs/security.md, "Known gaps", lists them).
"""

from __future__ import annotations

import os
import time

import pytest

from fluxgraph.api import load
from fluxgraph.sourceignore import Matcher, default_patterns, read_patterns

from .conftest import all_problems, check_json, configmap, findings_of, flux_ks, load_ok, make_repo


@pytest.mark.parametrize("value", ["5", "1.5", "true", "{a: 1}"])
def test_configurations_of_the_wrong_type(tmp_path, value):
    repo = make_repo(tmp_path / "repo", {"apps/kustomization.yaml": f"resources: [app.yaml]\nconfigurations: {value}\n"})
    report = check_json(repo)
    [f] = findings_of(report, "kustomize-build-error")
    assert f["file"] == "apps/kustomization.yaml" and "configurations" in f["message"]


@pytest.mark.parametrize("spec", ["sources: 5", "artifacts: 5", "artifacts: [{name: x, copy: 5}]"])
def test_artifact_generator_fields_of_the_wrong_type(tmp_path, spec):
    ag = (
        "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n"
        f"  name: gen\n  namespace: flux-system\nspec:\n  {spec}\n"
    )
    load_ok(make_repo(tmp_path / "repo", {"apps/gen.yaml": ag}))


def test_yaml_limit_problems_have_the_input_limit_code(tmp_path):
    repo = make_repo(tmp_path / "repo", {"apps/deep.yaml": "x: " + "[" * 300 + "]" * 300 + "\n"})
    [p] = [p for p in all_problems(load(repo)) if "nests deeper" in p.message]
    assert p.code == "input-limit"


def test_generator_file_symlink_is_a_path_escape(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "token.env").write_text("TOKEN=x\n")
    repo = make_repo(tmp_path / "repo", {"apps/kustomization.yaml": "resources: [app.yaml]\nconfigMapGenerator:\n  - name: g\n    envs: [token.env]\n"})
    os.symlink(outside / "token.env", repo / "apps/token.env")
    [f] = findings_of(check_json(repo), "path-escape")
    assert f["file"] == "apps/kustomization.yaml"


def test_generated_kustomization_does_not_follow_directory_symlinks(tmp_path):
    repo = make_repo(tmp_path / "repo", {"shared/extra.yaml": configmap("extra")})
    os.symlink("../shared", repo / "apps/linked")
    apps = load(repo).clusters[0].kustomizations["flux-system/apps"]
    assert [o.ref.name for o in apps.objects] == ["app-settings"]


def test_deeply_nested_substitution_defaults(tmp_path):
    value = "'" + "${A:-" * 5000 + "x" + "}" * 5000 + "'"
    repo = make_repo(
        tmp_path / "repo",
        {
            "clusters/prod/apps.yaml": flux_ks("apps", "./apps", "  postBuild:\n    substitute: {A: a}\n"),
            "apps/app.yaml": configmap("app-settings", key=value),
        },
    )
    load_ok(repo)


def test_substitution_expansion_is_bounded(tmp_path):
    big = "x" * 1_000_000
    value = "'" + "${A}" * 100_000 + "'"
    repo = make_repo(
        tmp_path / "repo",
        {
            "clusters/prod/apps.yaml": flux_ks("apps", "./apps", f"  postBuild:\n    substitute: {{A: {big}}}\n"),
            "apps/app.yaml": configmap("app-settings", key=value),
        },
    )
    t = time.process_time()
    load_ok(repo)
    assert time.process_time() - t < 20


def test_sourceignore_glob_is_linear_time():
    m = Matcher(default_patterns() + read_patterns("*a*a*a*a*a*a*a*a*a*a*a*a*b\n", ()))
    t = time.process_time()
    assert not m.ignored("a" * 60 + ".yaml", False)
    assert time.process_time() - t < 1
