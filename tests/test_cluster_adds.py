"""What the cluster adds to what the repository declares (issue 21, part 1):
fixtures/repos/cluster-adds/<case>, each with a README. Objects that operators materialise
(fluxgraph.materialize), admission that mutates Flux objects (fluxgraph.admission), inputs
that are not local files."""

from __future__ import annotations

import pytest

import fluxgraph
from fluxgraph.admission import KUSTOMIZATIONS, mutators, releases
from fluxgraph.engine import analyze
from fluxgraph.envsubst import UNKNOWN
from fluxgraph.materialize import MadeIndex, Namespaces, selector_matches

from .conftest import FIXTURES

ADDS = FIXTURES / "repos" / "cluster-adds"


def _ks(repo, ks_id):
    [c] = repo.clusters
    return c, c.kustomizations[ks_id]


# -- objects the cluster's controllers make -----------------------------------------------


def test_what_the_makers_make_is_found_and_its_values_are_not_evaluated():
    report = analyze(ADDS / "materialized")
    assert report.findings == []
    made = {p.message.split(" of Kustomization ")[0].removeprefix("substituteFrom ") for p in report.not_evaluated}
    assert made == {
        "Secret/flux-system/db-secrets",
        "Secret/flux-system/smtp",
        "Secret/flux-system/app-db-app",
        "Secret/web/cluster-secrets",
        "Secret/web/registry-credentials",
    }
    c, db = _ks(report.repo, "flux-system/db")
    # the ExternalSecret's template says its keys; the values come from the store
    assert db.variables["DB_PASSWORD"] is UNKNOWN and "ExternalSecret flux-system/db-credentials" in db.variable_origin["DB_PASSWORD"]
    _, web = _ks(report.repo, "web/web")
    # a reflector copy of a ConfigMap of the repository has its values
    assert web.variables["REGION"] == "eu-west"


def test_makers_that_make_nothing_there_leave_the_finding():
    report = analyze(ADDS / "materialized-bad")
    assert sorted((f.rule, f.kustomization) for f in report.findings) == [
        ("missing-substitute-from", "flux-system/merged"),  # creationPolicy: Merge
        ("missing-substitute-from", "flux-system/vault"),  # VSO without destination.create
        ("missing-substitute-from", "isolated/isolated"),  # the ClusterExternalSecret skips it
    ]


def test_the_maker_table_reads_each_maker():
    report = analyze(ADDS / "materialized")
    [c] = report.repo.clusters
    index = MadeIndex.build(c.objects())
    how = {name: [m.how for m in index.find("Secret", ns, name)] for ns, name in [
        ("flux-system", "db-secrets"), ("flux-system", "smtp"), ("flux-system", "wildcard-tls"),
        ("web", "wildcard-tls"), ("flux-system", "app-db-app"), ("flux-system", "app-db-superuser"),
        ("web", "cluster-secrets"), ("default", "cluster-secrets"), ("web", "registry-credentials"),
    ]}
    assert how["db-secrets"] == ["ExternalSecret flux-system/db-credentials creates it"]
    assert how["smtp"] == ["SealedSecret flux-system/smtp creates it"]
    # cert-manager's Secret, and the copy reflector makes of it in web (secretTemplate annotations)
    assert index.find("Secret", "flux-system", "wildcard-tls")[0].keys == frozenset({"tls.crt", "tls.key", "ca.crt"})
    assert [m.source for m in index.find("Secret", "web", "wildcard-tls")] == ["reflector / replicator / kubed annotations"]
    assert index.find("Secret", "default", "wildcard-tls") == []
    # CloudNativePG: -app by default, -superuser only with enableSuperuserAccess
    assert how["app-db-app"] and how["app-db-superuser"] == []
    # the ClusterExternalSecret selects every namespace without the opt-out label
    assert how["cluster-secrets"]


