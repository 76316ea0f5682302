"""Move plans on the corpora, chosen by this script, each made with `fluxgraph move`'s library
call and proven (issue 25): one row per plan.

    python tests/bench/move_plans.py [--corpus corpus,corpus-wide] [--per-repo 2] [--show]

For every cluster of every repository, the Kustomizations are taken in order; for each whose
build directory has a kustomization file listing folders in `resources`, the first such folder
(in order) is the target, moved to a new Kustomization `<its name>-split` beside the old owner
(`explain TARGET --to`): at most `--per-repo` plans per repository. Columns: the plan's worst
verdict before, whether a protecting stage was made and proven, whether the move itself was
rebuilt in memory and judged (objects applied by the new owner, no new error or warning, no
verdict), or why not. Each repository is copied (made writable, without .git) and nothing is
written, even there."""

from __future__ import annotations

import argparse
import posixpath
import shutil
import stat
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fluxgraph.engine import analyze  # noqa: E402
from fluxgraph.model import FluxgraphError  # noqa: E402
from fluxgraph.move import move_component  # noqa: E402
from tests.corpora import CORPORA, TABLES, names  # noqa: E402

KFILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def candidates(root: Path, report, limit: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for c in report.repo.clusters:
        for ks_id in sorted(c.kustomizations):
            node = c.kustomizations[ks_id]
            if node.status != "built" or node.build_dir is None:
                continue
            kfile = next((root / node.build_dir / k for k in KFILES if (root / node.build_dir / k).is_file()), None)
            if kfile is None:
                continue
            doc = report.repo.cache.documents(str(kfile.relative_to(root)))[0] if report.repo.cache else []
            data = doc[0].data if doc else None
            res = data.get("resources") if isinstance(data, dict) else None
            for r in sorted(x for x in res or [] if isinstance(x, str)):
                target = posixpath.normpath(posixpath.join(node.build_dir, r))
                if target.startswith("..") or not (root / target).is_dir():
                    continue
                new = f"{node.spec.namespace}/{posixpath.basename(target)}-split"
                if (target, new) not in out:
                    out.append((target, new))
                break
            if len(out) >= limit:
                return out
    return out


def copy_of(src: Path, work: Path) -> Path:
    """A writable copy (without .git): the shared corpora are read-only, and a stage is planned
    only where it could be written."""
    dst = work / src.name
    if not dst.exists():
        shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        for p in dst.rglob("*"):
            if p.is_file() and not p.is_symlink():
                p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return dst


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="corpus,corpus-wide")
    ap.add_argument("--per-repo", type=int, default=2)
    ap.add_argument("--show", action="store_true")
    opts = ap.parse_args()
    print("| repository | target | before | stage 1 | the move | why not |")
    print("|---|---|---|---|---|---|")
    counts = {"plans": 0, "proven": 0, "refused": 0, "not rebuilt": 0}
    work = Path(tempfile.mkdtemp(prefix="fluxgraph-moves-"))
    for corpus in opts.corpus.split(","):
        for name in names(corpus):
            entry = TABLES[corpus].get(name)
            kwargs = {"clusters": list(entry.clusters)} if entry is not None and entry.clusters else {}
            root = copy_of(CORPORA[corpus] / name, work)
            try:
                report = analyze(root, **kwargs)
            except FluxgraphError:
                continue
            for target, new in candidates(root, report, opts.per_repo):
                try:
                    r = move_component(root, target, new, **kwargs)
                except FluxgraphError as e:
                    print(f"| {name} | {target} | - | - | - | {e} |")
                    continue
                counts["plans"] += 1
                worst = ",".join(sorted({m.plan.worst for m in r.moves}))
                stage1 = "made, proven" if r.stage == "protect" else ("not needed" if not r.needs_protection and not r.refused else "-")
                moved = [p for p in r.proven if "the move rebuilt" in p]
                if r.refused:
                    counts["refused"] += 1
                    verdict, why = "refused", "; ".join(r.refused)[:300]
                elif moved:
                    counts["proven"] += 1
                    verdict, why = "rebuilt, proven", ""
                else:
                    counts["not rebuilt"] += 1
                    verdict, why = "not rebuilt", "; ".join(r.notes)[:300]
                print(f"| {name} | {target} | {worst} | {stage1} | {verdict} | {why.replace('|', '/')} |", flush=True)
                if opts.show:
                    for p in r.proven:
                        print(f"    proven: {p}")
    shutil.rmtree(work, ignore_errors=True)
    print()
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
