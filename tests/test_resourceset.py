"""Flux Operator ResourceSets (issue 23, part 3): the objects they generate join the graph
(fixtures/repos/resourceset, a fleet of this repository's own; d2-fleet on the wide corpus)."""

from __future__ import annotations

import pytest

import fluxgraph
from fluxgraph import resourceset
from fluxgraph.engine import analyze
from fluxgraph.resourceset import NotEvaluated, TemplateError, input_sets, normalize_key, render

from .conftest import FIXTURES

FLEET = FIXTURES / "repos" / "resourceset"


@pytest.fixture(scope="module")
def lab():
    [c] = fluxgraph.load(FLEET).clusters
    return c


def test_the_generated_kustomizations_are_walked(lab):
    assert sorted(lab.kustomizations) == ["flux-system/flux-system", "flux-system/tenants", "team-a/apps", "team-b/apps"]
    a = lab.kustomizations["team-a/apps"]
    assert (a.spec.path, a.spec.target_namespace, a.parent, a.status) == ("./apps/team-a", "team-a", "flux-system/tenants", "built")
    assert a.declared_at is not None and a.declared_at.file == "tenants/teams.yaml"
    # the parent's postBuild substituted the ResourceSet before the operator renders it
    cm = next(o for o in lab.objects() if o.ref.kind == "ConfigMap" and o.ref.name == "team-settings" and o.ref.namespace == "team-b")
    assert cm.data["data"] == {"environment": "lab", "owner": "TEAM-B"}
    assert cm.resource.origin.generated_by == "ResourceSet flux-system/teams"
    # and the generated Kustomization substitutes its own objects
    [deploy] = a.objects
    assert deploy.data["spec"]["replicas"] == 3


def test_permute_scopes_each_provider_and_static_providers_give_their_defaults(lab):
    names = sorted(o.ref.name for o in lab.objects() if o.ref.kind == "ConfigMap" and o.ref.name.endswith("eu-west-1"))
    assert names == ["api-eu-west-1", "web-eu-west-1"]


def test_if_range_variables_and_sprig_functions_render(lab):
    """tenants/conditional.yaml: if/else, range $v := ..., printf, get | default | quote."""
    got = sorted((o.ref.name, o.data["data"]["capacity"]) for o in lab.objects() if o.ref.name.startswith("backups-"))
    assert got == [("backups-notes", "1Gi"), ("backups-photos", "50Gi")]


def test_what_cannot_be_rendered_is_not_evaluated_with_why():
    report = analyze(FLEET)
    assert [f.rule for f in report.findings if f.severity.value == "error"] == []
    why = sorted(p.message for p in report.not_evaluated if p.code == "not-evaluated-resourceset")
    assert len(why) == 2
    assert "ResourceSet flux-system/previews" in why[0] and "GitHubPullRequest" in why[0]
    assert "ResourceSet flux-system/unrendered" in why[1] and "'toYaml'" in why[1]


def test_a_rendered_plain_scalar_is_read_back_as_yaml():
    """The operator renders the YAML form of a resource and reads it back: an unquoted
    ``<< inputs.n >>`` that renders ``3`` is the number 3 (a string field then fails the
    apply), ``| quote`` keeps it a string."""
    rset = {
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {
            "inputs": [{"n": 3, "on": True}],
            "resources": [{"kind": "ConfigMap", "data": {"a": "<< inputs.n >>", "b": "<< inputs.n | quote >>", "c": "x-<< inputs.on >>"}}],
        },
    }
    [obj] = resourceset.build(rset, {})
    assert obj["data"] == {"a": 3, "b": "3", "c": "x-true"}


def test_inputs_get_their_provider_and_flatten_appends():
    rset = {"apiVersion": "fluxcd.controlplane.io/v1", "metadata": {"name": "r", "namespace": "ns"}, "spec": {"inputs": [{"a": 1}, {"a": 2}]}}
    sets = input_sets(rset, {})
    assert [s["a"] for s in sets] == [1, 2]
    assert sets[0]["provider"] == {"apiVersion": "fluxcd.controlplane.io/v1", "kind": "ResourceSet", "name": "r", "namespace": "ns"}


