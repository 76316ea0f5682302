"""The Flux that runs (issue 23): the version table, the Flux CRDs fluxgraph ships
(fluxgraph/data/flux-crds.json), removed-api-version and unknown-flux-field, --flux-version
next, and the report header that says which Flux was modelled."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import fluxgraph
from fluxgraph import fluxapi, fluxrelease
from fluxgraph.cli import main
from fluxgraph.engine import analyze
from fluxgraph.fluxrelease import CHANGES, LATEST, FluxRelease, next_release

from .conftest import FIXTURES, ROOT, flux_ks, gotk_sync, write_tree

REMOVED = FIXTURES / "removed-api-version"
UNKNOWN = FIXTURES / "unknown-flux-field"


# -- the version table --------------------------------------------------------------------


def test_every_version_dependent_behaviour_is_a_row_with_its_source():
    keys = [c.key for c in CHANGES]
    assert len(keys) == len(set(keys))
    for c in CHANGES:
        assert (2, 0) <= c.since <= LATEST, c.key
        assert c.what and len(c.source) > 40, c.key
        # a citation names where Flux says it: a repository path, a commit, a tag or a data file
        assert any(s in c.source for s in ("fluxcd/", "commit", "docs/", "fluxgraph/data/")), c.key
    assert fluxrelease.STRICT_FROM == fluxrelease.since("strict-substitution")
    assert fluxrelease.WATCH_FROM == fluxrelease.since("watch-config-dependencies")


def test_the_shipped_crds_cover_every_release_fluxgraph_models():
    rel = fluxapi.releases()
    assert rel[0] == "2.0" and rel[-1] == f"{LATEST[0]}.{LATEST[1]}"
    assert rel == [f"2.{i}" for i in range(len(rel))]
    for m in rel:
        info = fluxapi.release_info(m)
        assert info["tag"].startswith(f"v{m}.") and "kustomize-controller" in info["controllers"]


def test_the_removals_the_table_states_are_the_crds():
    """The 'served-apis' row says which release removed what: the shipped CRDs agree."""
    for kind in ("GitRepository", "HelmRepository", "Bucket", "HelmChart"):
        assert fluxapi.removed_in("source.toolkit.fluxcd.io", kind, "v1beta1") == "2.7"
        assert fluxapi.removed_in("source.toolkit.fluxcd.io", kind, "v1beta2") == "2.8"
    assert fluxapi.removed_in("kustomize.toolkit.fluxcd.io", "Kustomization", "v1beta1") == "2.7"
    assert fluxapi.removed_in("kustomize.toolkit.fluxcd.io", "Kustomization", "v1beta2") == "2.8"
    assert fluxapi.removed_in("helm.toolkit.fluxcd.io", "HelmRelease", "v2beta1") == "2.7"
    assert fluxapi.removed_in("helm.toolkit.fluxcd.io", "HelmRelease", "v2beta2") == "2.8"
    for kind in ("ImageRepository", "ImagePolicy", "ImageUpdateAutomation"):
        assert fluxapi.removed_in("image.toolkit.fluxcd.io", kind, "v1beta2") == "2.9"
    assert fluxapi.removed_in("notification.toolkit.fluxcd.io", "Receiver", "v1beta2") == "2.9"
    assert fluxapi.removed_in("kustomize.toolkit.fluxcd.io", "Kustomization", "v1") is None
    row = next(c for c in CHANGES if c.key == "served-apis")
    assert "v1beta1 versions removed in 2.7" in row.what and "2.8" in row.what and "2.9" in row.what


@pytest.mark.heavy
@pytest.mark.skipif(not (Path("/work/.mirror") / "fluxcd+flux2" / "repo").exists(), reason="needs local mirrors of the Flux repositories")
def test_the_generator_reproduces_the_shipped_crds():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_flux_crds.py"), "--mirrors", "/work/.mirror"],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert out == (ROOT / "fluxgraph" / "data" / "flux-crds.json").read_text()


# -- which Flux ---------------------------------------------------------------------------

APP = {
    "clusters/prod/apps.yaml": flux_ks("apps", "./apps"),
    "apps/kustomization.yaml": "resources: [cm.yaml]\n",
    "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {b: c}\n",
    "clusters/prod/flux-system/kustomization.yaml": "resources: [gotk-sync.yaml, gotk-components.yaml]\n",
}


def _repo(tmp_path, components: str, **files: str) -> Path:
    return write_tree(
        tmp_path,
        {"clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"), "clusters/prod/flux-system/gotk-components.yaml": components, **APP, **files},
    )


def test_pins_that_disagree_are_said(tmp_path):
    root = _repo(
        tmp_path,
        "# Flux Version: v2.3.0\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n",
        **{
            "clusters/prod/flux-instance.yaml": "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\n"
            "spec:\n  distribution: {version: '2.6.x', registry: ghcr.io/fluxcd}\n",
        },
    )
    [c] = fluxgraph.load(root).clusters
    assert c.flux.version == "2.3.0" and c.flux.also == (("2.6.x", "clusters/prod/flux-instance.yaml: FluxInstance flux"),)
    assert "the repository also says 2.6.x (clusters/prod/flux-instance.yaml: FluxInstance flux)" in c.flux.describe()


def test_the_controllers_version_labels_are_a_pin(tmp_path):
    root = _repo(
        tmp_path,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: kustomize-controller\n  namespace: flux-system\n"
        "  labels: {app.kubernetes.io/part-of: flux, app.kubernetes.io/version: v2.5.1}\nspec: {}\n",
    )
    [c] = fluxgraph.load(root).clusters
    assert c.flux.version == "2.5.1" and "label app.kubernetes.io/version" in c.flux.where


def test_next_is_the_release_after_the_pinned_one():
    assert next_release(FluxRelease("2.6.3", "x")).version == "2.7"
    assert next_release(FluxRelease("2.6.3", "x", strict_gate=True, gate_where="p")).strict_gate is True
    assert next_release(FluxRelease(None)).version == f"{LATEST[0]}.{LATEST[1]}"
    assert "newest release" in next_release(FluxRelease("2.9.4", "x")).where


def test_a_flux_the_data_does_not_hold_is_not_evaluated(tmp_path):
    root = _repo(tmp_path, "# Flux Version: v0.41.2\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n")
    report = analyze(root)
    [p] = [p for p in report.not_evaluated if p.code == "not-evaluated-flux-apis"]
    assert "Flux 0.41.2" in p.message and "predates Flux 2.0" in p.message
    assert p.location.file == "clusters/prod/flux-system/gotk-components.yaml"


# -- removed-api-version ------------------------------------------------------------------


def _run(path: Path, *args: str) -> tuple[int, dict]:
    r = CliRunner().invoke(main, ["check", str(path), "--format", "json", *args])
    return r.exit_code, json.loads(r.output)


def test_flux_2_8_fails_v1beta2_objects_once_per_cause_at_the_api_version_line():
    code, doc = _run(REMOVED / "bad")
    assert code == 1
    found = sorted((f["file"], f["line"], f["column"], f["severity"]) for f in doc["findings"])
    assert found == [
        ("clusters/test/infra.yaml", 1, 13, "error"),  # both v1beta2 Kustomizations, one finding
        ("infra/podinfo.yaml", 1, 13, "error"),
        ("infra/podinfo.yaml", 10, 13, "error"),
    ]
    [ks] = [f for f in doc["findings"] if f["file"] == "clusters/test/infra.yaml"]
    assert "2 objects: Kustomization/flux-system/apps, Kustomization/flux-system/infra" in ks["message"]
    assert "removed in Flux 2.8" in ks["message"] and "flux migrate -f . rewrites it to kustomize.toolkit.fluxcd.io/v1" in ks["message"]
    assert ks["related"] == [{"file": "clusters/test/infra.yaml", "line": 14, "column": 13}]


@pytest.mark.parametrize(("version", "code", "severity"), [("2.6", 0, "info"), ("2.7", 1, "warning"), ("2.8", 1, "error"), ("next", 1, "error")])
def test_the_same_repository_against_other_releases(version, code, severity):
    exit_code, doc = _run(REMOVED / "bad", "--flux-version", version, "--fail-on", "warning")
    assert exit_code == code
    assert {f["severity"] for f in doc["findings"]} == {severity}


def test_next_on_the_good_repository_passes():
    assert _run(REMOVED / "good", "--flux-version", "next")[0] == 0


def test_without_a_pin_a_removed_version_is_a_warning(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(REMOVED / "bad", root)
    (root / "clusters/test/flux-system/gotk-components.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n")
    _, doc = _run(root)
    assert {f["severity"] for f in doc["findings"]} == {"warning"}
    assert all("assumed: the repository pins no version" in f["message"] and "Flux 2.7 is the last to serve it" in f["message"] for f in doc["findings"])


def test_the_crds_the_cluster_applies_win_over_the_release(tmp_path):
    """A cluster that applies its own Kustomization CRD serving v1beta2 is judged by it."""
    root = tmp_path / "repo"
    shutil.copytree(REMOVED / "bad", root)
    crd = (
        "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: kustomizations.kustomize.toolkit.fluxcd.io\n"
        "spec:\n  group: kustomize.toolkit.fluxcd.io\n  names: {kind: Kustomization, plural: kustomizations}\n  scope: Namespaced\n"
        "  versions:\n  - name: v1\n    served: true\n    storage: true\n  - name: v1beta2\n    served: true\n    storage: false\n"
    )
    comp = root / "clusters/test/flux-system/gotk-components.yaml"
    comp.write_text(comp.read_text() + crd)
    _, doc = _run(root)
    assert sorted(f["file"] for f in doc["findings"]) == ["infra/podinfo.yaml", "infra/podinfo.yaml"]


def test_the_header_says_which_flux_was_modelled():
    _, doc = _run(REMOVED / "good")
    [flux] = doc["summary"]["flux"]
    assert flux == {
        "cluster": "clusters/test",
        "modelled": "2.8",
        "version": "2.8.0",
        "source": "clusters/test/flux-system/gotk-components.yaml: # Flux Version",
        "strictSubstitution": False,
        "also": [],
    }
    sarif = json.loads(CliRunner().invoke(main, ["check", str(REMOVED / "good"), "--format", "sarif"]).output)
    assert sarif["runs"][0]["properties"]["flux"] == [flux]
    text = CliRunner().invoke(main, ["check", str(REMOVED / "good")]).output
    assert text.splitlines()[0] == "flux: Flux 2.8.0 (clusters/test/flux-system/gotk-components.yaml: # Flux Version)"


# -- unknown-flux-field -------------------------------------------------------------------


def test_unknown_fields_are_found_with_the_nearest_known_one():
    report = analyze(UNKNOWN / "bad")
    got = sorted((f.location.file, f.location.line, f.severity.value, f.message.rsplit("; did you mean ", 1)[-1]) for f in report.findings if f.rule == "unknown-flux-field")
    assert got == [
        ("clusters/test/apps.yaml", 20, "warning", "spec.dependsOn?"),
        ("clusters/test/apps.yaml", 29, "warning", "spec.postBuild.substituteFrom?"),
        ("clusters/test/notifications.yaml", 10, "warning", "spec.sourceRef? (invalid-flux-object reports the missing spec.sourceRef)"),
        ("infra/podinfo.yaml", 35, "warning", "spec.valuesFrom[0].valuesKey?"),
        ("infra/podinfo.yaml", 47, "error", "spec.url?"),  # url is required: the API server rejects it
    ]
    # spec.values keeps unknown fields: nothing under it is reported
    assert not any("spec.values." in f.message for f in report.findings)


def _ready_expr_repo(tmp_path):
    """apps dependsOn infra (same source) through an entry with a readyExpr."""
    return write_tree(
        tmp_path,
        {
            "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
            "clusters/prod/apps.yaml": flux_ks("apps", "./apps", "dependsOn:\n  - name: infra\n    readyExpr: status.ready == true\n"),
            "clusters/prod/infra.yaml": flux_ks("infra", "./apps"),
            "apps/kustomization.yaml": "resources: [cm.yaml]\n",
            "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {b: c}\n",
        },
    )


def test_a_field_of_a_newer_release_is_unknown_to_an_older_one(tmp_path):
    """dependsOn[].readyExpr exists from Flux 2.7 (kustomize-controller v1.7): on 2.6 the API
    server drops it, so the dependency is the plain Ready check."""
    root = _ready_expr_repo(tmp_path)
    old = [f for f in analyze(root, flux_version="2.6").findings if f.rule == "unknown-flux-field"]
    assert len(old) == 1 and "spec.dependsOn[0].readyExpr" in old[0].message
    assert not [f for f in analyze(root, flux_version="2.7").findings if f.rule == "unknown-flux-field"]


def test_a_version_no_release_served_is_an_error_for_every_flux_kind(tmp_path):
    """invalid-flux-object reports a Kustomization version no Flux release served (v9); for the
    other kinds it is this rule's: the apply fails the same way."""
    root = tmp_path / "repo"
    shutil.copytree(REMOVED / "good", root)
    hr = root / "infra/podinfo.yaml"
    hr.write_text(hr.read_text().replace("helm.toolkit.fluxcd.io/v2", "helm.toolkit.fluxcd.io/v3"))
    _, doc = _run(root)
    [f] = doc["findings"]
    assert (f["rule"], f["severity"], f["line"]) == ("removed-api-version", "error", 10)
    assert "uses helm.toolkit.fluxcd.io/v3, which Flux 2.8.0 (pinned in clusters/test/flux-system/gotk-components.yaml) does not serve:" in f["message"]


