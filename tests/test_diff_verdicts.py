"""diff's verdicts on the change itself (issues 23, 24): updates the API server refuses (immutable fields, a
shrinking PersistentVolumeClaim, and what kustomize-controller's force (spec.force, the
kustomize.toolkit.fluxcd.io/force annotation), spec.ignore and ssa: IfNotPresent change), the
removal of what holds data and its acknowledgement, and the changes listed for a reviewer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fluxgraph.cli import main
from fluxgraph.immutable import immutable_changes, quantity

from .conftest import flux_ks, gotk_sync, write_tree
from .test_diff import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default{annotations}
spec:
  selector:
    matchLabels:
      app: {app}
  template:
    metadata:
      labels:
        app: {app}
    spec:
      containers:
        - name: web
          image: ghcr.io/example/web:{tag}
"""

CLAIM = """apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: default{annotations}
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: {size}
"""

STATEFULSET = """apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: default
spec:
  serviceName: db
  replicas: {replicas}
  selector:
    matchLabels: {{app: db}}
  template:
    metadata:
      labels: {{app: db}}
    spec:
      containers: [{{name: db, image: "postgres:{tag}"}}]
  volumeClaimTemplates:
    - metadata: {{name: data}}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {{requests: {{storage: {size}}}}}
"""


def _history(
    tmp_path: Path, base: dict[str, str], head: dict[str, str], ks_extra: str = "", ks_extra_head: str | None = None
) -> Path:
    """Two commits: the base files, then the head files (the base ones removed first), under one
    Kustomization ``apps`` whose spec gets ``ks_extra`` (at head ``ks_extra_head`` when given)."""
    repo = tmp_path / "repo"
    sync = {"clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod")}
    write_tree(repo, {**sync, "clusters/prod/apps.yaml": flux_ks("apps", "./apps", ks_extra), **base})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for p in base:
        (repo / p).unlink()
    head_extra = ks_extra if ks_extra_head is None else ks_extra_head
    write_tree(repo, {**sync, "clusters/prod/apps.yaml": flux_ks("apps", "./apps", head_extra), **head})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "head")
    return repo


