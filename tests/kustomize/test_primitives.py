"""Tests for the kustomize primitives: SMP, JSON 6902, selectors, generators, name references.

Table tests run everywhere; the comparison tests build small kustomization directories and
check the result against ``kubectl kustomize`` (kustomize v5.5), and are skipped when
kubectl is not installed.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from fluxgraph.kustomize import generators, json6902, namereference, selector, smp
from fluxgraph.kustomize.errors import KustomizeError
from fluxgraph.kustomize.generators import (
    apply_hash_suffix,
    configmap_from_args,
    generator_behavior,
    merge_generated,
    merged_options,
    name_hash,
    needs_hash,
    secret_from_args,
)
from fluxgraph.kustomize.json6902 import apply_json6902
from fluxgraph.kustomize.namereference import parse_name_reference_config, rewrite_references
from fluxgraph.kustomize.selector import matches, parse_label_selector
from fluxgraph.kustomize.smp import apply_smp, merge_strategy, smp_is_delete

KUBECTL = shutil.which("kubectl")
def needs_kubectl(f):
    """A comparison with kubectl's kustomize: the ``kubectl`` tier, skipped where it is absent."""
    return pytest.mark.kubectl(pytest.mark.skipif(KUBECTL is None, reason="kubectl (with embedded kustomize) not installed")(f))

_yaml = YAML(typ="safe")


class BuildFailed(Exception):
    pass


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)
    return root


def kustomize_build(root: Path) -> list[dict[str, Any]]:
    assert KUBECTL is not None
    p = subprocess.run(
        [KUBECTL, "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if p.returncode:
        raise BuildFailed(p.stderr)
    return [d for d in _yaml.load_all(p.stdout) if d is not None]


def dump(obj: Any) -> str:
    return json.dumps(obj)


def by_id(docs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


DEPLOY = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {
        "replicas": 1,
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "app:1",
                        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                        "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}],
                    },
                    {"name": "sidecar", "image": "side:1"},
                ],
                "tolerations": [{"key": "k1", "operator": "Exists"}],
                "volumes": [{"name": "v1", "emptyDir": {}}],
            }
        },
    },
}


# ======================================================================================
# strategic merge patch


def test_smp_containers_merge_by_name_patch_order_first() -> None:
    patch = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "template": {"spec": {"containers": [{"name": "sidecar", "image": "side:2"}, {"name": "new"}]}}
        },
    }
    out = apply_smp(DEPLOY, patch)
    assert out is not None
    names = [c["name"] for c in out["spec"]["template"]["spec"]["containers"]]
    assert names == ["sidecar", "new", "app"]  # kyaml prepends the patch's elements
    assert out["spec"]["template"]["spec"]["containers"][0]["image"] == "side:2"
    assert out["spec"]["template"]["spec"]["containers"][2]["image"] == "app:1"


def test_smp_env_merge_and_element_delete() -> None:
    patch = {
        "kind": "Deployment",
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "env": [{"name": "B", "$patch": "delete"}, {"name": "C", "value": "3"}],
                        }
                    ]
                }
            }
        },
    }
    out = apply_smp(DEPLOY, patch)
    assert out is not None
    env = out["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "C", "value": "3"}, {"name": "A", "value": "1"}]


def test_smp_null_deletes_and_lists_without_strategy_are_replaced() -> None:
    patch = {
        "metadata": {"labels": {"app": None, "new": "x"}},
        "spec": {"replicas": None, "template": {"spec": {"tolerations": [{"key": "k2"}]}}},
    }
    out = apply_smp(DEPLOY, patch)
    assert out is not None
    assert out["metadata"]["labels"] == {"new": "x"}
    assert "replicas" not in out["spec"]
    assert out["spec"]["template"]["spec"]["tolerations"] == [{"key": "k2"}]


def test_smp_directives() -> None:
    # list-level replace
    out = apply_smp(
        DEPLOY, {"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, {"name": "only"}]}}}}
    )
    assert out is not None and out["spec"]["template"]["spec"]["containers"] == [{"name": "only"}]
    # list-level delete removes the field
    out = apply_smp(DEPLOY, {"spec": {"template": {"spec": {"containers": [{"$patch": "delete"}]}}}})
    assert out is not None and "containers" not in out["spec"]["template"]["spec"]
    # map-level replace / delete
    out = apply_smp(DEPLOY, {"spec": {"template": {"$patch": "replace", "metadata": {"labels": {"a": "b"}}}}})
    assert out is not None and out["spec"]["template"] == {"metadata": {"labels": {"a": "b"}}}
    out = apply_smp(DEPLOY, {"spec": {"template": {"$patch": "delete"}}})
    assert out is not None and "template" not in out["spec"]
    # $patch: replace on an associative-list element is a no-op in kyaml
    out = apply_smp(
        DEPLOY, {"spec": {"template": {"spec": {"containers": [{"name": "app", "$patch": "replace"}]}}}}
    )
    assert out is not None and out["spec"]["template"]["spec"]["containers"][0]["image"] == "app:1"
    # top-level delete
    assert apply_smp(DEPLOY, {"$patch": "delete", "kind": "Deployment"}) is None
    assert (
        smp_is_delete({"$patch": "delete"})
        and not smp_is_delete({"$patch": "replace"})
        and not smp_is_delete([])
    )
    # top-level replace leaves the resource alone (Resource.ApplyFilter ignores the new node)
    assert apply_smp(DEPLOY, {"$patch": "replace", "kind": "Deployment", "spec": {}}) == DEPLOY
    with pytest.raises(KustomizeError, match="unknown patch strategy"):
        apply_smp(DEPLOY, {"spec": {"$patch": "bogus"}})


def test_smp_k8s_only_directives_pass_through_like_kustomize() -> None:
    patch = {
        "spec": {
            "$retainKeys": ["replicas"],
            "template": {"spec": {"$setElementOrder/containers": [{"name": "app"}]}},
        }
    }
    out = apply_smp(DEPLOY, patch)
    assert out is not None
    assert out["spec"]["$retainKeys"] == ["replicas"]
    assert out["spec"]["template"]["spec"]["$setElementOrder/containers"] == [{"name": "app"}]


def test_smp_ports_multi_key_and_finalizers_set() -> None:
    target = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "finalizers": ["x", "y"]},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "ports": [
                        {"containerPort": 80, "protocol": "TCP", "name": "http"},
                        {"containerPort": 80, "protocol": "UDP", "name": "dns"},
                        {"containerPort": 90, "name": "other"},
                    ],
                }
            ]
        },
    }
    patch = {
        "metadata": {"finalizers": ["z", "x"]},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "ports": [
                        {"containerPort": 80, "protocol": "UDP", "name": "dns2"},
                        {"containerPort": 90, "name": "other2"},
                        {"containerPort": 100},
                    ],
                }
            ]
        },
    }
    out = apply_smp(target, patch)
    assert out is not None
    assert out["metadata"]["finalizers"] == ["z", "x", "y"]
    assert out["spec"]["containers"][0]["ports"] == [  # as kubectl kustomize orders them
        {"containerPort": 100},
        {"containerPort": 80, "protocol": "TCP", "name": "http"},
        {"containerPort": 80, "protocol": "UDP", "name": "dns2"},
        {"containerPort": 90, "name": "other2"},
    ]


