"""parent-patch-overrides-child (GitHub issue 14, part 2): a parent's blanket spec.patches
replaces a value a child Kustomization or a HelmRelease declares; and explain shows it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import fluxgraph
from fluxgraph.engine import analyze
from fluxgraph.explain import explain, resolve_target
from fluxgraph.overrides import cluster_overrides

from .conftest import FIXTURES
from .test_ownership_rules import cm, kfile, ks, repo

RULE = "parent-patch-overrides-child"


def findings(path: Path):
    return [f for f in analyze(path, enabled={RULE}).findings if f.rule == RULE]


def patches(*entries: str) -> str:
    """``patches:`` of a Flux Kustomization spec (for ``ks(..., extra)``)."""
    return "patches:\n" + "".join(textwrap.indent(textwrap.dedent(e).strip(), "  ").replace("  ", "- ", 1) + "\n" for e in entries)


def smp_ks(spec: str, target: str = "kind: Kustomization") -> str:
    body = textwrap.indent(textwrap.dedent(spec).strip(), "    ")
    return (
        f"target:\n  {target}\n"
        "patch: |\n  apiVersion: kustomize.toolkit.fluxcd.io/v1\n  kind: Kustomization\n  metadata:\n    name: _\n"
        f"  spec:\n{body}\n"
    )


def child(name: str, extra: str = "") -> str:
    """A child Kustomization that declares only what ``extra`` says (no ``prune``)."""
    return ks(name, f"./{name}", extra).replace("  prune: true\n", "", 1)


def tree(parent_extra: str, children: dict[str, str], more: dict[str, str] | None = None) -> dict[str, str]:
    files = {
        "clusters/test/apps.yaml": ks("apps", "./apps", parent_extra),
        "apps/kustomization.yaml": kfile(*(f"{n}.yaml" for n in children)),
    }
    for n, extra in children.items():
        files[f"apps/{n}.yaml"] = child(n, extra)
        files[f"{n}/kustomization.yaml"] = kfile("cm.yaml")
        files[f"{n}/cm.yaml"] = cm(n, "default")
    files.update(more or {})
    return files


HR = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: db
  namespace: default
spec:
  interval: 30m
  chartRef:
    kind: OCIRepository
    name: db
  upgrade:
    remediation:
      retries: 0
"""


# -- the fixture: a blanket prune on two children, and a HelmRelease default ---------------


def test_bad_fixture():
    got = findings(FIXTURES / RULE / "bad")
    assert [(f.location.file, f.location.line) for f in got] == [
        ("clusters/lab/apps.yaml", 15),  # two children: one finding at the patch
        ("database/helmrelease.yaml", 19),  # one HelmRelease: at its declared value
    ]
    grouped, single = got
    assert "spec.prune: true where 2 Kustomizations declare false" in grouped.message
    assert grouped.kustomizations == ("flux-system/dns", "flux-system/vault")
    assert {(loc.file, loc.line) for loc in grouped.related} == {("apps/dns.yaml", 9), ("apps/vault.yaml", 9)}
    assert "declares spec.upgrade.remediation.retries: 0, and Flux applies 3" in single.message
    assert "written there by spec.patches[1] of Kustomization flux-system/apps at clusters/lab/apps.yaml:27" in single.message


def test_one_child_is_reported_at_its_own_line(tmp_path):
    files = tree(patches(smp_ks("prune: true")), {"dns": "prune: false", "web": ""})
    [f] = findings(repo(tmp_path, files))
    assert (f.location.file, f.location.line) == ("apps/dns.yaml", 12)
    assert f.kustomization == "flux-system/dns"
    assert "Kustomization flux-system/dns declares spec.prune: false, and Flux applies true" in f.message
    assert "spec.patches[0] of Kustomization flux-system/apps at clusters/test/apps.yaml:" in f.message


# -- what is not an override --------------------------------------------------------------


