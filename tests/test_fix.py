"""``fluxgraph fix``: every fixable bad fixture and the demo repository are repaired (check then
reports neither the fixed findings nor anything new), diff mode writes nothing, writes are atomic
and stay inside the repository, and exit statuses are 0/1/2."""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from fluxgraph.catalog import load_catalog
from fluxgraph.cli import main
from fluxgraph.engine import analyze
from fluxgraph.fix import FIXERS, fix_repository
from fluxgraph.fix import write as fixwrite
from fluxgraph.fix.write import WriteRefused, resolve_for_write, write_atomic

from .conftest import FIXTURES, check_golden, fixture_options, flux_ks, gotk_sync


def _ks(name: str, path: str, extra: str = "") -> str:
    return flux_ks(name, f"./{path}", extra)


FIXABLE = sorted(r for r, spec in load_catalog().items() if spec.autofix)
DEMO = FIXTURES / "repos" / "homelab"


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "repo"
    shutil.copytree(src, dst, symlinks=True)
    return dst


def _keys(report) -> set[tuple[str, str]]:
    return {(f.rule, f.fingerprint) for f in report.findings}


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _fix_then_check(repo: Path, **options):
    before = analyze(repo, **options)
    result = fix_repository(repo, **options)
    assert result.write() == []
    after = analyze(repo, **options)
    fixed = {(f.rule, f.fingerprint) for f in result.fixed}
    return before, result, after, fixed


# -- the bad fixtures and the demo -------------------------------------------------------------


@pytest.mark.parametrize("rule", FIXABLE)
def test_fix_write_then_check_on_the_bad_fixture(tmp_path, rule):
    repo = _copy(FIXTURES / rule / "bad", tmp_path)
    options = fixture_options(FIXTURES / rule / "bad")
    before, result, after, fixed = _fix_then_check(repo, **options)
    mine = [f for f in before.findings if f.rule == rule]
    assert mine
    if rule == "escape-without-substitution":
        # the fixture's Kustomization has no postBuild: unescape or add one is a decision
        assert not fixed and all("decision" in n.reason for n in result.not_fixed)
        return
    assert {(f.rule, f.fingerprint) for f in mine if f.rule == rule} & fixed, result.not_fixed
    assert not fixed & _keys(after), "a fixed finding is still reported"
    assert _keys(after) <= _keys(before), f"new findings: {_keys(after) - _keys(before)}"
    # and there is nothing left to do
    assert not fix_repository(repo, **options).changes


def test_demo_repository_fix_diff_and_write(tmp_path):
    repo = _copy(DEMO, tmp_path)
    result = fix_repository(repo)
    check_golden("fix/homelab.diff", result.diff())
    assert sorted(f.rule for f in result.fixed) == [
        "hook-fails-on-success",
        "prunable-shared-namespace",
        "substitute-from-race",
        "unescaped-shell-variable",
    ]
    assert result.left_alone == [] and result.rechecked
    before, _, after, fixed = _fix_then_check(repo)
    assert len(fixed) == 4 and not fixed & _keys(after)
    assert sorted(f.rule for f in after.findings) == ["unsubstituted-flux-variable"] * 3
    assert _keys(after) <= _keys(before)


def test_readme_shows_the_demo_diff():
    from .conftest import GOLDEN, ROOT

    readme = (ROOT / "README.md").read_text()
    start = readme.index("$ fluxgraph fix fixtures/repos/homelab\n") + len("$ fluxgraph fix fixtures/repos/homelab\n")
    end = readme.index("fluxgraph: 4 fixes for 4 findings in 4 files; run with --write to apply\n```", start)
    assert readme[start:end] == (GOLDEN / "fix" / "homelab.diff").read_text()


def test_every_fixer_is_documented_and_back():
    assert sorted(FIXERS) == FIXABLE
    for rule, spec in load_catalog().items():
        text = spec.section("Automatic fix")
        assert text, rule
        assert text.startswith("None") != spec.autofix, f"rules/{rule}.md: autofix and the section disagree"


# -- the command ----------------------------------------------------------------------------------


