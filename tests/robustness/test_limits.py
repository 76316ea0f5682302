"""Bounded resources: alias bombs, deep nesting, huge files, many files and directories,
amplifying patches and catastrophic regular expressions all end in a finding, quickly.

The heavy cases (20 MB file of 20,000 objects; 50,000 files) run ``fluxgraph`` in a
subprocess and measure its CPU time and peak memory (``ru_maxrss``); see docs/security.md for
the figures. ``FLUXGRAPH_HEAVY_TESTS=1`` also runs the 50,000-file case (about 40 s of CPU);
a 5,000-file version always runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fluxgraph import repofs, yamlio
from fluxgraph.api import load
from fluxgraph.kustomize import json6902, replacements, selector
from fluxgraph.kustomize.errors import KustomizeError

from .conftest import (
    HEAVY,
    all_problems,
    check_json,
    configmap,
    findings_of,
    flux_ks,
    infra_still_analysed,
    load_ok,
    make_repo,
    outputs,
)

MiB = 1024 * 1024


def billion_laughs(levels: int = 9, prefix: str = "") -> str:
    lines = [f"{prefix}a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"{prefix}a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]")
    return "\n".join(lines) + "\n"


def _limit_findings(report):
    return findings_of(report, "input-limit")


@pytest.mark.parametrize("where", ["resource", "kustomization", "flux-object"])
def test_alias_bomb(tmp_path, where):
    files = {
        "resource": {"apps/bomb.yaml": configmap("bomb") + billion_laughs()},
        "kustomization": {"apps/kustomization.yaml": "resources: [app.yaml]\n" + billion_laughs()},
        "flux-object": {"clusters/prod/bomb.yaml": flux_ks("bomb", "./apps") + billion_laughs(prefix="")},
    }[where]
    repo = make_repo(tmp_path / "repo", files)
    t = time.process_time()
    report = check_json(repo)
    assert time.process_time() - t < 20
    [f] = _limit_findings(report)
    assert "alias expansion" in f["message"] and f["line"] >= 1
    assert not findings_of(report, "invalid-yaml")
    if where != "flux-object":  # a broken file in clusters/prod fails the root build itself
        infra_still_analysed(load(repo))


def test_alias_bomb_of_mappings_and_merge_keys(tmp_path):
    maps = ["m0: &m0 {k0: x, k1: x, k2: x, k3: x, k4: x, k5: x, k6: x, k7: x, k8: x, k9: x}"]
    for i in range(1, 9):
        maps.append(f"m{i}: &m{i} {{{', '.join(f'k{j}: *m{i - 1}' for j in range(10))}}}")
    merges = ["g0: &g0 {k0: [x, x, x, x, x, x, x, x]}"]
    for i in range(1, 40):
        merges.append(f"g{i}: &g{i} {{<<: [*g{i - 1}], k{i}: [*g{i - 1}, *g{i - 1}]}}")
    repo = make_repo(tmp_path / "repo", {"apps/maps.yaml": "\n".join(maps) + "\n", "apps/merges.yaml": "\n".join(merges) + "\n"})
    report = check_json(repo)
    assert _limit_findings(report)
    infra_still_analysed(load(repo))


def test_small_aliases_are_fine(tmp_path):
    text = configmap("shared").replace("\ndata:\n", "\n  labels: &l {app: x}\n  annotations: *l\ndata:\n")
    model = load_ok(make_repo(tmp_path / "repo", {"apps/shared.yaml": text}))
    [obj] = [o for o in model.clusters[0].objects() if o.ref.name == "shared"]
    assert obj.data["metadata"]["annotations"] == {"app": "x"}


@pytest.mark.parametrize(
    "shape",
    ["flow-sequence", "flow-mapping", "block-sequence", "quoted-closers", "block-mapping"],
)
def test_20000_deep_nesting(tmp_path, shape):
    n = 20_000
    body = {
        "flow-sequence": "x: " + "[" * n + "]" * n,
        "flow-mapping": "x: " + "{a: " * n + "1" + "}" * n,
        "block-sequence": "x:\n" + "- " * n + "leaf",
        # closers inside quoted strings defeat a naive bracket count
        "quoted-closers": "x: " + '["]]]",' * n + "]" * n,
        # indentation makes this one quadratic in size: the file limit stops it first
        "block-mapping": "x:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(3000)),
    }[shape]
    repo = make_repo(tmp_path / "repo", {"apps/deep.yaml": configmap("deep") + body + "\n"})
    t = time.process_time()
    model = load_ok(repo)
    assert time.process_time() - t < 10
    report = check_json(repo)
    [f] = _limit_findings(report)
    assert f["file"] == "apps/deep.yaml" and "nests deeper than 256" in f["message"]
    infra_still_analysed(model)


def test_flow_nesting_is_linear_time():
    """libyaml's scanner is quadratic in flow depth; fluxgraph stops at the limit first."""
    t = time.process_time()
    res = yamlio.load_documents("deep.yaml", b"x: " + b"[" * 2_000_000 + b"]" * 2_000_000)
    assert time.process_time() - t < 5
    assert res.errors[0].code == "input-limit"


