"""Benchmark: wall time (whole process) and peak memory of fluxgraph's commands.

Run:  python tests/bench/bench_graph.py [--runs 7] [--command graph|check|explain|diff|all]
                                        [--corpus ../shared/corpus] [--synthetic 10,100,1000,10000]
                                        [--no-bytecode]
      python tests/bench/bench_graph.py --command diff --synthetic 10000 --runs 5
        (issue 24's goal: diff of a one-file change against one check, alternating, bar 1.5x)

Each figure is the median of several runs of ``python -m fluxgraph ...`` as a user runs it
(interpreter start, imports, analysis, output, exit), with the median CPU time (user + system)
and the peak RSS of that process read from ``wait4``: wall time is what the bars are about,
CPU time shows how much of a slow spell was the machine. The runs are interleaved (every row once per round) and two reference rows
(an empty interpreter, a fixed CPU-bound loop) show how fast the machine was meanwhile. Two floor rows per
repository (``floor.py``: start Python, import the design card's libraries, parse the YAML files a
check of that repository parses with libyaml, into nodes (``parse``) or on into Python data
(``load``)) give what reading the input costs; ``graph`` and ``check`` rows are also printed as a
ratio to each, which a noisy machine disturbs far less than the seconds. Also generates synthetic repositories of N Kustomizations (each with a
HelmRelease, a ConfigMap, a Namespace, dependsOn on its predecessor and postBuild
substitution) to show how time and peak RSS grow. Not a test: machines are noisy, so it prints
medians and ratios and leaves the judging to the reader.

Bytecode: by default fluxgraph's modules are compiled first (``compileall``), as ``pip install``
leaves a package. ``--no-bytecode`` runs a copy of the package with no ``__pycache__`` and
``PYTHONDONTWRITEBYTECODE=1``, so every run compiles fluxgraph's sources again (an editable
install in an environment that forbids writing bytecode): the worst case.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"

# (repository, extra arguments, bar in seconds) per command; the bars are those of issues 2, 3, 6
TARGETS = [
    ("onedr0p__home-ops", [], 0.5),
    ("haraldkoch__kochhaus-home", [], 1.2),
]
LARGEST = "haraldkoch__kochhaus-home"  # most files and Kustomizations of the corpus
EXPLAIN_ARGS = ["kubernetes/apps/base/default/echo", "--to", "default/excalidraw"]
EXPLAIN_BAR = DIFF_BAR = 2.0


def _diff_edit(root: Path) -> None:
    """The working-tree change `diff` is measured on: a component dropped from a parent
    Kustomization (its Kustomization is removed, so everything it applied is garbage-collected)
    and a new ConfigMap in another component."""
    k = root / "kubernetes/main/apps/default/kustomization.yaml"
    k.write_text(k.read_text().replace("  - ./echo.yaml\n", ""))
    extra = root / "kubernetes/apps/base/default/excalidraw/extra.yaml"
    extra.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {a: b}\n")
    k2 = extra.parent / "kustomization.yaml"
    text = k2.read_text()
    if "resources:\n" in text:
        k2.write_text(text.replace("resources:\n", "resources:\n  - ./extra.yaml\n", 1))


def run_once(
    args: list[str], env: dict[str, str] | None = None, *, program: list[str] | None = None
) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one
    `python -m fluxgraph ...` process (or of ``program``), started in the filesystem root so
    that `-m` imports the package PYTHONPATH names, not one in the cwd."""
    argv = program if program is not None else [sys.executable, "-m", "fluxgraph", *args]
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=os.sep)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({code}):\n{err.decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def median_run(args: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[float, float, list[float], float]:
    results = [run_once(args, env) for _ in range(runs)]
    walls = [r[0] for r in results]
    return statistics.median(walls), max(r[1] for r in results), walls, statistics.median(r[2] for r in results)


@dataclass
class Job:
    label: str
    args: list[str]
    bar: float | None = None
    program: list[str] | None = None  # a reference program instead of fluxgraph
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss: float = 0.0


FLOOR = HERE.parent / "floor.py"
FLOORS = ("parse", "load")  # floor.py without and with --load; issue 15's bar is 2x the parse floor


def run_interleaved(jobs: list[Job], runs: int, env: dict[str, str]) -> None:
    """Every job once per round, ``runs`` rounds: a slow spell of a noisy machine then slows
    every row alike instead of whichever rows it happened to fall on."""
    for _ in range(runs):
        for job in jobs:
            wall, rss, cpu = run_once(job.args, env, program=job.program)
            job.walls.append(wall)
            job.cpus.append(cpu)
            job.rss = max(job.rss, rss)
    floors = {tuple(job.label.split()): statistics.median(job.walls) for job in jobs if job.label.startswith("floor-")}
    for job in jobs:
        _line(job.label, statistics.median(job.walls), job.rss, job.walls, job.bar, statistics.median(job.cpus))
    if floors:
        print("ratio to the floors (start Python, import the card's libraries, libyaml parse of the same files;")
        print("parse: into nodes, load: into Python data with ruamel's safe constructor):")
        for job in jobs:
            words = job.label.split()
            if words[0] in ("graph", "check") and (f"floor-{FLOORS[0]}", words[1]) in floors:
                ratios = "  ".join(f"{kind} x{statistics.median(job.walls) / floors[(f'floor-{kind}', words[1])]:.2f}" for kind in FLOORS)
                print(f"  {job.label:56s} {ratios}")


def make_synthetic(root: Path, n: int) -> None:
    """A bootstrap-style repo with n app Kustomizations. Valid: `check` finds no error in it
    (main() verifies this before timing), only one cascading-child-deletion warning per app
    (removing an app's Kustomization deletes its Namespace)."""
    fs = root / "clusters" / "synth" / "flux-system"
    fs.mkdir(parents=True)
    (fs / "gotk-sync.yaml").write_text(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\n"
        "spec: {interval: 1m, url: 'ssh://git@example.com/synth', ref: {branch: main}}\n---\n"
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\n"
        "spec: {interval: 10m, path: ./clusters/synth, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n"
    )
    (fs / "kustomization.yaml").write_text("resources: [gotk-sync.yaml]\n")
    (root / "clusters" / "synth" / "settings.yaml").write_text(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: settings, namespace: flux-system}\n"
        "spec: {interval: 10m, path: ./settings, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n"
    )
    (root / "settings").mkdir()
    (root / "settings" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-settings, namespace: flux-system}\ndata: {DOMAIN: example.com}\n"
    )
    apps = root / "clusters" / "synth" / "apps"
    apps.mkdir()
    for i in range(n):
        dep = f"app-{i - 1}" if i else "settings"
        (apps / f"app-{i}.yaml").write_text(
            f"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: app-{i}, namespace: flux-system}}\n"
            f"spec:\n  interval: 10m\n  path: ./apps/app-{i}\n  prune: true\n  dependsOn: [{{name: {dep}}}]\n"
            f"  sourceRef: {{kind: GitRepository, name: flux-system}}\n  targetNamespace: app-{i}\n"
            "  postBuild:\n    substitute: {APP: app-" + str(i) + "}\n    substituteFrom: [{kind: ConfigMap, name: cluster-settings}]\n"
        )
        d = root / "apps" / f"app-{i}"
        d.mkdir(parents=True)
        (d / "kustomization.yaml").write_text("resources: [namespace.yaml, helmrelease.yaml, config.yaml]\n")
        (d / "namespace.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: _}\n")
        (d / "helmrelease.yaml").write_text(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: ${APP}\nspec:\n  interval: 1h\n"
            "  chart: {spec: {chart: app, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}}}\n"
            "  values:\n    ingress: {host: '${APP}.${DOMAIN}'}\n    replicas: 2\n"
        )
        (d / "config.yaml").write_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${APP}-config\ndata: {url: 'https://${APP}.${DOMAIN}', mode: prod}\n"
        )


