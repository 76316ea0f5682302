"""``fluxgraph move``: the first stage of a move plan, made through the edit layer and proven by
rebuilding (issue 25)."""

from __future__ import annotations

import shutil

from click.testing import CliRunner

import fluxgraph
from fluxgraph import gc
from fluxgraph.cli import main
from fluxgraph.engine import analyze
from fluxgraph.explain import explain, resolve_target
from fluxgraph.findings import Severity
from fluxgraph.move import move_component

from .conftest import FIXTURES, flux_ks
from .test_move_plans import CM, _repo, unbuildable_target

HOMELAB = FIXTURES / "repos" / "homelab"
MOVES = FIXTURES / "repos" / "moves"


def _copy(src, tmp_path):
    dst = tmp_path / "repo"
    shutil.copytree(src, dst, symlinks=True)
    return dst


def test_the_protecting_stage_is_proven_written_and_leaves_a_safe_move(tmp_path):
    repo = _copy(HOMELAB, tmp_path)
    before = analyze(repo)
    result = move_component(repo, "platform/cilium", "network")
    assert not result.refused and result.needs_protection
    assert sorted(result.changes) == [
        "platform/cilium/ip-pool.yaml",
        "platform/cilium/l2-announcement-policy.yaml",
        "platform/cilium/namespace.yaml",
    ]
    # stage 1 rebuilt and compared, the move planned again, and the move itself rebuilt from there
    assert len(result.proven) == 3 and "flux-system/network applies the 3 object(s)" in result.proven[2]
    shown = CliRunner().invoke(main, ["move", "platform/cilium", str(repo), "--to", "network"])
    assert shown.exit_code == 1 and "+    kustomize.toolkit.fluxcd.io/prune: disabled" in shown.stdout
    assert "Stage 2, cluster clusters/homelab" in shown.stderr and "Stage 3" in shown.stderr
    assert "prune: disabled" not in (repo / "platform/cilium/namespace.yaml").read_text()  # diff mode writes nothing
    written = CliRunner().invoke(main, ["move", "platform/cilium", str(repo), "--to", "network", "--write"])
    assert written.exit_code == 0, written.output
    assert "kustomize.toolkit.fluxcd.io/prune: disabled" in (repo / "platform/cilium/namespace.yaml").read_text()
    after = analyze(repo)
    assert {(f.rule, f.fingerprint) for f in after.findings} <= {(f.rule, f.fingerprint) for f in before.findings}
    loaded = fluxgraph.load(repo)
    m = explain(loaded, resolve_target(loaded, "platform/cilium"), move_to="network").clusters[0].move
    assert {o.verdict for o in m.objects} == {gc.SAFE}


def test_a_move_into_an_existing_kustomization_is_printed_not_written(tmp_path):
    """It races nothing, so the first stage is the move itself; into an existing Kustomization
    that means moving files, which fluxgraph does not do: the steps are printed."""
    repo = _copy(MOVES / "split-depends" / "base", tmp_path)
    res = CliRunner().invoke(main, ["move", "platform/network", str(repo), "--to", "flux-system/network"])
    assert res.exit_code == 0, res.output
    assert "nothing fluxgraph can write" in res.stderr and "Stage 1, cluster clusters/prod:" in res.stderr
    assert res.stdout == ""


def test_run_again_after_the_protecting_stage_it_writes_the_move(tmp_path):
    """The whole procedure: stage 1 written; run again, the objects are protected, nothing races,
    and the move itself is written (a new Kustomization, the folder out of the old build, the
    dependent's dependsOn), every other byte kept; the repository then builds with the objects
    applied by the new owner, as they were, and no new error or warning."""
    repo = _copy(HOMELAB, tmp_path)
    before = analyze(repo)
    first = CliRunner().invoke(main, ["move", "platform/cilium", str(repo), "--to", "network", "--write"])
    assert first.exit_code == 0 and "Then run `fluxgraph move` again" in first.stderr, first.output
    protected = analyze(repo)
    second = move_component(repo, "platform/cilium", "network")
    assert second.stage == "move" and not second.refused
    assert sorted(second.changes) == ["clusters/homelab/apps.yaml", "clusters/homelab/platform.yaml", "platform/kustomization.yaml"]
    for rel, ch in second.changes.items():
        old, new = ch.old.decode(), ch.new.decode()
        # edits only: every line that was there stays, but the folder's entry in the old build
        gone = [ln for ln in old.splitlines() if ln not in new.splitlines()]
        assert gone == (["  - cilium"] if rel == "platform/kustomization.yaml" else []), (rel, gone)
    assert CliRunner().invoke(main, ["move", "platform/cilium", str(repo), "--to", "network", "--write"]).exit_code == 0
    after = analyze(repo)
    moved = {o.ref: o for c in after.repo.clusters for o in c.objects() if o.owner == "flux-system/network"}
    was = {o.ref: o for c in protected.repo.clusters for o in c.objects() if o.owner == "flux-system/platform"}
    assert {str(r) for r in moved} == {"Namespace/network", "CiliumL2AnnouncementPolicy/lan", "CiliumLoadBalancerIPPool/lan"}
    assert all(moved[r].data == was[r].data for r in moved)
    known = {(f.rule, f.fingerprint) for f in before.findings}
    assert not [f for f in after.findings if (f.rule, f.fingerprint) not in known and f.severity.rank >= Severity.WARNING.rank]


