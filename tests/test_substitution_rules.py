"""Edge cases of the postBuild substitution rules (GitHub issue 3)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fluxgraph.engine import analyze
from fluxgraph.findings import Severity

from .conftest import flux_ks, gotk_sync


def ks(name: str, path: str, extra: str = "") -> str:
    return flux_ks(name, f"./{path}", extra)


SUBST_RULES = {
    "unescaped-shell-variable",
    "undefined-substitution-variable",
    "unsubstituted-flux-variable",
    "substitute-from-race",
    "missing-substitute-from",
    "unintended-substitution",
    "escape-without-substitution",
    "child-variable-substituted-by-parent",
    "invalid-substitution-syntax",
    "invalid-variable-name",
}

GOTK_SYNC = gotk_sync("lab", "lab")


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    """A bootstrap-layout repository (cluster ``clusters/lab``) plus ``files``. A directory
    given without its own kustomization.yaml gets one listing its ``*.yaml`` files."""
    all_files = {
        "clusters/lab/flux-system/gotk-sync.yaml": GOTK_SYNC,
        "clusters/lab/flux-system/kustomization.yaml": "resources:\n  - gotk-sync.yaml\n",
        **files,
    }
    for rel, text in all_files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text) if not text.startswith("apiVersion") else text)
    dirs = {(tmp_path / rel).parent for rel in files if not rel.startswith("clusters/")}
    for d in dirs:
        k = d / "kustomization.yaml"
        if not k.exists():
            names = sorted(p.name for p in d.glob("*.yaml"))
            k.write_text("resources:\n" + "".join(f"  - {n}\n" for n in names))
    return tmp_path


def findings(path: Path, **kwargs):
    report = analyze(path, enabled=SUBST_RULES, **kwargs)
    return [f for f in report.findings if f.rule in SUBST_RULES]


def rules_of(fs) -> list[str]:
    return sorted(f.rule for f in fs)


CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: info
  namespace: default
data:
{data}
"""


def configmap(data: str, name: str = "info", meta: str = "") -> str:
    text = CONFIGMAP.replace("name: info", f"name: {name}" + (("\n" + meta.rstrip()) if meta else ""))
    return text.format(data=textwrap.indent(textwrap.dedent(data).strip(), "  "))


def script_deployment(script: str, *, annotations: str = "") -> str:
    body = textwrap.indent(textwrap.dedent(script).strip(), " " * 14)
    ann = (
        f"  annotations:\n{textwrap.indent(textwrap.dedent(annotations).strip(), '    ')}\n"
        if annotations
        else ""
    )
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: default
{ann}spec:
  selector:
    matchLabels: {{app: app}}
  template:
    metadata:
      labels: {{app: app}}
    spec:
      containers:
        - name: app
          image: example/app:1.0
          command:
            - /bin/sh
            - -c
            - |
{body}
"""


SUBSTITUTE = """\
postBuild:
  substitute:
    CLUSTER: lab
"""


# -- strict vs non-strict --------------------------------------------------------------


def test_undefined_variable_strict_fails_the_build(tmp_path):
    r = repo(
        tmp_path,
        {"clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE), "apps/cm.yaml": configmap("a: ${REGION}")},
    )
    [f] = findings(r)
    assert f.rule == "undefined-substitution-variable" and f.severity is Severity.ERROR
    assert "variable not set (strict mode)" in f.message and (f.location.line, f.location.column) == (7, 6)


def test_undefined_variable_non_strict_blanks_and_nulls(tmp_path):
    r = repo(
        tmp_path,
        {
            "clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE),
            "apps/cm.yaml": configmap("a: ${REGION}\nb: x-${REGION}"),
        },
    )
    fs = findings(r, strict=False)
    assert rules_of(fs) == ["undefined-substitution-variable"] * 2
    by_line = {f.location.line: f.message for f in fs}
    assert "empty string" in by_line[7] and "null" in by_line[7]
    assert "empty string" in by_line[8] and "null" not in by_line[8]


def test_flux_version_before_2_9_is_not_strict(tmp_path):
    r = repo(
        tmp_path,
        {"clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE), "apps/cm.yaml": configmap("a: ${REGION}")},
    )
    [f] = findings(r, flux_version="2.8")
    assert "empty string" in f.message


def test_defaults_never_fire(tmp_path):
    r = repo(
        tmp_path,
        {
            "clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE),
            "apps/cm.yaml": configmap("a: ${REGION:=eu}\nb: ${ZONE:-a}"),
        },
    )
    assert findings(r) == []


# -- variables that are not known ------------------------------------------------------


def test_sops_secret_values_are_unknown_but_defined(tmp_path):
    secret = """\
apiVersion: v1
kind: Secret
metadata:
  name: cluster-secrets
  namespace: flux-system
stringData:
  TOKEN: ENC[AES256_GCM,data:abc=,iv:x=,tag:y=,type:str]
