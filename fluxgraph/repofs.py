"""Read-only, root-confined access to the repository being analysed.

Every file fluxgraph reads goes through ``RepoFS``. Paths are repo-relative POSIX strings
("" is the root). Nothing outside the root is ever opened: ``..`` that climbs above the root,
absolute paths and symlinks whose target leaves the root raise ``PathEscape`` before any read.
This mirrors kustomize-controller, which builds with fluxcd/pkg's secure file system
(``kustomize/filesys``, ``MakeFsOnDiskSecure``) rooted at the artifact.
"""

from __future__ import annotations

import os
import posixpath
import stat
from functools import lru_cache
from pathlib import Path

MAX_FILE_BYTES = 32 * 1024 * 1024


class PathEscape(Exception):
    """A path that would leave the repository root."""


class FileTooLarge(Exception):
    pass


def join(base: str, ref: str) -> str:
    """Join ``ref`` to the repo-relative dir ``base``; raise PathEscape if it leaves the root."""
    if ref.startswith("/"):
        raise PathEscape(f"absolute path {ref!r}")
    joined = posixpath.normpath(posixpath.join(base, ref)) if base else posixpath.normpath(ref)
    if joined == ".":
        return ""
    if joined == ".." or joined.startswith("../"):
        raise PathEscape(f"{ref!r} from {base or '.'!r} leaves the repository root")
    return joined


def secure_join(ref: str) -> tuple[str, bool]:
    """Flux's ``securejoin(root, path)`` for ``spec.path``: ``..`` is clamped at the root.

    Returns the repo-relative path and whether the input tried to climb above the root.
    (``./x``, ``x`` and ``/x`` are equivalent; ``../../etc`` becomes ``etc``.)
    """
    parts: list[str] = []
    climbed = False
    for part in ref.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            else:
                climbed = True
            continue
        parts.append(part)
    return "/".join(parts), climbed


class RepoFS:
    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root).resolve()
        self._root_str = str(self.root)
        self._stat_cache: dict[str, os.stat_result | None] = {}
        self._list_cache: dict[str, list[str]] = {}
        self._bytes_cache: dict[str, bytes] = {}
        self._inside: dict[str, str] = {}  # rel -> "" (inside) or why it escapes

    # -- path handling -------------------------------------------------------------------
    def _abs(self, rel: str) -> str:
        return self._root_str if not rel else f"{self._root_str}/{rel}"

    def _check_inside(self, rel: str) -> None:
        """Refuse symlinks (at any level) whose target leaves the root."""
        if not rel:
            return
        verdict = self._inside.get(rel)
        if verdict is None:
            verdict = ""
            parent = posixpath.dirname(rel)
            try:
                if parent:
                    self._check_inside(parent)
            except PathEscape as e:
                verdict = str(e)
            else:
                st = self._lstat(rel)
                if st is not None and stat.S_ISLNK(st.st_mode):
                    real = os.path.realpath(self._abs(rel))
                    if real != self._root_str and not real.startswith(self._root_str + os.sep):
                        verdict = f"{rel!r} is a symlink that leaves the repository root"
            self._inside[rel] = verdict
        if verdict:
            raise PathEscape(verdict)

    def _lstat(self, rel: str) -> os.stat_result | None:
        key = "l:" + rel
        if key in self._stat_cache:
            return self._stat_cache[key]
        try:
            st: os.stat_result | None = os.lstat(self._abs(rel))
        except (OSError, ValueError):
            st = None
        self._stat_cache[key] = st
        return st

    def _stat(self, rel: str) -> os.stat_result | None:
        if rel in self._stat_cache:
            return self._stat_cache[rel]
        try:
            self._check_inside(rel)
            st: os.stat_result | None = os.stat(self._abs(rel))
        except (OSError, ValueError, PathEscape):
            st = None
        self._stat_cache[rel] = st
        return st

    def is_dir(self, rel: str) -> bool:
        st = self._stat(rel)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def is_file(self, rel: str) -> bool:
        st = self._stat(rel)
        return st is not None and stat.S_ISREG(st.st_mode)

    def exists(self, rel: str) -> bool:
        return self._stat(rel) is not None

    def escapes(self, rel: str) -> bool:
        try:
            self._check_inside(rel)
        except PathEscape:
            return True
        return False

    def listdir(self, rel: str) -> list[str]:
        """Sorted entry names (byte order, like Go's filepath.Walk), empty when unreadable."""
        if rel in self._list_cache:
            return self._list_cache[rel]
        try:
            self._check_inside(rel)
            names = sorted(os.listdir(self._abs(rel)))
        except (OSError, PathEscape, ValueError):
            names = []
        self._list_cache[rel] = names
        return names

    def read_bytes(self, rel: str) -> bytes:
        """Read a regular file inside the root. Raises PathEscape, FileTooLarge or OSError."""
        cached = self._bytes_cache.get(rel)
        if cached is not None:
            return cached
        self._check_inside(rel)
        st = self._stat(rel)
        if st is None:
            raise FileNotFoundError(rel)
        if not stat.S_ISREG(st.st_mode):
            raise IsADirectoryError(rel) if stat.S_ISDIR(st.st_mode) else OSError(f"{rel}: not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise FileTooLarge(f"{rel} is {st.st_size} bytes, over the {MAX_FILE_BYTES} byte limit")
        with open(self._abs(rel), "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise FileTooLarge(f"{rel} is over the {MAX_FILE_BYTES} byte limit")
        self._bytes_cache[rel] = data
        return data

    def walk_files(self, rel: str) -> list[str]:
        """Every regular file below ``rel`` (repo-relative), depth-first in sorted order."""
        out: list[str] = []
        stack = [rel]
        seen: set[str] = set()
        while stack:
            d = stack.pop()
            if d in seen:
                continue
            seen.add(d)
            subdirs = []
            for name in self.listdir(d):
                child = f"{d}/{name}" if d else name
                if self.is_dir(child):
                    subdirs.append(child)
                elif self.is_file(child):
                    out.append(child)
            stack.extend(reversed(subdirs))
        return out


@lru_cache(maxsize=4096)
def norm_rel(p: str) -> str:
    """Normalise a repo-relative path (``./a//b/`` -> ``a/b``; ``.`` -> ``""``)."""
    n = posixpath.normpath(p.strip("/")) if p.strip("/") else "."
    return "" if n == "." else n