@pytest.mark.parametrize(
    ("parent", "declared"),
    [
        # the patch adds a field the child leaves out: a default, as meant
        (patches(smp_ks("wait: true")), "prune: false"),
        # the same value
        (patches(smp_ks("prune: false")), "prune: false"),
        # only the parent's substitution changes the child's value
        ("postBuild:\n  substitute:\n    T: 5m\n", "timeout: ${T}"),
        # the patch's value substitutes to what the child declares
        ("postBuild:\n  substitute:\n    T: 5m\n" + patches(smp_ks("timeout: ${T}")), "timeout: 5m"),
        # a JSON 6902 patch that appends to a list the child declares
        (
            patches(
                "target:\n  kind: Kustomization\npatch: |\n  - op: add\n    path: /spec/dependsOn/-\n    value:\n      name: infra\n"
            ),
            "dependsOn:\n  - name: base",
        ),
        # null and {} declare nothing
        (patches(smp_ks("postBuild:\n  substitute:\n    A: b")), "postBuild: {}"),
        (patches(smp_ks("timeout: 5m")), "timeout: null"),
    ],
    ids=["default", "same", "substituted", "patch-substituted", "list-extended", "empty-map", "null"],
)
def test_not_an_override(tmp_path, parent, declared):
    more = {"infra/kustomization.yaml": kfile("cm.yaml"), "infra/cm.yaml": cm("i", "default")}
    files = tree(parent, {"dns": declared, "base": "", "infra": ""}, more)
    assert findings(repo(tmp_path, files)) == []


@pytest.mark.parametrize(
    "target",
    [
        "{kind: Kustomization, name: dns}",
        "{kind: Kustomization, name: '(dns|web)'}",
        "{kind: Kustomization, labelSelector: defaults=strict}",
    ],
    ids=["by-name", "by-names", "opt-in-label"],
)
def test_deliberate_patches_are_not_reported(tmp_path, target):
    entry = f"target: {target}\npatch: |\n  - op: replace\n    path: /spec/prune\n    value: true\n"
    files = tree(patches(entry), {"dns": "prune: false", "web": ""})
    files["apps/dns.yaml"] = files["apps/dns.yaml"].replace("metadata:\n", "metadata:\n  labels:\n    defaults: strict\n", 1)
    root = repo(tmp_path, files)
    assert findings(root) == []
    # explain still shows the value that does not hold
    [o] = [o for c in fluxgraph.load(root).clusters for o in cluster_overrides(c)]
    assert (o.field, o.written, o.applied, o.site.blanket) == ("spec.prune", False, True, False)


def test_untargeted_patch_by_identity_is_deliberate(tmp_path):
    entry = (
        "patch: |\n  apiVersion: kustomize.toolkit.fluxcd.io/v1\n  kind: Kustomization\n  metadata:\n"
        "    name: dns\n    namespace: flux-system\n  spec:\n    prune: true\n"
    )
    files = tree(patches(entry), {"dns": "prune: false"})
    assert findings(repo(tmp_path, files)) == []


def test_kustomization_file_patches_are_not_judged(tmp_path):
    files = tree("", {"dns": "prune: false"})
    files["apps/kustomization.yaml"] = (
        kfile("dns.yaml")
        + "patches:\n  - target:\n      kind: Kustomization\n    patch: |\n      - op: replace\n        path: /spec/prune\n        value: true\n"
    )
    assert findings(repo(tmp_path, files)) == []


# -- what is --------------------------------------------------------------------------------


def test_json6902_replace_and_remove(tmp_path):
    entry = (
        "target:\n  kind: Kustomization\npatch: |\n  - op: replace\n    path: /spec/prune\n    value: true\n"
        "  - op: remove\n    path: /spec/timeout\n"
    )
    files = tree(patches(entry), {"dns": "prune: false\ntimeout: 5m"})
    [f] = findings(repo(tmp_path, files))  # two fields of one child, one patch: one finding at the patch
    assert (f.location.file, f.location.line) == ("clusters/test/apps.yaml", 14)
    assert "spec.prune: true where Kustomization flux-system/dns declares false" in f.message
    assert "spec.timeout: (removed) where Kustomization flux-system/dns declares 5m" in f.message


def test_the_last_entry_decides(tmp_path):
    blanket = smp_ks("prune: true")
    by_name = smp_ks("prune: false", "{kind: Kustomization, name: dns}")
    # the deliberate entry comes last and restores the child's value: nothing is overridden
    assert findings(repo(tmp_path / "a", tree(patches(blanket, by_name), {"dns": "prune: false"}))) == []
    # the blanket entry comes last: reported, and attributed to it (patches[1])
    by_name_true = smp_ks("prune: true", "{kind: Kustomization, name: dns}")
    [f] = findings(repo(tmp_path / "b", tree(patches(by_name_true, smp_ks("prune: true")), {"dns": "prune: false"})))
    assert "spec.patches[1] of Kustomization flux-system/apps" in f.message