def test_a_ready_expr_orders_nothing_on_a_flux_that_drops_it(tmp_path):
    """Before Flux 2.7 the API server drops dependsOn[].readyExpr: the entry is a plain
    dependency again, and it waits for the dependency's revision (same source)."""
    from fluxgraph import ordering
    from fluxgraph.flux import NamedRef

    root = _ready_expr_repo(tmp_path)
    dep = NamedRef("flux-system", "infra")
    for version, waits in (("2.6", True), ("2.7", False)):
        [c] = fluxgraph.load(root, flux_version=version).clusters
        assert ordering.waits_for_revision(c, c.kustomizations["flux-system/apps"], dep) is waits, version
    # the table's row and the shipped CRDs agree
    items = lambda m: fluxapi.release_crds(m)[("kustomize.toolkit.fluxcd.io", "Kustomization")].versions["v1"].schema["p"]["spec"]["p"]["dependsOn"]["i"]["p"]  # noqa: E731
    assert "readyExpr" not in items("2.6") and "readyExpr" in items("2.7")
    assert fluxrelease.since("ready-expr") == (2, 7)


@pytest.mark.parametrize(("ignore", "fails"), [(False, True), (True, False)])
def test_ignore_missing_components_skips_a_component_that_is_not_there(tmp_path, ignore, fails):
    """fluxcd/pkg kustomize_generator.go (Flux 2.7): with spec.ignoreMissingComponents a
    component whose path does not exist is left out; without it the build fails."""
    extra = "components:\n  - ../components/present\n  - ../components/absent\n" + ("ignoreMissingComponents: true\n" if ignore else "")
    root = write_tree(
        tmp_path,
        {
            "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
            "clusters/prod/apps.yaml": flux_ks("apps", "./apps/base", extra),
            "apps/base/kustomization.yaml": "resources: [cm.yaml]\n",
            "apps/base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {b: c}\n",
            "apps/components/present/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
            "patches:\n  - patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: c, namespace: default}\n      data: {patched: 'yes'}\n",
        },
    )
    [c] = fluxgraph.load(root).clusters
    ks = c.kustomizations["flux-system/apps"]
    assert (ks.status == "failed") is fails
    if not fails:
        assert ks.objects[0].data["data"] == {"b": "c", "patched": "yes"}