def test_the_template_subset():
    assert render("<<- inputs.a ->>  b", {"a": "x"}) == "xb"
    assert render('<< inputs.a | default "d" >>', {"a": ""}) == "d"
    assert render("<< inputs.n >>/<< inputs.big >>", {"n": 2.5, "big": 1000000}) == "2.5/1e+06"
    with pytest.raises(TemplateError, match='no entry for key "b"'):
        render("<< inputs.b >>", {"a": 1})  # missingkey=error
    for unsupported in ("<< with inputs.l >><< end >>", "<< inputs.a | sha256sum >>", '<< printf "%x" 1 >>', "<< toYaml inputs.l >>"):
        with pytest.raises(NotEvaluated):
            render(unsupported, {"a": "x", "l": []})
    # the control structures and variables text/template has
    t = "<<- range $i, $v := inputs.l >>[<< $i >>=<< $v >>]<<- else >>none<<- end >>"
    assert render(t, {"l": ["a", "b"]}) == "[0=a][1=b]" and render(t, {"l": []}) == "none"
    assert render("<< range $k, $v := inputs.m >><< $k >><< $v >>,<< end >>", {"m": {"b": 2, "a": 1}}) == "a1,b2,"
    assert render("<< if eq inputs.a \"x\" >>yes<< else if inputs.b >>b<< else >>no<< end >>", {"a": "y", "b": 1}) == "b"
    assert render("<< $n := inputs.a >><< range inputs.l >><< . >>-<< $n >> << end >>", {"a": "x", "l": [1, 2]}) == "1-x 2-x "
    assert render('<< dig "k" "d" inputs >>/<< dig "z" "d" inputs >>', {"k": "v"}) == "v/d"
    with pytest.raises(TemplateError, match="no end"):
        render("<< if inputs.a >>x", {"a": 1})
    assert normalize_key("My Provider.Name") == "my_provider_name"


@pytest.mark.corpus_wide
def test_d2_fleet_shows_what_its_resource_sets_generate():
    from .conftest import CORPUS

    repo = CORPUS.parent / "corpus-wide" / "controlplaneio-fluxcd__d2-fleet"
    if not repo.is_dir():
        pytest.skip("the wide corpus is absent")
    clusters = {c.name: c for c in fluxgraph.load(repo).clusters}
    staging = clusters["clusters/staging"]
    assert {"cert-manager/infra-controllers", "cert-manager/infra-configs", "monitoring/infra-controllers", "backend/apps", "frontend/apps"} <= set(staging.kustomizations)
    ks = staging.kustomizations["cert-manager/infra-configs"]
    assert ks.spec.path == "./configs/staging" and [str(d) for d in ks.spec.depends_on] == ["cert-manager/infra-controllers"]


@pytest.mark.parametrize(
    "spec",
    [
        {"inputs": [{"a": "x: [y"}], "resourcesTemplate": "a: << inputs.a >>\n"},
        {"inputs": [{"a": 1}], "resources": [{"k": "<< " + "(" * 3000 + "inputs.a" + ")" * 3000 + " >>"}]},
        {"inputs": [{"a": 1}], "resources": [{"k": '<< "\\x" >>'}]},
        {"inputStrategy": {"name": "Bogus"}},
        {"steps": [{"name": "a"}], "resources": [{}]},
        {"inputs": [{"a": 1}], "resources": [{"k": "<< inputs.a.b >>"}]},
        {"inputs": [{"a": 1}], "resources": [{"k": "<< >>"}]},
        {"inputs": [{"a": 1}], "resources": [{"k": "<< inputs.a | >>"}]},
    ],
)
def test_hostile_resource_sets_are_reported_never_raised(spec):
    with pytest.raises((NotEvaluated, TemplateError)):
        resourceset.build({"metadata": {"name": "r", "namespace": "ns"}, "spec": spec}, {})


def test_what_the_operator_applies_is_the_resource_sets(lab):
    """flux-operator applies, copies into and prunes what a ResourceSet generates: a copyFrom
    ConfigMap holds its source's values; the Kustomization's prune and revision rules leave the
    generated objects to the ResourceSet."""
    a = lab.kustomizations["team-a/apps"]
    assert (a.variables.get("CLUSTER"), a.variable_origin.get("CLUSTER")) == ("lab", "ConfigMap/team-a/runtime-info")
    generated = [o for o in lab.objects() if o.operator_applied == "ResourceSet flux-system/teams"]
    assert {o.ref.kind for o in generated} == {"Namespace", "ConfigMap", "Kustomization"}
    rules = {f.rule for f in analyze(FLEET).findings}
    # the generated Namespaces are pruned by flux-operator, the copy is not a value of the revision
    assert "prunable-shared-namespace" not in rules and "substitute-from-race" not in rules
