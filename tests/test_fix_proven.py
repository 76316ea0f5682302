"""A fix is offered only when the repository it leaves renders exactly the objects it means to
change (issue 25, part 1): ``fix`` rebuilds every cluster with the edits in memory and compares
the rendered objects with the ``diff`` engine. Each case here was a wrong repair before."""

from __future__ import annotations

import os

import pytest

from fluxgraph.engine import analyze
from fluxgraph.fix import fix_repository

from .conftest import gotk_sync
from .test_fix import SCRIPT, TTL, _ks, _repo

PROD = {
    "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
    "clusters/prod/flux-system/kustomization.yaml": "resources:\n  - gotk-sync.yaml\n",
}


def test_an_escape_that_removes_another_clusters_value_is_withheld(tmp_path):
    """Both clusters build base/; lab substitutes no HOSTNAME (the finding), prod defines it.
    Escaping the shared file would hand prod's script `${HOSTNAME}` instead of its value."""
    files = {
        "clusters/lab/apps.yaml": _ks("apps", "base", "postBuild:\n  substitute:\n    CLUSTER: lab\n"),
        **PROD,
        "clusters/prod/apps.yaml": _ks("apps", "base", "postBuild:\n  substitute:\n    HOSTNAME: prod-1\n"),
        "base/job.yaml": SCRIPT.format(annotations="", expr="${HOSTNAME}", ttl=TTL),
        "base/kustomization.yaml": "resources:\n  - job.yaml\n",
    }
    repo = _repo(tmp_path, files)
    found = analyze(repo).findings
    assert [(f.rule, f.cluster) for f in found] == [("unescaped-shell-variable", "clusters/lab")]
    for scope in ({}, {"cluster": "clusters/lab"}):
        result = fix_repository(repo, **scope)
        assert not result.changes and result.rechecked
        [nf] = result.not_fixed
        assert "in cluster clusters/prod" in nf.reason and "does not mean to change" in nf.reason
        # what it would change, at the line it changes
        assert "command[2]" in nf.reason and "report from prod-1" in nf.reason and "report from ${HOSTNAME}" in nf.reason


def test_an_annotation_on_a_namespace_several_kustomizations_render_is_withheld(tmp_path):
    """One namespace.yaml, rendered as two Namespaces by two Kustomizations (substitution): the
    finding is about one of them; annotating the document would change the other too."""
    ns = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${NS}\n"
    files = {
        "clusters/lab/team-a.yaml": _ks("team-a", "teams/ns", "postBuild:\n  substitute:\n    NS: team-a\n"),
        "clusters/lab/team-b.yaml": _ks("team-b", "teams/ns", "postBuild:\n  substitute:\n    NS: team-b\n"),
        "clusters/lab/tools.yaml": _ks("tools", "tools"),
        "teams/ns/namespace.yaml": ns,
        "teams/ns/kustomization.yaml": "resources:\n  - namespace.yaml\n",
        "tools/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: t\n  namespace: team-a\n",
        "tools/kustomization.yaml": "resources:\n  - cm.yaml\n",
    }
    repo = _repo(tmp_path, files)
    mine = [f for f in analyze(repo).findings if f.rule == "prunable-shared-namespace"]
    assert [f.obj.name for f in mine] == ["team-a"], mine
    result = fix_repository(repo, rules={"prunable-shared-namespace"})
    assert not result.changes
    [nf] = result.not_fixed
    assert "Namespace/team-b" in nf.reason and "does not mean to change" in nf.reason, nf.reason


def test_a_fix_of_a_job_flux_cannot_update_is_withheld(tmp_path):
    """A Job without ttlSecondsAfterFinished stays after it ran: changing its template is an
    update the API server refuses (field is immutable), so the repaired revision would not apply."""
    job = SCRIPT.format(
        annotations="\n  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled", expr="$${HOSTNAME}", ttl=""
    )
    repo = _repo(
        tmp_path,
        {
            "clusters/lab/tools.yaml": _ks("tools", "tools", "postBuild:\n  substitute:\n    CLUSTER: lab\n"),
            "tools/job.yaml": job,
            "tools/kustomization.yaml": "resources:\n  - job.yaml\n",
        },
    )
    result = fix_repository(repo)
    assert not result.changes
    [nf] = result.not_fixed
    assert "immutable-field" in nf.reason and "field is immutable" in nf.reason, nf.reason


def test_no_escape_inside_a_postbuild_substitute_value(tmp_path):
    """Flux does not expand a postBuild.substitute value again: `$${DOMAIN}` written there would
    reach the child's objects as the text `${DOMAIN}`."""
    child = _ks("web", "web", 'postBuild:\n  substitute:\n    URL: "https://${DOMAIN}/${CLUSTER}"\n    DOMAIN: example.com\n')
    repo = _repo(
        tmp_path,
        {
            "clusters/lab/apps.yaml": _ks("apps", "tiers", "postBuild:\n  substitute:\n    CLUSTER: lab\n"),
            "tiers/web.yaml": child,
            "tiers/kustomization.yaml": "resources:\n  - web.yaml\n",
            "web/cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  namespace: default\ndata:\n  url: "${URL}"\n',
            "web/kustomization.yaml": "resources:\n  - cm.yaml\n",
        },
    )
    assert [f.rule for f in analyze(repo).findings] == ["child-variable-substituted-by-parent"]
    result = fix_repository(repo)
    assert not result.changes
    [nf] = result.not_fixed
    assert "does not expand variables inside a postBuild.substitute value" in nf.reason