def test_a_flux2_git_repository_at_a_tag_is_a_pin(tmp_path):
    """Flux installed from a GitRepository of github.com/fluxcd/flux2 at a tag (a Kustomization
    builds its ./manifests/install): the Git twin of the flux-manifests OCIRepository."""
    root = _repo(
        tmp_path,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n",
        **{
            "clusters/prod/flux-installation.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\n"
            "metadata: {name: flux-installation, namespace: flux-system}\n"
            "spec: {interval: 10m, url: https://github.com/fluxcd/flux2, ref: {tag: v0.31.4}}\n",
        },
    )
    [c] = fluxgraph.load(root).clusters
    assert c.flux.version == "0.31.4" and "GitRepository flux-installation" in c.flux.where


def test_a_version_newer_than_the_pin_doubts_the_pin(tmp_path):
    """helm.toolkit.fluxcd.io/v2 is first served by Flux 2.3: under a 2.2 pin either the pin is
    behind the Flux that runs or the apply fails. A warning that says both, not an error."""
    root = tmp_path / "repo"
    shutil.copytree(REMOVED / "good", root)
    comp = root / "clusters/test/flux-system/gotk-components.yaml"
    comp.write_text(comp.read_text().replace("v2.8.0", "v2.2.0"))
    code, doc = _run(root)
    found = [f for f in doc["findings"] if f["rule"] == "removed-api-version"]
    assert code == 0 and [(f["line"], f["severity"]) for f in found] == [(1, "warning"), (10, "warning")]  # HelmRepository v1 too
    assert all("does not serve yet (Flux 2.3 is the first to): either the cluster runs a newer Flux than the repository pins" in f["message"] for f in found)
