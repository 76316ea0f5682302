"""Broken YAML never crashes: each file becomes a located finding, everything else is analysed."""

from __future__ import annotations

import json
import os

import pytest

from fluxgraph.api import load

from .conftest import (
    all_problems,
    assert_located,
    check_json,
    configmap,
    findings_of,
    infra_still_analysed,
    load_ok,
    make_repo,
    outputs,
    run_cli,
)

# (file content, rule, expected line, a word of the message)
BROKEN = {
    "tab-indentation": ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n", "invalid-yaml", 4, "token"),
    "bad-indentation": ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: x\n  namespace: y\n", "invalid-yaml", 5, ""),
    "unclosed-quote": ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 'x\n", "invalid-yaml", 5, "quoted"),
    "unclosed-flow": ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n", "invalid-yaml", 4, ""),
    "duplicate-key": (configmap("dup") + "kind: Secret\n", "invalid-yaml", 8, "already defined"),
    "duplicate-key-by-text": (configmap("dup2").replace("  key: value", "  1: a\n  '1': b"), "invalid-yaml", 8, "'1' already defined"),
    "non-utf8": (b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caf\xe9\n", "invalid-yaml", 4, "UTF-8"),
    "binary": (bytes(range(256)) * 4, "invalid-yaml", 1, "binary"),
    "utf16": ("apiVersion: v1\n".encode("utf-16"), "invalid-yaml", 1, ""),
    "list-document": ("- a\n- b\n", "kustomize-build-error", 1, "list"),
    "scalar-document": ("just a string\n", "kustomize-build-error", 1, "str"),
    "no-kind": ("apiVersion: v1\nmetadata:\n  name: x\n", "kustomize-build-error", 1, "kind"),
    "no-name": ("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "kustomize-build-error", 1, "metadata.name"),
    "metadata-scalar": ("apiVersion: v1\nkind: ConfigMap\nmetadata: 5\n", "kustomize-build-error", 1, "metadata.name"),
    "second-document-broken": (configmap("ok") + "---\n- 1\n", "kustomize-build-error", 9, "document 2"),
    "unknown-alias": ("apiVersion: v1\nkind: ConfigMap\nmetadata: *nope\n", "invalid-yaml", 3, "unknown anchor 'nope' referenced"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_file_is_a_located_finding(tmp_path, case):
    content, rule, line, word = BROKEN[case]
    repo = make_repo(tmp_path / "repo", {"apps/broken.yaml": content})
    report = check_json(repo)
    mine = findings_of(report, rule)
    assert mine, report["findings"]
    f = mine[0]
    assert f["file"] == "apps/broken.yaml"
    assert f["line"] == line, f
    assert word in f["message"]
    assert_located(report["findings"])
    # the other Kustomization is analysed all the same
    infra_still_analysed(load(repo))
    for r in outputs(repo).values():
        assert "Traceback" not in r.output


@pytest.mark.parametrize(
    "content",
    ["", "---\n", "---\n---\n...\n", "# only a comment\n", "\n\n\n", "~\n", "null\n", "---\n~\n---\n"],
    ids=["empty", "marker", "markers", "comment", "blank", "tilde", "null", "null-docs"],
)
def test_empty_documents_are_skipped(tmp_path, content):
    repo = make_repo(tmp_path / "repo", {"apps/empty.yaml": content})
    model = load_ok(repo)
    apps = model.clusters[0].kustomizations["flux-system/apps"]
    assert apps.status == "built", apps.problems
    assert [o.ref.name for o in apps.objects] == ["app-settings"]


def test_every_broken_file_at_once(tmp_path):
    """One repository with every kind of broken file: one finding per file, no crash."""
    files = {f"apps/{name}.yaml": content for name, (content, *_rest) in BROKEN.items()}
    repo = make_repo(tmp_path / "repo", files)
    # kustomize stops at the first broken file of a build (files are read in name order)
    report = check_json(repo)
    assert report["findings"]
    assert_located(report["findings"])
    infra_still_analysed(load(repo))


def test_broken_kustomization_files(tmp_path):
    cases = {
        "list": "- resources\n",
        "scalar": "resources\n",
        "two-documents": "resources: [app.yaml]\n---\nresources: [app.yaml]\n",
        "resources-not-a-list": "resources: app.yaml\n",
        "resource-not-a-string": "resources: [5]\n",
        "syntax": "resources: [app.yaml\n",
        "component-as-resource": "kind: Component\n",
    }
    for name, text in cases.items():
        repo = make_repo(tmp_path / name, {"apps/kustomization.yaml": text})
        report = check_json(repo)
        errors = findings_of(report, "kustomize-build-error") + findings_of(report, "invalid-yaml")
        assert errors, (name, report["findings"])
        assert all(f["file"] == "apps/kustomization.yaml" for f in errors), (name, errors)
        assert_located(report["findings"])
        infra_still_analysed(load(repo))


def test_broken_gotk_sync_is_not_fatal(tmp_path):
    """A root Kustomization with fields of the wrong type: discovery falls back to the layout."""
    bad = {
        "clusters/prod/flux-system/gotk-sync.yaml": (
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: 5\n"
            "spec:\n  path: ./clusters/prod\n  sourceRef: 3\n"
        )
    }
    repo = make_repo(tmp_path / "repo", bad)
    report = check_json(repo)
    assert findings_of(report, "invalid-flux-object") or findings_of(report, "kustomize-build-error")
    assert_located(report["findings"])
    outputs(repo)


def test_unparseable_gotk_sync_still_finds_the_cluster(tmp_path):
    repo = make_repo(tmp_path / "repo", {"clusters/prod/flux-system/gotk-sync.yaml": "a: [\n"})
    model = load_ok(repo)
    assert [c.root_dir for c in model.clusters] == ["clusters/prod"]
    report = check_json(repo)
    [f] = findings_of(report, "invalid-yaml")
    assert f["file"] == "clusters/prod/flux-system/gotk-sync.yaml"


def test_nothing_to_analyse_is_exit_2_naming_the_path(tmp_path):
    repo = make_repo(tmp_path / "repo", {"README.md": "no flux here\n"}, base=False)
    for cmd in ("graph", "check"):
        r = run_cli(cmd, str(repo))
        assert r.exit_code == 2
        assert r.stderr.count("\n") == 1 and str(repo) in r.stderr and "Traceback" not in r.output
    r = run_cli("check", str(tmp_path / "missing"))
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_non_string_mapping_keys_do_not_collide(tmp_path):
    """YAML keys are text, as in kyaml: `1`, `true` and `.nan` are three keys, not a clash. A
    `null` key is no key at all: kustomize turns the object into JSON with yaml.v3, whose
    decode.go (*decoder).mapping skips an entry whose key does not decode into the map's string
    key type, and (*decoder).null cannot set a string (this test expected `"null": "c"` before)."""
    text = configmap("keys").replace("  key: value", "  1: a\n  true: b\n  null: c\n  .nan: d")
    repo = make_repo(tmp_path / "repo", {"apps/keys.yaml": text})
    model = load_ok(repo)
    [obj] = [o for o in model.clusters[0].objects() if o.ref.name == "keys"]
    assert obj.data["data"] == {"1": "a", "true": "b", ".nan": "d"}
    graph = json.loads(outputs(repo)["graph-json"].stdout)
    assert graph["clusters"]


def test_problems_of_broken_files_are_located(tmp_path):
    files = {f"apps/{name}.yaml": content for name, (content, *_rest) in BROKEN.items()}
    repo = make_repo(tmp_path / "repo", files)
    assert_located(all_problems(load(repo)))


def test_file_names_that_are_not_utf8_are_not_read(tmp_path):
    """Such names cannot be written to a report faithfully: listed as not evaluated, with the
    bytes escaped, and every output format still works."""
    repo = make_repo(tmp_path / "repo")
    raw = os.fsencode(str(repo / "apps")) + b"/caf\xe9.yaml"
    fd = os.open(raw, os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"a: [\n")
    os.close(fd)
    report = check_json(repo)
    [n] = [n for n in report["notEvaluated"] if n["code"] == "not-evaluated-filename"]
    assert n["file"] == "apps/caf\\xe9.yaml" and "not valid UTF-8" in n["reason"]
    assert not findings_of(report, "invalid-yaml")
    for fmt in ("text", "json", "sarif", "junit", "github"):
        r = run_cli("check", str(repo), "--format", fmt)
        assert r.exit_code in (0, 1) and "Traceback" not in r.output, fmt
    outputs(repo)
