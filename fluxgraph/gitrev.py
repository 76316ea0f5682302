"""Reading a git revision of a repository into memory, with git itself and nothing else.

``git`` is the only program fluxgraph starts, and only here: fixed argument lists, no shell,
a timeout, the working tree and index never touched. A revision is read with
``git ls-tree -r -z REV`` (the tree, limited to the folder PATH names inside the repository)
and ``git cat-file --batch`` (the blobs) into a ``Tree``, which ``fluxgraph.treefs.TreeFS``
serves to the analysis with RepoFS's confinement rules: nothing is written to disk. Unlike
``git archive`` this ignores ``export-ignore``/``export-subst`` attributes, which
source-controller does not apply either.

Every path is checked: absolute paths, ``..``, empty or ``.git`` components are refused; a
symlink is kept only when its target stays inside the folder (others are skipped and
reported; RepoFS still resolves chains of links at read time); submodules are empty
directories (Flux does not fetch them unless ``recurseSubmodules`` is set). Sizes are capped.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from fluxgraph.model import FluxgraphError
from fluxgraph.repofs import RepoFS

GIT_TIMEOUT = 120  # seconds, per git command
MAX_TOTAL_BYTES = 1 << 30  # 1 GiB of blobs
MAX_ENTRIES = 200_000


class GitError(FluxgraphError):
    """git is missing, PATH is not a git repository, or a revision is unknown (exit status 2)."""


@dataclass
class Tree:
    """The files of a revision, in memory: ``files`` (path -> content), ``links`` (path -> target,
    only those that stay inside the folder), ``dirs`` (submodules, empty: Flux does not fetch
    them unless ``recurseSubmodules`` is set). Paths are relative to the folder read."""

    rev: str
    commit: str
    files: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    skipped: list[str] = field(default_factory=list)  # paths left out, with the reason

    def fs(self) -> RepoFS:
        """A fresh read-only file system over the tree, with RepoFS's confinement rules."""
        from fluxgraph.treefs import TreeFS

        return TreeFS(self.files, self.links, self.dirs, label=f"git/{self.commit}")


def _run(
    args: list[str], cwd: str | os.PathLike[str], *, stdin: bytes | None = None, timeout: int = GIT_TIMEOUT
) -> bytes:
    env = dict(os.environ)
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    cmd = ["git", "-c", "core.fsmonitor=false", "-c", "core.quotepath=off", *args]
    try:
        proc = subprocess.run(  # noqa: S603 - fixed argument list, no shell
            cmd,
            cwd=os.fspath(cwd),
            input=stdin,
            capture_output=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed (fluxgraph diff reads revisions with git)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish within {timeout}s") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {msg[-1] if msg else f'exit status {proc.returncode}'}")
    return proc.stdout


def toplevel(path: str | os.PathLike[str]) -> Path:
    """The working tree root of the repository PATH is in (exit 2 when it is not in one)."""
    p = Path(path)
    if not p.is_dir():
        raise GitError(f"{path}: not a directory")
    try:
        out = _run(["rev-parse", "--show-toplevel"], p)
    except GitError as e:
        raise GitError(f"{path} is not inside a git repository ({e})") from None
    return Path(out.decode("utf-8", "replace").strip())


def resolve(path: str | os.PathLike[str], rev: str) -> str:
    """The commit id of ``rev`` (exit 2 when unknown)."""
    if not rev or rev.startswith("-") or "\x00" in rev:
        raise GitError(f"{rev!r} is not a revision")
    try:
        out = _run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], path)
    except GitError:
        raise GitError(f"unknown revision {rev!r} in {path}") from None
    sha = out.decode().strip()
    if not sha:
        raise GitError(f"unknown revision {rev!r} in {path}")
    return sha


def merge_base(path: str | os.PathLike[str], a: str, b: str = "HEAD") -> str:
    """The best common ancestor of revisions ``a`` and ``b`` (what a pull request from ``b``
    into ``a`` is compared with); exit 2 when there is none."""
    ca, cb = resolve(path, a), resolve(path, b)
    try:
        out = _run(["merge-base", "--end-of-options", ca, cb], path)
    except GitError:
        raise GitError(f"{a!r} and {b!r} have no common ancestor in {path} (a shallow clone needs more history)") from None
    return out.decode().strip()