def test_a_childs_own_patches_replaced_by_the_parents(tmp_path):
    own = "patches:\n  - target:\n      kind: ConfigMap\n    patch: |\n      - op: add\n        path: /data/x\n        value: y\n"
    parent = patches(
        smp_ks(
            "patches:\n  - target:\n      kind: HelmRelease\n    patch: |\n      apiVersion: helm.toolkit.fluxcd.io/v2\n"
            "      kind: HelmRelease\n      metadata:\n        name: _\n      spec:\n        timeout: 10m\n"
        )
    )
    [f] = findings(repo(tmp_path, tree(parent, {"dns": own})))
    assert "declares spec.patches: " in f.message and (f.location.file, f.location.line) == ("apps/dns.yaml", 13)


def test_helmrelease_through_its_owners_own_patches(tmp_path):
    entry = (
        "target:\n  kind: HelmRelease\npatch: |\n  apiVersion: helm.toolkit.fluxcd.io/v2\n  kind: HelmRelease\n"
        "  metadata:\n    name: _\n  spec:\n    upgrade:\n      remediation:\n        retries: 3\n"
    )
    files = {
        "clusters/test/db.yaml": ks("db", "./db", patches(entry)),
        "db/kustomization.yaml": kfile("hr.yaml"),
        "db/hr.yaml": HR,
    }
    [f] = findings(repo(tmp_path, files))
    assert (f.location.file, f.location.line) == ("db/hr.yaml", 13)
    assert f.kustomization == "flux-system/db"
    assert "HelmRelease default/db declares spec.upgrade.remediation.retries: 0, and Flux applies 3" in f.message
    assert "spec.patches[0] of Kustomization flux-system/db at clusters/test/db.yaml:" in f.message
    assert "a patch of every HelmRelease" in f.message


# -- explain ---------------------------------------------------------------------------------


def test_explain_shows_the_value_written_and_applied(tmp_path):
    root = repo(tmp_path, tree(patches(smp_ks("prune: true")), {"dns": "prune: false"}))
    loaded = fluxgraph.load(root)
    ex = explain(loaded, resolve_target(loaded, "flux-system/dns"))
    link = ex.clusters[0].owners[0].chain[-1]
    assert link.id == "flux-system/dns" and "prune" in link.from_parent
    [o] = link.overridden
    assert (o.field, o.written, o.applied, o.blanket) == ("spec.prune", "false", "true", True)
    assert (o.location.file, o.location.line) == ("apps/dns.yaml", 12)
    assert o.patch_location.file == "clusters/test/apps.yaml"


def test_explain_renders_it(tmp_path):
    from fluxgraph.render.explain_report import explanation_json, render_text

    files = tree(patches(smp_ks("prune: true")), {"dns": "prune: false"})
    files["dns/kustomization.yaml"] = kfile("cm.yaml", "hr.yaml")
    files["dns/hr.yaml"] = HR
    files["apps/dns.yaml"] = files["apps/dns.yaml"].replace(
        "prune: false",
        "prune: false\n  patches:\n    - target:\n        kind: HelmRelease\n      patch: |\n"
        "        - op: replace\n          path: /spec/upgrade/remediation/retries\n          value: 2",
    )
    loaded = fluxgraph.load(repo(tmp_path, files))
    ex = explain(loaded, resolve_target(loaded, "dns"))
    text = render_text(ex)
    assert "[overridden by the parent's patches: spec.prune: false -> true (clusters/test/apps.yaml:" in text
    assert "[overridden by flux-system/dns's patches: spec.upgrade.remediation.retries: 0 -> 2 (apps/dns.yaml:" in text
    doc = explanation_json(ex)
    [link] = [lk for lk in doc["clusters"][0]["owners"][0]["chain"] if lk["id"] == "flux-system/dns"]
    assert link["overriddenByParent"][0] | {"patch": None} == {
        "field": "spec.prune",
        "written": "false",
        "applied": "true",
        "patch": None,
        "file": "apps/dns.yaml",
        "line": 12,
        "patchFile": "clusters/test/apps.yaml",
        "patchLine": 14,
        "blanket": True,
    }
    [hr] = [o for o in doc["clusters"][0]["objects"] if o["kind"] == "HelmRelease"]
    assert hr["overriddenByPatches"][0]["applied"] == "2"


def test_a_strategic_merge_patch_replaces_a_declared_list(tmp_path):
    """A Flux Kustomization has no merge schema: the parent's dependsOn replaces the child's."""
    more = {"infra/kustomization.yaml": kfile("cm.yaml"), "infra/cm.yaml": cm("i", "default")}
    files = tree(patches(smp_ks("dependsOn:\n  - name: infra")), {"dns": "dependsOn:\n  - name: base", "base": "", "infra": ""}, more)
    [f] = findings(repo(tmp_path, files))
    assert (f.location.file, f.location.line) == ("apps/dns.yaml", 13)
    assert 'declares spec.dependsOn: [{"name": "base"}], and Flux applies [{"name": "infra"}]' in f.message


