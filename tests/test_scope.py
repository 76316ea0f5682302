"""Scope by API group (fluxgraph.scope): Flux's identity of an object keeps its namespace when
the kind is namespaced, drops it when the kind is cluster-scoped, whatever the kind's name."""

from __future__ import annotations

import fluxgraph
from fluxgraph.kustomize.selector import effective_namespace, kustomize_cluster_scoped
from fluxgraph.model import Location
from fluxgraph.scope import BUILTIN, CURATED, ScopeTable, crd_scope

from .test_ownership_rules import findings, kfile, ks, repo


def obj(api_version: str, kind: str, name: str, namespace: str | None = None, body: str = "spec: {}\n") -> str:
    ns = f"  namespace: {namespace}\n" if namespace else ""
    return f"apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\n{ns}{body}"


def crd(group: str, kind: str, plural: str, scope: str) -> str:
    return (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        f"metadata:\n  name: {plural}.{group}\n"
        f"spec:\n  group: {group}\n  names:\n    kind: {kind}\n    plural: {plural}\n  scope: {scope}\n"
        "  versions:\n    - name: v1\n      served: true\n      storage: true\n"
        "      schema:\n        openAPIV3Schema:\n          type: object\n"
    )


def refs(path, kind: str) -> list[tuple[str, str, str]]:
    """(owner, namespace, name) of every applied object of ``kind``, Flux's identity."""
    [cluster] = fluxgraph.load(path).clusters
    return sorted((o.owner, o.ref.namespace, o.ref.name) for o in cluster.objects() if o.ref.kind == kind)


def two_kustomizations(tmp_path, a: str, b: str):
    return repo(
        tmp_path,
        {
            "clusters/test/a.yaml": ks("a", "./a"),
            "clusters/test/b.yaml": ks("b", "./b"),
            "a/kustomization.yaml": kfile("o.yaml"),
            "a/o.yaml": a,
            "b/kustomization.yaml": kfile("o.yaml"),
            "b/o.yaml": b,
        },
    )


# -- the issue: CloudNativePG's Cluster is namespaced ----------------------------------------


def test_cnpg_clusters_in_two_namespaces_are_two_objects(tmp_path):
    path = two_kustomizations(
        tmp_path,
        obj("postgresql.cnpg.io/v1", "Cluster", "db", "one"),
        obj("postgresql.cnpg.io/v1", "Cluster", "db", "two"),
    )
    assert refs(path, "Cluster") == [("flux-system/a", "one", "db"), ("flux-system/b", "two", "db")]
    assert findings(path, "object-applied-twice") == []


def test_cnpg_cluster_same_namespace_twice_is_applied_twice(tmp_path):
    path = two_kustomizations(
        tmp_path,
        obj("postgresql.cnpg.io/v1", "Cluster", "db", "one"),
        obj("postgresql.cnpg.io/v1", "Cluster", "db", "one"),
    )
    [f] = findings(path, "object-applied-twice")
    assert "Cluster/one/db is applied by 2 Kustomizations" in f.message


def test_cert_manager_cluster_issuer_is_cluster_scoped(tmp_path):
    path = two_kustomizations(
        tmp_path,
        obj("cert-manager.io/v1", "ClusterIssuer", "letsencrypt", "one"),
        obj("cert-manager.io/v1", "ClusterIssuer", "letsencrypt", "two"),
    )
    assert refs(path, "ClusterIssuer") == [("flux-system/a", "", "letsencrypt"), ("flux-system/b", "", "letsencrypt")]
    [f] = findings(path, "object-applied-twice")
    assert "ClusterIssuer/letsencrypt is applied by 2 Kustomizations" in f.message


def test_unknown_cluster_prefixed_kind_is_namespaced(tmp_path):
    path = two_kustomizations(
        tmp_path,
        obj("foo.example.org/v1", "ClusterFoo", "x", "one"),
        obj("foo.example.org/v1", "ClusterFoo", "x", "two"),
    )
    assert refs(path, "ClusterFoo") == [("flux-system/a", "one", "x"), ("flux-system/b", "two", "x")]
    [cluster] = fluxgraph.load(path).clusters
    scope = cluster.scope_of(next(o.ref for o in cluster.objects() if o.ref.kind == "ClusterFoo"))
    assert scope.namespaced and not scope.known and scope.source == "unknown"