def test_an_object_a_generator_makes_is_refused(tmp_path):
    repo = _repo(
        tmp_path,
        {
            "clusters/prod/platform.yaml": flux_ks("platform", "./platform"),
            "platform/kustomization.yaml": "resources:\n  - tools\n  - keep.yaml\n",
            "platform/keep.yaml": CM.format(name="keep"),
            "platform/tools/kustomization.yaml": "configMapGenerator:\n  - name: tools\n    literals:\n      - a=b\n",
        },
    )
    res = CliRunner().invoke(main, ["move", "platform/tools", str(repo), "--to", "tools"])
    assert res.exit_code == 2 and "a generator or a patch makes it" in res.stderr, res.output


def test_a_move_into_a_kustomization_that_does_not_build_is_refused(tmp_path):
    repo = unbuildable_target(tmp_path)
    res = CliRunner().invoke(main, ["move", "platform/lb.yaml", str(repo), "--to", "network", "--write"])
    assert res.exit_code == 2 and "does not build" in res.stderr
    assert "prune: disabled" not in (repo / "platform/lb.yaml").read_text()


def test_a_move_that_loses_what_an_overlay_did_is_refused(tmp_path):
    """The overlay patches the ConfigMap of the base it lists: split out, the base's objects
    arrive without the patch. The move rebuilt in memory shows it, and nothing is offered."""
    patch = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  mode: prod\n"
    repo = _repo(
        tmp_path,
        {
            "clusters/prod/apps.yaml": flux_ks("apps", "./overlay"),
            "overlay/kustomization.yaml": "resources:\n  - ../base/app\n  - other.yaml\npatches:\n  - path: mode.yaml\n",
            "overlay/mode.yaml": patch,
            "overlay/other.yaml": CM.format(name="other"),
            "base/app/kustomization.yaml": "resources:\n  - cm.yaml\n",
            "base/app/cm.yaml": CM.format(name="app"),
        },
    )
    result = move_component(repo, "base/app", "app")
    assert not result.changes
    assert any("ConfigMap/default/app changes on the way" in r and "data.mode" in r for r in result.refused), result.refused


SOPS_SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: token
  namespace: default
stringData:
  token: ENC[AES256_GCM,data:abc,iv:def,tag:ghi,type:str]
sops:
  age:
    - recipient: age1example
      enc: |
        -----BEGIN AGE ENCRYPTED FILE-----
        abc
        -----END AGE ENCRYPTED FILE-----
  lastmodified: "2026-01-01T00:00:00Z"
  mac: ENC[AES256_GCM,data:xyz,iv:uvw,tag:rst,type:str]
  encrypted_regex: ^(data|stringData)$
  version: 3.9.0
"""


def test_a_sops_file_is_never_edited(tmp_path):
    """Annotating an encrypted Secret would break its MAC: Flux's decryption, and the apply, fail."""
    repo = _repo(
        tmp_path,
        {
            "clusters/prod/platform.yaml": flux_ks("platform", "./platform", "decryption:\n  provider: sops\n  secretRef:\n    name: sops-age\n"),
            "platform/kustomization.yaml": "resources:\n  - tools\n  - keep.yaml\n",
            "platform/keep.yaml": CM.format(name="keep"),
            "platform/tools/kustomization.yaml": "resources:\n  - secret.sops.yaml\n",
            "platform/tools/secret.sops.yaml": SOPS_SECRET,
        },
    )
    before = (repo / "platform/tools/secret.sops.yaml").read_bytes()
    res = CliRunner().invoke(main, ["move", "platform/tools", str(repo), "--to", "tools", "--write"])
    assert res.exit_code == 2 and "encrypted with SOPS" in res.stderr, res.output
    assert (repo / "platform/tools/secret.sops.yaml").read_bytes() == before


def test_a_move_of_what_applies_the_new_owner_is_refused(tmp_path):
    """Moving the root's own folder (its GitRepository and Kustomization) into a Kustomization it
    would apply: the new owner would apply what applies it."""
    repo = _copy(HOMELAB, tmp_path)
    res = CliRunner().invoke(main, ["move", "clusters/homelab/flux-system", str(repo), "--to", "flux-system/x", "--write"])
    assert res.exit_code == 2 and "holds Kustomization flux-system/flux-system, which applies flux-system/x" in res.stderr, res.output


def test_the_new_owner_must_be_a_kustomization_name(tmp_path):
    res = CliRunner().invoke(main, ["move", "platform/cilium", str(HOMELAB), "--to", "a/b/c"])
    assert res.exit_code == 2 and "is not a Kustomization name" in res.output
