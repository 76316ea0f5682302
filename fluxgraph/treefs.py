"""A git revision served from memory with ``RepoFS``'s rules.

``fluxgraph diff`` used to write the base revision below a temporary directory and read it back:
on a 1,300-file repository that was most of a second of file creation and removal. ``TreeFS``
gives ``RepoFS`` the revision's tree instead (files, symlinks and directories as
``gitrev.read_tree`` lists them), so every confinement rule of ``RepoFS`` applies unchanged:
the tree only replaces the seven ``_sys_*`` methods that touch the operating system.

Symlinks resolve as the kernel resolves them: component by component, a relative target from
the link's directory, ``..`` above the root or an absolute target leaving the tree (RepoFS then
refuses the path as an escape), more than ``MAX_SYMLINK_HOPS`` links on one path failing like
``ELOOP``. Paths are never looked up on disk.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from fluxgraph.repofs import RepoFS

MAX_SYMLINK_HOPS = 40  # Linux's limit on symlinks followed in one path resolution

_DIR_MODE = stat.S_IFDIR | 0o755
_FILE_MODE = stat.S_IFREG | 0o644
_LINK_MODE = stat.S_IFLNK | 0o777


def _stat_result(mode: int, size: int) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, 0, 0, size, 0, 0, 0))


class _Escape(Exception):
    pass


class TreeFS(RepoFS):
    """``files``: repo-relative path -> content; ``links``: path -> target as git stores it;
    ``dirs``: directories with no entry below them (submodules). Parent directories of every
    entry exist implicitly. ``label`` names the tree in messages (e.g. ``git:<commit>``)."""

    def __init__(self, files: dict[str, bytes], links: dict[str, str], dirs: set[str] | None = None, label: str = "git"):
        self._files = files
        self._links = links
        self._children: dict[str, set[str]] = {"": set()}
        for rel in [*files, *links, *(dirs or ())]:
            parts = rel.split("/")
            for i in range(len(parts)):
                parent = "/".join(parts[:i])
                self._children.setdefault(parent, set()).add(parts[i])
            if rel in (dirs or ()):
                self._children.setdefault(rel, set())
        # a name that is a file or link in the tree is never also a directory (git trees)
        super().__init__(f"/{label}")

    def _resolve_root(self, root: str | os.PathLike[str]) -> Path:
        return Path(os.fspath(root))  # a label: never resolved on disk

    # -- resolution ------------------------------------------------------------------------
    def _resolve(self, rel: str, follow_last: bool) -> str:
        """The tree path ``rel`` leads to; raises _Escape when it leaves the tree and OSError
        (ELOOP) after too many links."""
        pending = [p for p in rel.split("/") if p][::-1]
        cur: list[str] = []
        hops = 0
        while pending:
            part = pending.pop()
            if part == ".":
                continue
            if part == "..":
                if not cur:
                    raise _Escape(rel)
                cur.pop()
                continue
            candidate = "/".join([*cur, part])
            target = self._links.get(candidate)
            if target is None or (not pending and not follow_last):
                cur.append(part)
                continue
            hops += 1
            if hops > MAX_SYMLINK_HOPS:
                raise OSError(errno.ELOOP, "too many levels of symbolic links", rel)
            if target.startswith("/"):
                raise _Escape(rel)
            pending.extend([p for p in target.split("/") if p][::-1])
        return "/".join(cur)

    def _kind(self, path: str) -> int | None:
        if path in self._files:
            return _FILE_MODE
        if path in self._links:
            return _LINK_MODE
        if path in self._children:
            return _DIR_MODE
        return None

    def _lookup(self, rel: str, follow_last: bool) -> str:
        try:
            path = self._resolve(rel, follow_last)
        except _Escape:
            raise FileNotFoundError(errno.ENOENT, "outside the tree", rel) from None
        return path

    # -- the seven operating-system methods of RepoFS -----------------------------------------
    def _sys_lstat(self, rel: str) -> os.stat_result:
        path = self._lookup(rel, follow_last=False)
        mode = self._kind(path)
        if mode is None:
            raise FileNotFoundError(errno.ENOENT, "no such file", rel)
        return _stat_result(mode, len(self._files[path]) if mode == _FILE_MODE else 0)

    def _sys_stat(self, rel: str) -> os.stat_result:
        path = self._lookup(rel, follow_last=True)
        mode = self._kind(path)
        if mode is None or mode == _LINK_MODE:
            raise FileNotFoundError(errno.ENOENT, "no such file", rel)
        return _stat_result(mode, len(self._files[path]) if mode == _FILE_MODE else 0)

    def _sys_listdir(self, rel: str) -> list[str]:
        path = self._lookup(rel, follow_last=True)
        names = self._children.get(path)
        if names is None or path in self._files:
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", rel)
        return list(names)

    def _sys_scandir(self, rel: str) -> list[tuple[str, str | None]]:
        return [(name, None) for name in self._sys_listdir(rel)]  # kinds come from lstat

    def _sys_read(self, rel: str, limit: int) -> bytes:
        path = self._lookup(rel, follow_last=True)
        data = self._files.get(path)
        if data is None:
            if path in self._children:
                raise IsADirectoryError(errno.EISDIR, "is a directory", rel)
            raise FileNotFoundError(errno.ENOENT, "no such file", rel)
        return data[:limit]

    def _sys_realpath(self, rel: str) -> str:
        try:
            path = self._resolve(rel, follow_last=True)
        except _Escape:
            return "/"  # outside the root: RepoFS reports the escape
        except OSError:
            return f"{self._root_str}/\x00loop"  # like realpath on ELOOP: a path that does not exist
        return self._root_str if not path else f"{self._root_str}/{path}"

    def _sys_isdir(self, real: str) -> bool:
        if real == self._root_str:
            return True
        prefix = self._root_str + "/"
        return real.startswith(prefix) and self._kind(real[len(prefix) :]) == _DIR_MODE
