"""Property tests: random bytes, random YAML-shaped documents and random Flux specs through the
loader, the Flux model and a whole ``load`` + checks + every report format. No exception
escapes (other than ``FluxgraphError`` when nothing can be analysed), and every finding and
problem has a file and a 1-based line."""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from fluxgraph import flux, yamlio
from fluxgraph.api import load
from fluxgraph.engine import run_checks
from fluxgraph.export import to_json, to_text
from fluxgraph.kustomize.resource import Origin, Resource
from fluxgraph.model import FluxgraphError
from fluxgraph.render.formats import FORMATS

from .conftest import assert_located, configmap, flux_ks, make_repo

SETTINGS = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["./apps", "../..", "/etc", "${X}", "$${X}", "ConfigMap", "Secret", "GitRepository", "flux-system",
                     "app.yaml", "..", ".", "a=b", "https://example.com/x", "[", "default", "10m", "true", "~"]),
)
values = st.recursive(
    scalars,
    lambda c: st.one_of(
        st.lists(c, max_size=4),
        st.dictionaries(st.text(max_size=8) | st.sampled_from(["name", "kind", "namespace", "path", "patch", "target"]), c, max_size=4),
    ),
    max_leaves=12,
)
SPEC_KEYS = ["path", "sourceRef", "dependsOn", "prune", "wait", "interval", "timeout", "retryInterval", "targetNamespace",
             "postBuild", "suspend", "deletionPolicy", "healthChecks", "patches", "images", "components", "namePrefix",
             "nameSuffix", "commonMetadata", "decryption", "serviceAccountName", "force"]
KUSTOMIZE_KEYS = ["bases", "components", "configurations", "namespace", "namePrefix", "nameSuffix", "commonLabels", "labels",
                  "commonAnnotations", "images", "replicas", "patches", "patchesStrategicMerge", "patchesJson6902",
                  "configMapGenerator", "secretGenerator", "generatorOptions", "replacements", "helmCharts", "generators",
                  "transformers", "kind", "apiVersion", "openapi", "crds", "vars", "sortOptions", "buildMetadata"]

good_metadata = st.fixed_dictionaries({"name": st.sampled_from(["x", "apps", "flux-system"]), "namespace": st.just("flux-system")})
metadata = st.one_of(good_metadata, good_metadata, values, st.fixed_dictionaries({"name": values, "namespace": values}))
good_spec = st.fixed_dictionaries(
    {"path": st.sampled_from(["./apps", "./infra", "apps", "../apps", "/apps"]),
     "sourceRef": st.just({"kind": "GitRepository", "name": "flux-system"})},
    optional={k: values for k in ("dependsOn", "prune", "postBuild", "patches", "images", "components", "targetNamespace",
                                  "namePrefix", "commonMetadata", "interval", "timeout")},
)
flux_spec = st.one_of(good_spec, good_spec, st.dictionaries(st.sampled_from(SPEC_KEYS), values, max_size=6), values)
kustomization = st.builds(
    lambda extra: {"resources": ["app.yaml"], **extra},
    st.dictionaries(st.sampled_from(KUSTOMIZE_KEYS), st.one_of(scalars, values), max_size=3),
)
extra_object = st.one_of(
    values,
    st.fixed_dictionaries(
        {"apiVersion": st.just("v1"), "kind": st.just("ConfigMap"), "metadata": st.just({"name": "extra", "namespace": "default"})},
        optional={"data": values, "spec": values},
    ),
)


def dump(obj: Any) -> str:
    y = YAML(typ="safe", pure=True)
    y.default_flow_style = False
    buf = io.StringIO()
    y.dump(obj, buf)
    return buf.getvalue()


@SETTINGS
@given(st.binary(max_size=2000))
def test_loader_on_random_bytes(data):
    res = yamlio.load_documents("f.yaml", data)
    for e in res.errors:
        assert e.line >= 1 and e.column >= 1 and e.message
    for d in res.documents:
        assert d.line >= 1


yamlish = st.lists(
    st.sampled_from(["a", ": ", "- ", "\n", "  ", "\t", "[", "]", "{", "}", ",", "'", '"', "&x ", "*x", "<<: ", "? ", "---\n",
                     "...\n", "#", "|", ">", "!!str ", "!t ", "1", "null", "~", "%YAML 1.2\n", "\\", "\x00", "é", "\ufeff"]),
    max_size=60,
).map("".join)


@SETTINGS
@given(yamlish)
def test_loader_on_yaml_shaped_text(text):
    res = yamlio.load_documents("f.yaml", text.encode("utf-8", "surrogatepass"))
    for e in res.errors:
        assert e.line >= 1 and e.column >= 1
    for d in res.documents:
        d.position(("a", 0, "b"))
        d.text_position(("a",), 3)


@SETTINGS
@given(values)
def test_loader_round_trips_plain_data(value):
    res = yamlio.load_documents("f.yaml", dump(value).encode())
    assert not res.errors or all(e.line >= 1 for e in res.errors)


@SETTINGS
@given(metadata, flux_spec, st.sampled_from(["Kustomization", "HelmRelease"]), st.sampled_from(["v1", "v1beta2", "v9"]))
def test_flux_model_on_random_objects(md, spec, kind, version):
    group = "kustomize.toolkit.fluxcd.io" if kind == "Kustomization" else "helm.toolkit.fluxcd.io"
    text = dump({"apiVersion": f"{group}/{version}", "kind": kind, "metadata": md, "spec": spec})
    docs = yamlio.load_documents("f.yaml", text.encode()).documents
    assume(len(docs) == 1)  # ruamel's emitter writes a few plain scalars libyaml refuses (`{0?: x}`)
    [doc] = docs
    res = Resource(doc.data, Origin("f.yaml", doc.line), doc)
    problems: list = []
    parsed = flux.parse_kustomization(res, problems) if kind == "Kustomization" else flux.parse_helmrelease(res, problems)
    assert_located(problems)
    if parsed is not None:
        assert isinstance(parsed.name, str) and parsed.name and isinstance(parsed.namespace, str)
    if isinstance(parsed, flux.FluxKustomization):
        assert isinstance(parsed.path, str)
        assert all(isinstance(p, dict) and isinstance(p.get("patch"), str) for p in parsed.patches)
        assert all(isinstance(c, str) for c in parsed.components)
        assert all(isinstance(v, str) for _k, v in (parsed.post_build.substitute if parsed.post_build else ()))


def _run_everything(path: Path) -> None:
    try:
        repo = load(path)
    except FluxgraphError:
        return
    report = run_checks(repo)
    for f in report.findings:
        assert f.location.file and f.location.line >= 1, f
    for c in repo.clusters:
        assert_located(list(c.problems) + [p for ks in c.kustomizations.values() for p in ks.problems])
    json.dumps(to_json(repo.clusters))
    to_text(repo.clusters)
    for fmt in FORMATS.values():
        fmt(report, False)


@settings(SETTINGS, max_examples=60)
@given(metadata, flux_spec, kustomization, extra_object)
def test_whole_pipeline_on_random_repositories(md, spec, kust, extra):
    root = Path(tempfile.mkdtemp(prefix="fluxgraph-prop-"))
    try:
        make_repo(
            root,
            {
                "clusters/prod/random.yaml": dump({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "metadata": md, "spec": spec}),
                "apps/kustomization.yaml": dump(kust),
                "apps/extra.yaml": dump(extra),
                "clusters/prod/other.yaml": flux_ks("other", "./other"),
                "other/kustomization.yaml": dump({**kust, "resources": ["cm.yaml"]}),
                "other/cm.yaml": configmap("other"),
            },
        )
        _run_everything(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