SYNTHETIC_DIFF_BAR = 1.5  # issue 24: a one-file change costs at most 1.5 times one check


def synthetic_diff(n: int, runs: int, env: dict[str, str]) -> None:
    """``diff --base HEAD`` against ``check`` of the synthetic repository of ``n`` apps, with
    one app's ConfigMap changed in the working tree (a content change: that app's build, walk
    and checks are done again), the two commands alternating: the medians, their ratio and
    the median of the ratios of each pair."""
    with tempfile.TemporaryDirectory() as td:
        root = Path(td)
        make_synthetic(root, n)
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-qm", "base")
        cm = root / "apps" / f"app-{n // 2}" / "config.yaml"
        cm.write_text(cm.read_text().replace("mode: prod", "mode: staging"))
        check = Job(f"check synthetic {n}", ["check", td, "--format", "json", "-o", os.devnull])
        diff = Job(f"diff --base HEAD synthetic {n} (one ConfigMap changed)", ["diff", td, "--base", "HEAD", "--format", "json", "-o", os.devnull])
        run_interleaved([check, diff], runs, env)
    ratio = statistics.median(diff.walls) / statistics.median(check.walls)
    pairs = [d / c for c, d in zip(check.walls, diff.walls, strict=True)]
    verdict = "under" if ratio <= SYNTHETIC_DIFF_BAR else "OVER"
    print(
        f"  diff / check: x{ratio:.2f} (medians; pairs x{min(pairs):.2f} to x{max(pairs):.2f}, median x{statistics.median(pairs):.2f})"
        f"  bar x{SYNTHETIC_DIFF_BAR}: {verdict}",
        flush=True,
    )


