"""Writing fixed files back, confined to the repository, one atomic replacement per file; and the
repository as it would be after the fixes, for the re-check.

A file is written only if it is a regular file inside the repository root, reached through no
symlink that leaves the root, is not itself a symlink (replacing one would turn it into a file)
nor read-only, and still holds the bytes the fix was computed from. The same conditions are
checked when the fixes are planned, so that the diff ``fix`` shows is what ``--write`` writes.
The new content goes to a temporary file in the same directory, is flushed to disk, gets the
old file's permission bits, and is renamed over the old one (``os.replace``, atomic on POSIX and
Windows): an interrupted run leaves either the old file or the new one, never half of either
(``fluxgraph.atomic``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from fluxgraph.atomic import replace_file
from fluxgraph.repofs import PathEscape, RepoFS, join


class WriteRefused(Exception):
    """A file fluxgraph will not write (the message says why)."""


def resolve_for_write(root: Path, rel: str) -> Path:
    """The absolute path to replace for the repo-relative ``rel``; raises ``WriteRefused``."""
    try:
        norm = join("", rel)
    except PathEscape as e:
        raise WriteRefused(f"{rel}: {e}") from None
    if not norm or norm != rel:
        raise WriteRefused(f"{rel}: not a normalised path inside the repository")
    fs = RepoFS(root)
    try:
        fs._check_inside(norm)  # symlinks anywhere on the way that leave the root, cycles
    except (PathEscape, OSError) as e:
        raise WriteRefused(f"{rel}: {e}") from None
    target = Path(os.path.realpath(fs.root / norm))
    real_root = Path(os.path.realpath(fs.root))
    if target != real_root and real_root not in target.parents:
        raise WriteRefused(f"{rel}: resolves outside the repository")
    try:
        st = os.lstat(fs.root / norm)
    except OSError as e:
        raise WriteRefused(f"{rel}: {e.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise WriteRefused(f"{rel} is a symlink; fluxgraph does not replace symlinks")
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"{rel} is not a regular file")
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        # the rename would replace it all the same (the directory is writable): its read-only
        # mode is someone's decision, which fluxgraph does not override
        raise WriteRefused(f"{rel} is read-only; fluxgraph does not replace a read-only file")
    return target


def check_writable(root: Path, rel: str, old: bytes) -> Path:
    """``resolve_for_write``, and ``rel`` still holds ``old``; raises ``WriteRefused`` or ``OSError``."""
    target = resolve_for_write(root, rel)
    with open(target, "rb") as fh:
        if fh.read() != old:
            raise WriteRefused(f"{rel} changed since it was read; not written")
    return target


def write_atomic(root: Path, rel: str, old: bytes, new: bytes) -> None:
    """Replace ``rel`` (which must still hold ``old``) with ``new``; raises ``WriteRefused`` or
    ``OSError`` and then leaves the file as it was."""
    replace_file(check_writable(root, rel, old), new)


class OverlayFS(RepoFS):
    """The repository with some files' contents replaced (in memory): what the re-check reads."""

    def __init__(self, root: str | os.PathLike[str], overlay: dict[str, bytes]):
        super().__init__(root)
        self._overlay = dict(overlay)

    def _sys_read(self, rel: str, limit: int) -> bytes:
        data = self._overlay.get(rel)
        if data is not None:
            return data[:limit]
        return super()._sys_read(rel, limit)
