"""Diagrams of the reconcile graph: DOT, Mermaid, SVG/PNG through Graphviz, and the view they
share (focus, depth, grouping, findings).

Golden files live in tests/golden/graph/ (FLUXGRAPH_UPDATE_GOLDEN=1 rewrites them for review).
The goldens use a fixed list of findings rather than the live checks, so that adding a rule
never changes them; ``test_checks_colour_their_nodes`` covers the live path.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pydot
import pytest
from click.testing import CliRunner

import fluxgraph
from fluxgraph.cli import main
from fluxgraph.engine import run_checks
from fluxgraph.findings import Finding, Severity
from fluxgraph.model import FluxgraphError, Location, ObjRef
from fluxgraph.render import graph_formats
from fluxgraph.render.graph_dot import render_dot
from fluxgraph.render.graph_formats import GRAPH_FORMATS, GraphvizError, GraphvizMissing, run_dot
from fluxgraph.render.graph_mermaid import escape, render_mermaid
from fluxgraph.render.graph_view import (
    GraphView,
    IdAllocator,
    ViewOptions,
    build_view,
    folder_groups,
    shorten,
)

from .conftest import CORPUS, FIXTURES, check_golden

HOMELAB = FIXTURES / "repos" / "homelab"
CLUSTER = "clusters/homelab"
HAS_DOT = shutil.which("dot") is not None
SAFE_ID = re.compile(r"^[A-Za-z0-9_]+$")


def _finding(
    rule: str, sev: Severity, file: str, line: int, ks: str | None, obj: ObjRef | None = None
) -> Finding:
    return Finding(
        location=Location(file, line),
        rule=rule,
        severity=sev,
        message=f"{rule} at {file}:{line}",
        cluster=CLUSTER,
        obj=obj,
        kustomization=ks,
    )


# a fixed set: one of each severity, two on one node, one on a HelmRelease, one on no Kustomization
FINDINGS = [
    _finding(
        "prunable-shared-namespace",
        Severity.ERROR,
        "platform/cilium/namespace.yaml",
        4,
        "flux-system/platform",
    ),
    _finding(
        "substitute-from-without-depends-on",
        Severity.WARNING,
        "clusters/homelab/infra-controllers.yaml",
        19,
        "flux-system/infra-controllers",
    ),
    _finding(
        "runtime-variable-substituted",
        Severity.ERROR,
        "apps/nextcloud/helmrelease.yaml",
        73,
        "flux-system/apps",
    ),
    _finding(
        "hook-fails-on-success",
        Severity.WARNING,
        "apps/home-automation/home-assistant/deployment.yaml",
        46,
        "flux-system/apps",
    ),
    _finding(
        "helm-timeout-exceeds-wait",
        Severity.INFO,
        "infrastructure/controllers/longhorn/helmrelease.yaml",
        10,
        "flux-system/infra-controllers",
        ObjRef("HelmRelease", "longhorn-system", "longhorn", "helm.toolkit.fluxcd.io"),
    ),
    _finding("invalid-yaml", Severity.WARNING, ".sops.yaml", 1, None),
]


@pytest.fixture(scope="module")
def homelab():
    return fluxgraph.load(HOMELAB)


def _view(repo, **opts) -> GraphView:
    return build_view(repo.clusters, FINDINGS, ViewOptions(**opts))


def _ks_ids(view: GraphView) -> set[str]:
    return {n.key[3:] for n in view.nodes() if n.kind == "kustomization"}


# -- golden diagrams ----------------------------------------------------------------------


def test_golden_homelab_dot(homelab):
    check_golden("graph/homelab.dot", render_dot(_view(homelab)))


def test_golden_homelab_mermaid(homelab):
    check_golden("graph/homelab.mmd", render_mermaid(_view(homelab)))


def test_golden_homelab_full_dot(homelab):
    view = _view(homelab, helmreleases=True, substitution=True, group_by="folder", sources="all")
    check_golden("graph/homelab-full.dot", render_dot(view))


def test_golden_homelab_full_mermaid(homelab):
    view = _view(homelab, helmreleases=True, substitution=True, group_by="folder", sources="all")
    check_golden("graph/homelab-full.mmd", render_mermaid(view))


def test_golden_homelab_focus_mermaid(homelab):
    check_golden(
        "graph/homelab-focus.mmd", render_mermaid(_view(homelab, focus="platform", helmreleases=True))
    )


def test_output_is_byte_identical_across_runs():
    a = fluxgraph.load(HOMELAB)
    b = fluxgraph.load(HOMELAB)
    opts = {"helmreleases": True, "substitution": True, "group_by": "namespace"}
    assert render_dot(_view(a, **opts)) == render_dot(_view(b, **opts))
    assert render_mermaid(_view(a, **opts)) == render_mermaid(_view(b, **opts))


# -- findings and status ------------------------------------------------------------------


def test_findings_colour_nodes_by_worst_severity(homelab):
    view = _view(homelab, helmreleases=True)
    by_key = {n.key: n for n in view.nodes()}
    assert (by_key["ks:flux-system/apps"].severity, by_key["ks:flux-system/apps"].findings) == ("error", 2)
    assert "2 findings (error)" in by_key["ks:flux-system/apps"].lines
    assert (by_key["ks:flux-system/platform"].severity, by_key["ks:flux-system/platform"].findings) == (
        "error",
        1,
    )
    # the HelmRelease finding goes to the HelmRelease when HelmReleases are drawn ...
    assert (
        by_key["hr:longhorn-system/longhorn"].severity,
        by_key["hr:longhorn-system/longhorn"].findings,
    ) == ("info", 1)
    assert (
        by_key["ks:flux-system/infra-controllers"].severity,
        by_key["ks:flux-system/infra-controllers"].findings,
    ) == ("warning", 1)
    assert by_key["ks:flux-system/monitoring"].severity is None
    assert "1 finding outside any Kustomization" in view.clusters[0].label
    # ... and to its Kustomization when they are not
    plain = {n.key: n for n in _view(homelab).nodes()}
    assert (
        plain["ks:flux-system/infra-controllers"].severity,
        plain["ks:flux-system/infra-controllers"].findings,
    ) == ("warning", 2)


def test_checks_colour_their_nodes(homelab):
    """The live path: every finding run_checks ties to a Kustomization shows on its node."""
    report = run_checks(homelab)
    view = build_view(homelab.clusters, report.findings)
    nodes = {n.key: n for n in view.nodes()}
    for f in report.findings:
        if f.kustomization and f"ks:{f.kustomization}" in nodes:
            node = nodes[f"ks:{f.kustomization}"]
            assert node.findings >= 1 and Severity(node.severity).rank >= f.severity.rank


def test_status_styles(tmp_path):
    repo = _write_repo(tmp_path, [("good", "./apps/ok", []), ("nopath", "./apps/missing", ["good", "ghost"])])
    view = build_view(fluxgraph.load(repo).clusters)
    nodes = {n.key: n for n in view.nodes()}
    assert nodes["ks:flux-system/good"].status == "ok"
    assert nodes["ks:flux-system/nopath"].status == "missing"
    assert "path not found" in nodes["ks:flux-system/nopath"].lines
    # a dependsOn target that does not exist is drawn, as missing
    assert nodes["ks:flux-system/ghost"].status == "missing"
    assert "not in this cluster" in nodes["ks:flux-system/ghost"].lines
    dot = render_dot(view)
    assert 'style="filled,rounded,dotted"' in dot


# -- focus, depth, grouping ---------------------------------------------------------------


def test_focus_shows_ancestors_and_dependents(homelab):
    view = _view(homelab, focus="infra-configs")
    assert _ks_ids(view) == {
        "flux-system/flux-system",  # parent
        "flux-system/cluster-settings",  # dependencies
        "flux-system/infra-controllers",
        "flux-system/infra-configs",  # the focus
        "flux-system/platform",  # dependents, transitively
        "flux-system/monitoring",
        "flux-system/apps",
    }
    assert [n.key for n in view.nodes() if n.focus] == ["ks:flux-system/infra-configs"]
    assert "focus: flux-system/infra-configs" in view.clusters[0].label
    assert _ks_ids(_view(homelab, focus="flux-system/infra-configs")) == _ks_ids(view)


def test_focus_leaves_out_unrelated(homelab):
    # monitoring: parent + the dependsOn chain up; nothing depends on it
    assert _ks_ids(_view(homelab, focus="monitoring")) == {
        "flux-system/flux-system",
        "flux-system/monitoring",
        "flux-system/infra-configs",
        "flux-system/cluster-settings",
        "flux-system/infra-controllers",
    }


def test_depth_limits_hops(homelab):
    assert _ks_ids(_view(homelab, focus="cluster-settings", depth=0)) == {"flux-system/cluster-settings"}
    assert _ks_ids(_view(homelab, focus="cluster-settings", depth=1)) == {
        "flux-system/flux-system",
        "flux-system/cluster-settings",
        "flux-system/apps",
        "flux-system/infra-configs",
        "flux-system/platform",
    }
    assert "flux-system/monitoring" in _ks_ids(_view(homelab, focus="cluster-settings", depth=2))


def test_focus_follows_substitution_producers_only_with_substitution(homelab):
    # infra-controllers has no dependsOn (the planted hazard 4): only its substitution ties it
    # to cluster-settings, which applies ConfigMap cluster-settings
    assert "flux-system/cluster-settings" not in _ks_ids(_view(homelab, focus="infra-controllers", depth=1))
    view = _view(homelab, focus="infra-controllers", depth=1, substitution=True)
    assert "flux-system/cluster-settings" in _ks_ids(view)
    edges = {(e.src, e.dst, e.kind) for e in view.edges()}
    assert (
        "cfg_ConfigMap_flux_system_cluster_settings",
        "ks_flux_system_infra_controllers",
        "substituteFrom",
    ) in edges
    assert (
        "ks_flux_system_cluster_settings",
        "cfg_ConfigMap_flux_system_cluster_settings",
        "applies",
    ) in edges


def test_dependency_cycle_terminates(tmp_path):
    repo = _write_repo(
        tmp_path, [("a", "./apps/ok", ["b"]), ("b", "./apps/ok", ["a"]), ("c", "./apps/ok", ["c"])]
    )
    view = build_view(fluxgraph.load(repo).clusters, (), ViewOptions(focus="a"))
    assert _ks_ids(view) == {"flux-system/flux-system", "flux-system/a", "flux-system/b"}
    deps = {(e.src, e.dst) for e in view.edges() if e.kind == "dependsOn"}
    assert deps == {("ks_flux_system_a", "ks_flux_system_b"), ("ks_flux_system_b", "ks_flux_system_a")}
    # a self-dependency is not drawn as a loop
    assert not [e for e in build_view(fluxgraph.load(repo).clusters).edges() if e.src == e.dst]


def test_unknown_focus_suggests(homelab):
    with pytest.raises(FluxgraphError, match="did you mean.*infra-configs"):
        _view(homelab, focus="infra-config")
    with pytest.raises(FluxgraphError, match="needs --focus"):
        _view(homelab, depth=1)


def test_group_by_namespace(homelab):
    view = _view(homelab, group_by="namespace", helmreleases=True)
    groups = {g.label: {n.key for n in g.nodes} for g in view.clusters[0].groups}
    assert {k for k in groups["namespace: flux-system"] if k.startswith("ks:")} == {
        f"ks:{k}" for k in homelab.clusters[0].kustomizations
    }
    assert groups["namespace: longhorn-system"] == {
        "hr:longhorn-system/longhorn",
        "src:HelmRepository/longhorn-system/longhorn",
    }


def test_group_by_folder(homelab):
    assert folder_groups(homelab.clusters[0]) == {
        "flux-system/flux-system": "clusters",
        "flux-system/cluster-settings": "cluster",
        "flux-system/infra-controllers": "infrastructure",
        "flux-system/infra-configs": "infrastructure",
        "flux-system/platform": "platform",
        "flux-system/monitoring": "platform",
        "flux-system/apps": "apps",
    }
    view = _view(homelab, group_by="folder", helmreleases=True)
    groups = {g.label: {n.key for n in g.nodes} for g in view.clusters[0].groups}
    # a HelmRelease sits in the folder of the Kustomization that applies it
    assert "hr:longhorn-system/longhorn" in groups["folder: infrastructure"]
    assert "subgraph cluster_grp_infrastructure {" in render_dot(view)
    assert 'subgraph grp_infrastructure["folder: infrastructure"]' in render_mermaid(view)


def test_sources_option(homelab):
    def sources(view: GraphView) -> set[str]:
        return {n.key for n in view.nodes() if n.kind == "source"}

    # other: the cluster's own repository once, feeding the root
    view = _view(homelab)
    assert sources(view) == {"src:GitRepository/flux-system/flux-system"}
    assert [e.dst for e in view.edges() if e.kind == "sourceRef"] == ["ks_flux_system_flux_system"]
    assert len([e for e in _view(homelab, sources="all").edges() if e.kind == "sourceRef"]) == 7
    assert sources(_view(homelab, sources="none", helmreleases=True)) == set()
    ext = [
        n
        for n in _view(homelab, helmreleases=True).nodes()
        if n.key == "src:HelmRepository/kube-system/cilium"
    ]
    assert ext[0].status == "external" and "https://helm.cilium.io" in ext[0].lines


# -- IDs and escaping ---------------------------------------------------------------------

HOSTILE = [
    'a"b',
    "ünïcødé-名前",
    "x-->y",
    "%%{init: {}}%%",
    "end",
    "L" * 300,
    "a#b|c[d]<e>&f",
    "back\\slash",
    "new\nline",
    "o",
    "x_y",
    "x-y",
    "x.y",
    "",
    "名前",
    "`md`",
    "a;b",
]


def test_ids_are_safe_unique_and_deterministic():
    a, b = IdAllocator(), IdAllocator()
    ids = [a.get("ks", f"flux-system/{n}") for n in HOSTILE]
    assert all(SAFE_ID.match(i) for i in ids)
    assert len(set(ids)) == len(ids)
    assert all(len(i) <= 80 for i in ids)
    assert ids == [b.get("ks", f"flux-system/{n}") for n in HOSTILE]
    assert a.get("ks", "flux-system/x-y") == ids[HOSTILE.index("x-y")]  # stable per key
    assert a.get("ks", "flux-system/apps") == "ks_flux_system_apps"  # readable when it can be
    assert all(not i.startswith(("o", "x", "end")) for i in ids)


def _unescape_mermaid(text: str) -> str:
    def sub(m: re.Match[str]) -> str:
        code = m.group(1)
        return chr(int(code)) if code.isdigit() else {"quot": '"', "lt": "<", "gt": ">"}[code]

    return re.sub(r"#(\w+);", sub, text)


@pytest.mark.parametrize("name", HOSTILE)
def test_mermaid_escape(name):
    out = escape(name)
    assert not set(out) & set('"<>[]{}|%`\\&\n')
    assert re.sub(r"#\w+;", "", out).count("#") == 0  # every '#' starts an entity
    assert _unescape_mermaid(out) == name.replace("\n", " ")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", HOSTILE)
def test_dot_quoting_round_trips(name):
    g = pydot.Dot("t", graph_type="digraph")
    from fluxgraph.render.graph_dot import label, q

    g.add_node(pydot.Node("n", label=label([name, "x"]), tooltip=q(name)))
    parsed = pydot.graph_from_dot_data(g.to_string())
    assert parsed is not None
    node = parsed[0].get_node("n")[0]
    expected = name.replace("\n", " ").replace("\\", "\\\\").replace('"', '\\"')
    assert node.get("tooltip") == f'"{expected}"'
    assert node.get("label") == f'"{expected}\\nx"'


def test_shorten():
    assert shorten("abc") == "abc"
    long = shorten("a" * 30 + "b" * 100, 20)
    assert len(long) == 20 and long.startswith("a") and long.endswith("b") and "…" in long
    assert shorten("a\tb\x00c") == "a b c"


_MERMAID_LINE = [
    re.compile(r"^flowchart LR$"),
    re.compile(r"^%% .*$"),
    re.compile(r'^\s*subgraph [A-Za-z0-9_]+\["[^"]*"\]$'),
    re.compile(r"^\s*end$"),
    re.compile(r"^\s*direction LR$"),
    re.compile(r'^\s*[A-Za-z0-9_]+(\("[^"]*"\)|\[\["[^"]*"\]\]|\[\("[^"]*"\)\]|>"[^"]*"\]|\["[^"]*"\])$'),
    re.compile(r"^\s*[A-Za-z0-9_]+ (==>|-\.->|-->) [A-Za-z0-9_]+$"),
    re.compile(r'^\s*[A-Za-z0-9_]+\["[^"]*"\] (==>|-\.->|-->) [A-Za-z0-9_]+\["[^"]*"\]$'),
    re.compile(r"^\s*classDef [A-Za-z0-9_]+ [a-z-]+:[^ ,]+( [^ ,]+)?(,[a-z-]+:[^ ,]+( [^ ,]+)?)*$"),
    re.compile(r"^\s*class [A-Za-z0-9_]+(,[A-Za-z0-9_]+)* [A-Za-z0-9_]+$"),
    re.compile(r"^\s*linkStyle \d+(,\d+)* .+$"),
]


def _check_mermaid_shape(text: str) -> None:
    lines = text.splitlines()
    assert lines[0] == "flowchart LR" or lines[1] == "flowchart LR"
    for line in lines:
        assert any(p.match(line) for p in _MERMAID_LINE), f"unexpected Mermaid line: {line!r}"
        if '"' in line:
            labels = re.findall(r'"([^"]*)"', line)
            for lab in labels:
                # only our own <br> may look like a tag
                assert "<" not in lab.replace("<br>", "") and ">" not in lab.replace("<br>", "")
    ids = [m.group(1) for m in re.finditer(r"^\s*([A-Za-z0-9_]+)(?:\(\"|\[\[\"|\[\(\"|>\"|\[\")", text, re.M)]
    assert len(ids) == len(set(ids)), "a node is defined twice"
    assert "end" not in ids
    n_edges = sum(1 for line in lines if re.search(r" (==>|-\.->|-->) ", line))
    styled = sorted(int(i) for m in re.finditer(r"linkStyle ([\d,]+) ", text) for i in m.group(1).split(","))
    assert styled == list(range(n_edges)), "linkStyle indices must cover every edge once"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_mermaid_hostile_repository(tmp_path):
    names = [n for n in HOSTILE if n]
    repo = _write_repo(
        tmp_path,
        [
            (n, "./apps/ok" if i % 2 else f"./apps/{n}", [names[i - 1]] if i else [])
            for i, n in enumerate(names)
        ],
    )
    view = build_view(fluxgraph.load(repo).clusters, (), ViewOptions(substitution=True, group_by="folder"))
    text = render_mermaid(view)
    _check_mermaid_shape(text)
    assert "x--#gt;y" in text and "#37;#37;#123;init" in text and "a#quot;b" in text and "名前" in text
    dot = render_dot(view)
    parsed = pydot.graph_from_dot_data(dot)
    assert parsed is not None
    assert len(names) + 1 <= len([n for n in dot.splitlines() if n.startswith("ks_")])


def test_mermaid_and_dot_draw_the_same_graph(homelab):
    view = _view(homelab, helmreleases=True, substitution=True, group_by="namespace", legend=False)
    mmd = render_mermaid(view)
    dot = render_dot(view)
    m_edges = set(re.findall(r"^\s*([A-Za-z0-9_]+) (?:==>|-\.->|-->) ([A-Za-z0-9_]+)$", mmd, re.M))
    d_edges = set(re.findall(r"^([A-Za-z0-9_]+) -> ([A-Za-z0-9_]+) \[", dot, re.M))
    assert m_edges == d_edges == {(e.src, e.dst) for e in view.edges()}
    m_nodes = set(re.findall(r"^\s*([A-Za-z0-9_]+)(?:\(\"|\[\[\"|\[\(\"|>\")", mmd, re.M))
    d_nodes = set(re.findall(r"^([A-Za-z0-9_]+) \[shape", dot, re.M))
    assert m_nodes == d_nodes == {n.id for n in view.nodes()}


def test_mermaid_reduces_to_fit_limits(homelab):
    view = _view(homelab, helmreleases=True, substitution=True, group_by="namespace")
    full = render_mermaid(view)
    assert not full.startswith("%%") and view.warnings == []
    # a little too long: short IDs are enough, and nothing visible is lost
    small = render_mermaid(view, max_text=len(full) - 1)
    first = small.splitlines()[0]
    assert first.startswith("%% fluxgraph: reduced to fit") and first.endswith(": short node IDs")
    assert len(small) < len(full) and "short node IDs" in view.warnings[0]
    assert re.search(r"^  subgraph n0\[", small, re.M) and "ks_flux_system_apps" not in small
    _check_mermaid_shape(small)
    # much too long: labels go, then the legend and the groups
    view.warnings.clear()
    smaller = render_mermaid(view, max_text=len(full) // 2)
    assert "labels shortened to the id" in smaller.splitlines()[0]
    assert len(smaller) <= len(full) // 2
    _check_mermaid_shape(smaller)
    # too many edges: nodes are dropped (sources first), but text is shortened before each drop
    view.warnings.clear()
    n_edges = len(re.findall(r" (?:==>|-\.->|-->) ", full))
    fewer = render_mermaid(view, max_edges=n_edges - 1)
    assert len(re.findall(r" (?:==>|-\.->|-->) ", fewer)) < n_edges
    assert fewer.splitlines()[0].endswith("no legend") or "no sources" in fewer.splitlines()[0]
    _check_mermaid_shape(fewer)
    view.warnings.clear()
    render_mermaid(view, max_text=100)
    assert "GitHub will not render it" in view.warnings[-1]


def test_multiple_clusters_get_their_own_subgraphs(tmp_path):
    repo = _write_repo(tmp_path, [("app", "./apps/ok", [])], clusters=("prod", "staging"))
    view = build_view(fluxgraph.load(repo).clusters)
    assert [c.name for c in view.clusters] == ["clusters/prod", "clusters/staging"]
    ids = [n.id for n in view.nodes()]
    assert len(ids) == len(set(ids))
    assert {i[:2] for i in ids} == {"c0", "c1"}
    dot = render_dot(view)
    assert dot.count("subgraph cluster_cl_") == 2
    assert render_mermaid(view).count("  subgraph cl_") == 2


# -- Graphviz -----------------------------------------------------------------------------


def test_run_dot_arguments(monkeypatch):
    calls = []

    def fake_run(args, **kwargs):
        calls.append((args, kwargs))
        return subprocess.CompletedProcess(args, 0, b"<svg/>", b"")

    monkeypatch.setattr(graph_formats.shutil, "which", lambda name: "/usr/bin/dot" if name == "dot" else None)
    monkeypatch.setattr(graph_formats.subprocess, "run", fake_run)
    assert run_dot("digraph {}", "svg") == b"<svg/>"
    args, kwargs = calls[0]
    assert args == ["/usr/bin/dot", "-Tsvg"]
    assert kwargs["input"] == b"digraph {}" and kwargs["timeout"] > 0 and not kwargs.get("shell")
    with pytest.raises(ValueError):
        run_dot("digraph {}", "pdf -o /etc/passwd")


def test_run_dot_failures(monkeypatch):
    monkeypatch.setattr(graph_formats.shutil, "which", lambda name: "/usr/bin/dot")

    def timeout(args, **kwargs):
        raise subprocess.TimeoutExpired(args, kwargs["timeout"])

    monkeypatch.setattr(graph_formats.subprocess, "run", timeout)
    with pytest.raises(GraphvizError, match="did not finish"):
        run_dot("digraph {}", "png")
    monkeypatch.setattr(
        graph_formats.subprocess,
        "run",
        lambda args, **kw: subprocess.CompletedProcess(args, 1, b"", b"Error: syntax error in line 1"),
    )
    with pytest.raises(GraphvizError, match="syntax error"):
        run_dot("digraph {", "svg")
    monkeypatch.setattr(graph_formats.shutil, "which", lambda name: None)
    with pytest.raises(GraphvizMissing, match="apt-get install graphviz"):
        run_dot("digraph {}", "svg")


@pytest.fixture
def no_dot(monkeypatch):
    monkeypatch.setattr(graph_formats.shutil, "which", lambda name: None)


def test_cli_svg_without_dot_writes_dot_and_exits_2(no_dot, tmp_path):
    out = tmp_path / "graph.svg"
    res = CliRunner().invoke(main, ["graph", str(HOMELAB), "--format", "svg", "--output", str(out)])
    assert res.exit_code == 2
    assert "apt-get install graphviz" in res.stderr and "brew install graphviz" in res.stderr
    assert "graph.dot" in res.stderr
    assert not out.exists()
    assert (tmp_path / "graph.dot").read_text().startswith("digraph fluxgraph {")


def test_cli_png_without_dot_to_stdout(no_dot):
    res = CliRunner().invoke(main, ["graph", str(HOMELAB), "--format", "png"])
    assert res.exit_code == 2
    assert res.stdout.startswith("digraph fluxgraph {")
    assert "not on PATH" in res.stderr


def test_cli_suffix_picks_the_format(no_dot, tmp_path):
    # asking for graph.png by name is asking for PNG: same fallback and exit status
    res = CliRunner().invoke(main, ["graph", str(HOMELAB), "-o", str(tmp_path / "graph.png")])
    assert res.exit_code == 2 and (tmp_path / "graph.dot").exists()
    res = CliRunner().invoke(main, ["graph", str(HOMELAB), "-o", str(tmp_path / "graph.mmd")])
    assert res.exit_code == 0 and (tmp_path / "graph.mmd").read_text().startswith("flowchart LR")
    res = CliRunner().invoke(main, ["graph", str(HOMELAB), "-o", str(tmp_path / "graph.gv")])
    assert res.exit_code == 0 and (tmp_path / "graph.gv").read_text().startswith("digraph fluxgraph {")


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
def test_cli_renders_svg_and_png(tmp_path):
    svg = tmp_path / "g.svg"
    res = CliRunner().invoke(
        main, ["graph", str(HOMELAB), "--format", "svg", "-o", str(svg), "--helmreleases"]
    )
    assert res.exit_code == 0, res.output
    text = html.unescape(svg.read_text())
    assert "<svg" in text and "flux-system/infra-controllers" in text and "longhorn-system/longhorn" in text
    png = tmp_path / "g.png"
    res = CliRunner().invoke(main, ["graph", str(HOMELAB), "-o", str(png), "--focus", "apps"])
    assert res.exit_code == 0, res.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
def test_hostile_names_render_through_graphviz(tmp_path):
    names = [n for n in HOSTILE if n]
    repo = _write_repo(tmp_path, [(n, "./apps/ok", []) for n in names])
    svg = html.unescape(run_dot(render_dot(build_view(fluxgraph.load(repo).clusters)), "svg").decode())
    for frag in ('a"b', "x-->y", "%%{init: {}}%%", "back\\slash", "a#b|c[d]<e>&f", "ünïcødé-名前"):
        assert frag in svg


# -- CLI ----------------------------------------------------------------------------------


def test_cli_mermaid_and_dot():
    runner = CliRunner()
    res = runner.invoke(main, ["graph", str(HOMELAB), "--format", "mermaid", "--group-by", "folder"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("flowchart LR") and 'subgraph grp_apps["folder: apps"]' in res.stdout
    again = runner.invoke(main, ["graph", str(HOMELAB), "--format", "mermaid", "--group-by", "folder"])
    assert again.stdout == res.stdout
    res = runner.invoke(
        main,
        [
            "graph",
            str(HOMELAB),
            "--format",
            "dot",
            "--focus",
            "flux-system/platform",
            "--depth",
            "1",
            "--no-legend",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "ks_flux_system_platform" in res.stdout and "ks_flux_system_monitoring" not in res.stdout
    assert "cluster_legend" not in res.stdout


def test_cli_findings_switch(monkeypatch):
    import fluxgraph.engine

    calls = []
    real = fluxgraph.engine.run_checks
    monkeypatch.setattr(fluxgraph.engine, "run_checks", lambda repo, **kw: calls.append(1) or real(repo, **kw))
    assert CliRunner().invoke(main, ["graph", str(HOMELAB), "--format", "dot"]).exit_code == 0
    assert (
        CliRunner().invoke(main, ["graph", str(HOMELAB), "--format", "dot", "--no-findings"]).exit_code == 0
    )
    assert CliRunner().invoke(main, ["graph", str(HOMELAB), "--format", "text"]).exit_code == 0
    assert calls == [1]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--format", "json", "--focus", "apps"], "apply to the dot, svg, png and mermaid formats"),
        (["--format", "mermaid", "--focus", "nope"], "no Kustomization with that id or name"),
        (["--format", "dot", "--depth", "1"], "--depth needs --focus"),
        (["--format", "dot", "--depth", "-1", "--focus", "apps"], "-1"),
        (["--format", "dot", "--group-by", "kind"], "kind"),
    ],
)
def test_cli_usage_errors(args, message):
    res = CliRunner().invoke(main, ["graph", str(HOMELAB), *args])
    assert res.exit_code == 2
    assert message in res.stderr


def test_cli_text_and_json_unchanged(tmp_path):
    res = CliRunner().invoke(main, ["graph", str(HOMELAB)])
    assert res.exit_code == 0 and res.stdout.startswith("cluster clusters/homelab")
    out = tmp_path / "g.json"
    res = CliRunner().invoke(main, ["graph", str(HOMELAB), "-o", str(out)])
    assert (
        res.exit_code == 0
        and json.loads(out.read_text())["clusters"][0]["cluster"]["name"] == "clusters/homelab"
    )


def test_registry_lists_every_cli_format():
    from fluxgraph.cli import GRAPH_FORMAT_NAMES

    assert sorted(GRAPH_FORMATS) == sorted(GRAPH_FORMAT_NAMES)
    assert {f.name for f in GRAPH_FORMATS.values() if f.graphviz} == {"svg", "png"}


# -- the corpus ---------------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.skipif(not (CORPUS / "joryirving__home-ops").is_dir(), reason="shared corpus not present")
def test_large_repository_fits_github_mermaid_limits():
    repo = fluxgraph.load(CORPUS / "joryirving__home-ops")
    assert sum(len(c.kustomizations) for c in repo.clusters) > 200
    view = build_view(
        repo.clusters, run_checks(repo).findings, ViewOptions(helmreleases=True, group_by="namespace")
    )
    text = render_mermaid(view)
    assert len(text) <= 50_000
    _check_mermaid_shape(text)
    assert len(re.findall(r" (?:==>|-\.->|-->) ", text)) <= 500
    # grouping by folder finds the per-namespace app folders
    main_cluster = next(c for c in repo.clusters if c.name == "kubernetes/clusters/main")
    folders = set(folder_groups(main_cluster).values())
    assert "kubernetes/apps/base/observability" in folders and len(folders) > 10
    # a focused view of a Kustomization with findings stays small and shows them
    focused = build_view(repo.clusters, run_checks(repo).findings, ViewOptions(focus="downloads/sonarr"))
    assert len(_ks_ids(focused)) < 10
    assert any(n.severity for n in focused.nodes())


# -- helpers ------------------------------------------------------------------------------


def _write_repo(
    root: Path, kustomizations: list[tuple[str, str, list[str]]], clusters: tuple[str, ...] = ("prod",)
) -> Path:
    """A repository of ``clusters/<name>/ks.yaml`` Flux Kustomizations (name, path, dependsOn)
    building ``apps/ok`` (one ConfigMap) or a missing path."""
    (root / "apps" / "ok").mkdir(parents=True)
    (root / "apps" / "ok" / "cm.yaml").write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "vars", "namespace": "flux-system"},
                "data": {"A": "b"},
            }
        )
    )
    docs = []
    for name, path, deps in kustomizations:
        spec: dict = {
            "interval": "10m",
            "path": path,
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
        }
        if deps:
            spec["dependsOn"] = [{"name": d} for d in deps]
        spec["postBuild"] = {"substituteFrom": [{"kind": "ConfigMap", "name": "vars"}]}
        docs.append(
            {
                "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
                "kind": "Kustomization",
                "metadata": {"name": name, "namespace": "flux-system"},
                "spec": spec,
            }
        )
    for c in clusters:
        (root / "clusters" / c).mkdir(parents=True)
        (root / "clusters" / c / "ks.yaml").write_text("\n---\n".join(json.dumps(d) for d in docs))
    return root


def test_the_diagram_and_the_checks_agree_on_who_makes_a_substitute_from_object():
    """A Secret an ExternalSecret writes is found by the checks (``fluxgraph.ownership``): the
    diagram draws it as made in the cluster, with the Kustomization applying its maker as its
    producer, not as "not in repository"."""
    from fluxgraph import ownership

    repo = fluxgraph.load(FIXTURES / "repos" / "cluster-adds" / "materialized")
    [c] = repo.clusters
    view = build_view(repo.clusters, [], ViewOptions(substitution=True))
    [secret] = [n for n in view.nodes() if n.key == "cfg:Secret/flux-system/db-secrets"]
    assert secret.status == "ok" and "made in the cluster" in secret.lines
    makers = ownership.producer_owners(c, "Secret", "flux-system", "db-secrets")
    assert makers and all(p.how for p in ownership.producers(c, "Secret", "flux-system", "db-secrets"))
    key_of = {n.id: n.key for n in view.nodes()}
    drawn = {(key_of[e.src], key_of[e.dst]) for e in view.edges() if e.kind == "applies"}
    assert {(f"ks:{m}", secret.key) for m in makers} <= drawn


def test_the_graph_names_the_substitute_from_object_of_the_cluster_the_kustomization_lives_in(tmp_path):
    """A Kustomization that lives in a remote cluster (applied there by a parent with
    spec.kubeConfig) reads its substituteFrom in that cluster: the graph's object node is the
    remote cluster's, the one the parent applies there, not a missing local one."""
    root = tmp_path / "repo"
    (root / "clusters" / "lab" / "flux-system").mkdir(parents=True)
    (root / "remote" / "app").mkdir(parents=True)
    (root / "clusters" / "lab" / "flux-system" / "gotk-sync.yaml").write_text(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\n"
        "spec: {url: https://example.com/r.git, interval: 1m}\n---\n"
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\n"
        "spec: {interval: 1m, path: ./clusters/lab, sourceRef: {kind: GitRepository, name: flux-system}, prune: true}\n"
    )
    (root / "clusters" / "lab" / "remote.yaml").write_text(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: remote, namespace: flux-system}\n"
        "spec: {interval: 1m, path: ./remote, sourceRef: {kind: GitRepository, name: flux-system}, prune: true,\n"
        "  kubeConfig: {secretRef: {name: edge-kubeconfig}}}\n"
    )
    (root / "remote" / "vars.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vars, namespace: flux-system}\ndata: {A: b}\n"
    )
    (root / "remote" / "app.yaml").write_text(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: app, namespace: flux-system}\n"
        "spec: {interval: 1m, path: ./remote/app, sourceRef: {kind: GitRepository, name: flux-system}, prune: true,\n"
        "  postBuild: {substituteFrom: [{kind: ConfigMap, name: vars}]}}\n"
    )
    (root / "remote" / "app" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\ndata: {a: \"${A}\"}\n"
    )
    [c] = fluxgraph.load(root).clusters
    app = c.kustomizations["flux-system/app"]
    assert app.home == "Secret/flux-system/edge-kubeconfig"
    g = c.graph
    [node] = [v for _, v, k in g.out_edges("ks:flux-system/app", keys=True) if k == "substituteFrom"]
    assert node == "obj:ConfigMap/flux-system/vars@Secret/flux-system/edge-kubeconfig"
    assert ("ks:flux-system/remote", node) in {(u, v) for u, v, k in g.in_edges(node, keys=True) if k == "applies"}
    assert not g.nodes[node].get("missing")


def _big_repo(root: Path, n: int) -> Path:
    """A root applying ``tiers`` (which applies ``n`` apps); app-1 dependsOn app-0 and app-2
    dependsOn app-1, the rest stand alone."""
    from .conftest import flux_ks, gotk_sync, write_tree

    files = {
        "clusters/lab/flux-system/gotk-sync.yaml": gotk_sync("lab", "lab"),
        "clusters/lab/flux-system/kustomization.yaml": "resources:\n  - gotk-sync.yaml\n",
        "clusters/lab/tiers.yaml": flux_ks("tiers", "./tiers"),
        "tiers/kustomization.yaml": "resources:\n" + "".join(f"  - app-{i}.yaml\n" for i in range(n)),
    }
    for i in range(n):
        dep = f"dependsOn:\n  - name: app-{i - 1}\n" if i in (1, 2) else ""
        files[f"tiers/app-{i}.yaml"] = flux_ks(f"app-{i}", f"./apps/app-{i}", dep)
        files[f"apps/app-{i}/kustomization.yaml"] = "resources:\n  - cm.yaml\n"
        files[f"apps/app-{i}/cm.yaml"] = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-{i}\n  namespace: default\n"
    return write_tree(root, files)


def test_a_big_cluster_is_drawn_ranked(tmp_path):
    from fluxgraph.api import load
    from fluxgraph.render.graph_view import RANKED_ABOVE

    repo = load(_big_repo(tmp_path, RANKED_ABOVE + 5))
    view = build_view(repo.clusters)
    [c] = view.clusters
    assert c.ranked and "ranked" in c.label[-1]
    kinds = {n.id: n.kind for n in c.all_nodes()}
    # "applies" between Kustomizations is drawn as boxes, one per parent; dependsOn ranks
    assert not [e for e in c.edges if e.kind == "applies" and kinds[e.src] == kinds[e.dst] == "kustomization"]
    assert {e.kind for e in c.edges} >= {"dependsOn"}
    boxes = {g.label: g for g in c.groups}
    tiers = boxes["applied by flux-system/tiers"]
    drawn = {n.key for n in tiers.nodes}
    assert {"ks:flux-system/app-0", "ks:flux-system/app-1", "ks:flux-system/app-2"} <= drawn
    # the Kustomizations with nothing to show are one compact list in their box
    [listed] = [n for n in tiers.nodes if n.kind == "list"]
    assert listed.title == f"{RANKED_ABOVE + 2} Kustomizations without dependsOn or findings"
    assert "flux-system/app-3" in " ".join(listed.details) and "ks:flux-system/app-3" not in drawn
    dot = render_dot(view)
    pydot.graph_from_dot_data(dot)
    assert "applied by flux-system/tiers" in dot and "Kustomizations listed" in dot
    mermaid = render_mermaid(view)
    _check_mermaid_shape(mermaid)
    assert "without dependsOn or findings" in mermaid


def test_a_finding_keeps_a_node_out_of_the_list(tmp_path):
    from fluxgraph.api import load

    repo = load(_big_repo(tmp_path, 40))
    [model] = repo.clusters
    f = Finding(Location("tiers/app-7.yaml", 1), "x", Severity.WARNING, "m", cluster=model.name, kustomization="flux-system/app-7")
    [c] = build_view(repo.clusters, [f]).clusters
    keys = {n.key for n in c.all_nodes()}
    assert "ks:flux-system/app-7" in keys and "ks:flux-system/app-8" not in keys


def test_layout_full_and_small_clusters_keep_the_full_picture(tmp_path, homelab):
    from fluxgraph.api import load

    repo = load(_big_repo(tmp_path, 40))
    [c] = build_view(repo.clusters, options=ViewOptions(layout="full")).clusters
    assert not c.ranked and not any(n.kind == "list" for n in c.all_nodes())
    assert any(e.kind == "applies" for e in c.edges)
    assert not any(c.ranked for c in _view(homelab).clusters)  # 7 Kustomizations
    [r] = build_view(homelab.clusters, options=ViewOptions(layout="ranked")).clusters
    assert r.ranked
    with pytest.raises(FluxgraphError, match="--layout"):
        build_view(homelab.clusters, options=ViewOptions(layout="sideways"))
    res = CliRunner().invoke(main, ["graph", str(tmp_path), "--format", "dot", "--layout", "full"])
    assert res.exit_code == 0 and "applied by" not in res.output