def test_smp_crd_lists_are_replaced_and_identity_kept() -> None:
    target = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t", "namespace": "ns", "finalizers": ["a"]},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
    }
    patch = {
        "apiVersion": "example.com/v1",
        "kind": "Other",
        "metadata": {"name": "renamed", "namespace": "elsewhere", "finalizers": ["b"]},
        "spec": {"containers": [{"name": "b", "image": "x"}]},
    }
    out = apply_smp(target, patch)
    assert out is not None
    assert out["spec"]["containers"] == [{"name": "b", "image": "x"}]
    assert out["metadata"]["finalizers"] == ["b"]
    assert (out["kind"], out["metadata"]["name"], out["metadata"]["namespace"]) == ("Thing", "t", "ns")
    raw = apply_smp(target, patch, keep_identity=False)
    assert raw is not None and raw["metadata"]["name"] == "renamed"


def test_smp_embedded_object_gets_its_own_schema() -> None:
    target = {
        "apiVersion": "example.com/v1",
        "kind": "Wrapper",
        "metadata": {"name": "w"},
        "spec": {
            "template": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "1"}]}}},
            }
        },
    }
    patch = {"spec": {"template": {"spec": {"template": {"spec": {"containers": [{"name": "b"}]}}}}}}
    out = apply_smp(target, patch)
    assert out is not None
    assert [c["name"] for c in out["spec"]["template"]["spec"]["template"]["spec"]["containers"]] == [
        "b",
        "a",
    ]


def test_smp_errors_and_no_mutation() -> None:
    before = copy.deepcopy(DEPLOY)
    patch = {"spec": {"replicas": {"a": 1}}}
    with pytest.raises(KustomizeError, match="wrong node kind"):
        apply_smp(DEPLOY, patch)
    patch2 = {"spec": {"template": {"spec": {"containers": [{"name": "app", "$patch": "delete"}]}}}}
    p2 = copy.deepcopy(patch2)
    apply_smp(DEPLOY, patch2)
    assert DEPLOY == before and patch2 == p2
    for bad in ([], "x", None, 1):
        with pytest.raises(KustomizeError):
            apply_smp(DEPLOY, bad)  # type: ignore[arg-type]
        with pytest.raises(KustomizeError):
            apply_smp(bad, {})  # type: ignore[arg-type]


def test_smp_explicit_null_in_target_kept() -> None:
    out = apply_smp({"kind": "X", "a": None, "b": {"c": None}}, {"d": 1})
    assert out == {"kind": "X", "a": None, "b": {"c": None}, "d": 1}
    out = apply_smp({"kind": "X"}, {"n": {"a": None, "b": 1, "c": {"$patch": "delete"}}})
    assert out == {"kind": "X", "n": {"b": 1}}


def test_merge_strategy_table() -> None:
    assert merge_strategy("apps/v1", "Deployment", ["spec", "template", "spec", "containers"]) == (
        "merge",
        ("name",),
    )
    assert merge_strategy("apps/v1", "Deployment", ["spec", "template", "spec", "containers", "ports"]) == (
        "merge",
        ("containerPort", "protocol"),
    )
    assert merge_strategy("v1", "Service", ["spec", "ports"]) == ("merge", ("port", "protocol"))
    assert merge_strategy("apps/v1", "Deployment", ["spec", "template", "spec", "tolerations"]) is None
    assert (
        merge_strategy("apps/v1", "Deployment", ["spec", "template", "spec", "containers", "envFrom"]) is None
    )
    assert merge_strategy("batch/v1", "CronJob", ["metadata", "finalizers"]) == ("merge", ())
    assert merge_strategy("autoscaling/v2", "HorizontalPodAutoscaler", ["metadata", "finalizers"]) is None


# -- against kubectl ----------------------------------------------------------------------


def _smp_kubectl(tmp_path: Path, target: dict[str, Any], patch: dict[str, Any]) -> Any:
    write_tree(
        tmp_path,
        {
            "res.yaml": dump(target),
            "patch.yaml": dump(patch),
            "kustomization.yaml": "resources: [res.yaml]\npatches:\n- path: patch.yaml\n  target: {name: d}\n",
        },
    )
    docs = kustomize_build(tmp_path)
    return docs[0] if docs else None