def test_many_deep_documents_in_one_file():
    doc = "x: " + "[" * 3000 + "]" * 3000 + "\n---\n"
    t = time.process_time()
    res = yamlio.load_documents("many.yaml", ("a: 1\n---\n" + doc * 500).encode())
    assert time.process_time() - t < 10
    # the first document over the limit stops the file, as a syntax error does
    assert [(e.code, e.line) for e in res.errors] == [("input-limit", 3)]


def test_file_over_the_size_limit_is_not_read(tmp_path):
    repo = make_repo(tmp_path / "repo")
    big = repo / "apps" / "huge.yaml"
    with open(big, "wb") as fh:  # sparse: nothing is written, nothing may be read
        fh.truncate(repofs.MAX_FILE_BYTES + 1)
    report = check_json(repo)
    [f] = _limit_findings(report)
    assert f["file"] == "apps/huge.yaml" and "byte limit" in f["message"]
    infra_still_analysed(load(repo))


def _remove_chain(top: Path) -> None:
    """Delete a directory chain too deep for shutil.rmtree's recursion, one level at a time."""
    i = 0
    cur = top
    while cur.exists():
        for f in cur.iterdir():
            if f.name != "d":
                f.unlink()
        nxt = top.parent / f"chain{i}"
        if (cur / "d").exists():
            os.rename(cur / "d", nxt)
        os.rmdir(cur)
        cur, i = nxt, i + 1