sops:
  mac: ENC[AES256_GCM,data:m=,iv:i=,tag:t=,type:str]
  version: 3.8.1
"""
    # dependsOn the root, which applies cluster-secrets: ordered at every revision
    pb = "dependsOn:\n  - name: flux-system\npostBuild:\n  substituteFrom:\n    - kind: Secret\n      name: cluster-secrets\n"
    r = repo(
        tmp_path,
        {
            "clusters/lab/cluster-secrets.yaml": secret,
            "clusters/lab/apps.yaml": ks("apps", "apps", pb),
            "apps/cm.yaml": configmap("token: ${TOKEN}"),
            "apps/deploy.yaml": script_deployment('exec app --token "${TOKEN}" --user "${USER_NAME}"'),
        },
    )
    fs = findings(r)
    # TOKEN is a Flux variable (value unknown): not reported; USER_NAME is not one
    assert rules_of(fs) == ["unescaped-shell-variable"] and "USER_NAME" in fs[0].message


def test_substitute_from_outside_the_repository_is_not_evaluated(tmp_path):
    pb = "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n"
    r = repo(
        tmp_path,
        {
            "clusters/lab/apps.yaml": ks("apps", "apps", pb),
            "apps/cm.yaml": configmap("a: ${REGION}"),
            "apps/deploy.yaml": script_deployment('echo "${HOSTNAME}"'),
        },
    )
    # only the missing source itself is reported; the variables are unknown
    assert rules_of(findings(r)) == ["missing-substitute-from"]
    # with the values given on the command line they are checked
    fs = findings(r, extra_vars={"CLUSTER": "lab"})
    assert rules_of(fs) == [
        "missing-substitute-from",
        "undefined-substitution-variable",
        "unescaped-shell-variable",
    ]


# -- the opt-out -----------------------------------------------------------------------


@pytest.mark.parametrize(("value", "silent"), [("disabled", True), ("Disabled", False), ("false", False)])
def test_opt_out_needs_the_exact_value(tmp_path, value, silent):
    dep = script_deployment(
        'echo "${HOSTNAME}"', annotations=f"kustomize.toolkit.fluxcd.io/substitute: {value}"
    )
    r = repo(tmp_path, {"clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE), "apps/deploy.yaml": dep})
    assert rules_of(findings(r)) == ([] if silent else ["unescaped-shell-variable"])


def test_opt_out_label_works_too(tmp_path):
    cm = configmap("a: ${REGION}", meta="  labels:\n    kustomize.toolkit.fluxcd.io/substitute: disabled")
    r = repo(tmp_path, {"clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE), "apps/cm.yaml": cm})
    assert findings(r) == []


# -- substituteStrategy ------------------------------------------------------------------


def test_strategy_with_variables_skips_without_variables(tmp_path):
    pb = "postBuild:\n  substitute: {}\n"
    r = repo(
        tmp_path,
        {"clusters/lab/apps.yaml": ks("apps", "apps", pb), "apps/cm.yaml": configmap("a: ${REPLICAS:=2}")},
    )
    [f] = findings(r)
    assert f.rule == "unsubstituted-flux-variable" and "skips substitution" in f.message


def test_strategy_always_substitutes_without_variables(tmp_path):
    pb = "postBuild:\n  substituteStrategy: Always\n"
    r = repo(
        tmp_path,
        {
            "clusters/lab/apps.yaml": ks("apps", "apps", pb),
            "apps/cm.yaml": configmap("a: ${REPLICAS:=2}\nb: ${ZONE}"),
        },
    )
    [f] = findings(r)
    assert f.rule == "undefined-substitution-variable" and "ZONE" in f.message


# -- shell scripts ---------------------------------------------------------------------


def test_script_in_args_after_sh_c_and_in_configmaps(tmp_path):
    job = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: once
  namespace: default
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: once
          image: busybox:1.36
          command: ["busybox", "sh", "-ec"]
          args: ['echo "${POD_NAME}"']
"""
    cm = configmap(
        'run.sh: |\n  echo "${HOME}"\nboot: |\n  #!/usr/bin/env bash\n  echo "${PWD}"\nplain: "${CLUSTER}"',
        name="scripts",
    )
    r = repo(
        tmp_path,
        {"clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE), "apps/job.yaml": job, "apps/cm.yaml": cm},
    )
    names = sorted(f.message.split("}", 1)[0] for f in findings(r))
    assert names == ["${HOME", "${POD_NAME", "${PWD"]


def test_shell_variable_that_is_a_flux_variable_is_templating(tmp_path):
    r = repo(
        tmp_path,
        {
            "clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE),
            "apps/deploy.yaml": script_deployment('echo "${CLUSTER}"'),
        },
    )
    assert findings(r) == []


def test_helmrelease_values_hook(tmp_path):
    hr = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app
  namespace: default
spec:
  interval: 1h
  chartRef:
    kind: OCIRepository
    name: app-template
  values:
    controllers:
      app:
        containers:
          app:
            lifecycle:
              postStart:
                exec:
                  command: [/bin/sh, -c, 'echo "$${SAFE}" "${UNSAFE}"; exit 0']
"""
    r = repo(tmp_path, {"clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE), "apps/hr.yaml": hr})
    [f] = [f for f in findings(r) if f.rule == "unescaped-shell-variable"]
    assert "${UNSAFE}" in f.message and f.location.line == 19


# -- $$ halving ------------------------------------------------------------------------


def test_literal_double_dollar(tmp_path):
    cm = configmap(
        """\
        a: "kill $$"
        b: "$${ESCAPED}"
        c: "$$$$"
        d: "$$HOME $$(date) $$1"
        """
    )
    r = repo(tmp_path, {"clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE), "apps/cm.yaml": cm})
    [f] = findings(r)
    assert f.rule == "unintended-substitution" and f.severity is Severity.WARNING and f.location.line == 7


def test_escaped_shell_specials_are_rendered_as_meant(tmp_path):
    """``$$*``, ``$$@``, ``$$?``, ``$$#``, ``$$!``, ``$$-`` and ``$$'...'``: Flux halves them to
    the shell's ``$*``, ``$@``, ... and ANSI-C quoting, which is what their author wrote them for;
    a PID ``$$`` is still reported."""
    script = """\
        set -- "$$@"
        echo "args: $$* ($$#)" ; false || echo "status $$?"
        sleep 1 & echo "bg $$!" "flags $$-"
        IFS=$$'\\n' read -r line
        echo $$ > /tmp/pid
        """
    r = repo(tmp_path, {"clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE), "apps/deploy.yaml": script_deployment(script)})
    [f] = findings(r)
    assert f.rule == "unintended-substitution" and "echo $$ > /tmp/pid" in f.message


def _two_clusters(tmp_path: Path, script: str, lab_vars: str, prod_vars: str) -> Path:
    """apps/ built by clusters/lab and clusters/prod, each substituting its own variables."""
    files = {
        "clusters/lab/apps.yaml": ks("apps", "apps", lab_vars),
        "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod", "lab"),
        "clusters/prod/flux-system/kustomization.yaml": "resources:\n  - gotk-sync.yaml\n",
        "clusters/prod/apps.yaml": ks("apps", "apps", prod_vars),
        "apps/deploy.yaml": script_deployment(script),
    }
    return repo(tmp_path, files)


def test_a_default_in_a_script_is_templating_where_another_build_defines_it(tmp_path):
    """``${GREETING:-hello}`` in a script two clusters build: prod defines GREETING, so the
    expression is a template with a default, and lab's rendering of the default is meant."""
    script = 'echo "${GREETING:-hello}"\n'
    r = _two_clusters(tmp_path / "templated", script, SUBSTITUTE, "postBuild:\n  substitute:\n    GREETING: hi\n")
    assert findings(r) == []
    # nobody defines it: the shell's own variable, emptied at build time
    r = _two_clusters(tmp_path / "shell", script, SUBSTITUTE, SUBSTITUTE)
    assert {f.rule for f in findings(r)} == {"unescaped-shell-variable"}


def test_a_default_in_a_script_is_the_shells_where_the_container_env_gives_it(tmp_path):
    script = 'echo "${GREETING:-hello}"\n'
    deploy = script_deployment(script).replace(
        "          image: example/app:1.0\n", "          image: example/app:1.0\n          env:\n            - name: GREETING\n              value: hey\n"
    )
    files = {
        "clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE),
        "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod", "lab"),
        "clusters/prod/flux-system/kustomization.yaml": "resources:\n  - gotk-sync.yaml\n",
        "clusters/prod/apps.yaml": ks("apps", "apps", "postBuild:\n  substitute:\n    GREETING: hi\n"),
        "apps/deploy.yaml": deploy,
    }
    fs = findings(repo(tmp_path, files))
    assert [(f.rule, f.cluster) for f in fs] == [("unescaped-shell-variable", "clusters/lab")]