@needs_kubectl
def test_smp_deployment_matches_kubectl(tmp_path: Path) -> None:
    target = copy.deepcopy(DEPLOY)
    target["metadata"]["name"] = "d"
    patch = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "app:2",
                            "env": [
                                {"name": "B", "value": "22"},
                                {"name": "Z", "value": "0"},
                                {"name": "A", "$patch": "delete"},
                            ],
                            "ports": [{"containerPort": 8080, "name": "alt"}],
                        },
                        {"name": "sidecar", "$patch": "delete"},
                        {"name": "init", "image": "x"},
                    ],
                    "volumes": [{"name": "v2", "configMap": {"name": "c"}}],
                    "tolerations": [{"key": "k3", "operator": "Exists"}],
                }
            }
        },
    }
    assert apply_smp(target, patch) == _smp_kubectl(tmp_path, target, patch)


def _rand_smp_case(r: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    def scalar() -> Any:
        return r.choice(["a", "b", 1, True, None, "80", ""])

    def lst(fn: Any, n: int = 3) -> list[Any]:
        out = [fn() for _ in range(r.randint(0, n))]
        if r.random() < 0.08:
            out.insert(r.randint(0, len(out)), {"$patch": r.choice(["replace", "delete", "merge"])})
        return out

    def port() -> dict[str, Any]:
        d: dict[str, Any] = {}
        if r.random() < 0.9:
            d["containerPort"] = r.choice([80, 81])
        if r.random() < 0.5:
            d["protocol"] = r.choice(["TCP", "UDP"])
        if r.random() < 0.5:
            d["name"] = r.choice(["p", "q"])
        return d

    def container() -> dict[str, Any]:
        d: dict[str, Any] = {"name": r.choice(["x", "y", "z"])} if r.random() < 0.95 else {}
        if r.random() < 0.6:
            d["image"] = r.choice(["i1", "i2", None])
        if r.random() < 0.5:
            d["ports"] = lst(port)
        if r.random() < 0.5:
            d["env"] = lst(lambda: {"name": r.choice(["A", "B"]), "value": scalar()})
        if r.random() < 0.3:
            d["args"] = [scalar() for _ in range(r.randint(0, 2))]
        if r.random() < 0.05:
            d["$patch"] = r.choice(["delete", "replace"])
        return d

    def obj() -> dict[str, Any]:
        kind, av = r.choice([("Deployment", "apps/v1"), ("Thing", "example.com/v1"), ("Pod", "v1")])
        spec: dict[str, Any] = {}
        if r.random() < 0.8:
            spec["containers"] = lst(container)
        if r.random() < 0.3:
            spec["volumes"] = lst(lambda: {"name": r.choice(["v1", "v2"]), "emptyDir": {}}, 2)
        if r.random() < 0.3:
            spec["tolerations"] = lst(lambda: {"key": r.choice(["k1", "k2"])}, 2)
        md: dict[str, Any] = {"name": "d"}
        if r.random() < 0.3:
            md["finalizers"] = [r.choice(["f1", "f2"]) for _ in range(r.randint(0, 3))]
        o: dict[str, Any] = {"apiVersion": av, "kind": kind, "metadata": md}
        o["spec"] = spec if kind == "Pod" else {"replicas": r.choice([1, None]), "template": {"spec": spec}}
        return o

    t = obj()
    p = obj()
    p["apiVersion"], p["kind"] = t["apiVersion"], t["kind"]
    return t, p


@needs_kubectl
def test_smp_random_cases_match_kubectl(tmp_path: Path) -> None:
    r = random.Random(20241129)
    for i in range(25):
        t, p = _rand_smp_case(r)
        d = tmp_path / str(i)
        d.mkdir()
        try:
            want: Any = _smp_kubectl(d, t, p)
        except BuildFailed:
            with pytest.raises(KustomizeError):
                apply_smp(t, p)
            continue
        assert apply_smp(t, p) == want, (dump(t), dump(p))


# ======================================================================================
# JSON 6902


JDOC = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "c"},
    "data": {"a": "1"},
    "list": ["x", "y", "z"],
    "nested": {"arr": [{"k": 1}, {"k": 2}]},
    "a/b": 3,
}


@pytest.mark.parametrize(
    ("ops", "check"),
    [
        ([{"op": "add", "path": "/data/b", "value": "2"}], lambda d: d["data"] == {"a": "1", "b": "2"}),
        ([{"op": "add", "path": "/list/-", "value": "N"}], lambda d: d["list"][-1] == "N"),
        ([{"op": "add", "path": "/list/-1", "value": "N"}], lambda d: d["list"] == ["x", "y", "z", "N"]),
        ([{"op": "add", "path": "/list/0", "value": "N"}], lambda d: d["list"][0] == "N"),
        ([{"op": "add", "path": "/list/01", "value": "N"}], lambda d: d["list"][1] == "N"),
        ([{"op": "remove", "path": "/list/-1"}], lambda d: d["list"] == ["x", "y"]),
        (
            [{"op": "replace", "path": "/nested/arr/1/k", "value": 9}],
            lambda d: d["nested"]["arr"][1] == {"k": 9},
        ),
        ([{"op": "replace", "path": "/missing", "value": 1}], lambda d: d["missing"] == 1),
        ([{"op": "move", "from": "/data/a", "path": "/data/z"}], lambda d: d["data"] == {"z": "1"}),
        ([{"op": "copy", "from": "/nested", "path": "/n2"}], lambda d: d["n2"] == d["nested"]),
        ([{"op": "copy", "from": "/nope", "path": "/n2"}], lambda d: d["n2"] is None),
        ([{"op": "test", "path": "/data/a", "value": "1"}], lambda d: d == JDOC),
        ([{"op": "test", "path": "/nope", "value": None}], lambda d: d == JDOC),
        ([{"op": "add", "path": "/a~1b", "value": 4}], lambda d: d["a/b"] == 4),
        (
            [{"op": "add", "path": "/metadata/annotations/x", "value": True}],
            lambda d: d["metadata"]["annotations"] == {"x": "true"},
        ),
        ([{"op": "add", "path": "data/q", "value": 1}], lambda d: d["q"] == 1),  # first segment dropped
        ("- op: add\n  path: /data/c\n  value: '3'\n", lambda d: d["data"]["c"] == "3"),
        ('[{"op": "remove", "path": "/data"}]', lambda d: "data" not in d),
    ],
)
def test_json6902_ops(ops: Any, check: Any) -> None:
    before = copy.deepcopy(JDOC)
    out = apply_json6902(JDOC, ops)
    assert check(out)
    assert JDOC == before
    assert "annotations" not in JDOC["metadata"]