def test_gateway_class_cluster_scoped_gateway_namespaced(tmp_path):
    path = two_kustomizations(
        tmp_path,
        obj("gateway.networking.k8s.io/v1", "GatewayClass", "envoy", "network"),
        obj("gateway.networking.k8s.io/v1", "Gateway", "external", "network"),
    )
    assert refs(path, "GatewayClass") == [("flux-system/a", "", "envoy")]
    assert refs(path, "Gateway") == [("flux-system/b", "network", "external")]


def test_admission_webhooks_are_cluster_scoped(tmp_path):
    hook = "webhooks: []\n"
    path = two_kustomizations(
        tmp_path,
        obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "v", "one", hook),
        obj("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "m", "two", hook),
    )
    assert refs(path, "ValidatingWebhookConfiguration") == [("flux-system/a", "", "v")]
    assert refs(path, "MutatingWebhookConfiguration") == [("flux-system/b", "", "m")]


def test_flux_kinds_are_known_namespaced():
    table = ScopeTable()
    for group, kind in (
        ("kustomize.toolkit.fluxcd.io", "Kustomization"),
        ("helm.toolkit.fluxcd.io", "HelmRelease"),
        ("source.toolkit.fluxcd.io", "GitRepository"),
        ("source.toolkit.fluxcd.io", "OCIRepository"),
        ("source.toolkit.fluxcd.io", "HelmRepository"),
        ("notification.toolkit.fluxcd.io", "Alert"),
        ("image.toolkit.fluxcd.io", "ImageUpdateAutomation"),
        ("fluxcd.controlplane.io", "ResourceSet"),
    ):
        s = table.scope(group, kind)
        assert s.known and s.namespaced, (group, kind)


def test_flux_kustomization_in_two_namespaces_keeps_them(tmp_path):
    path = two_kustomizations(tmp_path, ks("app", "./x", namespace="one"), ks("app", "./x", namespace="two"))
    assert [r for r in refs(path, "Kustomization") if r[2] == "app"] == [
        ("flux-system/a", "one", "app"),
        ("flux-system/b", "two", "app"),
    ]


def test_scope_is_by_group_not_by_kind_name():
    table = ScopeTable()
    assert not table.scope("postgresql.cnpg.io", "Cluster").cluster_scoped
    assert not table.scope("cluster.x-k8s.io", "Cluster").cluster_scoped
    assert not table.scope("addons.cluster.x-k8s.io", "ClusterResourceSet").cluster_scoped
    assert table.scope("cilium.io", "CiliumLoadBalancerIPPool").cluster_scoped
    assert table.scope("external-secrets.io", "ClusterSecretStore").cluster_scoped
    assert table.scope("kyverno.io", "ClusterPolicy").cluster_scoped
    assert not table.scope("kyverno.io", "Policy").cluster_scoped
    # the same kind name in another group is another kind
    assert table.scope("rbac.authorization.k8s.io", "ClusterRole").cluster_scoped
    assert not table.scope("example.com", "ClusterRole").known


def test_builtin_and_curated_tables_do_not_overlap():
    assert not set(BUILTIN) & set(CURATED)


# -- CRDs in the repository decide -----------------------------------------------------------