@pytest.mark.parametrize(
    ("selector", "labels", "selected"),
    [
        ({}, {}, True),
        ({"matchLabels": {"team": "a"}}, {"team": "a"}, True),
        ({"matchLabels": {"team": "a"}}, {"team": "b"}, False),
        ({"matchExpressions": [{"key": "off", "operator": "NotIn", "values": ["true"]}]}, {}, True),
        ({"matchExpressions": [{"key": "off", "operator": "NotIn", "values": ["true"]}]}, {"off": "true"}, False),
        ({"matchExpressions": [{"key": "x", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}, {}, True),
        ({"matchExpressions": [{"key": "x", "operator": "Gt", "values": ["1"]}]}, {"x": "2"}, False),
    ],
)
def test_label_selectors(selector, labels, selected):
    assert selector_matches(selector, labels) is selected


def test_namespaces_by_name_label_and_pattern():
    assert Namespaces(selectors=({"matchLabels": {"kubernetes.io/metadata.name": "web"}},)).contains("web", None)
    assert Namespaces(patterns=("app-.*",)).contains("app-1", None) and not Namespaces(patterns=("app-.*",)).contains("xapp-1", None)
    assert not Namespaces(patterns=("[",)).contains("x", None)  # a pattern the controller could not use selects nothing


# -- admission that mutates Flux objects ----------------------------------------------------


def test_a_substitution_webhook_whose_values_say_what_it_injects():
    repo = fluxgraph.load(ADDS / "admission-known")
    c, web = _ks(repo, "web/web")
    [m] = c.mutators
    assert m.known and m.sources == (("ConfigMap", "flux-system", "cluster-config"),)
    assert not m.admits(KUSTOMIZATIONS, "flux-system", None)  # its default namespaceSelector
    assert web.variables["DOMAIN"] == "example.com"
    assert [o.data["data"]["host"] for o in web.objects] == ["web.example.com"]
    assert analyze(ADDS / "admission-known").findings == []


def test_a_webhook_that_may_change_kustomizations_leaves_their_variables_not_evaluated():
    report = analyze(ADDS / "admission-unknown")
    assert report.findings == []
    [p] = report.not_evaluated
    assert p.code == "not-evaluated-admission" and p.location.file == "clusters/prod/webhook.yaml"
    assert "MutatingWebhookConfiguration flux-defaults (webhook kustomizations.flux-defaults.example.com)" in p.message
    _, web = _ks(report.repo, "flux-system/web")
    assert web.mutation("dependsOn") is not None  # any field: ordering verdicts are not evaluated either


def test_a_webhook_for_other_resources_changes_nothing():
    report = analyze(ADDS / "admission-unknown-bad")
    assert [(f.rule, f.severity.value) for f in report.findings] == [("undefined-substitution-variable", "error")]
    [c] = report.repo.clusters
    assert mutators(c.objects(), releases(c)) == []


# -- inputs that are not local files ---------------------------------------------------------


def test_a_remote_generator_input_is_not_evaluated_and_fails_nothing():
    report = analyze(ADDS / "remote-input")
    assert report.findings == []
    assert [p.code for p in report.not_evaluated] == ["not-evaluated-remote"]
    bad = analyze(ADDS / "remote-input-bad")
    assert [f.rule for f in bad.findings] == ["kustomize-build-error"]


KYVERNO = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: flux-defaults
spec:
  rules:
    - name: cluster-name
      match:
        any:
          - resources:
              kinds: [kustomize.toolkit.fluxcd.io/v1/Kustomization]
      mutate:
        patchStrategicMerge:
          spec:
            postBuild:
              substitute:
                CLUSTER_NAME: prod
    - name: ordering
      match:
        any:
          - resources:
              kinds: [Kustomization]
      mutate:
        patchesJson6902: |-
          - op: add
            path: /spec/dependsOn
            value: [{name: infra}]
"""
GATEKEEPER = """\
apiVersion: mutations.gatekeeper.sh/v1
kind: Assign
metadata:
  name: timeout
spec:
  applyTo:
    - groups: [helm.toolkit.fluxcd.io]
      kinds: [HelmRelease]
      versions: [v2]
  location: spec.timeout
  parameters:
    assign:
      value: 10m
"""
MAP = """\
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata:
  name: add-labels
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: [kustomize.toolkit.fluxcd.io]
        apiVersions: ["*"]
        operations: [CREATE]
        resources: [kustomizations]
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: "Object{spec: Object.spec{commonMetadata: Object.spec.commonMetadata{labels: {'a': 'b'}}}}"
"""


def test_policies_that_mutate_flux_objects_and_the_fields_they_change(tmp_path):
    from .conftest import flux_ks, gotk_sync, write_tree

    write_tree(
        tmp_path,
        {
            "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
            "clusters/prod/policies.yaml": KYVERNO + "---\n" + GATEKEEPER + "---\n" + MAP,
            "clusters/prod/apps.yaml": flux_ks("web", "./apps", "postBuild:\n  substitute:\n    APP: web\n"),
            "apps/kustomization.yaml": "resources: [cm.yaml]\n",
            "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\ndata: {c: '${CLUSTER_NAME}'}\n",
        },
    )
    repo = fluxgraph.load(tmp_path)
    c, web = _ks(repo, "flux-system/web")
    by_how = {m.how: m for m in c.mutators}
    literal = by_how["Kyverno ClusterPolicy flux-defaults (rule cluster-name)"]
    assert literal.fields == frozenset({"postBuild"}) and literal.substitute == (("CLUSTER_NAME", "prod"),)
    assert by_how["Kyverno ClusterPolicy flux-defaults (rule ordering)"].fields == frozenset({"dependsOn"})
    assert by_how["Gatekeeper Assign timeout"].resources == frozenset({"helmreleases"})
    assert by_how["MutatingAdmissionPolicy add-labels"].fields == frozenset({"commonMetadata"})
    # the literal variable is substituted; dependsOn is not known
    assert [o.data["data"]["c"] for o in web.objects] == ["prod"]
    assert web.mutation("dependsOn") is not None and web.mutation("postBuild") is None


def test_a_bootstrap_step_of_the_repository_creates_the_object(tmp_path):
    """missing-substitute-from is advice where the repository's bootstrap creates the object
    before Flux: a document in a bootstrap folder no build reads, or a kubectl create in a script."""
    from .conftest import flux_ks, gotk_sync, write_tree

    subst = "postBuild:\n  substituteFrom:\n    - kind: Secret\n      name: cluster-secrets\n    - kind: ConfigMap\n      name: cluster-vars\n"
    write_tree(
        tmp_path,
        {
            "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
            "clusters/prod/apps.yaml": flux_ks("apps", "./apps", subst),
            "apps/kustomization.yaml": "resources: [cm.yaml]\n",
            "apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\ndata: {a: '${A:=a}'}\n",
            "bootstrap/resources.yaml.j2": "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-secrets\n  namespace: flux-system\nstringData:\n  A: {{ a }}\n",
            "scripts/bootstrap.sh": "#!/bin/sh\nkubectl create configmap cluster-vars -n flux-system --from-literal=B=b\n",
        },
    )
    report = analyze(tmp_path, enabled={"missing-substitute-from"})
    got = sorted((f.severity.value, f.message.split("; ")[-1]) for f in report.findings)
    assert [sev for sev, _ in got] == ["info", "info"]
    assert "bootstrap creates a ConfigMap cluster-vars before Flux runs (scripts/bootstrap.sh:2)" in got[0][1]
    assert "bootstrap creates a Secret cluster-secrets before Flux runs (bootstrap/resources.yaml.j2:" in got[1][1]


def test_bootstrap_objects_that_scripts_and_documents_apply(tmp_path):
    """kubectl apply -f/-k in a Taskfile (its variables put in, a path whose head stays unknown
    matched by its tail), a sops pipe, and a README's bootstrap steps; a URL, a file the
    repository does not have and a kubectl that does not apply are not read."""
    from .conftest import gotk_sync, write_tree

    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n  namespace: flux-system\ndata: {{a: b}}\n"
    secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {}\n  namespace: flux-system\nsops:\n  version: 3.8.1\n"
    write_tree(
        tmp_path,
        {
            "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
            "kubernetes/flux/vars/cluster-settings.yaml": cm.format("cluster-settings"),
            "kubernetes/flux/vars/cluster-secrets.sops.yaml": secret.format("cluster-secrets"),
            "kubernetes/bootstrap/kustomization.yaml": "resources: [cm.yaml]\n",
            "kubernetes/bootstrap/cm.yaml": cm.format("from-kustomize"),
            "docs/extra.yaml": cm.format("from-readme"),
            "docs/untouched.yaml": cm.format("never-applied"),
            ".taskfiles/Flux/Taskfile.yaml": (
                "version: '3'\nvars:\n"
                '  CLUSTER_SETTINGS_FILE: "{{.KUBERNETES_DIR}}/flux/vars/cluster-settings.yaml"\n'
                '  CLUSTER_SECRETS_FILE: "{{.KUBERNETES_DIR}}/flux/vars/cluster-secrets.sops.yaml"\n'
                "tasks:\n  bootstrap:\n    cmds:\n"
                "      - kubectl apply --server-side --filename {{.CLUSTER_SETTINGS_FILE}}\n"
                "      - sops --decrypt {{.CLUSTER_SECRETS_FILE}} | kubectl apply --server-side --filename -\n"
                "      - kubectl apply --server-side \\\n          --kustomize {{.KUBERNETES_DIR}}/bootstrap\n"
                "      - kubectl apply -f https://example.com/remote.yaml\n"
                "      - kubectl apply -f {{.KUBERNETES_DIR}}/missing.yaml\n"
                "      - kubectl get -f docs/untouched.yaml\n"
            ),
            "docs/README.md": "# Bootstrap\n\n```sh\nkubectl apply -f ./extra.yaml\n```\n",
            "scripts/namespaces.sh": (
                "#!/bin/sh\nkubectl create namespace external-secrets\n"
                "kubectl -n external-secrets create secret generic connect-token --from-literal=t=x\n"
                "kubectl create configmap anywhere --from-literal=a=b\n"
            ),
        },
    )
    from fluxgraph.discovery import bootstrapped

    got = {k: str(v) for k, v in fluxgraph.load(tmp_path).bootstrap_objects.items()}
    assert got == {
        ("ConfigMap", "flux-system", "cluster-settings"): ".taskfiles/Flux/Taskfile.yaml:8:1",
        ("Secret", "flux-system", "cluster-secrets"): ".taskfiles/Flux/Taskfile.yaml:9:1",
        ("ConfigMap", "flux-system", "from-kustomize"): ".taskfiles/Flux/Taskfile.yaml:10:1",
        ("ConfigMap", "flux-system", "from-readme"): "docs/README.md:4:1",
        ("Namespace", "", "external-secrets"): "scripts/namespaces.sh:2:1",
        ("Secret", "external-secrets", "connect-token"): "scripts/namespaces.sh:3:1",
        ("ConfigMap", "", "anywhere"): "scripts/namespaces.sh:4:1",
    }
    boot = fluxgraph.load(tmp_path).bootstrap_objects
    assert bootstrapped(boot, "Secret", "external-secrets", "connect-token") is not None
    assert bootstrapped(boot, "Secret", "flux-system", "connect-token") is None  # another namespace
    assert bootstrapped(boot, "ConfigMap", "default", "anywhere") is not None  # the step does not say


def test_bootstrap_paths_templated_by_cluster_match_every_cluster(tmp_path):
    """${ROOT_DIR}/kubernetes/${CLUSTER}/...: each unknown variable stands for one path segment
    (the leading one for any prefix), and every file it matches is a bootstrap object."""
    from .conftest import write_tree

    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n  namespace: flux-system\ndata: {{a: b}}\n"
    write_tree(
        tmp_path,
        {
            "kubernetes/main/flux/vars/cluster-settings.yaml": cm.format("main-settings"),
            "kubernetes/edge/flux/vars/cluster-settings.yaml": cm.format("edge-settings"),
            "kubernetes/edge/other/cluster-settings.yaml": cm.format("not-this-one"),
            "scripts/bootstrap-apps.sh": (
                '#!/usr/bin/env bash\nkubectl apply --server-side -f "${ROOT_DIR}/kubernetes/${CLUSTER}/flux/vars/cluster-settings.yaml"\n'
            ),
        },
    )
    got = {k[2] for k in bootstrap_objects_of(tmp_path)}
    assert got == {"main-settings", "edge-settings"}


def bootstrap_objects_of(path):
    from fluxgraph.discovery import bootstrap_objects
    from fluxgraph.filecache import FileCache
    from fluxgraph.repofs import RepoFS

    return bootstrap_objects(FileCache(RepoFS(path)), set())


def test_bootstrap_steps_outside_the_flux_artifact_are_read(tmp_path):
    """A .sourceignore that keeps bootstrap/ and .taskfiles/ out of Flux's artifact hides them
    from Flux, not from whoever runs them; a Taskfile include (.taskfiles/*/Tasks.yml) with the
    namespace flag between the type and the name is read."""
    from .conftest import gotk_sync, write_tree

    write_tree(
        tmp_path,
        {
            "clusters/prod/flux-system/gotk-sync.yaml": gotk_sync("prod"),
            ".sourceignore": "/bootstrap/\n/.taskfiles/\n",
            "bootstrap/resources.yaml.j2": "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: tunnel\n  namespace: network\nstringData:\n  ID: {{ id }}\n",
            ".taskfiles/Kubernetes/Tasks.yml": (
                "version: '3'\ntasks:\n  secrets:\n    cmds:\n"
                "      - kubectl create secret generic  -n flux-system cluster-secrets --from-env-file <(doppler secrets download)\n"
            ),
        },
    )
    got = {k: str(v) for k, v in fluxgraph.load(tmp_path).bootstrap_objects.items()}
    assert got == {
        ("Secret", "network", "tunnel"): "bootstrap/resources.yaml.j2:1:1",
        ("Secret", "flux-system", "cluster-secrets"): ".taskfiles/Kubernetes/Tasks.yml:5:1",
    }


def test_bootstrap_scripts_that_loop_over_listed_files_and_taskfiles_in_bootstrap_folders(tmp_path):
    """A script that applies the files of an array it loops over (the cluster-template's
    bootstrap-apps.sh) applies each listed repository file; a Taskfile inside a bootstrap
    folder is a script, not a manifest."""
    from .conftest import write_tree

    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\ndata: {{a: b}}\n"
    write_tree(
        tmp_path,
        {
            "kubernetes/main/components/common/vars/cluster-settings.yaml": cm.format("cluster-settings"),
            "scripts/bootstrap-apps.sh": (
                "#!/usr/bin/env bash\nfunction apply_config_maps() {\n    local -r configmaps=(\n"
                '        "${ROOT_DIR}/kubernetes/${CLUSTER}/components/common/vars/cluster-settings.yaml"\n    )\n'
                '    for configmap in "${configmaps[@]}"; do\n'
                '        kubectl --context ${CLUSTER} --namespace flux-system apply --server-side --filename "${configmap}"\n'
                "    done\n}\n"
            ),
            ".taskfiles/bootstrap/Taskfile.yaml": (
                "version: '3'\ntasks:\n  secrets:\n    cmds:\n"
                "      - kubectl create namespace external-secrets --dry-run=client -oyaml | kubectl apply -f -\n"
            ),
        },
    )
    got = {k: str(v) for k, v in bootstrap_objects_of(tmp_path).items()}
    assert got == {
        ("ConfigMap", "", "cluster-settings"): "scripts/bootstrap-apps.sh:4:1",
        ("Namespace", "", "external-secrets"): ".taskfiles/bootstrap/Taskfile.yaml:5:1",
    }