@pytest.mark.parametrize(
    ("ops", "msg"),
    [
        ([{"op": "add", "path": "/list/5", "value": 1}], r"op #0 \(add /list/5\).*invalid index"),
        ([{"op": "remove", "path": "/nope"}], "nonexistent key"),
        ([{"op": "add", "path": "/a/b", "value": 1}], "missing path"),
        ([{"op": "test", "path": "/data/a", "value": "2"}], "test failed"),
        ([{"op": "test", "path": "/nested/arr/0/k", "value": 1.0}], "test failed"),
        (
            [{"op": "add", "path": "/data/x", "value": 1}, {"op": "bogus", "path": "/x"}],
            r"op #1 \(bogus /x\): Unexpected kind",
        ),
        ([{"op": "add", "value": 1}], "missing value"),
        ([{"op": "replace", "path": "/list/-", "value": 1}], "missing key"),
        ([{"op": "move", "from": "/nested", "path": "/nested/c"}], "destination path"),
        ([{"op": "add", "path": "/list/foo", "value": 1}], "proper array index"),
        ([1], "must be a mapping"),
        ({"op": "add"}, "must be a list"),
        ("op: [", "cannot parse"),
        ("", "one YAML/JSON document"),
    ],
)
def test_json6902_errors(ops: Any, msg: str) -> None:
    with pytest.raises(KustomizeError, match=msg):
        apply_json6902(JDOC, ops)


@needs_kubectl
def test_json6902_matches_kubectl(tmp_path: Path) -> None:
    r = random.Random(7)
    paths = [
        "/metadata/annotations/x",
        "/data",
        "/data/a",
        "/data/b",
        "/list/0",
        "/list/-",
        "/list/-2",
        "/list/5",
        "/nested/arr/0/k",
        "/nested/arr/-",
        "/nested",
        "/a~1b",
        "",
        "data/a",
    ]
    values = [1, "v", None, {"k": 2}, [1, 2], True]
    for i in range(25):
        ops = []
        for _ in range(r.randint(1, 3)):
            o: dict[str, Any] = {
                "op": r.choice(["add", "remove", "replace", "move", "copy", "test"]),
                "path": r.choice(paths),
            }
            if o["op"] in ("move", "copy"):
                o["from"] = r.choice(paths)
            if o["op"] in ("add", "replace", "test"):
                o["value"] = r.choice(values)
            ops.append(o)
        d = tmp_path / str(i)
        write_tree(
            d,
            {
                "r.yaml": dump(JDOC),
                "kustomization.yaml": "resources: [r.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: |-\n    "
                + json.dumps(ops)
                + "\n",
            },
        )
        try:
            docs = kustomize_build(d)
        except BuildFailed:
            with pytest.raises(KustomizeError):
                apply_json6902(JDOC, ops)
            continue
        if not docs or docs[0].get("kind") != "ConfigMap" or docs[0].get("metadata", {}).get("name") != "c":
            continue  # the patch replaced identity fields; kustomize's later checks take over
        assert apply_json6902(JDOC, ops) == docs[0], ops


# ======================================================================================
# selectors


RES = [
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web-a", "labels": {"app": "web", "tier": "fe"}, "annotations": {"team": "x"}},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web-b", "namespace": "prod", "labels": {"app": "web", "tier": "be"}},
    },
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web-a-cfg", "labels": {"app": "cfg"}}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "cr", "labels": {"n": "5"}},
    },
]

TARGETS: list[dict[str, str]] = [
    {"name": "web-.*"},
    {"name": "web"},  # anchored: no partial match
    {"namespace": "default"},  # no namespace means default
    {"namespace": "prod"},
    {"namespace": "_non_namespaceable_"},  # what cluster-scoped objects have
    {"group": "apps"},
    {"group": ""},  # empty = any group
    {"version": "v1"},
    {"kind": "Deploy.*|Namespace"},
    {"labelSelector": "app=web,tier!=be"},
    {"labelSelector": "app in (web, cfg)"},
    {"labelSelector": "!tier"},
    {"labelSelector": "n>4"},
    {"annotationSelector": "team"},
    {"name": "web-a|cr", "kind": "ClusterRole"},
    {"namespace": "def.*"},
    {"name": "WEB-A"},
    {"labelSelector": "tier notin (be)"},
]

EXPECTED = {  # target index -> names selected (as kubectl kustomize selects them)
    0: {"web-a", "web-b", "web-a-cfg"},
    1: set(),
    2: {"web-a", "web-a-cfg"},
    3: {"web-b"},
    4: {"prod", "cr"},
    5: {"web-a", "web-b"},
    6: {"web-a", "web-b", "web-a-cfg", "prod", "cr"},
    7: {"web-a", "web-b", "web-a-cfg", "prod", "cr"},
    8: {"web-a", "web-b", "prod"},
    9: {"web-a"},
    10: {"web-a", "web-b", "web-a-cfg"},
    11: {"web-a-cfg", "prod", "cr"},
    12: {"cr"},
    13: {"web-a"},
    14: {"cr"},
    15: {"web-a", "web-a-cfg"},
    16: set(),
    17: {"web-a", "web-a-cfg", "prod", "cr"},
}


