"""Helpers for the hostile-repository suite: each test builds its repository in tmp_path.

``make_repo`` writes a ``flux bootstrap`` layout (``clusters/prod/flux-system``) with two
Flux Kustomizations: ``apps`` (``./apps``) and ``infra`` (``./infra``, one ConfigMap). Tests
break ``apps`` and check that ``infra`` is still analysed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fluxgraph import cli
from fluxgraph.api import Repository, load
from fluxgraph.model import Problem

from ..conftest import flux_ks, gotk_sync  # noqa: F401  (flux_ks: for the robustness tests)

GOTK_SYNC = gotk_sync("prod", "fleet")
FLUX_SYSTEM_KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - gotk-sync.yaml
"""


def configmap(name: str, namespace: str = "default", **data: str) -> str:
    body = "".join(f"  {k}: {v}\n" for k, v in (data or {"key": "value"}).items())
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {namespace}\ndata:\n{body}"


BASE_FILES: dict[str, str | bytes | None] = {
    "clusters/prod/flux-system/gotk-sync.yaml": GOTK_SYNC,
    "clusters/prod/flux-system/kustomization.yaml": FLUX_SYSTEM_KUSTOMIZATION,
    "clusters/prod/apps.yaml": flux_ks("apps", "./apps"),
    "clusters/prod/infra.yaml": flux_ks("infra", "./infra"),
    "apps/app.yaml": configmap("app-settings"),
    "infra/settings.yaml": configmap("infra-settings", "kube-system"),
}


def make_repo(root: Path, files: dict[str, str | bytes | None] | None = None, *, base: bool = True) -> Path:
    """Write the base repository plus ``files`` (None deletes a base file) below ``root``."""
    all_files: dict[str, str | bytes | None] = dict(BASE_FILES) if base else {}
    all_files.update(files or {})
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in all_files.items():
        if content is None:
            continue
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    return root


def all_problems(repo: Repository) -> list[Problem]:
    out: list[Problem] = []
    for c in repo.clusters:
        out.extend(c.problems)
        for ks in c.kustomizations.values():
            out.extend(ks.problems)
    return out


def infra_still_analysed(repo: Repository) -> None:
    """The Kustomization that was not broken is built with its object."""
    [cluster] = repo.clusters
    infra = cluster.kustomizations["flux-system/infra"]
    assert infra.status == "built", infra.problems
    assert [o.ref.name for o in infra.objects] == ["infra-settings"]


def run_cli(*args: str) -> Result:
    return CliRunner().invoke(cli.main, list(args), catch_exceptions=True)


def assert_no_crash(result: Result, allowed: tuple[int, ...] = (0, 1)) -> None:
    """Exit status in ``allowed``, and no traceback or internal error anywhere."""
    out = result.output  # stdout and stderr as a terminal shows them
    exc = result.exception
    assert exc is None or isinstance(exc, SystemExit), f"{type(exc).__name__}: {exc}\n{out}"
    assert "Traceback" not in out, out
    assert "internal error" not in out, out
    assert result.exit_code in allowed, f"exit {result.exit_code}: {out}"


def outputs(repo: Path, *extra: str) -> dict[str, Result]:
    """``graph`` and ``check`` in text and JSON on ``repo`` (each asserted not to crash)."""
    res = {}
    for cmd in ("graph", "check"):
        for fmt in ("text", "json"):
            r = run_cli(cmd, str(repo), "--format", fmt, *extra)
            assert_no_crash(r)
            res[f"{cmd}-{fmt}"] = r
    return res


def check_json(repo: Path, *extra: str) -> dict[str, Any]:
    r = run_cli("check", str(repo), "--format", "json", *extra)
    assert_no_crash(r)
    return json.loads(r.stdout)


def findings_of(report: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule"] == rule]


def assert_located(items: list[dict[str, Any]] | list[Problem]) -> None:
    for f in items:
        if isinstance(f, Problem):
            assert f.location.file and f.location.line >= 1 and f.location.column >= 1, f
        else:
            assert f["file"] and f["line"] >= 1, f


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def load_ok(path: Path) -> Repository:
    """``fluxgraph.load`` plus the checks: nothing raises, every problem is located."""
    from fluxgraph.engine import run_checks

    repo = load(path)
    report = run_checks(repo)
    assert_located(all_problems(repo))
    for f in report.findings:
        assert f.location.file and f.location.line >= 1
    return repo


HEAVY = os.environ.get("FLUXGRAPH_HEAVY_TESTS") == "1"