def test_directory_depth_limit(tmp_path, request):
    repo = make_repo(tmp_path / "repo")
    request.addfinalizer(lambda: _remove_chain(repo / "apps" / "d"))
    fd = os.open(repo / "apps", os.O_RDONLY)
    try:
        for _ in range(1500):  # deeper than PATH_MAX allows to name in one string
            os.mkdir("d", dir_fd=fd)
            nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        wfd = os.open("deep.yaml", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
        os.write(wfd, configmap("deepest").encode())
        os.close(wfd)
    finally:
        os.close(fd)
    t = time.process_time()
    report = check_json(repo)
    assert time.process_time() - t < 20
    [f] = _limit_findings(report)
    assert f["file"].startswith("apps/d/d/") and str(repofs.MAX_PATH_DEPTH) in f["message"]
    model = load(repo)
    infra_still_analysed(model)
    assert "deepest" not in {o.ref.name for o in model.clusters[0].objects()}


def test_directory_count_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(repofs, "MAX_DIRECTORIES", 50)
    files = {f"zz/d{i:03d}/cm.yaml": configmap(f"cm-{i}") for i in range(100)}
    repo = make_repo(tmp_path / "repo", files)
    model = load(repo)  # clusters/ sorts before zz/: listed within the budget
    limits = [p for p in all_problems(model) if p.code == "input-limit"]
    assert limits and "more than 50 directories" in limits[0].message
    infra_still_analysed(model)


def test_kustomization_nesting_limit(tmp_path):
    files = {"apps/kustomization.yaml": "resources: [l0]\n"}
    for i in range(80):
        files[f"apps/{'/'.join(f'l{j}' for j in range(i + 1))}/kustomization.yaml"] = f"resources: [l{i + 1}]\n" if i < 79 else "resources: []\n"
    repo = make_repo(tmp_path / "repo", files)
    report = check_json(repo)
    [f] = _limit_findings(report)
    assert "nesting deeper than 64" in f["message"]


def test_json6902_copy_doubling_is_bounded(tmp_path):
    ops = "".join(f"      - {{op: copy, from: /data, path: /data/k{i}}}\n" for i in range(64))
    k = f"resources: [app.yaml]\npatches:\n  - target: {{kind: ConfigMap}}\n    patch: |\n{ops}"
    repo = make_repo(tmp_path / "repo", {"apps/kustomization.yaml": k})
    t = time.process_time()
    report = check_json(repo)
    assert time.process_time() - t < 20
    [f] = findings_of(report, "kustomize-build-error")
    assert "would copy more than" in f["message"] and f["file"] == "apps/kustomization.yaml"


def test_json6902_depth_and_alias_bombs():
    target = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}}
    deep = [{"op": "add", "path": "/data" + "/a" * i, "value": {}} for i in range(300)]
    with pytest.raises(KustomizeError, match="deeper than"):
        json6902.apply_json6902(target, deep)
    bomb = "- &a0 {op: add, path: /data/x, value: [x, x, x, x, x, x, x, x, x, x]}\n"
    bomb += "".join(f"- {{op: add, path: /data/x, value: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]}}\n" for i in range(1, 9))
    t = time.process_time()
    with pytest.raises(KustomizeError, match="alias expansion"):
        json6902.apply_json6902(target, bomb)
    assert time.process_time() - t < 10


def test_replacement_doubling_is_bounded():
    res = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}]
    reps = [
        {
            "source": {"kind": "ConfigMap", "name": "c", "fieldPath": "data"},
            "targets": [{"select": {"kind": "ConfigMap"}, "fieldPaths": [f"data.k{i}"], "options": {"create": True}}],
        }
        for i in range(64)
    ]
    t = time.process_time()
    with pytest.raises(KustomizeError, match="copy more than"):
        replacements.apply_replacements(res, reps)
    assert time.process_time() - t < 20


def test_replacement_values_are_copies_not_shared():
    res = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "src"}, "data": {"m": {"k": "v"}}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dst"}, "data": {}},
    ]
    reps = [{"source": {"kind": "ConfigMap", "name": "src", "fieldPath": "data.m"},
             "targets": [{"select": {"name": "dst"}, "fieldPaths": ["data.m"], "options": {"create": True}}]}]
    replacements.apply_replacements(res, reps)
    res[1]["data"]["m"]["k"] = "changed"
    assert res[0]["data"]["m"]["k"] == "v"


def test_replacement_field_path_depth_is_bounded():
    res = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}]
    reps = [{"source": {"kind": "ConfigMap", "name": "c", "fieldPath": "data.a"},
             "targets": [{"select": {"kind": "ConfigMap"}, "fieldPaths": [".".join(["x"] * 5000)], "options": {"create": True}}]}]
    with pytest.raises(KustomizeError, match="more than 256 parts"):
        replacements.apply_replacements(res, reps)


@pytest.mark.parametrize("pattern", ["(a|a)*b", "(a+)+b", "(a|aa)*c", "a*a*a*a*a*a*a*a*a*a*b", "(.*a){12}x"])
def test_patch_target_regex_is_linear_time(tmp_path, pattern):
    """kustomize matches target names with RE2 (linear time); a backtracking matcher takes
    exponential time on these. The names are 200 characters of `a`."""
    name = "a" * 200
    repo = make_repo(
        tmp_path / "repo",
        {
            "apps/a.yaml": configmap(name),
            "apps/kustomization.yaml": (
                "resources: [app.yaml, a.yaml]\npatches:\n  - target:\n      name: '" + pattern + "'\n"
                "    patch: |\n      - {op: add, path: /data/patched, value: 'yes'}\n"
            ),
        },
    )
    t = time.process_time()
    model = load_ok(repo)
    assert time.process_time() - t < 10
    apps = model.clusters[0].kustomizations["flux-system/apps"]
    assert apps.status == "built"
    assert all("patched" not in o.data["data"] for o in apps.objects)