@pytest.mark.parametrize("i", range(len(TARGETS)))
def test_selector_table(i: int) -> None:
    got = {r["metadata"]["name"] for r in RES if matches(r, TARGETS[i])}
    assert got == EXPECTED[i]


def test_selector_original_names_and_errors() -> None:
    r = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p-cfg-abc", "namespace": "x"}}
    assert matches(r, {"name": "cfg"}, original_name="cfg")
    assert matches(r, {"namespace": "orig"}, original_namespace="orig")
    assert not matches(r, {"name": "cfg"})
    with pytest.raises(KustomizeError, match="regular expression"):
        matches(r, {"name": "("})
    with pytest.raises(KustomizeError):
        matches(r, {"labelSelector": "a in b"})
    with pytest.raises(KustomizeError):
        matches(r, {"name": 3})
    with pytest.raises(KustomizeError):
        matches(r, [])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sel", "labels", "want"),
    [
        ("", {}, True),
        ("a=b", {"a": "b"}, True),
        ("a==b", {"a": "c"}, False),
        ("a!=b", {}, True),
        ("a in (x, y)", {"a": "y"}, True),
        ("a notin (x)", {"a": "x"}, False),
        ("a", {"a": ""}, True),
        ("!a", {"a": "1"}, False),
        ("a>3", {"a": "4"}, True),
        ("a<3", {"a": "x"}, False),
        ("a=,b", {"a": "", "b": "1"}, True),
        ("example.com/role in (db)", {"example.com/role": "db"}, True),
        (" a = b , c ", {"a": "b", "c": "1"}, True),
    ],
)
def test_label_selector(sel: str, labels: dict[str, str], want: bool) -> None:
    assert parse_label_selector(sel).matches(labels) is want


@pytest.mark.parametrize(
    "bad", ["a b", "a in", "a in (x", "=a", "a,", "a=b=c", "a>b", "x/y/z", "-a=b", "a=b c", "a notin"]
)
def test_label_selector_errors(bad: str) -> None:
    with pytest.raises(KustomizeError):
        parse_label_selector(bad)


@needs_kubectl
def test_selectors_match_kubectl(tmp_path: Path) -> None:
    lines = ["resources: [r.yaml]", "patches:"]
    for i, t in enumerate(TARGETS):
        lines += [
            f"- target: {json.dumps(t)}",
            "  patch: |-",
            f'    [{{"op": "add", "path": "/metadata/annotations/m{i}", "value": "y"}}]',
        ]
    write_tree(
        tmp_path,
        {"r.yaml": "\n---\n".join(dump(r) for r in RES), "kustomization.yaml": "\n".join(lines) + "\n"},
    )
    out = by_id(kustomize_build(tmp_path))
    for i, t in enumerate(TARGETS):
        for r in RES:
            annotated = f"m{i}" in (
                out[(r["kind"], r["metadata"]["name"])]["metadata"].get("annotations") or {}
            )
            assert matches(r, t) is annotated, (t, r["metadata"]["name"])


# ======================================================================================
# generators


def _reader(files: dict[str, bytes]) -> Any:
    def read(path: str) -> bytes:
        if path not in files:
            raise OSError(2, "No such file or directory")
        return files[path]

    return read


FILES = {
    "a.env": b'# comment\n\n  A=1\nB="quoted"\nC\nD=x=y\r\nE= spaced \n',
    "f.txt": b"hello\nworld",
    "bin.dat": b"\xff\xfe\x00bin",
    "bom.env": b"\xef\xbb\xbfBOM=1\n",
}


def test_configmap_from_args() -> None:
    args = {
        "name": "cm",
        "envs": ["a.env"],
        "literals": ['L1="dq"', "L2='sq'", "L3=\"mismatch'", "L4=", "L5=a=b"],
        "files": ["f.txt", "key2=f.txt", "bin.dat"],
        "options": {"labels": {"x": "local"}, "annotations": {"an": "v"}},
    }
    cm = configmap_from_args(args, None, _reader(FILES), {"labels": {"x": "global", "g": "1"}})
    assert cm["data"] == {
        "A": "1",
        "B": '"quoted"',
        "C": "",
        "D": "x=y",
        "E": " spaced ",
        "L1": "dq",
        "L2": "sq",
        "L3": "\"mismatch'",
        "L4": "",
        "L5": "a=b",
        "f.txt": "hello\nworld",
        "key2": "hello\nworld",
    }
    assert cm["binaryData"] == {"bin.dat": "//4AYmlu"}
    assert cm["metadata"] == {"name": "cm", "labels": {"g": "1", "x": "local"}, "annotations": {"an": "v"}}
    assert apply_hash_suffix(cm)["metadata"]["name"] == "cm-dd8b4g54t2"  # kubectl kustomize's name


@pytest.mark.parametrize(
    ("kind", "args", "name"),
    [  # names produced by kubectl kustomize (kustomize v5.5)
        ("ConfigMap", {"name": "foo", "literals": ["a=b"]}, "foo-4h2mbtbbt6"),
        ("ConfigMap", {"name": "empty"}, "empty-6ct58987ht"),
        ("ConfigMap", {"name": "c", "envs": ["bom.env"]}, "c-bhhd5mm2hk"),
        (
            "ConfigMap",
            {"name": "c", "literals": ["a=<&>", "b=\u2028\u2029", 'c=x\ty\\\\"q', "e=\u00e9\U0001f600"]},
            "c-88b9mg9g9g",
        ),
        ("Secret", {"name": "s", "literals": ["a=b"], "files": ["f.txt"]}, "s-654dbbtmfm"),
        (
            "Secret",
            {"name": "tls", "type": "kubernetes.io/tls", "literals": ["tls.crt=x", "tls.key=y"]},
            "tls-f4c6k54dt5",
        ),
    ],
)
def test_known_hashes(kind: str, args: dict[str, Any], name: str) -> None:
    fn = configmap_from_args if kind == "ConfigMap" else secret_from_args
    obj = fn(args, None, _reader(FILES), None)
    assert apply_hash_suffix(obj)["metadata"]["name"] == name
    assert name_hash(obj) == name.rsplit("-", 1)[1]


