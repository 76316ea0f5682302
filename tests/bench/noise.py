"""The precision budget, measured: `fluxgraph check` over every shared corpus repository.

Not a test. Prints, per repository and for the whole corpus, the Kustomizations and the
findings per rule and severity, and the warnings per Kustomization against the budget of
docs/precision.md (at most one warning per 20 Kustomizations across the corpus, and no error
that docs/precision.md does not explain). Also checks that the official Flux examples pass the
default gate (exit 0).

Run:  python tests/bench/noise.py [--corpus ../shared/corpus] [--json FILE] [--findings]

``--findings`` lists every warning and error (rule, file:line, message), for reading them as
the repositories' maintainers would; ``--json FILE`` writes the counts for comparing two runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
BUDGET = 1 / 20  # warnings per Kustomization, across the corpus
OFFICIAL = ("fluxcd__",)  # the official Flux examples: they must pass the default gate
SEVERITIES = ("error", "warning", "info")


def run_check(path: Path) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "fluxgraph", "check", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"check {path.name} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.returncode, json.loads(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--json", type=Path, default=None, help="write the counts to FILE")
    ap.add_argument("--findings", action="store_true", help="list every warning and error")
    opts = ap.parse_args()
    repos = sorted(p for p in opts.corpus.iterdir() if p.is_dir())
    if not repos:
        raise SystemExit(f"no repositories in {opts.corpus}")

    total_ks = 0
    by_rule: Counter[tuple[str, str]] = Counter()
    out: dict = {"repositories": {}}
    gate_failures = []
    print(f"{'repository':42s} {'Ks':>5s} {'err':>4s} {'warn':>5s} {'info':>5s}  warn/Ks  exit")
    for repo in repos:
        code, doc = run_check(repo)
        ks = doc["summary"]["kustomizations"]
        total_ks += ks
        counts = Counter(f["severity"] for f in doc["findings"])
        for f in doc["findings"]:
            by_rule[(f["rule"], f["severity"])] += 1
        ratio = counts["warning"] / ks if ks else 0.0
        print(
            f"{repo.name:42s} {ks:5d} {counts['error']:4d} {counts['warning']:5d} {counts['info']:5d}  {ratio:7.3f}  {code}"
        )
        out["repositories"][repo.name] = {"kustomizations": ks, **{s: counts[s] for s in SEVERITIES}, "exit": code}
        if repo.name.startswith(OFFICIAL) and code != 0:
            gate_failures.append(repo.name)
        if opts.findings:
            for f in doc["findings"]:
                if f["severity"] != "info":
                    print(f"    {f['severity']:7s} {f['rule']}  {f['file']}:{f['line']}  {f['message'][:300]}")
    totals = Counter()
    for (_, sev), n in by_rule.items():
        totals[sev] += n
    print()
    print(f"{'rule':42s} {'err':>4s} {'warn':>5s} {'info':>5s}")
    for rule in sorted({r for r, _ in by_rule}):
        print(f"{rule:42s} {by_rule[(rule, 'error')]:4d} {by_rule[(rule, 'warning')]:5d} {by_rule[(rule, 'info')]:5d}")
    ratio = totals["warning"] / total_ks if total_ks else 0.0
    print()
    print(
        f"corpus: {len(repos)} repositories, {total_ks} Kustomizations, {totals['error']} errors, "
        f"{totals['warning']} warnings, {totals['info']} info"
    )
    print(f"warnings per Kustomization: {ratio:.3f} (budget {BUDGET:.3f}: {'within' if ratio <= BUDGET else 'OVER'})")
    print(f"official examples failing the default gate: {', '.join(gate_failures) or 'none'}")
    out.update(
        kustomizations=total_ks,
        totals={s: totals[s] for s in SEVERITIES},
        rules={f"{r}/{s}": n for (r, s), n in sorted(by_rule.items())},
        warnings_per_kustomization=round(ratio, 4),
    )
    if opts.json:
        opts.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
