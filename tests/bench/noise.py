"""The precision budget, measured: `fluxgraph check` over every repository of the shared
corpora (../shared/corpus and ../shared/corpus-wide), as a user runs it.

Not a test. Prints, per repository and per corpus, the Kustomizations and the findings per rule
and severity, and the warnings per Kustomization against the budget of docs/precision.md (at
most one warning per 20 Kustomizations on each corpus, and no error that docs/precision.md does
not explain). A repository whose clusters the entrypoint table of tests/corpora.py names with
``clusters:`` (stale bootstrap folders kept in the tree) is checked with that configuration, as
its maintainer would write it in .fluxgraph.yaml; a repository with no cluster of its own
(exit 2 with the message saying so) is listed, not counted. Also checks that the official Flux
examples pass the default gate (exit 0).

Run:  python tests/bench/noise.py [--corpus DIR ...] [--json FILE] [--findings]

``--findings`` lists every warning and error (rule, file:line, message), for reading them as
the repositories' maintainers would; ``--json FILE`` writes the counts for comparing two runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))
from tests.corpora import TABLES  # noqa: E402  (the entrypoint tables, with their clusters:)

DEFAULT_CORPORA = [REPO.parent / "shared" / "corpus", REPO.parent / "shared" / "corpus-wide"]
BUDGET = 1 / 20  # warnings per Kustomization, on each corpus
OFFICIAL = ("fluxcd__",)  # the official Flux examples: they must pass the default gate
SEVERITIES = ("error", "warning", "info")


def run_check(path: Path, clusters: tuple[str, ...]) -> tuple[int, dict | None, str]:
    cmd = [sys.executable, "-m", "fluxgraph", "check", str(path), "--format", "json"]
    with tempfile.TemporaryDirectory() as tmp:
        if clusters:
            config = Path(tmp) / "fluxgraph.yaml"
            config.write_text("clusters:\n" + "".join(f"  - {c}\n" for c in clusters))
            cmd += ["--config", str(config)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if proc.returncode in (0, 1):
        return proc.returncode, json.loads(proc.stdout), ""
    return proc.returncode, None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""


def corpus_run(corpus: Path, opts: argparse.Namespace) -> dict:
    repos = sorted(p for p in corpus.iterdir() if p.is_dir())
    table = TABLES.get(corpus.name, {})
    total_ks = 0
    by_rule: Counter[tuple[str, str]] = Counter()
    out: dict = {"repositories": {}}
    gate_failures, failures = [], []
    print(f"== {corpus}")
    print(f"{'repository':42s} {'Ks':>5s} {'err':>4s} {'warn':>5s} {'info':>5s}  warn/Ks  exit")
    for repo in repos:
        entry = table.get(repo.name)
        code, doc, err = run_check(repo, tuple(entry.clusters or ()) if entry is not None else ())
        if doc is None:
            kind = "no cluster" if "no Flux cluster found" in err else "FAILED"
            print(f"{repo.name:42s} {'':5s} {'':4s} {'':5s} {'':5s}  {'':7s}  {code}  {kind}")
            out["repositories"][repo.name] = {"exit": code, "message": err}
            if kind == "FAILED":
                failures.append(f"{repo.name}: {err}")
            continue
        ks = doc["summary"]["kustomizations"]
        total_ks += ks
        counts = Counter(f["severity"] for f in doc["findings"])
        for f in doc["findings"]:
            by_rule[(f["rule"], f["severity"])] += 1
        ratio = counts["warning"] / ks if ks else 0.0
        print(
            f"{repo.name:42s} {ks:5d} {counts['error']:4d} {counts['warning']:5d} {counts['info']:5d}  {ratio:7.3f}  {code}"
            + ("  (clusters: from the table)" if entry is not None and entry.clusters else "")
        )
        out["repositories"][repo.name] = {"kustomizations": ks, **{s: counts[s] for s in SEVERITIES}, "exit": code}
        if repo.name.startswith(OFFICIAL) and code != 0:
            gate_failures.append(repo.name)
        if opts.findings:
            for f in doc["findings"]:
                if f["severity"] != "info":
                    print(f"    {f['severity']:7s} {f['rule']}  {f['file']}:{f['line']}  {f['message'][:300]}")
    totals: Counter[str] = Counter()
    for (_, sev), n in by_rule.items():
        totals[sev] += n
    print()
    print(f"{'rule':42s} {'err':>4s} {'warn':>5s} {'info':>5s}")
    for rule in sorted({r for r, _ in by_rule}):
        print(f"{rule:42s} {by_rule[(rule, 'error')]:4d} {by_rule[(rule, 'warning')]:5d} {by_rule[(rule, 'info')]:5d}")
    ratio = totals["warning"] / total_ks if total_ks else 0.0
    print()
    print(
        f"{corpus.name}: {len(repos)} repositories, {total_ks} Kustomizations, {totals['error']} errors, "
        f"{totals['warning']} warnings, {totals['info']} info"
    )
    print(f"warnings per Kustomization: {ratio:.3f} (budget {BUDGET:.3f}: {'within' if ratio <= BUDGET else 'OVER'})")
    print(f"official examples failing the default gate: {', '.join(gate_failures) or 'none'}")
    for f in failures:
        print(f"FAILED: {f}")
    print()
    out.update(
        kustomizations=total_ks,
        totals={s: totals[s] for s in SEVERITIES},
        rules={f"{r}/{s}": n for (r, s), n in sorted(by_rule.items())},
        warnings_per_kustomization=round(ratio, 4),
        failures=failures,
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, action="append", default=None, help="a corpus folder (repeatable)")
    ap.add_argument("--json", type=Path, default=None, help="write the counts to FILE")
    ap.add_argument("--findings", action="store_true", help="list every warning and error")
    opts = ap.parse_args()
    corpora = [c for c in (opts.corpus or DEFAULT_CORPORA) if c.is_dir()]
    if not corpora:
        raise SystemExit("no corpus found")
    out = {c.name: corpus_run(c, opts) for c in corpora}
    if opts.json:
        opts.json.write_text(json.dumps(out, indent=2) + "\n")
    if any(o["failures"] for o in out.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