def test_unsupported_regex_syntax_is_a_build_error_as_in_re2():
    for pattern in (r"(a)\1", "(?=a)a", "a{1001}", "a++"):
        with pytest.raises(KustomizeError, match="invalid regular expression"):
            selector.matches({"kind": "ConfigMap", "metadata": {"name": "a"}}, {"name": pattern})


# -- heavy cases ---------------------------------------------------------------------------

_MEASURE = (
    "import resource, sys, time\n"
    "from fluxgraph.cli import main\n"
    "t = time.time()\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "finally:\n"
    "    ru = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    sys.stderr.write(f'MEASURE cpu={ru.ru_utime + ru.ru_stime:.1f} wall={time.time() - t:.1f} maxrss_mib={ru.ru_maxrss / 1024:.0f}\\n')\n"
)


def measure(*args: str) -> tuple[subprocess.CompletedProcess[bytes], dict[str, float]]:
    """Run ``fluxgraph ARGS`` in a fresh interpreter; its CPU seconds and peak RSS (MiB)."""
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *args], capture_output=True, timeout=600, check=False)
    line = [ln for ln in proc.stderr.decode().splitlines() if ln.startswith("MEASURE")][-1]
    stats = {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
    print(f"fluxgraph {' '.join(args[:1])}: {line}")  # shown with -s / in the report
    return proc, stats


def big_file_repo(root: Path, objects: int, size: int) -> Path:
    pad = "x" * max(0, size // objects - 100)
    chunks = [
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: default\n"
        f"  labels: {{app: a{i % 50}}}\ndata:\n  key: \"{pad}\"\n---\n"
        for i in range(objects)
    ]
    return make_repo(root, {"apps/big.yaml": "".join(chunks)})


@pytest.mark.heavy
@pytest.mark.parametrize("command", ["check", "graph"])
def test_heavy_20mb_file_of_20000_objects(tmp_path, command):
    repo = big_file_repo(tmp_path / "repo", 20_000, 20 * MiB)
    assert (repo / "apps/big.yaml").stat().st_size >= 20 * MiB
    proc, stats = measure(command, str(repo), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr.decode()[-2000:]
    out = json.loads(proc.stdout)
    if command == "graph":
        apps = next(k for k in out["clusters"][0]["kustomizations"] if k["id"] == "flux-system/apps")
        assert len(apps["inventory"]) == 20_001
    assert stats["maxrss_mib"] < 1024
    assert stats["cpu"] < 40  # about 15 s on an idle 2-core runner


def many_files_repo(root: Path, n: int) -> Path:
    repo = make_repo(root)
    for i in range(n):
        d = repo / "apps" / f"d{i // 500:03d}"
        if i % 500 == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"cm{i:05d}.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: default\ndata:\n  k: v\n"
        )
    return repo


@pytest.mark.heavy
def test_heavy_5000_files(tmp_path):
    repo = many_files_repo(tmp_path / "repo", 5_000)
    proc, stats = measure("check", str(repo), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr.decode()[-2000:]
    assert stats["maxrss_mib"] < 1024 and stats["cpu"] < 20


@pytest.mark.heavy
@pytest.mark.skipif(not HEAVY, reason="about 40 s of CPU: set FLUXGRAPH_HEAVY_TESTS=1")
@pytest.mark.parametrize("command", ["check", "graph"])
def test_heavy_50000_files(tmp_path, command):
    repo = many_files_repo(tmp_path / "repo", 50_000)
    proc, stats = measure(command, str(repo), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr.decode()[-2000:]
    assert stats["maxrss_mib"] < 1024
    assert stats["cpu"] < 120


def test_outputs_of_limited_repository_do_not_crash(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {"apps/bomb.yaml": billion_laughs(), "apps/deep.yaml": "x: " + "[" * 5000 + "]" * 5000 + "\n"},
    )
    outputs(repo)


@pytest.mark.parametrize(
    "body",
    [
        "x:\n" + "- " * 100_000 + "leaf",  # compact block sequences
        "? " * 100_000 + "k",  # compact complex keys
        # libyaml also starts a line at \r, NEL, LS and PS, and skips a BOM at its start
        "x:\r" + "- " * 100_000 + "leaf",
        "x:\u0085" + "- " * 100_000 + "leaf",
        "x:\u2028" + "- " * 100_000 + "leaf",
        "x:\n\ufeff" + "- " * 100_000 + "leaf",
    ],
    ids=["block-sequence-100k", "complex-keys-100k", "after-cr", "after-nel", "after-ls", "after-bom"],
)
def test_100000_deep_block_nesting_is_a_located_error_not_a_crash(tmp_path, body):
    """The C composer recurses once per level: 100,000 levels overflowed the C stack and killed
    the process (a segmentation fault, no report at all). Run in a child process so that a
    regression fails this test instead of the test run."""
    repo = make_repo(tmp_path / "repo", {"apps/deep.yaml": configmap("deep") + "---\n" + body + "\n"})
    proc = subprocess.run(
        [sys.executable, "-m", "fluxgraph", "check", str(repo), "--format", "json"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1, proc.stderr[-500:]
    report = json.loads(proc.stdout)
    [f] = _limit_findings(report)
    assert f["file"] == "apps/deep.yaml" and "nests deeper than 256" in f["message"]



def _load_in_child(data: bytes) -> dict:
    """load_documents in a fresh interpreter: its outcome, CPU seconds and peak RSS (MiB)."""
    code = (
        "import json, resource, sys, time\n"
        "from fluxgraph.yamlio import load_documents\n"
        "data = sys.stdin.buffer.read()\n"
        "t = time.process_time()\n"
        "r = load_documents('x.yaml', data)\n"
        "print(json.dumps({'docs': len(r.documents), 'errors': [[e.message, e.code] for e in r.errors],"
        " 'cpu': time.process_time() - t, 'rss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-1000:]
    return json.loads(proc.stdout)


_BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e]\n"
)


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        # str() of a nested complex key doubled in length per level: 64 bytes took 10 s and 2.5 GB
        ("nested-complex-keys", b"{" * 40 + b"}" * 40, "complex key"),
        ("question-mark-keys", b"? " * 40 + b"a", "complex key"),
        # a 4,000-digit hex int inside a complex key raised ValueError (int to str digit limit)
        ("huge-int-key", b"? [0x" + b"f" * 4000 + b"]\n: v\n", "complex key"),
        # each duplicate-key message held the whole 1 MB key: 2 GB for 2,000 duplicates
        ("duplicate-huge-keys", b"s: &s " + b"x" * 1_000_000 + b"\n" + b"*s : \n" * 10_000, "already defined"),
        # every document under the per-document limit, the file far over it: 13 s and 680 MB for 8 KB
        ("bomb-per-document", ("---\n" + _BOMB).encode() * 40, "the file expands to more than"),
        # libyaml compares every %TAG directive with all earlier ones: 18 s for 1.2 MB
        ("tag-directives", "".join(f"%TAG !{i}! :\n" for i in range(80_000)).encode() + b"--- a\n", "%TAG directives"),
        # files of tiny nodes: the C composer built them whole (4 MB of "-\n": 7 s and 540 MB)
        ("dense-entries", b"x:\n" + b"-\n" * 4_000_000, "YAML nodes"),
        ("dense-flow", b"[" + b"a," * 3_000_000 + b"a]\n", "YAML nodes"),
        ("dense-documents", b"---\n-\n" * 1_500_000, "YAML nodes"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 40 else "",
)
def test_hostile_documents_are_cheap_located_errors(name, data, message):
    out = _load_in_child(data)
    assert any(message in m for m, _ in out["errors"]), out["errors"][:3]
    assert out["cpu"] < 5, (name, out["cpu"])
    assert out["rss"] < 400, (name, out["rss"])


def test_event_limit_counts_only_files_that_may_be_over_it(monkeypatch):
    """libyaml counts the events of a file whose upper bound is over the limit (a dashboard's
    JSON in a block scalar is all ':' and ','); a file under the limit then loads as usual,
    one over it is an input-limit error, and the event composer (deep files) stops at it too."""
    monkeypatch.setattr(yamlio, "MAX_PARSE_EVENTS", 20_000)
    script = "".join(f"      echo key{i}: value, other: {i}, - more\n" for i in range(4_000))
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dash\ndata:\n  run.sh: |\n" + script
    verdicts = []
    real = yamlio._over_event_limit
    monkeypatch.setattr(yamlio, "_over_event_limit", lambda data: verdicts.append(real(data)) or verdicts[-1])
    res = yamlio.load_documents("x.yaml", text.encode())
    assert verdicts == [False] and not res.errors  # counted (its bound is over), then loaded
    assert res.documents[0].data["data"]["run.sh"].count("\n") == 4_000
    dense = yamlio.load_documents("y.yaml", b"x:\n" + b"- a\n" * 24_000)
    errors = [(e.code, e.line, e.message) for e in dense.errors]  # (small reprs if this fails)
    assert errors == [("input-limit", 1, "the file has more than 20000 YAML nodes and collection ends; it is not read")]
    assert len(dense.documents) == 0
    # a line of 400 spaces sends the file to the event composer, which stops at the limit
    flagged = b'x: "' + b" " * 400 + b'"\ny:\n' + b"- b\n" * 24_000
    assert yamlio._may_nest_deeper(flagged)
    deep = yamlio.load_documents("z.yaml", flagged)
    assert [(e.code, e.line) for e in deep.errors] == [("input-limit", 19_998)] and len(deep.documents) == 0


def test_duplicate_key_reports_are_capped_and_short():
    out = _load_in_child(b"s: &s " + b"x" * 1_000_000 + b"\n" + b"*s : \n" * 10_000)
    messages = [m for m, _ in out["errors"]]
    assert len(messages) == yamlio.MAX_DUPLICATE_KEYS + 1
    assert max(len(m) for m in messages) < 200
    assert messages[-1] == f"{10_000 - 1 - yamlio.MAX_DUPLICATE_KEYS} more mapping keys defined twice in this document"


def test_huge_integer_literal_stays_text():
    out = yamlio.load_documents("x.yaml", b"a: 0x" + b"f" * 5000 + b"\nb: 12\n")
    assert not out.errors
    data = out.documents[0].data
    assert data["a"] == "0x" + "f" * 5000 and data["b"] == 12
    json.dumps(data)  # printable: no int beyond Python's digit limit


@pytest.mark.parametrize(
    "data",
    [
        b"- [a:b]\n" * 20000,  # over MAX_FALLBACK_BYTES
        (b"- " + b"[" * 200 + b"a:b" + b"]" * 200 + b"\n") * 60,  # over MAX_FALLBACK_BRACKETS, nested 200 deep
        (b"- {" + b", ".join(b"k%d: a:b" % i for i in range(100)) + b"}\n") * 90,  # under both: read again
        b"x: [a:b]\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        + b"".join(b"a%d: &a%d [%s]\n" % (i, i, b", ".join([b"*a%d" % (i - 1)] * 10)) for i in range(1, 9)),
        b"a: " + b"[" * 5000 + b"a:b",  # deeper than MAX_DEPTH
    ],
    ids=["over-size", "deep-flow-lines", "dense-keys", "alias-bomb", "deep"],
)
def test_files_libyaml_refuses_are_read_again_within_limits(data):
    """The YAML 1.2 parser that reads again what libyaml refuses (issue 12) is pure Python: it
    reads only files under MAX_FALLBACK_BYTES and MAX_FALLBACK_BRACKETS, through the same
    depth, event and node limits; anything else is a located input-limit error, at once."""
    from fluxgraph.yamlio import load_documents

    t = time.process_time()
    res = load_documents("h.yaml", data)
    assert time.process_time() - t < 10
    for e in res.errors:
        assert e.code == "input-limit" and e.line >= 1
    assert res.documents or res.errors