def test_diff_mode_writes_nothing_and_exits_1(tmp_path):
    repo = _copy(DEMO, tmp_path)
    before = _snapshot(repo)
    res = CliRunner().invoke(main, ["fix", str(repo)])
    assert res.exit_code == 1, res.output
    assert "+    - name: cluster-settings" in res.stdout
    assert "--- a/clusters/homelab/infra-controllers.yaml" in res.stdout
    assert "run with --write to apply" in res.stderr
    assert _snapshot(repo) == before
    assert not list(repo.rglob("*.fluxgraph-tmp"))


def test_write_then_nothing_to_fix(tmp_path):
    repo = _copy(DEMO, tmp_path)
    res = CliRunner().invoke(main, ["fix", str(repo), "--write"])
    assert res.exit_code == 0, res.output
    assert "wrote 4 files" in res.stderr and res.stdout == ""
    res = CliRunner().invoke(main, ["fix", str(repo)])
    assert res.exit_code == 0 and "nothing to fix" in res.stderr and res.stdout == ""


def test_rule_option_limits_the_fixes(tmp_path):
    repo = _copy(DEMO, tmp_path)
    res = CliRunner().invoke(main, ["fix", str(repo), "--rule", "prunable-shared-namespace"])
    assert res.exit_code == 1
    assert "platform/cilium/namespace.yaml" in res.stdout and "infra-controllers" not in res.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["--rule", "no-such-rule"], "unknown rule"),
        (["--rule", "object-applied-twice"], "no automatic fix"),
        (["--env", "nope"], "no such cluster directory"),
    ],
)
def test_usage_errors_exit_2(tmp_path, args, message):
    res = CliRunner().invoke(main, ["fix", str(DEMO), *args])
    assert res.exit_code == 2 and message in res.stderr


def test_nothing_to_fix_exits_0():
    res = CliRunner().invoke(main, ["fix", str(FIXTURES / "unescaped-shell-variable" / "good")])
    assert res.exit_code == 0 and res.stdout == ""


def test_rules_lists_which_rules_fluxgraph_fix_repairs():
    res = CliRunner().invoke(main, ["rules"])
    lines = {ln.split()[0]: ln.split()[2] for ln in res.stdout.splitlines()}
    assert lines["prunable-shared-namespace"] == "fix" and lines["object-applied-twice"] == "-"


# -- writing ----------------------------------------------------------------------------------------


def test_write_is_atomic_when_interrupted_before_the_rename(tmp_path, monkeypatch):
    repo = _copy(DEMO, tmp_path)
    result = fix_repository(repo)
    before = _snapshot(repo)

    def interrupted(src, dst):
        raise OSError(5, "interrupted between write and rename")

    monkeypatch.setattr(fixwrite.os, "replace", interrupted)
    failed = result.write()
    assert sorted(f for f, _ in failed) == sorted(result.changes)
    assert _snapshot(repo) == before  # every original intact, byte for byte and untouched
    assert not [p for p in repo.rglob("*") if p.name.endswith(".fluxgraph-tmp")]


def test_write_keeps_the_file_mode(tmp_path):
    f = tmp_path / "a.yaml"
    f.write_text("a: 1\n")
    f.chmod(0o640)
    write_atomic(tmp_path, "a.yaml", b"a: 1\n", b"a: 2\n")
    assert f.read_text() == "a: 2\n" and (f.stat().st_mode & 0o777) == 0o640


def test_write_refuses_a_file_changed_since_it_was_read(tmp_path):
    (tmp_path / "a.yaml").write_text("a: 3\n")
    with pytest.raises(WriteRefused, match="changed since"):
        write_atomic(tmp_path, "a.yaml", b"a: 1\n", b"a: 2\n")
    assert (tmp_path / "a.yaml").read_text() == "a: 3\n"