def test_a_depends_on_that_another_implies_is_not_added(tmp_path):
    """web and api substitute from the ConfigMap settings applies, and web already waits for api:
    one entry (api -> settings) orders both; web's would be redundant."""
    subst = "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n"
    files = {
        "clusters/lab/settings.yaml": _ks("settings", "settings"),
        "clusters/lab/api.yaml": _ks("api", "api", subst),
        "clusters/lab/web.yaml": _ks("web", "web", subst + "dependsOn:\n  - name: api\n"),
        "settings/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n  A: b\n",
        "settings/kustomization.yaml": "resources:\n  - cm.yaml\n",
    }
    for app in ("api", "web"):
        files[f"{app}/cm.yaml"] = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {app}\n  namespace: default\ndata:\n  a: ${{A}}\n"
        files[f"{app}/kustomization.yaml"] = "resources:\n  - cm.yaml\n"
    repo = _repo(tmp_path, files)
    before = analyze(repo)
    assert "substitute-from-race" in {f.rule for f in before.findings}
    result = fix_repository(repo)
    assert sorted(result.changes) == ["clusters/lab/api.yaml"], result.diff()
    assert result.write() == []
    after = analyze(repo)
    assert "substitute-from-race" not in {f.rule for f in after.findings}
    assert not {(f.rule, f.fingerprint) for f in after.findings} - {(f.rule, f.fingerprint) for f in before.findings}


# -- the diff shows what --write writes ----------------------------------------------------------

HOOKED = {
    "clusters/lab/tools.yaml": _ks("tools", "tools", "postBuild:\n  substitute:\n    CLUSTER: lab\n"),
    "tools/kustomization.yaml": "resources:\n  - job.yaml\n",
}


def _hooked(tmp_path):
    return _repo(tmp_path, {**HOOKED, "tools/job.yaml": SCRIPT.format(annotations="", expr="${HOSTNAME}", ttl=TTL)})


def _both_modes(repo):
    from click.testing import CliRunner

    from fluxgraph.cli import main

    runner = CliRunner()
    return runner.invoke(main, ["fix", str(repo)]), runner.invoke(main, ["fix", "--write", str(repo)])


@pytest.mark.skipif(os.name == "nt", reason="symlinks")
def test_a_symlinked_file_is_refused_when_the_fix_is_planned(tmp_path):
    repo = _hooked(tmp_path)
    (repo / "tools" / "real.yaml").write_bytes((repo / "tools" / "job.yaml").read_bytes())
    (repo / "tools" / "job.yaml").unlink()
    (repo / "tools" / "job.yaml").symlink_to("real.yaml")
    result = fix_repository(repo)
    assert not result.changes
    [nf] = result.not_fixed
    assert "is a symlink" in nf.reason
    shown, written = _both_modes(repo)
    for run in (shown, written):
        assert "is a symlink" in run.output and "---" not in run.output, run.output
    assert (repo / "tools" / "job.yaml").is_symlink() and "$${HOSTNAME}" not in (repo / "tools" / "real.yaml").read_text()


@pytest.mark.skipif(os.name == "nt", reason="file modes")
def test_a_read_only_file_is_not_replaced(tmp_path):
    repo = _hooked(tmp_path)
    job = repo / "tools" / "job.yaml"
    job.chmod(0o444)
    result = fix_repository(repo)
    assert not result.changes
    assert "read-only" in result.not_fixed[0].reason
    shown, written = _both_modes(repo)
    for run in (shown, written):
        assert "read-only" in run.output, run.output
    assert "$${HOSTNAME}" not in job.read_text() and (job.stat().st_mode & 0o777) == 0o444


def test_when_one_file_cannot_be_written_none_is(tmp_path):
    """Two files to fix; one changes between planning and writing: neither is written."""
    files = {
        **HOOKED,
        "tools/kustomization.yaml": "resources:\n  - job.yaml\n  - other.yaml\n",
        "tools/job.yaml": SCRIPT.format(annotations="", expr="${HOSTNAME}", ttl=TTL),
        "tools/other.yaml": SCRIPT.format(annotations="", expr="${HOSTNAME}", ttl=TTL).replace("name: report", "name: other"),
    }
    repo = _repo(tmp_path, files)
    result = fix_repository(repo)
    assert sorted(result.changes) == ["tools/job.yaml", "tools/other.yaml"]
    (repo / "tools/other.yaml").write_text((repo / "tools/other.yaml").read_text() + "# edited meanwhile\n")
    failed = result.write()
    assert [f for f, _ in failed] == ["tools/other.yaml"] and "changed since" in failed[0][1]
    assert "$${HOSTNAME}" not in (repo / "tools/job.yaml").read_text()


def test_an_alias_at_the_end_of_the_mapping_is_fixed_the_same_in_both_modes(tmp_path):
    """metadata ends with a value that is an alias (`*ns`): the annotation goes after it, and
    the diff mode shows what --write writes."""
    import shutil

    from .conftest import FIXTURES

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "prunable-shared-namespace" / "bad", repo)
    ns = repo / "infra" / "network" / "namespace.yaml"
    ns.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: &ns network\n  labels:\n    app.kubernetes.io/part-of: *ns\n")
    shown, written = _both_modes(repo)
    assert shown.exit_code == 1 and written.exit_code == 0, (shown.output, written.output)
    expected = [ln[1:] for ln in shown.stdout.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert "  annotations:" in expected and all(line in ns.read_text() + (repo / "infra/kube-system.yaml").read_text() for line in expected)