def _effects(repo: Path) -> tuple[int, list[dict]]:
    res = CliRunner().invoke(main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    doc = json.loads(res.output)
    codes = ("immutable-field", "pvc-shrink", "forced-recreate", "forced-recreate-data")
    return res.exit_code, [e for c in doc["clusters"] for e in c["effects"] if e["code"] in codes]


def _dep(app: str = "web", tag: str = "1.0", annotations: str = "") -> dict[str, str]:
    return {"apps/web.yaml": DEPLOYMENT.format(app=app, tag=tag, annotations=annotations)}


FORCE = "\n  annotations:\n    kustomize.toolkit.fluxcd.io/force: Enabled"


def test_a_changed_selector_fails_the_apply(tmp_path):
    rc, [e] = _effects(_history(tmp_path, _dep(), _dep(app="frontend")))
    assert rc == 1 and e["code"] == "immutable-field" and e["severity"] == "error"
    assert "spec.selector" in e["message"] and "dry-run apply of flux-system/apps fails" in e["message"]
    assert (e["file"], e["line"]) == ("apps/web.yaml", 8)


def test_a_template_change_is_an_ordinary_update(tmp_path):
    rc, found = _effects(_history(tmp_path, _dep(), _dep(tag="1.1")))
    assert (rc, found) == (0, [])


def test_the_force_annotation_recreates_the_object(tmp_path):
    rc, [e] = _effects(_history(tmp_path, _dep(), _dep(app="frontend", annotations=FORCE)))
    assert rc == 0 and e["code"] == "forced-recreate" and e["severity"] == "warning"
    assert "annotation kustomize.toolkit.fluxcd.io/force: Enabled" in e["message"]


def test_spec_force_recreates_the_object(tmp_path):
    rc, [e] = _effects(_history(tmp_path, _dep(), _dep(app="frontend"), "  force: true\n"))
    assert e["code"] == "forced-recreate" and "spec.force: true of flux-system/apps" in e["message"]


def test_spec_ignore_does_not_avoid_the_failure(tmp_path):
    ignore = "  ignore:\n    - paths: [/spec/selector]\n      target: {kind: Deployment}\n"
    rc, [e] = _effects(_history(tmp_path, _dep(), _dep(app="frontend"), ignore))
    assert rc == 1 and e["code"] == "immutable-field"
    assert "spec.ignore's /spec/selector does not prevent it" in e["message"]


def test_an_object_applied_only_if_absent_is_not_updated(tmp_path):
    ssa = "\n  annotations:\n    kustomize.toolkit.fluxcd.io/ssa: IfNotPresent"
    rc, found = _effects(_history(tmp_path, _dep(annotations=ssa), _dep(app="frontend", annotations=ssa)))
    assert (rc, found) == (0, [])


def test_a_shrinking_claim_fails_and_a_forced_one_loses_its_data(tmp_path):
    def claim(size: str, annotations: str = "") -> dict[str, str]:
        return {"apps/data.yaml": CLAIM.format(size=size, annotations=annotations)}

    rc, [e] = _effects(_history(tmp_path / "a", claim("10Gi"), claim("5Gi")))
    assert rc == 1 and e["code"] == "pvc-shrink" and "from 10Gi to 5Gi" in e["message"]
    assert _effects(_history(tmp_path / "b", claim("10Gi"), claim("20Gi"))) == (0, [])
    assert _effects(_history(tmp_path / "c", claim("10Gi"), claim("10240Mi"))) == (0, [])
    rc, [e] = _effects(_history(tmp_path / "d", claim("10Gi"), claim("5Gi", FORCE)))
    assert rc == 1 and e["code"] == "forced-recreate-data" and "its data is lost" in e["message"]


def test_statefulset_claim_templates_are_immutable(tmp_path):
    def sts(replicas: int = 1, tag: str = "16", size: str = "10Gi") -> dict[str, str]:
        return {"apps/db.yaml": STATEFULSET.format(replicas=replicas, tag=tag, size=size)}

    assert _effects(_history(tmp_path / "a", sts(), sts(replicas=3, tag="17"))) == (0, [])
    rc, [e] = _effects(_history(tmp_path / "b", sts(), sts(size="20Gi")))
    assert rc == 1 and e["code"] == "immutable-field" and "spec.volumeClaimTemplates" in e["message"]


def test_the_table_of_immutable_fields():
    job = {"spec": {"template": {"spec": {"containers": [{"name": "m", "image": "migrate:1"}]}}}}
    job2 = {"spec": {"template": {"spec": {"containers": [{"name": "m", "image": "migrate:2"}]}}}}
    assert [c.field for c in immutable_changes("batch", "Job", job, job2)] == ["spec.template"]
    rb = {"roleRef": {"kind": "ClusterRole", "name": "view"}}
    rb2 = {"roleRef": {"kind": "ClusterRole", "name": "edit", "apiGroup": "rbac.authorization.k8s.io"}}
    assert [c.field for c in immutable_changes("rbac.authorization.k8s.io", "RoleBinding", rb, rb2)] == ["roleRef"]
    rb3 = {"roleRef": {"kind": "ClusterRole", "name": "view", "apiGroup": "rbac.authorization.k8s.io"}}
    assert immutable_changes("rbac.authorization.k8s.io", "RoleBinding", rb, rb3) == []
    svc = {"spec": {"clusterIP": "10.43.0.10"}}
    assert [c.field for c in immutable_changes("", "Service", svc, {"spec": {"clusterIP": "10.43.0.11"}})] == ["spec.clusterIP"]
    assert immutable_changes("", "Service", {"spec": {}}, svc) == []  # allocated at base: unknown
    cm = {"immutable": True, "data": {"a": "1"}}
    assert [c.field for c in immutable_changes("", "ConfigMap", cm, {"immutable": True, "data": {"a": "2"}})] == ["data"]
    assert immutable_changes("", "ConfigMap", {"data": {"a": "1"}}, {"data": {"a": "2"}}) == []
    sc = {"provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete"}
    assert immutable_changes("storage.k8s.io", "StorageClass", sc, {"provisioner": "rancher.io/local-path"}) == []
    assert [c.field for c in immutable_changes("storage.k8s.io", "StorageClass", sc, {**sc, "reclaimPolicy": "Retain"})] == [
        "reclaimPolicy"
    ]
    assert quantity("1Gi") == quantity("1024Mi") and quantity("1e3") == quantity("1k") and quantity("fast") is None


def _review(tmp_path: Path, base: dict[str, str], head: dict[str, str], ks_extra_base: str = "", ks_extra_head: str = ""):
    repo = _history(tmp_path, base, head, ks_extra_base, ks_extra_head)
    res = CliRunner().invoke(main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    doc = json.loads(res.output)
    return res.exit_code, [e for c in doc["clusters"] for e in c["effects"] if e["severity"] == "info"]


RELEASE = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: cache, namespace: default}}
spec:
  interval: 1h
  suspend: {suspend}
  chart:
    spec:
      chart: redis
      version: {version}
      sourceRef: {{kind: HelmRepository, name: charts}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {{name: charts, namespace: default}}
spec: {{interval: 1h, url: https://charts.example.com}}
"""


def test_review_changes_are_listed(tmp_path):
    base = {**_dep(tag="1.4.2"), "apps/cache.yaml": RELEASE.format(suspend="false", version="19.6.4")}
    head = {
        "apps/web.yaml": DEPLOYMENT.format(app="web", tag="2.0.0", annotations="").replace("spec:\n  selector", "spec:\n  replicas: 0\n  selector"),
        "apps/cache.yaml": RELEASE.format(suspend="true", version="20.1.0"),
    }
    rc, found = _review(tmp_path, base, head)
    assert rc == 0
    got = sorted((e["code"], e["object"]) for e in found)
    assert got == [
        ("major-version", "Deployment/default/web"),
        ("major-version", "HelmRelease/default/cache"),
        ("scaled-to-zero", "Deployment/default/web"),
        ("suspended", "HelmRelease/default/cache"),
    ]
    assert any("from ghcr.io/example/web:1.4.2 to ghcr.io/example/web:2.0.0" in e["message"] for e in found)


def test_a_suspended_kustomization_is_listed(tmp_path):
    rc, found = _review(tmp_path, _dep(), _dep(), "", "  suspend: true\n")
    assert [(e["code"], e["object"]) for e in found] == [("suspended", "Kustomization/flux-system/apps")]


CNPG = """apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata: {name: db, namespace: default}
spec:
  instances: 3
  storage: {size: 10Gi}
"""


def test_removing_what_holds_data_is_an_error(tmp_path):
    def sts(retention: str = "") -> dict[str, str]:
        s = STATEFULSET.format(replicas=1, tag="16", size="10Gi")
        if retention:
            s = s.replace("  serviceName: db\n", f"  serviceName: db\n  persistentVolumeClaimRetentionPolicy: {{whenDeleted: {retention}}}\n")
        return {"apps/db.yaml": s}

    keep = _dep()
    for name, base, what in (
        ("cnpg", {"apps/db.yaml": CNPG}, "CloudNativePG deletes the cluster's pods and PVCs"),
        ("sts", sts(), "the claims of its volumeClaimTemplates stay"),
        ("sts-delete", sts("Delete"), "its claims go: their data is lost"),
    ):
        repo = _history(tmp_path / name, {**keep, **base}, keep)
        res = CliRunner().invoke(main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--format", "json"])
        doc = json.loads(res.output)
        [e] = [e for c in doc["clusters"] for e in c["effects"] if e["code"] == "delete-data"]
        assert res.exit_code == 1 and e["severity"] == "error" and what in e["message"], (name, e["message"])


def test_acknowledgements_are_validated(tmp_path):
    from fluxgraph.config import parse_config
    from fluxgraph.model import FluxgraphError

    cfg = parse_config("diff:\n  acknowledge:\n    - {object: Namespace/media, reason: retired}\n", Path(".fluxgraph.yaml"))
    assert [(a.object, a.reason) for a in cfg.acknowledge] == [("Namespace/media", "retired")]
    for bad in (
        "diff:\n  acknowledge:\n    - {object: Namespace/media}\n",
        "diff:\n  acknowledge:\n    - {object: media, reason: x}\n",
        "diff:\n  ack: []\n",
    ):
        with pytest.raises(FluxgraphError):
            parse_config(bad, Path(".fluxgraph.yaml"))


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_diff_annotations(tmp_path, fmt):
    import jsonschema

    from .test_outputs import SARIF_SCHEMA

    repo = _history(tmp_path, _dep(), _dep(app="frontend"))
    res = CliRunner().invoke(main, ["diff", str(repo), "--base", "HEAD~1", "--head", "HEAD", "--format", fmt])
    assert res.exit_code == 1, res.output
    if fmt == "github":
        [line] = [x for x in res.output.splitlines() if x.startswith("::")]
        assert line.startswith("::error file=apps/web.yaml,line=8,title=fluxgraph diff immutable-field::")
        return
    doc = json.loads(res.output)
    jsonschema.validate(doc, SARIF_SCHEMA, cls=jsonschema.Draft4Validator)
    run_ = doc["runs"][0]
    [r] = [r for r in run_["results"] if r["ruleId"] == "diff/immutable-field"]
    rule = run_["tool"]["driver"]["rules"][r["ruleIndex"]]
    assert rule["id"] == "diff/immutable-field" and rule["helpUri"].endswith("rules/diff/immutable-field.md")
    assert r["level"] == "error" and r["locations"][0]["physicalLocation"]["region"]["startLine"] == 8


def test_every_verdict_code_is_described_and_documented():
    from fluxgraph.diff import EFFECT_SEVERITY, EFFECT_SUMMARY

    doc = (Path(__file__).resolve().parents[1] / "docs" / "explain-and-diff.md").read_text()
    assert set(EFFECT_SUMMARY) == set(EFFECT_SEVERITY)
    for code in EFFECT_SEVERITY:
        assert f"`{code}`" in doc, code


# the verdicts on the change itself (issue 24): each has its doc in rules/diff, like a rule
CHANGE_VERDICTS = {
    "immutable-field", "immutable-field-if-present", "pvc-shrink", "forced-recreate", "forced-recreate-data",
    "delete-data", "suspended", "resumed", "scaled-to-zero", "major-version",
}  # fmt: skip


def test_verdicts_on_the_change_have_their_doc():
    from fluxgraph.catalog import load_verdicts
    from fluxgraph.diff import EFFECT_SEVERITY

    docs = load_verdicts()
    assert CHANGE_VERDICTS <= set(docs) <= set(EFFECT_SEVERITY)
    for code, spec in docs.items():
        assert spec.severity is EFFECT_SEVERITY[code], code
        assert {"What it does", "Why is this a hazard?", "Fix", "References"} <= set(spec.sections), code
        assert f"**Severity:** {spec.severity.value}" in spec.body, code
    res = CliRunner().invoke(main, ["rules", "diff/pvc-shrink"])
    assert res.exit_code == 0 and "field can not be less than previous value" in res.output


JOB = """apiVersion: batch/v1
kind: Job
metadata: {{name: migrate, namespace: default}}
spec:
{ttl}  template:
    spec:
      restartPolicy: Never
      containers: [{{name: migrate, image: "ghcr.io/example/migrate:{tag}"}}]
"""


def test_job_templates_ttl_and_suspended_owners(tmp_path):
    def job(tag: str, ttl: str = "") -> dict[str, str]:
        return {"apps/job.yaml": JOB.format(tag=tag, ttl=ttl)}

    rc, [e] = _effects(_history(tmp_path / "a", job("1"), job("2")))
    assert rc == 1 and e["code"] == "immutable-field" and "spec.template" in e["message"]
    ttl = "  ttlSecondsAfterFinished: 600\n"
    res = CliRunner().invoke(
        main, ["diff", str(_history(tmp_path / "b", job("1", ttl), job("2", ttl))), "--base", "HEAD~1", "--head", "HEAD", "--format", "json"]
    )
    doc = json.loads(res.output)
    [e] = [e for c in doc["clusters"] for e in c["effects"] if e["code"].startswith("immutable")]
    assert res.exit_code == 0 and e["code"] == "immutable-field-if-present" and e["severity"] == "warning"
    # an owner suspended at base never applied the base revision: nothing to judge
    assert _effects(_history(tmp_path / "c", job("1"), job("2"), "  suspend: true\n", "")) == (0, [])


def test_merge_base_leaves_out_what_the_base_branch_did_since(tmp_path):
    repo = tmp_path / "repo"
    common = {"clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"), "clusters/prod/apps.yaml": flux_ks("apps", "./apps")}
    write_tree(repo, {**common, **_dep(), **{"apps/data.yaml": CLAIM.format(size="10Gi", annotations="")}})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    write_tree(repo, _dep(tag="1.1"))
    git(repo, "commit", "-q", "-am", "feature: bump")
    git(repo, "checkout", "-q", "main")
    (repo / "apps/data.yaml").unlink()
    git(repo, "commit", "-q", "-am", "main: drop the claim")
    git(repo, "checkout", "-q", "feature")

    # against main itself, the feature branch looks as if it re-added the claim main dropped
    doc = json.loads(CliRunner().invoke(main, ["diff", str(repo), "--base", "main", "--head", "feature", "--format", "json"]).output)
    assert [o["object"] for o in doc["clusters"][0]["objects"]["added"]] == ["PersistentVolumeClaim/default/data"]
    doc = json.loads(
        CliRunner().invoke(main, ["diff", str(repo), "--base", "main", "--head", "feature", "--format", "json", "--merge-base"]).output
    )
    [cd] = doc["clusters"]
    assert [o["object"] for o in cd["objects"]["modified"]] == ["Deployment/default/web"]
    assert cd["objects"]["added"] == [] and cd["objects"]["removed"] == []


@pytest.mark.parametrize("direction", ["added", "removed"])
def test_shared_builds_see_a_file_in_a_new_subfolder(tmp_path, direction):
    """Flux's generated kustomization reads every folder below the build directory: a file
    added or removed in a subfolder nothing was read from must not let the build be reused."""
    from fluxgraph.diff import diff_revisions
    from fluxgraph.render.diff_report import render_json

    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: default}\ndata: {a: b}\n"
    with_extra = {**_dep(), "apps/extra/cm.yaml": cm}
    base, head = (_dep(), with_extra) if direction == "added" else (with_extra, _dep())
    repo = _history(tmp_path, base, head)
    shared = diff_revisions(repo, "HEAD~1", "HEAD", share_builds=True)
    assert render_json(shared) == render_json(diff_revisions(repo, "HEAD~1", "HEAD", share_builds=False))
    [cd] = shared.clusters
    assert [str(o.ref) for o in (cd.added if direction == "added" else cd.removed)] == ["ConfigMap/default/extra"]
