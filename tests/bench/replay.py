"""Replay a git history through ``fluxgraph diff``: each of the last N first-parent commits
against its parent, as a pull request would be judged.

Run:  python tests/bench/replay.py CLONE [--commits 50] [--path SUBDIR] [--cluster DIR] [--show CODE,...]
                                       [--compare]

CLONE is a git clone with a working tree (``git clone`` of a mirror is enough); nothing in it is
written. For every commit it prints the wall time of ``diff_revisions`` (the library call: both
revisions read from git, loaded and checked, then compared), the verdict codes it found and
the number of new findings; crashes (any exception other than fluxgraph's own input errors)
are listed and make the exit status 1. The closing lines give the median and maximum time per
commit and the totals per verdict code. ``--show`` prints the messages of the given codes, to
read what a verdict says on a real change. ``--compare`` diffs every commit a second time without
sharing kustomize builds between the revisions and counts the reports that differ (none allowed:
the sharing must not change a verdict).

Not a test: a history is an input no fixture replaces, and timings are for the reader.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fluxgraph.config import Settings  # noqa: E402
from fluxgraph.diff import diff_revisions  # noqa: E402
from fluxgraph.gitrev import GitError  # noqa: E402
from fluxgraph.model import FluxgraphError  # noqa: E402
from fluxgraph.render.diff_report import render_json  # noqa: E402


def _commits(clone: Path, n: int) -> list[str]:
    out = subprocess.run(
        ["git", "rev-list", "--first-parent", f"--max-count={n}", "HEAD"], cwd=clone, check=True, capture_output=True, text=True
    ).stdout.split()
    return list(reversed(out))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clone", type=Path)
    ap.add_argument("--commits", type=int, default=50)
    ap.add_argument("--path", default=".", help="the folder of the clone that fluxgraph reads")
    ap.add_argument("--show", default="", help="verdict codes whose messages are printed")
    ap.add_argument("--cluster", action="append", default=[], help="a cluster entrypoint (as check --cluster)")
    ap.add_argument(
        "--compare",
        action="store_true",
        help="also diff each commit without sharing builds between the revisions, and count reports that differ",
    )
    args = ap.parse_args()
    folder = args.clone / args.path
    show = {c for c in args.show.split(",") if c}
    settings = Settings(clusters=tuple(args.cluster) or None)
    times: list[float] = []
    totals: collections.Counter[str] = collections.Counter()
    crashes: list[tuple[str, str]] = []
    mismatches: list[str] = []
    input_errors = 0
    for commit in _commits(args.clone, args.commits):
        subject = subprocess.run(
            ["git", "log", "-1", "--format=%h %s", commit], cwd=args.clone, check=True, capture_output=True, text=True
        ).stdout.strip()[:70]
        t0 = time.perf_counter()
        try:
            report = diff_revisions(folder, f"{commit}^", commit, settings=settings)
        except (FluxgraphError, GitError) as e:
            input_errors += 1
            print(f"{time.perf_counter() - t0:6.2f}s  {subject}  input error: {e}")
            continue
        except Exception:  # noqa: BLE001 - a crash is what this script exists to find
            crashes.append((subject, traceback.format_exc()))
            print(f"  crash  {subject}")
            continue
        dt = time.perf_counter() - t0
        times.append(dt)
        if args.compare:
            full = diff_revisions(folder, f"{commit}^", commit, settings=settings, share_builds=False)
            if render_json(full) != render_json(report):
                mismatches.append(subject)
                print(f"  MISMATCH with full builds at {subject}")
        codes = collections.Counter(e.code for _, e in report.effects())
        totals.update(codes)
        new = len(report.all_new_findings())
        totals["new findings"] += new
        shown = " ".join(f"{c}:{n}" for c, n in sorted(codes.items()))
        print(f"{dt:6.2f}s  {subject}  {shown}{'  new findings:' + str(new) if new else ''}")
        for cluster, e in report.effects():
            if e.code in show:
                print(f"          {cluster}: {e.code}: {e.message}")
    print()
    if times:
        print(f"{len(times)} commits: median {statistics.median(times):.2f}s, max {max(times):.2f}s per commit")
    print("verdicts: " + (", ".join(f"{c} {n}" for c, n in sorted(totals.items())) or "none"))
    print(f"input errors: {input_errors}; crashes: {len(crashes)}")
    if args.compare:
        print(f"reports that differ from full builds: {len(mismatches)}")
    for subject, tb in crashes:
        print(f"\n--- crash at {subject}\n{tb}")
    return 1 if crashes or mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