def test_suppression_at_the_child_or_at_the_patch(tmp_path):
    one = tree(patches(smp_ks("prune: true")), {"dns": "prune: false"})
    one["apps/dns.yaml"] = one["apps/dns.yaml"].replace(
        "metadata:\n", "metadata:\n  annotations:\n    fluxgraph.io/ignore: 'parent-patch-overrides-child: DNS stays'\n", 1
    )
    assert findings(repo(tmp_path / "one", one)) == []
    two = tree(patches(smp_ks("prune: true")), {"dns": "prune: false", "vault": "prune: false"})
    two["clusters/test/apps.yaml"] = two["clusters/test/apps.yaml"].replace(
        "  - target:\n", "  - target: # fluxgraph: ignore[parent-patch-overrides-child] both are protected otherwise\n", 1
    )
    report = analyze(repo(tmp_path / "two", two), enabled={RULE})
    assert report.findings == [] and [f.rule for f in report.suppressed] == [RULE]


@pytest.mark.parametrize(
    ("parent", "declared", "severity"),
    [
        # a guard the patch undoes: warning
        (patches(smp_ks("prune: true")), "prune: false", "warning"),
        (patches(smp_ks("timeout: 5m")), "timeout: 15m", "warning"),
        # the repository's defaults at work: advice
        (patches(smp_ks("timeout: 15m")), "timeout: 5m", "info"),
        (
            patches(smp_ks("postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: vars\n      optional: true")),
            "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: vars",
            "info",
        ),
    ],
    ids=["prune-guard", "timeout-shortened", "timeout-lengthened", "same-sources-optional"],
)
def test_what_an_override_undoes_decides_its_severity(tmp_path, parent, declared, severity):
    files = tree(parent, {"dns": declared, "web": ""})
    [f] = findings(repo(tmp_path, files))
    assert f.severity.value == severity


def test_harmonised_remediation_counts_are_advice_and_a_zero_is_a_guard(tmp_path):
    hr_patch = (
        "target:\n  kind: Kustomization\npatch: |\n  apiVersion: kustomize.toolkit.fluxcd.io/v1\n  kind: Kustomization\n"
        "  metadata:\n    name: _\n  spec:\n    patches:\n      - target:\n          kind: HelmRelease\n        patch: |\n"
        "          apiVersion: helm.toolkit.fluxcd.io/v2\n          kind: HelmRelease\n          metadata:\n            name: _\n"
        "          spec:\n            upgrade:\n              remediation:\n                retries: 2\n"
    )
    for retries, severity in ((3, "info"), (0, "warning"), (-1, "warning")):  # -1: retry without end
        files = tree(patches(hr_patch), {"db": ""}, {"db/hr.yaml": HR.replace("retries: 0", f"retries: {retries}")})
        files["db/kustomization.yaml"] = kfile("cm.yaml", "hr.yaml")
        [f] = findings(repo(tmp_path / str(retries), files))
        assert f.severity.value == severity, retries


def test_a_crd_policy_over_a_chart_whose_values_turn_its_crds_off_is_advice(tmp_path):
    hr_patch = (
        "target:\n  kind: Kustomization\npatch: |\n  apiVersion: kustomize.toolkit.fluxcd.io/v1\n  kind: Kustomization\n"
        "  metadata:\n    name: _\n  spec:\n    patches:\n      - target:\n          kind: HelmRelease\n        patch: |\n"
        "          apiVersion: helm.toolkit.fluxcd.io/v2\n          kind: HelmRelease\n          metadata:\n            name: _\n"
        "          spec:\n            install:\n              crds: CreateReplace\n"
    )
    release = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: kps\n  namespace: default\nspec:\n"
        "  interval: 1h\n  chart:\n    spec:\n      chart: kube-prometheus-stack\n      sourceRef:\n        kind: HelmRepository\n"
        "        name: prometheus\n  install:\n    crds: Skip\n"
    )
    for values, severity in (("  values:\n    crds:\n      enabled: false\n", "info"), ("", "warning")):
        files = tree(patches(hr_patch), {"mon": ""}, {"mon/hr.yaml": release + values})
        files["mon/kustomization.yaml"] = kfile("cm.yaml", "hr.yaml")
        [f] = findings(repo(tmp_path / severity, files))
        assert f.severity.value == severity
        assert ("turn the chart's CRDs off (crds.enabled: false" in f.message) == (severity == "info")
