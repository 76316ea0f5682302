"""`fix --write`, then `check` and a comparison of what the repository renders, on every repository
of both corpora with fixable findings (issue 25): one row per repository.

    python tests/bench/fix_corpus.py [--corpus corpus,corpus-wide] [--only NAME] [--show]

Each repository is copied (without .git, made writable) to a temporary folder; `fix_repository` plans and
proves the fixes, `FixResult.write` writes them, and the copy is analysed again. Columns:
fixable findings, fixes written (findings they repair), findings withheld, files changed, the
findings after that were not there before (none allowed), the fixed findings still reported
(none allowed), and the rendered objects that changed although no fix meant to change them
(none allowed; the diff engine compares the models before and after). `--show` prints each
withheld fix's reason and each unintended change."""

from __future__ import annotations

import argparse
import shutil
import stat
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fluxgraph.diff import diff_repositories  # noqa: E402
from fluxgraph.engine import analyze  # noqa: E402
from fluxgraph.fix import FIXERS, fix_repository  # noqa: E402
from fluxgraph.model import FluxgraphError  # noqa: E402
from tests.corpora import CORPORA, TABLES, names  # noqa: E402


def _keys(report):
    return {(f.rule, f.fingerprint) for f in report.findings}


def run_one(corpus: str, name: str, show: bool) -> dict | None:
    entry = TABLES[corpus].get(name)
    kwargs = {"clusters": list(entry.clusters)} if entry is not None and entry.clusters else {}
    with tempfile.TemporaryDirectory() as td:
        repo = Path(td) / name
        shutil.copytree(CORPORA[corpus] / name, repo, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        for p in repo.rglob("*"):  # the shared corpora are read-only; the copy is ours to fix
            if p.is_file() and not p.is_symlink():
                p.chmod(p.stat().st_mode | stat.S_IWUSR)
        try:
            before = analyze(repo, **kwargs)
        except FluxgraphError:
            return None
        fixable = [f for f in before.findings if f.rule in FIXERS]
        if not fixable:
            return None
        t = time.perf_counter()
        result = fix_repository(repo, **kwargs)
        seconds = time.perf_counter() - t
        failed = result.write()
        after = analyze(repo, **kwargs)
        fixed = {(f.rule, f.fingerprint) for f in result.fixed}
        new = _keys(after) - _keys(before)
        still = fixed & _keys(after)
        intended = {pair for p in result.fixes for pair in p.intended}
        unintended = []
        for cd in diff_repositories(before.repo, after.repo).clusters:
            for oc in [*cd.added, *cd.removed, *cd.moved, *cd.modified]:
                if (cd.cluster, oc.ref) not in intended:
                    unintended.append(f"{cd.cluster}: {oc.ref}")
        if show:
            for nf in result.not_fixed:
                print(f"    withheld {nf.finding.rule} at {nf.finding.location}: {nf.reason[:300]}")
            for u in unintended:
                print(f"    UNINTENDED {u}")
            for f in after.findings:
                if (f.rule, f.fingerprint) in new:
                    print(f"    NEW {f.rule} at {f.location}: {f.message[:200]}")
        return {
            "repo": f"{name} ({'wide' if corpus == 'corpus-wide' else 'corpus'})",
            "fixable": len(fixable),
            "fixes": f"{len(result.fixes)} ({len(result.fixed)})",
            "withheld": len(result.not_fixed),
            "files": len(result.changes),
            "new": len(new),
            "still": len(still),
            "unintended": len(unintended),
            "unwritten": len(failed),
            "seconds": f"{seconds:.1f}",
        }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="corpus,corpus-wide")
    ap.add_argument("--only", default="")
    ap.add_argument("--show", action="store_true")
    opts = ap.parse_args()
    cols = ["repo", "fixable", "fixes", "withheld", "files", "new", "still", "unintended", "unwritten", "seconds"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for corpus in opts.corpus.split(","):
        for name in names(corpus):
            if opts.only and name != opts.only:
                continue
            row = run_one(corpus, name, opts.show)
            if row is not None:
                print("| " + " | ".join(str(row[c]) for c in cols) + " |", flush=True)


if __name__ == "__main__":
    main()