def test_repository_crd_decides_scope_both_ways(tmp_path):
    files = {
        "clusters/test/crds.yaml": ks("crds", "./crds"),
        "clusters/test/app.yaml": ks("app", "./app"),
        "crds/kustomization.yaml": kfile("widget.yaml", "gadget.yaml"),
        "crds/widget.yaml": crd("example.com", "Widget", "widgets", "Cluster"),
        "crds/gadget.yaml": crd("example.com", "ClusterGadget", "clustergadgets", "Namespaced"),
        "app/kustomization.yaml": kfile("o.yaml"),
        "app/o.yaml": obj("example.com/v1", "Widget", "w", "team")
        + "---\n"
        + obj("example.com/v1", "ClusterGadget", "g", "team"),
    }
    path = repo(tmp_path, files)
    assert refs(path, "Widget") == [("flux-system/app", "", "w")]
    assert refs(path, "ClusterGadget") == [("flux-system/app", "team", "g")]
    [cluster] = fluxgraph.load(path).clusters
    s = cluster.scopes.scope("example.com", "Widget")
    assert s.known and s.cluster_scoped and "crds/widget.yaml" in s.source


def test_crd_file_the_walk_never_applies_still_decides(tmp_path):
    # a chart's crds/ directory, installed by helm-controller, not by a Kustomization
    files = {
        "clusters/test/app.yaml": ks("app", "./app"),
        "charts/widget/crds/widgets.yaml": crd("example.com", "Widget", "widgets", "Cluster"),
        "app/kustomization.yaml": kfile("o.yaml"),
        "app/o.yaml": obj("example.com/v1", "Widget", "w", "team"),
    }
    assert refs(repo(tmp_path, files), "Widget") == [("flux-system/app", "", "w")]


def test_crd_applied_by_a_later_kustomization_decides_earlier_objects(tmp_path):
    # The CRD's scope is only known after postBuild substitution (no file says it), and its
    # Kustomization is walked after the one applying the custom resource (it is a grandchild
    # of the root, the object's Kustomization a child).
    subst = "postBuild:\n  substitute:\n    CRD_SCOPE: Cluster\n"
    files = {
        "clusters/test/app.yaml": ks("app", "./app"),
        "clusters/test/infra.yaml": ks("infra", "./infra"),
        "infra/kustomization.yaml": kfile("crds.yaml"),
        "infra/crds.yaml": ks("crds", "./crds", subst),
        "crds/kustomization.yaml": kfile("widget.yaml"),
        "crds/widget.yaml": crd("example.com", "Widget", "widgets", "${CRD_SCOPE}"),
        "app/kustomization.yaml": kfile("o.yaml"),
        "app/o.yaml": obj("example.com/v1", "Widget", "w", "team"),
    }
    path = repo(tmp_path, files)
    [cluster] = fluxgraph.load(path).clusters
    order = list(cluster.kustomizations)
    assert order.index("flux-system/app") < order.index("flux-system/crds")
    assert refs(path, "Widget") == [("flux-system/app", "", "w")]


def test_applied_crd_wins_over_a_file_and_the_curated_table(tmp_path):
    table = ScopeTable()
    table.learn_crd(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "clusterissuers.cert-manager.io"},
            "spec": {"group": "cert-manager.io", "names": {"kind": "ClusterIssuer"}, "scope": "Namespaced"},
        },
        Location("crds/ci.yaml", 1),
        "flux-system/crds",
    )
    s = table.scope("cert-manager.io", "ClusterIssuer")
    assert s.namespaced and "applied by Kustomization flux-system/crds" in s.source


def test_conflicting_crd_files_decide_nothing(tmp_path):
    files = {
        "clusters/test/app.yaml": ks("app", "./app"),
        "vendor/a/widgets.yaml": crd("example.com", "Widget", "widgets", "Cluster"),
        "vendor/b/widgets.yaml": crd("example.com", "Widget", "widgets", "Namespaced"),
        "app/kustomization.yaml": kfile("o.yaml"),
        "app/o.yaml": obj("example.com/v1", "Widget", "w", "team"),
    }
    path = repo(tmp_path, files)
    assert refs(path, "Widget") == [("flux-system/app", "team", "w")]
    [cluster] = fluxgraph.load(path).clusters
    assert not cluster.scopes.scope("example.com", "Widget").known


