"""The read layer's parse cache: every file a run reads, parsed once, with what Flux's source
controller leaves out of the artifact applied.

``FileCache`` sits on a ``repofs.RepoFS`` (or ``treefs.TreeFS``: root-confined, bounded reads)
and a ``sourceignore.Matcher`` (``.sourceignore`` and ``spec.ignore``): a file the artifact
does not hold reads as missing, with the reason. Parsed documents (``yamlio``) are kept per
file for the whole run and, through ``memo``, shared between two revisions of one repository
(``diff``). The kustomize builder, discovery, the suppression reader and the Flux release
detection all read through it.
"""

from __future__ import annotations

import errno

from fluxgraph.model import Location, Problem
from fluxgraph.repofs import FileTooLarge, PathEscape, RepoFS
from fluxgraph.sourceignore import Matcher, ignored_reason
from fluxgraph.yamlio import Document, LoadResult, load_documents


class FileCache:
    """Parsed YAML per file, shared by every build of a repository."""

    def __init__(self, fs: RepoFS, ignore: Matcher | None = None, memo: dict[tuple[str, bytes], LoadResult] | None = None):
        self.fs = fs
        self.ignore = ignore
        self._docs: dict[str, tuple[list[Document], list[Problem]]] = {}
        # parsed files shared between caches keyed by (path, content): diff loads two
        # revisions and most files are the same in both (documents are never modified)
        self._memo = memo

    def visible(self, rel: str, is_dir: bool) -> bool:
        return self.ignore is None or not self.ignore.ignored(rel, is_dir)

    def is_file(self, rel: str) -> bool:
        return self.fs.is_file(rel) and self.visible(rel, False)

    def is_dir(self, rel: str) -> bool:
        return self.fs.is_dir(rel) and self.visible(rel, True)

    def read_bytes(self, rel: str) -> bytes:
        if not self.visible(rel, False):
            if self.fs.is_file(rel):
                raise FileNotFoundError(errno.ENOENT, ignored_reason(self.ignore, rel) if self.ignore else "ignored", rel)
            raise FileNotFoundError(errno.ENOENT, "no such file", rel)
        return self.fs.read_bytes(rel)

    def parsed_files(self) -> list[str]:
        """Every file parsed so far (repository-relative), in the order they were first read."""
        return list(self._docs)

    def documents(self, rel: str) -> tuple[list[Document], list[Problem]]:
        hit = self._docs.get(rel)
        if hit is not None:
            return hit
        problems: list[Problem] = []
        docs: list[Document] = []
        try:
            data = self.read_bytes(rel)
        except PathEscape as e:
            problems.append(Problem("path-escape", str(e), Location(rel), subject="read"))
        except FileTooLarge as e:
            problems.append(Problem("input-limit", str(e), Location(rel), subject="read"))
        except OSError as e:
            problems.append(Problem("missing-file", f"cannot read {rel}: {e.strerror or e}", Location(rel), subject="read"))
        else:
            key = (rel, data)
            res = self._memo.get(key) if self._memo is not None else None
            if res is None:
                res = load_documents(rel, data)
                if self._memo is not None:
                    self._memo[key] = res
            docs = res.documents
            for err in res.errors:
                # one parse error per file: the parser stops at the first
                problems.append(Problem(err.code, err.message, Location(rel, err.line, err.column), subject="parse"))
        self._docs[rel] = (docs, problems)
        return docs, problems