def _safe_rel(name: str) -> str | None:
    """The entry's path if it is safe to create below the export root, else None."""
    if not name or name.startswith("/") or "\\" in name or "\x00" in name:
        return None
    parts = name.split("/")
    if any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        return None
    return name


def _link_ok(rel: str, target: str) -> bool:
    """A symlink at ``rel`` pointing to ``target`` stays inside the export root."""
    if not target or target.startswith("/") or "\x00" in target:
        return False
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
    return not (joined == ".." or joined.startswith("../") or joined.startswith("/"))


def read_tree(path: str | os.PathLike[str], rev: str) -> Tree:
    """The files of ``rev`` that lie in folder ``path`` (of a git working tree), relative to
    ``path``, read into memory: nothing is written anywhere."""
    commit = resolve(path, rev)
    listing = _run(["ls-tree", "-r", "-z", "--end-of-options", commit], path)
    entries: list[tuple[str, str, str, str]] = []  # mode, type, sha, rel
    out = Tree(rev, commit)
    for rec in listing.split(b"\x00"):
        if not rec:
            continue
        meta, _, name_b = rec.partition(b"\t")
        try:
            mode, typ, sha = meta.decode("ascii").split(" ")
        except ValueError:
            continue
        name = name_b.decode("utf-8", "surrogateescape")
        rel = _safe_rel(name)
        if rel is None:
            out.skipped.append(f"{name!r}: unsafe path")
            continue
        entries.append((mode, typ, sha, rel))
        if len(entries) > MAX_ENTRIES:
            raise GitError(f"{rev}: more than {MAX_ENTRIES} files")
    blobs = [e for e in entries if e[1] == "blob"]
    data: dict[str, bytes] = {}
    if blobs:
        wanted = sorted({sha for _, _, sha, _ in blobs})
        raw = _run(["cat-file", "--batch"], path, stdin=("\n".join(wanted) + "\n").encode("ascii"))
        pos = 0
        total = 0
        while pos < len(raw):
            nl = raw.index(b"\n", pos)
            header = raw[pos:nl].decode("ascii", "replace").split(" ")
            pos = nl + 1
            if len(header) != 3:
                raise GitError(f"git cat-file: unexpected output {' '.join(header)!r}")
            sha, _typ, size_s = header
            size = int(size_s)
            total += size
            if total > MAX_TOTAL_BYTES:
                raise GitError(f"{rev}: the files exceed {MAX_TOTAL_BYTES >> 20} MiB")
            data[sha] = raw[pos : pos + size]
            pos += size + 1
    for mode, typ, sha, rel in entries:
        if typ == "commit":  # a submodule
            out.dirs.add(rel)
        elif typ != "blob":
            continue
        elif mode == "120000":
            link = data.get(sha, b"").decode("utf-8", "surrogateescape")
            if _link_ok(rel, link):
                out.links[rel] = link
            else:
                out.skipped.append(f"{rel}: symlink to {link!r} leaves the folder")
        else:
            out.files[rel] = data.get(sha, b"")
    return out


def changed_paths(path: str | os.PathLike[str], base_commit: str, head_rev: str | None) -> set[str]:
    """Paths (relative to folder ``path``) that differ between ``base_commit`` and ``head_rev``
    or, when None, the working tree: tracked changes plus untracked files (those git ignores
    are left out; Flux does not see them either)."""
    args = [
        "diff",
        "--name-only",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--relative",
        "-z",
        base_commit,
    ]
    if head_rev is not None:
        args.append(resolve(path, head_rev))
    out = _run([*args, "--", "."], path)
    paths = {p for p in out.decode("utf-8", "surrogateescape").split("\x00") if p}
    if head_rev is None:
        extra = _run(["ls-files", "--others", "--exclude-standard", "-z", "--", "."], path)
        paths |= {p for p in extra.decode("utf-8", "surrogateescape").split("\x00") if p}
    return paths