def test_crd_scope_reads_only_plain_crds():
    base = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "spec": {"group": "example.com", "names": {"kind": "Widget"}, "scope": "Cluster"},
    }
    assert crd_scope(base) == ("example.com", "Widget", True)
    assert crd_scope({**base, "apiVersion": "example.com/v1"}) is None
    assert crd_scope({**base, "spec": {**base["spec"], "scope": "cluster"}}) is None
    assert crd_scope({**base, "spec": {**base["spec"], "group": "${GROUP}"}}) is None
    assert crd_scope({**base, "spec": "x"}) is None


# -- kustomize's own view (build time) is another question ------------------------------------


def test_kustomize_knows_cluster_scope_by_exact_api_version():
    assert kustomize_cluster_scoped("rbac.authorization.k8s.io/v1", "ClusterRole")
    assert kustomize_cluster_scoped("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
    # not in the v1.21.2 schema kustomize embeds: namespaceable to kustomize
    assert not kustomize_cluster_scoped("flowcontrol.apiserver.k8s.io/v1", "FlowSchema")
    assert not kustomize_cluster_scoped("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy")
    assert not kustomize_cluster_scoped("cert-manager.io/v1", "ClusterIssuer")
    assert not kustomize_cluster_scoped("authentication.k8s.io/v1", "TokenReview")
    assert effective_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}) == "_non_namespaceable_"
    assert effective_namespace({"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer", "metadata": {}}) == "default"


def test_namespace_transformer_then_api_server(tmp_path):
    """kustomize's ``namespace:`` sets the namespace on every kind its schema does not know as
    cluster-scoped (a ClusterIssuer, a flowcontrol v1 FlowSchema); the API server clears it
    again for a cluster-scoped kind, so Flux's identity has none."""
    files = {
        "clusters/test/app.yaml": ks("app", "./app"),
        "app/kustomization.yaml": kfile("o.yaml", namespace="team"),
        "app/o.yaml": "---\n".join(
            (
                obj("cert-manager.io/v1", "ClusterIssuer", "ca"),
                obj("flowcontrol.apiserver.k8s.io/v1", "FlowSchema", "fs"),
                obj("rbac.authorization.k8s.io/v1", "ClusterRole", "reader", body="rules: []\n"),
                obj("postgresql.cnpg.io/v1", "Cluster", "db"),
            )
        ),
    }
    path = repo(tmp_path, files)
    [cluster] = fluxgraph.load(path).clusters
    built = {o.ref.kind: (o.resource.namespace, o.ref.namespace) for o in cluster.objects() if o.owner == "flux-system/app"}
    assert built == {
        "ClusterIssuer": ("team", ""),
        "FlowSchema": ("team", ""),
        "ClusterRole": ("", ""),
        "Cluster": ("team", "team"),
    }


# -- rules whose verdict rests on an unknown kind being namespaced say so ---------------------

FOO = obj("foo.example.org/v1", "ClusterFoo", "x", "team")
ISSUER = obj("cert-manager.io/v1", "ClusterIssuer", "ca", "team")


def _prerequisite(tmp_path, *docs: str):
    files = {
        "clusters/test/ns.yaml": ks("ns", "./ns"),
        "clusters/test/app.yaml": ks("app", "./app"),
        "ns/kustomization.yaml": kfile("ns.yaml"),
        "ns/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n",
        "app/kustomization.yaml": kfile("o.yaml"),
        "app/o.yaml": "---\n".join(docs),
    }
    return findings(repo(tmp_path, files), "prerequisite-without-depends-on")


def test_prerequisite_namespace_of_an_unknown_kind_says_it_is_a_guess(tmp_path):
    [f] = _prerequisite(tmp_path, FOO)
    assert "applies ClusterFoo/team/x" in f.message
    assert "ClusterFoo.foo.example.org is a kind fluxgraph does not know" in f.message


def test_prerequisite_prefers_an_object_known_to_be_namespaced(tmp_path):
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team\ndata: {}\n"
    [f] = _prerequisite(tmp_path, FOO, cm)
    assert "applies ConfigMap/team/settings" in f.message and "does not know" not in f.message


