"""values-from-set-syntax (issue 23): a valuesFrom targetPath value as helm-controller merges it,
with Helm's --set parser, and valuesFrom[].literal where the modelled Flux serves it."""

from __future__ import annotations

from pathlib import Path

from fluxgraph.engine import analyze
from fluxgraph.findings import Severity

from .conftest import FIXTURES, flux_ks, gotk_sync, write_tree

RULE = "values-from-set-syntax"


def _release(refs: str, values: str = "") -> str:
    return f"""apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: app, namespace: default}}
spec:
  interval: 30m
  chart:
    spec:
      chart: app
      sourceRef: {{kind: HelmRepository, name: charts}}
{values}  valuesFrom:
{refs}"""


REPOSITORY = """apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: default}
spec: {interval: 1h, url: https://charts.example.com}
"""


def _repo(tmp_path: Path, objects: str, release: str) -> Path:
    return write_tree(
        tmp_path,
        {
            "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
            "clusters/prod/apps.yaml": flux_ks("apps", "./apps"),
            "apps/objects.yaml": objects,
            "apps/repository.yaml": REPOSITORY,
            "apps/release.yaml": release,
        },
    )


def _findings(repo: Path, **kw):
    report = analyze(repo, **kw)
    return report, [f for f in report.findings if f.rule == RULE]


def test_literal_is_honoured_only_where_the_flux_release_serves_it():
    good = FIXTURES / RULE / "good"
    _, found = _findings(good)
    assert found == []
    report, found = _findings(good, flux_version="2.8")
    assert [(f.location.line, f.severity) for f in found] == [(28, Severity.WARNING), (33, Severity.WARNING)]
    assert all("literal: true is a field Flux 2.8" in f.message for f in found)
    assert {f.rule for f in report.findings} == {RULE, "unknown-flux-field"}


def test_a_path_through_a_value_of_another_type_fails_even_with_literal(tmp_path):
    repo = _repo(
        tmp_path,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: default}\ndata: {host: db.internal}\n",
        _release(
            "    - {kind: ConfigMap, name: s, valuesKey: host, targetPath: database.host, literal: true}\n",
            "  values:\n    database: postgres\n",
        ),
    )
    _, [f] = _findings(repo)
    assert f.severity is Severity.ERROR and "runs through a value of another type" in f.message
    assert (f.location.file, f.location.line) == ("apps/release.yaml", 13)
    assert [(r.file, r.line) for r in f.related] == [("apps/objects.yaml", 4)]


def test_earlier_entries_are_merged_before_the_target_path(tmp_path):
    # the second entry writes database.host into a map the first entry's YAML made: fine
    repo = _repo(
        tmp_path,
        """apiVersion: v1
kind: ConfigMap
metadata: {name: s, namespace: default}
data:
  values.yaml: |
    database: {port: 5432}
  host: db.internal
""",
        _release(
            "    - {kind: ConfigMap, name: s}\n    - {kind: ConfigMap, name: s, valuesKey: host, targetPath: database.host}\n"
        ),
    )
    report, found = _findings(repo)
    assert found == [] and report.assertions > 0


def test_secret_values_are_read_and_encrypted_ones_are_not_evaluated(tmp_path):
    repo = _repo(
        tmp_path,
        """apiVersion: v1
kind: Secret
metadata: {name: plain, namespace: default}
stringData:
  cidrs: 10.0.0.0/8,10.1.0.0/16
---
apiVersion: v1
kind: Secret
metadata: {name: sealed, namespace: default}
data:
  token: ENC[AES256_GCM,data:abc=,iv:def=,tag:ghi=,type:str]
""",
        _release(
            "    - {kind: Secret, name: plain, valuesKey: cidrs, targetPath: net.cidrs}\n"
            "    - {kind: Secret, name: sealed, valuesKey: token, targetPath: auth.token}\n"
            "    - {kind: Secret, name: made-by-an-operator, valuesKey: password, targetPath: auth.password}\n"
        ),
    )
    report, [f] = _findings(repo)
    assert f.severity is Severity.ERROR and "net.cidrs" in f.message
    [p] = [p for p in report.not_evaluated if p.code == "not-evaluated-values-from"]
    assert p.message.startswith("2 valuesFrom entries") and (p.location.file, p.location.line) == ("apps/release.yaml", 12)


def test_values_escaped_for_set_syntax_are_silent(tmp_path):
    repo = _repo(
        tmp_path,
        r"""apiVersion: v1
kind: ConfigMap
metadata: {name: s, namespace: default}
data:
  cidrs: 10.0.0.0/8\,10.1.0.0/16
  hosts: '{a.example.com,b.example.com}'
  dn: cn=admin\,dc=example
  quoted: '"1234"'
""",
        _release(
            "    - {kind: ConfigMap, name: s, valuesKey: cidrs, targetPath: net.cidrs}\n"
            "    - {kind: ConfigMap, name: s, valuesKey: hosts, targetPath: ingress.hosts}\n"
            "    - {kind: ConfigMap, name: s, valuesKey: dn, targetPath: ldap.bindDN}\n"
            "    - {kind: ConfigMap, name: s, valuesKey: quoted, targetPath: pin}\n"
        ),
    )
    report, found = _findings(repo)
    assert found == [] and report.assertions >= 4


def test_the_release_object_is_not_modified(tmp_path):
    repo = _repo(
        tmp_path,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s, namespace: default}\ndata: {host: db.internal, port: '5432'}\n",
        _release(
            "    - {kind: ConfigMap, name: s, valuesKey: host, targetPath: database.host}\n"
            "    - {kind: ConfigMap, name: s, valuesKey: port, targetPath: database.port}\n",
            "  values:\n    database: {name: app}\n",
        ),
    )
    from fluxgraph.api import load
    from fluxgraph.engine import run_checks

    model = load(repo)
    run_checks(model)
    [hr] = model.clusters[0].helm_releases.values()
    assert hr.obj.data["spec"]["values"] == {"database": {"name": "app"}}
