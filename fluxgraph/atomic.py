"""Replacing a file so that a reader, or a run that is interrupted, finds either its old
content or its new content, never part of either: the bytes go to a temporary file in the same
directory, are flushed to disk, and the temporary file is renamed over the target
(``os.replace``, atomic on POSIX and Windows). Used for the two files fluxgraph writes:
``fix --write``'s repairs (``fix.write``) and ``check --write-baseline``'s baseline.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path


def replace_file(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` atomically. An existing file keeps its permission bits; a
    new one gets the bits any new file gets (0666 less the umask). Raises ``OSError`` and then
    leaves ``target`` as it was."""
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    for attempt in range(100):
        tmp = target.parent / f".{target.name}.{os.getpid()}-{attempt}.fluxgraph-tmp"
        try:
            # never more open than the file it replaces, even before the chmod below; a new
            # target is created as open() creates files, so that the umask applies
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
            fd = os.open(tmp, flags, 0o666 if mode is None else mode)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, f"no free temporary name beside {target}")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