def _line(label: str, wall: float, rss: float, walls: list[float], bar: float | None, cpu: float) -> None:
    spread = f"[{min(walls):.2f}-{max(walls):.2f}]"
    verdict = "" if bar is None else f"  bar {bar} s: {'under' if wall < bar else 'OVER'}"
    print(f"{label:58s} {wall:6.3f} s {spread:13s} {cpu:6.3f} s {rss:7.1f} MiB{verdict}", flush=True)


def _parsed_files(path: Path, env: dict[str, str]) -> list[str]:
    """The files a `check` of ``path`` parses (``FileCache.parsed_files``), for the floor row."""
    code = (
        "import sys; from fluxgraph.engine import analyze; r = analyze(sys.argv[1]); "
        "print('\\n'.join(r.repo.cache.parsed_files()))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], env=env, cwd=os.sep, capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.com"}
    subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, check=True, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument(
        "--repo",
        action="append",
        default=None,
        help="measure this repository of --corpus instead of the default targets (repeatable; no bar)",
    )
    ap.add_argument("--synthetic", default="10,100,1000,10000")
    ap.add_argument("--command", default="all", choices=["graph", "check", "explain", "diff", "all"])
    ap.add_argument("--no-bytecode", action="store_true", help="compile fluxgraph's sources in every run (see the module doc)")
    opts = ap.parse_args()
    opts.corpus = opts.corpus.resolve()  # the floor's helper runs with cwd=/
    commands = ["graph", "check", "explain", "diff"] if opts.command == "all" else [opts.command]
    targets = [(name, [], None) for name in opts.repo] if opts.repo else TARGETS

    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ)
        if opts.no_bytecode:
            pkg = Path(scratch) / "pkg"
            shutil.copytree(REPO / "fluxgraph", pkg / "fluxgraph", ignore=shutil.ignore_patterns("__pycache__"))
            env["PYTHONPATH"] = str(pkg)
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env["PYTHONNOUSERSITE"] = "1"
            mode = "no bytecode: fluxgraph's sources compiled in every run"
        else:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "fluxgraph")], check=True)
            env["PYTHONPATH"] = str(REPO)
            mode = "bytecode compiled, as pip install leaves it"
        where = subprocess.run(
            [sys.executable, "-c", "import fluxgraph; print(fluxgraph.__file__)"], env=env, cwd=os.sep, capture_output=True, text=True, check=True
        ).stdout.strip()
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {opts.runs} runs each; {mode}; {where}")
        print(f"{'':58s} {'median':>8s} {'[min-max]':13s} {'CPU':>8s} {'peak RSS':>11s}")
        # references for the machine's state: an empty interpreter and a fixed CPU-bound loop
        jobs = [
            Job("reference: python -c pass", [], program=[sys.executable, "-c", "pass"]),
            Job("reference: python, sum(range(10**7)) (CPU speed)", [], program=[sys.executable, "-c", "sum(range(10**7))"]),
            Job("start-up (fluxgraph --version)", ["--version"]),
        ]
        if {"graph", "check"} & set(commands):
            for name, _extra, _bar in targets:
                path = opts.corpus / name
                if path.is_dir():
                    listing = Path(scratch) / f"{name}.files"
                    listing.write_text("\n".join(_parsed_files(path, env)) + "\n")
                    for kind in FLOORS:
                        argv = [sys.executable, str(FLOOR), str(path), str(listing), *(["--load"] if kind == "load" else [])]
                        jobs.append(Job(f"floor-{kind} {name}", [], program=argv))
        for command in commands:
            if command in ("graph", "check"):
                for name, extra, bar in targets:
                    path = opts.corpus / name
                    if path.is_dir():
                        jobs.append(Job(f"{command} {name}", [command, str(path), "--format", "json", *extra], bar))
                    else:
                        print(f"{command} {name}: corpus missing")
            elif command == "explain":
                path = opts.corpus / LARGEST
                if path.is_dir():
                    jobs.append(
                        Job(
                            f"explain {LARGEST} ({' '.join(EXPLAIN_ARGS)})",
                            ["explain", *EXPLAIN_ARGS[:1], str(path), *EXPLAIN_ARGS[1:]],
                            EXPLAIN_BAR,
                        )
                    )
            elif command == "diff":
                src = opts.corpus / LARGEST
                if src.is_dir():
                    work = Path(scratch) / "diff-repo"
                    shutil.copytree(src, work)
                    _git(work, "init", "-q")
                    _git(work, "add", "-A")
                    _git(work, "commit", "-qm", "base")
                    _diff_edit(work)
                    jobs.append(
                        Job(f"diff --base HEAD {LARGEST} (working tree edited)", ["diff", str(work), "--base", "HEAD", "--format", "json"], DIFF_BAR)
                    )
        run_interleaved(jobs, opts.runs, env)
        if opts.synthetic and opts.command == "diff":
            for n in [int(x) for x in opts.synthetic.split(",") if x]:
                synthetic_diff(n, opts.runs, env)
        if opts.synthetic and opts.command in ("graph", "check", "all"):
            command = "graph" if opts.command == "all" else opts.command
            with tempfile.TemporaryDirectory() as td:
                make_synthetic(Path(td), 10)
                out = subprocess.run(
                    [sys.executable, "-m", "fluxgraph", "check", td, "--format", "json"], env=env, cwd=os.sep, capture_output=True, text=True
                ).stdout
                errors = json.loads(out)["summary"]["findings"]["error"]
                if errors:
                    raise SystemExit(f"the synthetic repository is not valid: check reports {errors} error(s)")
            prev = None
            for n in [int(x) for x in opts.synthetic.split(",") if x]:
                with tempfile.TemporaryDirectory() as td:
                    make_synthetic(Path(td), n)
                    runs = opts.runs if n <= 1000 else max(1, min(opts.runs, 3))
                    wall, rss, walls, cpu = median_run([command, td, "--format", "json", "-o", os.devnull], runs, env)
                growth = f"  x{wall / prev[1]:.1f} time for x{n // prev[0]} size" if prev else ""
                _line(f"{command} synthetic {n} Kustomizations", wall, rss, walls, 30.0 if n == 10000 else None, cpu)
                if growth:
                    print(f"{'':58s}{growth}")
                prev = (n, wall)


if __name__ == "__main__":
    main()