@pytest.mark.skipif(os.name == "nt", reason="symlinks")
def test_write_never_follows_a_symlink_out_of_the_repository(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ns.yaml").write_text("a: 1\n")
    repo = tmp_path / "repo"
    (repo / "d").mkdir(parents=True)
    (repo / "link.yaml").symlink_to(outside / "ns.yaml")
    (repo / "d" / "up").symlink_to(outside)
    (repo / "inner.yaml").write_text("a: 1\n")
    (repo / "alias.yaml").symlink_to(repo / "inner.yaml")
    for rel, why in [
        ("link.yaml", "leaves the repository"),
        ("d/up/ns.yaml", "leaves the repository"),
        ("../outside/ns.yaml", "leaves the repository root"),
        ("alias.yaml", "is a symlink"),
    ]:
        with pytest.raises(WriteRefused, match=why):
            resolve_for_write(repo, rel)
        with pytest.raises(WriteRefused):
            write_atomic(repo, rel, b"a: 1\n", b"a: 2\n")
    assert (outside / "ns.yaml").read_text() == "a: 1\n" and (repo / "inner.yaml").read_text() == "a: 1\n"


# -- repairs built for the tests ---------------------------------------------------------------------


def _repo(tmp_path: Path, files: dict[str, str], cluster: str = "lab") -> Path:
    root = tmp_path / "repo"
    base = {
        f"clusters/{cluster}/flux-system/gotk-sync.yaml": gotk_sync(cluster),
        f"clusters/{cluster}/flux-system/kustomization.yaml": "resources:\n  - gotk-sync.yaml\n",
    }
    for rel, text in {**base, **files}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


SCRIPT = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: report
  namespace: default{annotations}
spec:{ttl}
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: report
          image: busybox:1.36
          command:
            - /bin/sh
            - -c
            - |
              # the host's name, from the shell
              echo "report from {expr}"
"""


# a Job Flux applies is deleted after it finishes, else no later revision can change its template
TTL = "\n  ttlSecondsAfterFinished: 600"


def test_escape_without_substitution_is_unescaped_where_the_object_opts_out(tmp_path):
    job = SCRIPT.format(
        annotations="\n  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled", expr="$${HOSTNAME}", ttl=TTL
    )
    repo = _repo(
        tmp_path,
        {
            "clusters/lab/tools.yaml": _ks("tools", "tools", "postBuild:\n  substitute:\n    CLUSTER: lab\n"),
            "tools/job.yaml": job,
            "tools/kustomization.yaml": "resources:\n  - job.yaml\n",
        },
    )
    before, result, after, fixed = _fix_then_check(repo)
    assert [f.rule for f in result.fixed] == ["escape-without-substitution"]
    assert 'echo "report from ${HOSTNAME}"' in (repo / "tools/job.yaml").read_text()
    assert not fixed & _keys(after) and _keys(after) <= _keys(before)


def test_a_fix_that_would_break_another_cluster_is_withheld(tmp_path):
    """A base both clusters use: escaping ${HOSTNAME} for lab (which substitutes) would make
    prod (which does not) run `$${HOSTNAME}`. The re-check sees it, also when the run is scoped
    to lab."""
    files = {
        "clusters/lab/apps.yaml": _ks("apps", "base", "postBuild:\n  substitute:\n    CLUSTER: lab\n"),
        "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
        "clusters/prod/flux-system/kustomization.yaml": "resources:\n  - gotk-sync.yaml\n",
        "clusters/prod/apps.yaml": _ks("apps", "base"),
        "base/job.yaml": SCRIPT.format(annotations="", expr="${HOSTNAME}", ttl=TTL),
        "base/kustomization.yaml": "resources:\n  - job.yaml\n",
    }
    repo = _repo(tmp_path, files)
    assert [f.rule for f in analyze(repo).findings] == ["unescaped-shell-variable"]
    for scope in ({}, {"cluster": "clusters/lab"}):
        result = fix_repository(repo, **scope)
        assert not result.changes and result.rechecked
        [nf] = result.not_fixed
        assert "escape-without-substitution" in nf.reason


def test_depends_on_changed_by_a_parent_patch_is_not_edited(tmp_path):
    patch = """\
    patches:
      - target:
          kind: Kustomization
          name: infra
        patch: |
          - op: add
            path: /spec/dependsOn
            value: [{name: other}]
    """
    repo = _repo(
        tmp_path,
        {
            "clusters/lab/tiers.yaml": _ks("tiers", "tiers", patch),
            "clusters/lab/settings.yaml": _ks("settings", "settings"),
            "clusters/lab/other.yaml": _ks("other", "other"),
            "other/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o\n  namespace: default\n",
            "other/kustomization.yaml": "resources:\n  - cm.yaml\n",
            "settings/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n  A: b\n",
            "settings/kustomization.yaml": "resources:\n  - cm.yaml\n",
            "tiers/infra.yaml": _ks("infra", "infra", "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n"),
            "tiers/kustomization.yaml": "resources:\n  - infra.yaml\n",
            "infra/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: default\ndata:\n  a: ${A}\n",
            "infra/kustomization.yaml": "resources:\n  - cm.yaml\n",
        },
    )
    race = [f for f in analyze(repo).findings if f.rule == "substitute-from-race"]
    assert len(race) == 1
    result = fix_repository(repo, rules={"substitute-from-race"})
    assert not result.changes
    assert "changed after tiers/infra.yaml" in result.not_fixed[0].reason


def test_new_depends_on_follows_the_repository_and_adds_the_namespace_when_needed(tmp_path):
    consumer = _ks("apps", "apps", "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n")
    consumer = consumer.replace("namespace: flux-system\nspec:", "namespace: apps\nspec:")
    # the same source as settings (in flux-system), or a dependsOn would not wait for its revision
    consumer = consumer.replace("    name: flux-system\n", "    name: flux-system\n    namespace: flux-system\n")
    repo = _repo(
        tmp_path,
        {
            "clusters/lab/settings.yaml": _ks("settings", "settings"),
            "clusters/lab/other.yaml": _ks("other", "other").replace("  interval: 10m\n", "  interval: 10m\n  dependsOn:\n  - name: settings\n"),
            "clusters/lab/apps.yaml": consumer,
            "clusters/lab/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n",
            "settings/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: apps\ndata:\n  A: b\n",
            "settings/kustomization.yaml": "resources:\n  - cm.yaml\n",
            "other/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o\n  namespace: default\n",
            "other/kustomization.yaml": "resources:\n  - cm.yaml\n",
            "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: default\ndata:\n  a: ${A}\n",
            "apps/kustomization.yaml": "resources:\n  - cm.yaml\n",
        },
    )
    result = fix_repository(repo, rules={"substitute-from-race"})
    assert [f.rule for f in result.fixed] == ["substitute-from-race"], result.not_fixed
    # after `interval`, like the other Kustomization; indented like the file's own lists
    assert "  interval: 10m\n  dependsOn:\n    - name: settings\n      namespace: flux-system\n  path: ./apps\n" in result.changes[
        "clusters/lab/apps.yaml"
    ].new.decode()
    # a file without lists of its own takes the repository's list indentation
    (repo / "clusters/lab/apps.yaml").write_text(
        consumer.replace("  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-settings\n", "  postBuild:\n    substituteFrom: [{kind: ConfigMap, name: cluster-settings}]\n")
    )
    result = fix_repository(repo, rules={"substitute-from-race"})
    assert "  interval: 10m\n  dependsOn:\n  - name: settings\n    namespace: flux-system\n  path: ./apps\n" in result.changes[
        "clusters/lab/apps.yaml"
    ].new.decode()


def test_a_finding_two_clusters_share_is_fixed_in_both(tmp_path):
    """The engine reports a finding once when two clusters raise it at the same place: the fix
    must add the dependsOn in both clusters' declarations, or the finding stays."""
    repo = _copy(FIXTURES / "prerequisite-without-depends-on" / "bad", tmp_path)
    shutil.copytree(repo / "clusters" / "test", repo / "clusters" / "test2")
    sync = repo / "clusters" / "test2" / "flux-system" / "gotk-sync.yaml"
    sync.write_text(sync.read_text().replace("./clusters/test\n", "./clusters/test2\n"))
    report = analyze(repo)
    shared = [f for f in report.findings if f.rule == "prerequisite-without-depends-on"]
    assert shared and all(len(report.instances(f)) == 2 for f in shared)
    before, result, after, fixed = _fix_then_check(repo)
    assert sorted(result.changes) == ["clusters/test/apps.yaml", "clusters/test2/apps.yaml"]
    assert {(f.rule, f.fingerprint) for f in shared} <= fixed and not fixed & _keys(after)
    assert _keys(after) <= _keys(before)


def test_dashboard_with_a_flux_variable_is_escaped_not_opted_out(tmp_path):
    repo = _copy(FIXTURES / "unintended-substitution" / "bad", tmp_path)
    dash = repo / "apps" / "dashboard.yaml"
    dash.write_text(dash.read_text().replace('"title": "Nodes"', '"title": "Nodes of ${CLUSTER_NAME}"'))
    before, result, after, fixed = _fix_then_check(repo)
    text = dash.read_text()
    assert '"uid": "$${DS_PROMETHEUS}"' in text and "Nodes of ${CLUSTER_NAME}" in text
    assert "substitute: disabled" not in text
    assert not fixed & _keys(after) and _keys(after) <= _keys(before)


def test_a_file_that_does_not_round_trip_is_left_alone_and_listed(tmp_path):
    repo = _copy(FIXTURES / "prunable-shared-namespace" / "bad", tmp_path)
    ns = repo / "infra" / "network" / "namespace.yaml"
    ns.write_text(ns.read_text().replace("  labels:\n    app.kubernetes.io/part-of: network\n", "  labels: { app.kubernetes.io/part-of: network }\n"))
    before = ns.read_bytes()
    res = CliRunner().invoke(main, ["fix", str(repo), "--write"])
    assert res.exit_code == 0, res.output
    assert "left alone (does not round-trip exactly): infra/network/namespace.yaml: line 6 has a flow collection" in res.stderr
    assert "not fixed: infra/network/namespace.yaml:2:1 prunable-shared-namespace: infra/network/namespace.yaml is left alone" in res.stderr
    assert ns.read_bytes() == before
    assert "kustomize.toolkit.fluxcd.io/prune: disabled" in (repo / "infra" / "kube-system.yaml").read_text()


def test_hook_in_a_one_line_flow_command_and_the_kinds_without_a_fix(tmp_path):
    repo = _copy(FIXTURES / "hook-fails-on-success" / "bad", tmp_path)
    dep = repo / "apps" / "deployment.yaml"
    text = dep.read_text()
    dep.write_text(text.replace('command: ["/app/drain", "--grace", "20s"]', 'command: ["/bin/sh", "-c", "test -f /tmp/x && /app/drain"]'))
    before, result, after, fixed = _fix_then_check(repo)
    assert 'command: ["/bin/sh", "-c", "if test -f /tmp/x; then /app/drain; fi"]' in dep.read_text()
    reasons = {n.finding.location.file: n.reason for n in result.not_fixed}
    assert "decision" in reasons["apps/cache.yaml"] and "decision" in reasons["apps/cronjob.yaml"]
    assert not fixed & _keys(after) and _keys(after) <= _keys(before)


def test_diff_marks_a_file_without_final_newline(tmp_path):
    repo = _copy(FIXTURES / "prunable-shared-namespace" / "bad", tmp_path)
    ns = repo / "infra" / "network" / "namespace.yaml"
    ns.write_text(ns.read_text().rstrip("\n"))
    result = fix_repository(repo, rules={"prunable-shared-namespace"})
    diff = result.diff()
    assert "+    kustomize.toolkit.fluxcd.io/prune: disabled\n\\ No newline at end of file\n" in diff
    assert result.write() == []
    assert ns.read_text().endswith("  annotations:\n    kustomize.toolkit.fluxcd.io/prune: disabled")


def test_fix_data_is_typed():
    """A finding's fix data is a typed value with an applicability (issue 22): a misspelled
    field is a TypeError, not a detail nobody reads; `none` carries its reason to `fix`."""
    from fluxgraph.checks import CheckContext
    from fluxgraph.findings import Applicability, FixData
    from fluxgraph.model import Location

    with pytest.raises(TypeError):
        FixData(strat=3)  # type: ignore[call-arg]
    ctx = CheckContext.__new__(CheckContext)
    with pytest.raises(TypeError):
        ctx.finding("m", Location("f.yaml"), nofix="x")  # type: ignore[call-arg]
    raw = ctx.finding("m", Location("f.yaml"), fix=FixData.none("a decision"))
    assert raw.fix is not None and raw.fix.applicability is Applicability.NONE and raw.fix.reason == "a decision"
