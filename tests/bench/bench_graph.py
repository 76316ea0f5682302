"""Benchmark: `fluxgraph graph` wall time (whole process) and peak memory.

Run:  python tests/bench/bench_graph.py [--runs 5] [--corpus ../shared/corpus] [--synthetic 10,100,1000,10000]

Prints medians of several runs of the whole process (import included), so figures are what a
user sees in CI. Also generates synthetic repositories of N Kustomizations (each with a
HelmRelease, a ConfigMap, a Namespace, dependsOn on its predecessor and postBuild
substitution) to show how time and peak RSS grow. Not a test: machines are noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"

TARGETS = [
    ("onedr0p__home-ops", [], 0.5),
    ("haraldkoch__kochhaus-home", [], 1.2),
]


def run_once(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one `python -m fluxgraph ...` process."""
    cmd = [sys.executable, "-c", "import resource,sys,runpy; sys.argv=['fluxgraph']+sys.argv[1:];"
           "\ntry:\n  runpy.run_module('fluxgraph', run_name='__main__')\nexcept SystemExit: pass\n"
           "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)", *args]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"fluxgraph {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    rss_kib = int(proc.stderr.strip().splitlines()[-1])
    return wall, rss_kib / 1024


def median_run(args: list[str], runs: int) -> tuple[float, float]:
    results = [run_once(args) for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def make_synthetic(root: Path, n: int) -> None:
    """A bootstrap-style repo with n app Kustomizations."""
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
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: ${APP}}\nspec:\n  interval: 1h\n"
            "  chart: {spec: {chart: app, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}}}\n"
            "  values:\n    ingress: {host: '${APP}.${DOMAIN}'}\n    replicas: 2\n"
        )
        (d / "config.yaml").write_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${APP}-config}\ndata: {url: 'https://${APP}.${DOMAIN}', mode: prod}\n"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--synthetic", default="10,100,1000,10000")
    ap.add_argument("--command", default="graph", choices=["graph", "check"])
    opts = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {opts.runs} runs each, median wall / peak RSS")
    base, _ = median_run(["--version"], opts.runs)
    print(f"{'startup (--version)':40s} {base:7.3f} s")
    for name, extra, bar in TARGETS:
        path = opts.corpus / name
        if not path.is_dir():
            print(f"{name:40s} (missing)")
            continue
        wall, rss = median_run([opts.command, str(path), "--format", "json", *extra], opts.runs)
        verdict = "ok" if wall < bar else "OVER BAR"
        print(f"{name:40s} {wall:7.3f} s  {rss:7.1f} MiB  (bar {bar} s: {verdict})")
    if opts.synthetic:
        prev = None
        for n in [int(x) for x in opts.synthetic.split(",") if x]:
            with tempfile.TemporaryDirectory() as td:
                make_synthetic(Path(td), n)
                runs = opts.runs if n <= 1000 else max(1, min(opts.runs, 3))
                wall, rss = median_run([opts.command, td, "--format", "json", "-o", os.devnull], runs)
            growth = f"  x{wall / prev[1]:.1f} time for x{n // prev[0]} size" if prev else ""
            print(f"{'synthetic ' + str(n) + ' Kustomizations':40s} {wall:7.3f} s  {rss:7.1f} MiB{growth}")
            prev = (n, wall)


if __name__ == "__main__":
    main()