def test_hash_ignores_name_and_labels() -> None:
    a = configmap_from_args({"name": "a", "literals": ["k=v"]})
    b = configmap_from_args({"name": "b", "literals": ["k=v"], "options": {"labels": {"x": "y"}}})
    assert name_hash(a) == name_hash(b)
    c = configmap_from_args({"name": "a", "literals": ["k=w"]})
    assert name_hash(a) != name_hash(c)


def test_generator_options_behavior_and_errors() -> None:
    s = secret_from_args({"name": "s", "literals": ["a=b"], "options": {"immutable": True}}, "ns", None, None)
    assert s == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "ns"},
        "type": "Opaque",
        "data": {"a": "Yg=="},
        "immutable": True,
    }
    assert merged_options({"options": {"disableNameSuffixHash": False}}, {"disableNameSuffixHash": True})[
        "disableNameSuffixHash"
    ]
    assert not needs_hash({"name": "x"}, {"disableNameSuffixHash": True})
    assert needs_hash({"name": "x"}, None)
    assert generator_behavior({"behavior": "merge"}) == "merge"
    assert generator_behavior({"behavior": "bogus"}) == "create"
    assert apply_hash_suffix(s, disable_name_suffix_hash=True) == s
    with pytest.raises(KustomizeError, match="illegally repeats the key `a`"):
        configmap_from_args({"name": "c", "literals": ["a=1", "a=2"]})
    with pytest.raises(KustomizeError, match="expected key=value"):
        configmap_from_args({"name": "c", "literals": ["novalue"]})
    with pytest.raises(KustomizeError, match="missing key name"):
        configmap_from_args({"name": "c", "files": ["=f"]}, None, _reader(FILES))
    with pytest.raises(KustomizeError, match="contains '='"):
        configmap_from_args({"name": "c", "files": ["k=a=b"]}, None, _reader(FILES))
    with pytest.raises(KustomizeError, match="cannot read missing"):
        configmap_from_args({"name": "c", "files": ["missing"]}, None, _reader(FILES))
    with pytest.raises(KustomizeError, match="must have a name"):
        configmap_from_args({"literals": ["a=b"]})
    with pytest.raises(KustomizeError):
        configmap_from_args({"name": "c", "options": {"labels": {"x": True}}})
    with pytest.raises(KustomizeError):
        configmap_from_args({"name": "c", "literals": "a=b"})


def test_merge_generated() -> None:
    old = configmap_from_args(
        {"name": "cm", "literals": ["a=1", "b=2"], "options": {"labels": {"base": "x"}}}
    )
    new = configmap_from_args({"name": "cm", "literals": ["b=3", "c=4"], "options": {"labels": {"ov": "y"}}})
    merged = merge_generated(old, new, "merge")
    assert merged["data"] == {"a": "1", "b": "3", "c": "4"}
    assert merged["metadata"]["labels"] == {"base": "x", "ov": "y"}
    replaced = merge_generated(old, new, "replace")
    assert replaced["data"] == {"b": "3", "c": "4"}
    with pytest.raises(KustomizeError):
        merge_generated(old, new, "create")


@needs_kubectl
def test_generator_names_match_kubectl(tmp_path: Path) -> None:
    write_tree(tmp_path, {k: v for k, v in FILES.items()})
    write_tree(
        tmp_path,
        {
            "kustomization.yaml": """
configMapGenerator:
- name: lit
  literals: [a=1, 'b="two"', c=]
- name: envs
  envs: [a.env, bom.env]
- name: files
  files: [f.txt, other=f.txt, bin.dat]
  options: {disableNameSuffixHash: false, labels: {l: v}}
- name: plain
  literals: [x=y]
  options: {disableNameSuffixHash: true}
secretGenerator:
- name: sec
  literals: [user=admin]
  files: [f.txt]
  envs: [a.env]
- name: tls
  type: kubernetes.io/tls
  literals: [tls.crt=c, tls.key=k]
generatorOptions:
  annotations: {g: "1"}
"""
        },
    )
    want = by_id(kustomize_build(tmp_path))
    k = _yaml.load((tmp_path / "kustomization.yaml").read_text())
    read = _reader(FILES)
    got = []
    for key, fn in (("configMapGenerator", configmap_from_args), ("secretGenerator", secret_from_args)):
        for args in k[key]:
            obj = fn(args, None, read, k["generatorOptions"])
            got.append(apply_hash_suffix(obj, not needs_hash(args, k["generatorOptions"])))
    assert by_id(got) == want


@needs_kubectl
def test_merge_behavior_hash_matches_kubectl(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "base/kustomization.yaml": "configMapGenerator:\n- name: cm\n  literals: [a=1, b=2]\n"
            "secretGenerator:\n- name: sec\n  literals: [a=1]\n",
            "ov/kustomization.yaml": "resources: [../base]\nnamePrefix: p-\nconfigMapGenerator:\n"
            "- name: cm\n  behavior: merge\n  literals: [b=3, c=4]\n"
            "secretGenerator:\n- name: sec\n  behavior: replace\n  type: kubernetes.io/tls\n"
            "  literals: [z=9]\n",
        },
    )
    want = by_id(kustomize_build(tmp_path / "ov"))
    old_cm = configmap_from_args({"name": "cm", "literals": ["a=1", "b=2"]})
    new_cm = configmap_from_args({"name": "cm", "behavior": "merge", "literals": ["b=3", "c=4"]})
    cm = merge_generated(old_cm, new_cm, "merge")
    cm["metadata"]["name"] = "p-" + cm["metadata"]["name"]  # prefix first, hash last
    old_s = secret_from_args({"name": "sec", "literals": ["a=1"]})
    new_s = secret_from_args({"name": "sec", "type": "kubernetes.io/tls", "literals": ["z=9"]})
    sec = merge_generated(old_s, new_s, "replace")
    sec["metadata"]["name"] = "p-sec"
    assert by_id([apply_hash_suffix(cm), apply_hash_suffix(sec)]) == want