def test_a_halved_dollar_in_a_shell_comment_changes_nothing(tmp_path):
    script = """\
        # the PID is $$ here
        echo ok
        """
    r = repo(tmp_path, {"clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE), "apps/deploy.yaml": script_deployment(script)})
    assert findings(r) == []


# -- foreign text ----------------------------------------------------------------------


def test_crd_description_and_regex_groups(tmp_path):
    crd = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          description: "Supports ${var:position} and ${var:=default}"
          type: object
"""
    relabel = configmap('replacement: "${1}:9100"', name="relabel")
    r = repo(
        tmp_path,
        {
            "clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE),
            "apps/crd.yaml": crd,
            "apps/cm.yaml": relabel,
        },
    )
    fs = sorted(findings(r), key=lambda f: f.location)
    assert rules_of(fs) == ["unintended-substitution"] * 3
    sev = {f.message.split(" ", 1)[0]: f.severity for f in fs}
    assert sev == {
        "${1}": Severity.ERROR,
        "${var:position}": Severity.ERROR,
        # only the description a person reads changes: advice
        "${var:=default}": Severity.INFO,
    }


# -- unsubstituted variables -----------------------------------------------------------


SETTINGS = configmap("CLUSTER_DOMAIN: lab.example.org", name="cluster-settings").replace(
    "namespace: default", "namespace: flux-system"
)
# the root applies cluster-settings; dependsOn on it orders the consumer at every revision
FROM_SETTINGS = (
    "dependsOn:\n  - name: flux-system\npostBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n"
)


def test_unsubstituted_needs_evidence(tmp_path):
    r = repo(
        tmp_path,
        {
            "clusters/lab/cluster-settings.yaml": SETTINGS,
            "clusters/lab/apps.yaml": ks("apps", "apps", FROM_SETTINGS),
            "clusters/lab/tools.yaml": ks("tools", "tools"),
            "apps/cm.yaml": configmap("a: ${CLUSTER_DOMAIN}"),
            "tools/cm.yaml": configmap(
                "domain: ${CLUSTER_DOMAIN}\nother: ${SOMETHING_ELSE}\ngrafana: ${DS_PROMETHEUS}"
            ),
            "tools/deploy.yaml": script_deployment('echo "${CLUSTER_DOMAIN}"'),
        },
    )
    [f] = findings(r)
    assert (
        f.rule == "unsubstituted-flux-variable"
        and f.location.file == "tools/cm.yaml"
        and f.location.line == 7
    )


def test_repository_without_postbuild_stays_silent(tmp_path):
    r = repo(
        tmp_path,
        {
            "clusters/lab/tools.yaml": ks("tools", "tools"),
            "tools/cm.yaml": configmap("a: ${CLUSTER_DOMAIN}\nb: $${X}"),
        },
    )
    # no variable is known anywhere; the one escape in a Kustomization without postBuild is reported
    assert rules_of(findings(r)) == ["escape-without-substitution"]


def test_flux_field_is_evidence_but_a_kustomization_patch_is_not(tmp_path):
    child = ks(
        "child",
        "child",
        "patches:\n  - patch: |\n      - {op: add, path: /data/x, value: '${ANY}'}\n    target: {kind: ConfigMap}\n",
    )
    child = child.replace("path: ./child", "path: ./apps/${TENANT}")
    r = repo(tmp_path, {"clusters/lab/child.yaml": child, "apps/tenant/cm.yaml": configmap("a: b")})
    [f] = findings(r)
    assert (
        f.rule == "unsubstituted-flux-variable"
        and "${TENANT}" in f.message
        and "field Flux reads itself" in f.message
    )


def test_postbuild_injected_from_outside_is_not_evaluated(tmp_path):
    files = {
        "clusters/lab/cluster-settings.yaml": SETTINGS,
        "clusters/lab/apps.yaml": ks("apps", "apps", FROM_SETTINGS),
        "apps/cm.yaml": configmap("a: ${CLUSTER_DOMAIN}"),
    }
    for name in ("one", "two"):
        files[f"clusters/lab/{name}.yaml"] = ks(name, name)
        files[f"{name}/deploy.yaml"] = script_deployment('echo "$${HOSTNAME}" "${CLUSTER_DOMAIN}"')
    assert findings(repo(tmp_path, files)) == []


def test_one_kustomization_with_escapes_is_reported(tmp_path):
    files = {
        "clusters/lab/cluster-settings.yaml": SETTINGS,
        "clusters/lab/apps.yaml": ks("apps", "apps", FROM_SETTINGS),
        "apps/cm.yaml": configmap("a: ${CLUSTER_DOMAIN}"),
        "clusters/lab/one.yaml": ks("one", "one"),
        "one/deploy.yaml": script_deployment('echo "$${HOSTNAME}" "${CLUSTER_DOMAIN}"'),
    }
    assert rules_of(findings(repo(tmp_path, files))) == [
        "escape-without-substitution",
        "unsubstituted-flux-variable",
    ]


# -- substituteFrom ordering -----------------------------------------------------------


def _race_repo(tmp_path, consumer_extra: str, settings_owner: str = "settings") -> Path:
    pb = (
        consumer_extra
        + "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n"
    )
    settings = SETTINGS
    files = {
        "clusters/lab/settings.yaml": ks("settings", "settings"),
        "clusters/lab/middle.yaml": ks("middle", "middle", "dependsOn:\n  - name: settings\n"),
        "clusters/lab/infra.yaml": ks("infra", "infra", pb),
        "infra/cm.yaml": configmap("a: ${CLUSTER_DOMAIN}"),
        "middle/cm.yaml": configmap("a: b", name="middle"),
    }
    files[f"{settings_owner}/cluster-settings.yaml"] = settings
    if settings_owner != "settings":
        files["settings/cm.yaml"] = configmap("a: b", name="other")
    return repo(tmp_path, files)


def test_race_without_depends_on(tmp_path):
    [f] = findings(_race_repo(tmp_path, ""))
    assert f.rule == "substitute-from-race" and f.severity is Severity.WARNING


def test_race_is_ordered_transitively(tmp_path):
    assert findings(_race_repo(tmp_path, "dependsOn:\n  - name: middle\n    namespace: flux-system\n")) == []


def test_a_ready_expr_on_the_chain_does_not_order_the_revision(tmp_path):
    """A readyExpr replaces the built-in check, revision included (kustomize-controller v1.7,
    AdditiveCELDependencyCheck off): a chain through it does not order the revision, as
    `diff` and `explain` already read it (fluxgraph.ordering, issue 22)."""
    assert findings(_race_repo(tmp_path / "plain", "dependsOn:\n  - name: middle\n")) == []
    expr = "dependsOn:\n  - name: middle\n    readyExpr: status.conditions.exists(c, c.type == 'Ready')\n"
    [f] = findings(_race_repo(tmp_path / "expr", expr))
    assert f.rule == "substitute-from-race" and f.severity is Severity.WARNING
    r = _race_repo(tmp_path / "deeper", "dependsOn:\n  - name: middle\n")
    middle = r / "clusters/lab/middle.yaml"
    middle.write_text(middle.read_text().replace("    - name: settings\n", "    - name: settings\n      readyExpr: 'true'\n"))
    [f] = findings(r)
    assert f.rule == "substitute-from-race"


def test_race_optional_source_is_a_warning_too(tmp_path):
    pb_opt = "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n      optional: true\n"
    files = {
        "clusters/lab/settings.yaml": ks("settings", "settings"),
        "clusters/lab/infra.yaml": ks("infra", "infra", pb_opt),
        "settings/cluster-settings.yaml": SETTINGS,
        "infra/cm.yaml": configmap("a: ${CLUSTER_DOMAIN}"),
    }
    [f] = findings(repo(tmp_path, files))
    # a timing, not a certainty: latent like the rest of the rule (docs/severity.md)
    assert f.rule == "substitute-from-race" and f.severity is Severity.WARNING and "optional: true" in f.message


def _parent_repo(tmp_path, apps_extra: str = "", consumers: tuple[str, ...] = ("apps",)) -> Path:
    """The root applies cluster-settings and the consumers, which substitute from it."""
    files = {"clusters/lab/cluster-settings.yaml": SETTINGS}
    for name in consumers:
        files[f"clusters/lab/{name}.yaml"] = ks(name, name, apps_extra + "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n")
        files[f"{name}/cm.yaml"] = configmap("a: ${CLUSTER_DOMAIN}")
    return repo(tmp_path, files)


def test_race_with_the_parent_that_applies_the_source(tmp_path):
    """Parenthood orders only the child's creation: on a new revision the root and apps
    reconcile at once, and apps may render it with the previous cluster-settings."""
    [f] = findings(_parent_repo(tmp_path))
    assert f.rule == "substitute-from-race" and f.severity is Severity.WARNING
    assert f.location.file == "clusters/lab/apps.yaml"
    assert "flux-system/flux-system applies flux-system/apps itself, which orders only flux-system/apps's creation" in f.message


def test_depends_on_the_parent_orders_every_revision(tmp_path):
    assert findings(_parent_repo(tmp_path, "dependsOn:\n  - name: flux-system\n")) == []


def test_depends_on_across_another_source_does_not_order_the_revision(tmp_path):
    r = _race_repo(tmp_path, "dependsOn:\n  - name: middle\n")
    middle = r / "clusters/lab/middle.yaml"
    middle.write_text(middle.read_text().replace("name: flux-system\n", "name: other-source\n"))
    (r / "clusters/lab/other-source.yaml").write_text(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: other-source\n"
        "  namespace: flux-system\nspec:\n  interval: 1m\n  url: ssh://git@example.com/lab\n  ref: {branch: main}\n"
    )
    [f] = findings(r)
    assert f.rule == "substitute-from-race" and "across another source" in f.message


def test_race_is_reported_once_per_producer(tmp_path):
    """One ConfigMap read by several Kustomizations: one finding at the ConfigMap, naming them."""
    report = analyze(_parent_repo(tmp_path, consumers=("apps", "tools", "web")), enabled=SUBST_RULES)
    [f] = [f for f in report.findings if f.rule == "substitute-from-race"]
    assert (f.location.file, f.location.line) == ("clusters/lab/cluster-settings.yaml", 1)
    assert f.kustomizations == ("flux-system/apps", "flux-system/tools", "flux-system/web")
    assert f.message.startswith("Kustomization flux-system/flux-system applies ConfigMap cluster-settings from here")
    assert f.message.endswith("; 3 Kustomizations: flux-system/apps, flux-system/tools, flux-system/web")
    assert {r.file for r in f.related} >= {"clusters/lab/apps.yaml", "clusters/lab/tools.yaml", "clusters/lab/web.yaml"}


def test_race_with_the_parent_cannot_fail_a_fresh_cluster(tmp_path):
    """The parent applies cluster-settings before the child Kustomization it creates (server-side
    apply sorts ConfigMaps before custom resources): only the revision race is stated."""
    [f] = findings(_parent_repo(tmp_path))
    assert "on a fresh cluster" not in f.message
    [f] = findings(_race_repo(tmp_path / "sibling", ""))
    assert "on a fresh cluster the build fails before it exists" in f.message


def test_race_on_a_watched_object_is_advice(tmp_path):
    """kustomize-controller (Flux 2.7 and later) reconciles the consumers of a ConfigMap labelled
    reconcile.fluxcd.io/watch: Enabled as soon as it changes."""
    r = _race_repo(tmp_path, "")
    settings = r / "settings/cluster-settings.yaml"
    settings.write_text(settings.read_text().replace("metadata:\n", "metadata:\n  labels:\n    reconcile.fluxcd.io/watch: Enabled\n", 1))
    [f] = findings(r)
    assert f.severity is Severity.INFO and "reconciles flux-system/infra again as soon as it changes" in f.message
    [f] = findings(r, flux_version="2.6")  # before kustomize-controller v1.7 nothing watches it
    assert f.severity is Severity.WARNING


def test_race_whose_variables_are_unused_is_advice(tmp_path):
    files = {
        "clusters/lab/cluster-settings.yaml": SETTINGS,
        "clusters/lab/apps.yaml": ks("apps", "apps", "postBuild:\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n"),
        "apps/cm.yaml": configmap("a: b"),
    }
    [f] = findings(repo(tmp_path, files))
    assert f.severity is Severity.INFO and "none of the variables" in f.message


def test_race_self_produced(tmp_path):
    [f] = findings(_race_repo(tmp_path, "", settings_owner="infra"))
    assert f.rule == "substitute-from-race" and "which it applies itself" in f.message


def test_external_secret_produces_the_secret(tmp_path):
    es = """\
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: cluster-secrets-sync
  namespace: flux-system
spec:
  target:
    name: cluster-secrets
"""
    pb = "dependsOn:\n  - name: secrets\npostBuild:\n  substituteFrom:\n    - kind: Secret\n      name: cluster-secrets\n"
    files = {
        "clusters/lab/secrets.yaml": ks("secrets", "secrets"),
        "clusters/lab/apps.yaml": ks("apps", "apps", pb),
        "secrets/es.yaml": es,
        "apps/cm.yaml": configmap("a: ${TOKEN}"),
    }
    # produced (not missing), ordered (no race); TOKEN's value is only in the cluster
    assert findings(repo(tmp_path, files)) == []
    # unordered: its values come from the store, not the revision, so there is no revision race
    # (a cold boot is generated-secret-not-awaited's)
    files["clusters/lab/apps.yaml"] = ks("apps", "apps", pb.replace("dependsOn:\n  - name: secrets\n", ""))
    assert findings(repo(tmp_path / "unordered", files)) == []


# -- child Kustomizations --------------------------------------------------------------


def _child(value: str) -> str:
    return ks(
        "podinfo",
        "podinfo",
        "postBuild:\n  substitute:\n    APP: podinfo\n    CLUSTER: ${CLUSTER}\n"
        f"patches:\n  - patch: |\n      - {{op: add, path: /data/db, value: '{value}'}}\n    target: {{kind: ConfigMap}}\n",
    )


def test_child_variable_eaten_by_parent_non_strict(tmp_path):
    files = {
        "clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE),
        "apps/podinfo.yaml": _child("${APP}-db"),
        "podinfo/cm.yaml": configmap("a: b"),
    }
    [f] = findings(repo(tmp_path, files), strict=False)
    assert f.rule == "child-variable-substituted-by-parent" and 'replaces it with ""' in f.message


def test_child_escaped_and_pass_down_are_fine(tmp_path):
    files = {
        "clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE),
        "apps/podinfo.yaml": _child("$${APP}-db"),
        "podinfo/cm.yaml": configmap("a: b"),
    }
    assert findings(repo(tmp_path, files)) == []


# -- syntax and names ------------------------------------------------------------------


def test_syntax_errors_only_where_flux_substitutes(tmp_path):
    files = {
        "clusters/lab/apps.yaml": ks("apps", "apps", SUBSTITUTE),
        "clusters/lab/tools.yaml": ks("tools", "tools"),
        "apps/cm.yaml": configmap('a: "${v-d}"\nb: "${@}"'),
        "tools/cm.yaml": configmap('a: "${v-d}"'),
    }
    fs = findings(repo(tmp_path, files))
    assert rules_of(fs) == ["invalid-substitution-syntax"] * 2 and {f.location.file for f in fs} == {
        "apps/cm.yaml"
    }


def test_invalid_names(tmp_path):
    settings = SETTINGS.replace("data:\n", "data:\n  app.conf: x\n") + "binaryData:\n  logo.png: aGk=\n"
    pb = "dependsOn:\n  - name: flux-system\npostBuild:\n  substitute:\n    cluster-name: lab\n  substituteFrom:\n    - kind: ConfigMap\n      name: cluster-settings\n"
    files = {
        "clusters/lab/cluster-settings.yaml": settings,
        "clusters/lab/apps.yaml": ks("apps", "apps", pb),
        "apps/cm.yaml": configmap("a: ${CLUSTER_DOMAIN}"),
    }
    fs = findings(repo(tmp_path, files))
    assert rules_of(fs) == ["invalid-variable-name"] * 2
    assert sorted(f.message.split(" ", 1)[0] for f in fs) == ["'app.conf'", "'cluster-name'"]


def test_strings_lists_matching_values_in_document_order():
    """checks._subst.strings (iterative, paths built only for kept values) against the plain
    recursive definition, on random nested data."""
    import random

    from fluxgraph.checks._subst import strings

    def reference(node, path=()):
        if isinstance(node, str):
            yield path, node
        elif isinstance(node, dict):
            for k, v in node.items():
                yield from reference(v, (*path, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from reference(v, (*path, i))

    rnd = random.Random(1)

    def gen(depth):
        r = rnd.random()
        if depth > 4 or r < 0.3:
            return rnd.choice(["a", "${x}", "$${y}", "b$$", 1, None, True, 1.5])
        if r < 0.65:
            return {rnd.choice("abcdef"): gen(depth + 1) for _ in range(rnd.randint(0, 4))}
        return [gen(depth + 1) for _ in range(rnd.randint(0, 4))]

    for _ in range(2000):
        node = gen(0)
        for needle in ("", "$", "${", "$${", "$$"):
            assert strings(node, ("p",), needle) == [(p, s) for p, s in reference(node, ("p",)) if needle in s]


WATCHED = "metadata:\n  labels:\n    reconcile.fluxcd.io/watch: Enabled\n"


def test_race_self_produced_watched_and_applied_elsewhere_too_is_advice(tmp_path):
    """Both halves answered: the watch re-queues the Kustomization once its own apply changes
    the object, and on a fresh cluster another Kustomization that does not wait for it applies
    the object too, so a retry builds."""
    r = _race_repo(tmp_path, "", settings_owner="infra")
    settings = r / "infra/cluster-settings.yaml"
    settings.write_text(settings.read_text().replace("metadata:\n", WATCHED, 1))
    [f] = findings(r)
    assert f.severity is Severity.WARNING and "a stale build lasts one reconcile" in f.message  # fresh: nothing else
    (r / "settings/cluster-settings.yaml").write_text(settings.read_text())
    kfile = r / "settings/kustomization.yaml"
    kfile.write_text(kfile.read_text().replace("- cm.yaml", "- cm.yaml\n  - cluster-settings.yaml"))
    [f] = findings(r)
    assert f.severity is Severity.INFO
    assert "on a fresh cluster Kustomization flux-system/settings, which does not wait for flux-system/infra, applies it too" in f.message
    [f] = findings(r, flux_version="2.6")  # nothing watches it before Flux 2.7
    assert f.severity is Severity.WARNING


def test_race_self_produced_unused_and_bootstrapped_is_advice(tmp_path):
    """The variables are not used by what the Kustomization substitutes, and the repository's
    documented bootstrap applies the object before Flux (a README's kubectl apply -f)."""
    r = _race_repo(tmp_path, "", settings_owner="infra")
    (r / "infra/cm.yaml").write_text(configmap("a: b"))
    [f] = findings(r)
    assert f.severity is Severity.WARNING and "so a stale build changes nothing" in f.message
    (r / "README.md").write_text("## Bootstrap\n\n```sh\nkubectl apply --server-side -f ./infra/cluster-settings.yaml\n```\n")
    [f] = findings(r)
    assert f.severity is Severity.INFO and "the repository's bootstrap creates it before Flux runs (README.md:4" in f.message


CES = """\
apiVersion: external-secrets.io/v1
kind: ClusterExternalSecret
metadata:
  name: cluster-secrets
spec:
  namespaces: [flux-system]
  externalSecretSpec:
    target:
      name: cluster-secrets
"""


def test_an_object_only_a_later_maker_writes_cannot_bootstrap(tmp_path):
    """The root substitutes from a Secret that only a ClusterExternalSecret of a child writes:
    on a fresh cluster the root's build fails, so the child never comes (an ancestor of the
    maker waits for its output). Advice where the repository's bootstrap creates it."""
    pb = "postBuild:\n  substituteFrom:\n    - kind: Secret\n      name: cluster-secrets\n"
    files = {
        "clusters/lab/apps.yaml": ks("apps", "apps", pb),
        "apps/secrets.yaml": ks("secrets", "secrets"),
        "secrets/ces.yaml": CES,
        "apps/cm.yaml": configmap("a: ${TOKEN}"),
    }
    r = repo(tmp_path, files)
    [f] = findings(r)
    assert f.rule == "substitute-from-race" and f.severity is Severity.WARNING
    assert "which nothing applies: ClusterExternalSecret cluster-secrets creates it (applied by flux-system/secrets)" in f.message
    assert "flux-system/secrets is only reconciled once flux-system/apps has applied" in f.message
    (r / "scripts").mkdir()
    (r / "scripts/bootstrap.sh").write_text("#!/bin/sh\nkubectl -n flux-system create secret generic cluster-secrets --from-literal=TOKEN=x\n")
    [f] = findings(r)
    assert f.severity is Severity.INFO and "bootstrap creates it before Flux runs (scripts/bootstrap.sh:2:1)" in f.message
    (r / "scripts/bootstrap.sh").write_text("#!/bin/sh\nkubectl -n cert-manager create secret generic cluster-secrets --from-literal=TOKEN=x\n")
    [f] = findings(r)
    assert f.severity is Severity.WARNING  # created in another namespace: not this one


ES_FROM_STORE = """\
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: cluster-secrets
  namespace: flux-system
spec:
  secretStoreRef:
    kind: ClusterSecretStore
    name: vault
  target:
    name: cluster-secrets
"""
STORE = """\
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata:
  name: vault
spec:
  provider: {}
"""


def test_a_maker_whose_store_only_the_consumer_applies_cannot_bootstrap(tmp_path):
    """The root applies an ExternalSecret, but the ClusterSecretStore it reads is applied only
    by Kustomizations that substitute from the Secret it writes (or come after one): on a fresh
    cluster none of them builds, so the Secret is never written. Silent once the store comes
    from elsewhere; one finding at the maker when it blocks several."""
    pb = "postBuild:\n  substituteFrom:\n    - kind: Secret\n      name: cluster-secrets\n"
    files = {
        "clusters/lab/es.yaml": ES_FROM_STORE,
        "clusters/lab/store.yaml": ks("store", "store", pb),
        "clusters/lab/apps.yaml": ks("apps", "apps", "dependsOn:\n  - name: store\n"),
        "store/store.yaml": STORE,
        "store/cm.yaml": configmap("a: ${TOKEN}"),
        "apps/apps.yaml": ks("web", "web", pb),
        "web/cm.yaml": configmap("a: ${TOKEN}"),
    }
    r = repo(tmp_path, files)
    [f] = [f for f in findings(r) if f.rule == "substitute-from-race"]
    assert f.severity is Severity.WARNING and f.location.file == "clusters/lab/store.yaml"
    assert (
        "which nothing applies: ExternalSecret flux-system/cluster-secrets creates it (applied by flux-system/flux-system) "
        "from ClusterSecretStore vault, which only flux-system/store applies" in f.message
    )  # web waits for the store through apps' dependsOn: it is blocked, it does not block
    # the controller's Kustomization substitutes too, and the store's waits for it: both block
    (r / "clusters/lab/eso.yaml").write_text(ks("eso", "eso", pb))
    (r / "eso").mkdir()
    (r / "eso/cm.yaml").write_text(configmap("a: ${TOKEN}"))
    (r / "clusters/lab/store.yaml").write_text(ks("store", "store", pb + "dependsOn:\n  - name: eso\n"))
    [f] = [f for f in findings(r) if f.rule == "substitute-from-race"]
    assert f.location.file == "clusters/lab/es.yaml" and f.severity is Severity.WARNING
    assert "writes Secret cluster-secrets from ClusterSecretStore vault, which only Kustomizations that substitute" in f.message
    assert "2 Kustomizations: flux-system/eso, flux-system/store" in f.message
    (r / "clusters/lab/store2.yaml").write_text(ks("store2", "store"))  # the store arrives without the Secret
    assert [f for f in findings(r) if f.rule == "substitute-from-race"] == []


def test_a_maker_the_consumer_does_not_wait_for_is_not_this_rules(tmp_path):
    pb = "postBuild:\n  substituteFrom:\n    - kind: Secret\n      name: cluster-secrets\n"
    files = {
        "clusters/lab/apps.yaml": ks("apps", "apps", pb),
        "clusters/lab/secrets.yaml": ks("secrets", "secrets"),
        "secrets/ces.yaml": CES,
        "apps/cm.yaml": configmap("a: ${TOKEN}"),
    }
    assert findings(repo(tmp_path, files)) == []  # generated-secret-not-awaited's, once ordered