def test_cluster_scoped_custom_kind_needs_no_namespace(tmp_path):
    assert _prerequisite(tmp_path, ISSUER) == []


def _shared(tmp_path, doc: str):
    files = {
        "clusters/test/ns.yaml": ks("ns", "./ns"),
        "clusters/test/app.yaml": ks("app", "./app", "dependsOn:\n  - name: ns"),
        "ns/kustomization.yaml": kfile("ns.yaml"),
        "ns/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n",
        "app/kustomization.yaml": kfile("o.yaml"),
        "app/o.yaml": doc,
    }
    return findings(repo(tmp_path, files), "prunable-shared-namespace")


def test_shared_namespace_held_only_by_an_unknown_kind_says_it_is_a_guess(tmp_path):
    [f] = _shared(tmp_path, FOO)
    assert "it also holds Kustomization flux-system/app" in f.message
    assert f.message.endswith(
        "ClusterFoo.foo.example.org is a kind fluxgraph does not know (no CustomResourceDefinition for it in "
        "the repository): it is taken as namespaced, as kustomize does"
    )


def test_cluster_scoped_custom_kind_does_not_share_the_namespace(tmp_path):
    assert _shared(tmp_path, ISSUER) == []


def test_renamed_namespace_claim_by_an_unknown_kind_says_it_is_a_guess(tmp_path):
    files = {
        "clusters/test/app.yaml": ks("app", "./app"),
        "clusters/test/other.yaml": ks("other", "./other"),
        "app/kustomization.yaml": kfile("ns.yaml", namespace="team"),
        "app/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: app\n",
        "other/kustomization.yaml": kfile("o.yaml"),
        "other/o.yaml": FOO,
    }
    [f] = findings(repo(tmp_path, files), "renamed-namespace")
    assert "Kustomization flux-system/other has objects there (ClusterFoo.foo.example.org is a kind" in f.message


def test_repository_crds_parse_only_files_that_can_define_the_kind(tmp_path):
    files = {
        "clusters/test/app.yaml": ks("app", "./app"),
        "vendor/widgets.yaml": crd("example.com", "Widget", "widgets", "Cluster"),
        "vendor/gadgets.yaml": crd("example.com", "Gadget", "gadgets", "Cluster"),
        "app/kustomization.yaml": kfile("o.yaml"),
        "app/o.yaml": obj("example.com/v1", "Widget", "w", "team"),
    }
    [cluster] = fluxgraph.load(repo(tmp_path, files)).clusters
    assert cluster.scopes.repo_crds is not None
    assert cluster.scopes.repo_crds._parsed == {"vendor/widgets.yaml"}
    assert cluster.scopes.scope("example.com", "Gadget").cluster_scoped
    assert cluster.scopes.repo_crds._parsed == {"vendor/widgets.yaml", "vendor/gadgets.yaml"}


def test_namespace_not_specified_on_an_unknown_cluster_named_kind_is_advice(tmp_path):
    """An unknown kind is taken as namespaced (as kustomize does); where its name follows the
    convention of cluster-scoped kinds (ClusterRole, ClusterIssuer), that it lacks a namespace
    is advice, not a warning; OLM's ClusterServiceVersion is known to be namespaced."""
    path = two_kustomizations(
        tmp_path,
        obj("foo.example.org/v1", "ClusterRepository", "nas"),
        obj("foo.example.org/v1", "Repository", "nas"),
    )
    got = {f.obj.kind: (f.severity.value, f.message) for f in findings(path, "namespace-not-specified")}
    assert got["ClusterRepository"][0] == "info" and "convention of cluster-scoped kinds" in got["ClusterRepository"][1]
    assert got["Repository"][0] == "warning"
    csv = two_kustomizations(
        tmp_path / "olm", obj("operators.coreos.com/v1alpha1", "ClusterServiceVersion", "op"), obj("v1", "ConfigMap", "c", "x")
    )
    [f] = findings(csv, "namespace-not-specified")
    assert f.severity.value == "error"  # known to be namespaced: the API server refuses it