# ======================================================================================
# name references


WORKLOAD = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "app", "namespace": "a"},
    "spec": {
        "template": {
            "spec": {
                "serviceAccountName": "sa",
                "imagePullSecrets": [{"name": "pull"}],
                "initContainers": [{"name": "i", "envFrom": [{"configMapRef": {"name": "cfg"}}]}],
                "containers": [
                    {
                        "name": "c",
                        "env": [
                            {"name": "X", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "k"}}},
                            {"name": "Y", "valueFrom": {"configMapKeyRef": {"name": "other", "key": "k"}}},
                        ],
                        "envFrom": [{"configMapRef": {"name": "cfg"}}, {"secretRef": {"name": "sec"}}],
                    }
                ],
                "volumes": [
                    {"name": "v", "configMap": {"name": "cfg"}},
                    {"name": "s", "secret": {"secretName": "sec"}},
                    {
                        "name": "p",
                        "projected": {
                            "sources": [{"configMap": {"name": "cfg"}}, {"secret": {"name": "sec"}}]
                        },
                    },
                    {"name": "c", "persistentVolumeClaim": {"claimName": "data"}},
                ],
            }
        }
    },
}


def test_rewrite_references_workload() -> None:
    renames = {
        ("ConfigMap", "a", "cfg"): "cfg-123",
        ("Secret", "a", "sec"): "sec-456",
        ("Secret", "a", "pull"): "p-pull",
        ("ServiceAccount", "a", "sa"): "p-sa",
        ("PersistentVolumeClaim", "a", "data"): "p-data",
        ("ConfigMap", "b", "other"): "other-x",  # another namespace: left alone
    }
    before = copy.deepcopy(WORKLOAD)
    [out] = rewrite_references([WORKLOAD], renames)
    assert WORKLOAD == before
    spec = out["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "p-sa"
    assert spec["imagePullSecrets"] == [{"name": "p-pull"}]
    assert spec["initContainers"][0]["envFrom"][0]["configMapRef"]["name"] == "cfg-123"
    c = spec["containers"][0]
    assert c["env"][0]["valueFrom"]["secretKeyRef"]["name"] == "sec-456"
    assert c["env"][1]["valueFrom"]["configMapKeyRef"]["name"] == "other"
    assert [e.get("configMapRef", e.get("secretRef"))["name"] for e in c["envFrom"]] == ["cfg-123", "sec-456"]
    assert spec["volumes"][0]["configMap"]["name"] == "cfg-123"
    assert spec["volumes"][1]["secret"]["secretName"] == "sec-456"
    assert spec["volumes"][2]["projected"]["sources"] == [
        {"configMap": {"name": "cfg-123"}},
        {"secret": {"name": "sec-456"}},
    ]
    assert spec["volumes"][3]["persistentVolumeClaim"]["claimName"] == "p-data"
    # unchanged resources come back as they are
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    assert rewrite_references([other], renames)[0] is other


def test_rewrite_references_namespaces_rbac_and_config() -> None:
    rb = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "rb", "namespace": "ns1"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cr"},
        "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns2"}],
    }
    renames = {
        ("ClusterRole", None, "cr"): "p-cr",
        ("Role", "ns1", "cr"): "p-role-cr",  # roleRef says ClusterRole
        ("ServiceAccount", "ns2", "sa"): "p-sa",
    }
    [out] = rewrite_references([rb], renames)
    assert out["roleRef"]["name"] == "p-cr"
    assert out["subjects"] == [{"kind": "ServiceAccount", "name": "p-sa", "namespace": "ns2"}]
    ambiguous = copy.deepcopy(rb)
    ambiguous["subjects"].append({"kind": "ServiceAccount", "name": "sa"})
    with pytest.raises(KustomizeError, match="multiple possible referrals"):
        rewrite_references(
            [ambiguous], {("ServiceAccount", "ns2", "sa"): "p-sa", ("ServiceAccount", "ns1", "sa"): "p-sa"}
        )
    # user configuration
    cfg = parse_name_reference_config(
        {
            "nameReference": [
                {
                    "kind": "ConfigMap",
                    "version": "v1",
                    "fieldSpecs": [{"path": "spec/valuesFrom/name", "kind": "HelmRelease"}],
                }
            ],
            "commonLabels": [{"path": "x"}],
        }
    )
    hr = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "hr"},
        "spec": {"valuesFrom": [{"kind": "ConfigMap", "name": "vals"}]},
    }
    assert rewrite_references([hr], {("ConfigMap", None, "vals"): "vals-1"})[0] is hr
    assert (
        rewrite_references([hr], {("ConfigMap", None, "vals"): "vals-1"}, extra=cfg)[0]["spec"]["valuesFrom"][
            0
        ]["name"]
        == "vals-1"
    )
    with pytest.raises(KustomizeError):
        parse_name_reference_config({"nameReference": [{"kind": "ConfigMap", "fieldSpecs": [{"path": 1}]}]})
    with pytest.raises(KustomizeError, match="expected sequence or mapping"):
        rewrite_references(
            [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"volumes": ["x"]}}],
            {("ConfigMap", None, "a"): "b"},
        )


@needs_kubectl
def test_rewrite_references_match_kubectl(tmp_path: Path) -> None:
    docs = [
        WORKLOAD,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "in-b", "namespace": "b"},
            "spec": {
                "template": {
                    "spec": {"containers": [{"name": "c", "envFrom": [{"configMapRef": {"name": "cfg"}}]}]}
                }
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "in-default"},
            "spec": {
                "template": {
                    "spec": {"containers": [{"name": "c", "envFrom": [{"configMapRef": {"name": "cfg2"}}]}]}
                }
            },
        },
        {
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "metadata": {"name": "hr", "namespace": "a"},
            "spec": {"valuesFrom": [{"kind": "ConfigMap", "name": "cfg"}, {"kind": "Secret", "name": "sec"}]},
        },
    ]
    kc = (
        "nameReference:\n- kind: ConfigMap\n  version: v1\n  fieldSpecs:\n  - {path: spec/valuesFrom/name, kind: HelmRelease}\n"
        "- kind: Secret\n  version: v1\n  fieldSpecs:\n  - {path: spec/valuesFrom/name, kind: HelmRelease}\n"
    )
    write_tree(
        tmp_path,
        {
            "d.yaml": "\n---\n".join(dump(d) for d in docs),
            "kc.yaml": kc,
            "kustomization.yaml": """
resources: [d.yaml]
configurations: [kc.yaml]
configMapGenerator:
- {name: cfg, namespace: a, literals: [a=1]}
- {name: cfg2, namespace: default, literals: [a=2]}
secretGenerator:
- {name: sec, namespace: a, literals: [k=v]}
""",
        },
    )
    want = by_id(kustomize_build(tmp_path))
    k = _yaml.load((tmp_path / "kustomization.yaml").read_text())
    generated = []
    renames: dict[tuple[str, str | None, str], str] = {}
    for key, fn in (("configMapGenerator", configmap_from_args), ("secretGenerator", secret_from_args)):
        for args in k[key]:
            obj = fn(args, None, None, None)
            hashed = apply_hash_suffix(obj)
            renames[(obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])] = hashed[
                "metadata"
            ]["name"]
            generated.append(hashed)
    extra = parse_name_reference_config(_yaml.load(kc))
    got = by_id(rewrite_references(generated + docs, renames, extra=extra))
    assert got == want


# ======================================================================================
# robustness: only KustomizeError, whatever the input

_keys = st.sampled_from(
    [
        "name",
        "containers",
        "env",
        "$patch",
        "apiVersion",
        "kind",
        "metadata",
        "spec",
        "template",
        "ports",
        "containerPort",
        "protocol",
        "op",
        "path",
        "value",
        "from",
        "labels",
        "namespace",
        "finalizers",
        "data",
        "literals",
        "files",
        "envs",
        "options",
        "subjects",
        "volumes",
        "configMap",
    ]
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True),
    st.sampled_from(
        [
            "",
            "a",
            "delete",
            "replace",
            "merge",
            "apps/v1",
            "v1",
            "Deployment",
            "ConfigMap",
            "/a",
            "/a/0",
            "-",
            "x=y",
            "=",
            "a in (b)",
            "/spec/-1",
            "(",
            "ServiceAccount",
        ]
    ),
    st.text(max_size=4),
)
_data = st.recursive(
    _scalars,
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(_keys, c, max_size=4)),
    max_leaves=20,
)


def _only_kustomize_error(fn: Any, *args: Any, **kwargs: Any) -> None:
    try:
        fn(*args, **kwargs)
    except KustomizeError:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_data, _data, _data)
def test_only_kustomize_errors(a: Any, b: Any, c: Any) -> None:
    _only_kustomize_error(smp.apply_smp, a, b)
    _only_kustomize_error(smp.smp_is_delete, a)
    _only_kustomize_error(json6902.apply_json6902, a, b)
    _only_kustomize_error(json6902.apply_json6902, {"a": [1, {"b": 2}]}, c)
    _only_kustomize_error(selector.matches, a, b)
    _only_kustomize_error(selector.parse_label_selector, a)
    _only_kustomize_error(generators.configmap_from_args, a, None, lambda p: b"x=1\n\xff", b)
    _only_kustomize_error(generators.secret_from_args, a, c, lambda p: b"\xff", b)
    _only_kustomize_error(generators.name_hash, a)
    _only_kustomize_error(generators.apply_hash_suffix, a)
    _only_kustomize_error(generators.merge_generated, a, b, "merge")
    _only_kustomize_error(namereference.parse_name_reference_config, a)
    _only_kustomize_error(namereference.rewrite_references, a, b)
    _only_kustomize_error(
        namereference.rewrite_references,
        [x for x in (a, b, c) if isinstance(x, dict)],
        {("ConfigMap", None, "a"): "b", ("ServiceAccount", "a", ""): "q", ("Secret", None, "a"): "s"},
    )


_sel_text = st.text(alphabet=st.sampled_from(list("ab=!,() \tinot<>-/._1x[]*+?{}\\^$|")), max_size=16)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_sel_text, _sel_text)
def test_only_kustomize_errors_text(s: str, r: str) -> None:
    _only_kustomize_error(selector.parse_label_selector, s)
    res = {"apiVersion": r, "kind": s, "metadata": {"name": s, "labels": {"a": r}, "annotations": {"b": s}}}
    _only_kustomize_error(
        selector.matches, res, {"name": r, "kind": s, "labelSelector": s, "annotationSelector": r}
    )
    _only_kustomize_error(json6902.apply_json6902, {"a": [1, {"b": 2}]}, s)
    _only_kustomize_error(json6902.apply_json6902, {"a": [1]}, [{"op": "move", "from": r, "path": s}])
    _only_kustomize_error(
        generators.configmap_from_args,
        {"name": "n", "literals": [s], "files": [r], "envs": [r]},
        None,
        lambda p: (s + "\n" + r).encode(),
    )
    _only_kustomize_error(
        namereference.parse_name_reference_config,
        {"nameReference": [{"kind": "ConfigMap", "fieldSpecs": [{"path": s, "kind": r}]}]},
    )
