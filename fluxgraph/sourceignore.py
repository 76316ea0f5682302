"""What source-controller leaves out of a GitRepository artifact.

Flux never hands these files to kustomize-controller, so for fluxgraph they do not exist.
Follows fluxcd/pkg ``sourceignore/sourceignore.go``: the default patterns (VCS files, images and
archives, CI configs, ``**/.goreleaser.yml``, ``**/.sops.yaml``, ``**/.flux.yaml``), then every
``.sourceignore`` file (scoped to its directory), then ``GitRepository.spec.ignore``. Matching
follows gitignore as go-git implements it: the last matching pattern decides, ``!`` negates,
a trailing ``/`` matches directories only, a pattern with a ``/`` inside is anchored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from fluxgraph.kustomize.errors import KustomizeError
from fluxgraph.kustomize.selector import linear_regex

EXCLUDE_VCS = ".git/,.gitignore,.gitmodules,.gitattributes"
EXCLUDE_EXT = "*.jpg,*.jpeg,*.gif,*.png,*.wmv,*.flv,*.tar.gz,*.zip"
EXCLUDE_CI = (
    ".github/,.circleci/,.travis.yml,.gitlab-ci.yml,appveyor.yml,.drone.yml,cloudbuild.yaml,"
    "codeship-services.yml,codeship-steps.yml"
)
EXCLUDE_EXTRA = "**/.goreleaser.yml,**/.sops.yaml,**/.flux.yaml"


class _Matcher(Protocol):
    def fullmatch(self, text: str) -> Any: ...


@lru_cache(maxsize=2048)
def _glob_to_re(glob: str) -> _Matcher:
    """A matcher for one gitignore glob. Python's backtracking ``re`` is exponential on
    globs like ``*a*a*a*b`` (a .sourceignore in a pull request is untrusted input), so globs
    with more than one wildcard run on kustomize.selector's linear-time matcher."""
    rx = _glob_regex(glob)
    if glob.count("*") > 1:
        try:
            return linear_regex(rx)
        except KustomizeError:
            pass
    return re.compile(rx)


def _glob_regex(glob: str) -> str:
    out = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*":
            if glob[i : i + 2] == "**":
                out.append(".*")
                i += 2
                if i < len(glob) and glob[i] == "/":
                    i += 1
                    out[-1] = "(?:.*/)?"
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = glob.find("]", i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class Pattern:
    domain: tuple[str, ...]
    negate: bool
    dir_only: bool
    anchored: bool
    parts: tuple[str, ...]

    @staticmethod
    def parse(line: str, domain: tuple[str, ...] = ()) -> Pattern | None:
        s = line.rstrip("\n").rstrip()
        if not s or s.startswith("#"):
            return None
        negate = s.startswith("!")
        if negate:
            s = s[1:]
        dir_only = s.endswith("/")
        s = s.strip("/") if dir_only else s
        anchored = "/" in s.rstrip("/")
        s = s.lstrip("/")
        if not s:
            return None
        return Pattern(domain, negate, dir_only, anchored, tuple(s.split("/")))

    def match_exact(self, path: tuple[str, ...], is_dir: bool) -> bool:
        """Whether the pattern matches this path itself (not one of its parents)."""
        if len(path) <= len(self.domain) or path[: len(self.domain)] != self.domain:
            return False
        if self.dir_only and not is_dir:
            return False
        rel = path[len(self.domain) :]
        if not self.anchored:
            return bool(_glob_to_re(self.parts[0]).fullmatch(rel[-1]))
        return bool(_glob_to_re("/".join(self.parts)).fullmatch("/".join(rel)))

    def match(self, path: tuple[str, ...], is_dir: bool) -> bool:
        if len(path) <= len(self.domain) or path[: len(self.domain)] != self.domain:
            return False
        rel = path[len(self.domain) :]
        if not self.anchored:
            # match the last component (or any ancestor directory component)
            pat = _glob_to_re(self.parts[0])
            for i, comp in enumerate(rel):
                last = i == len(rel) - 1
                if pat.fullmatch(comp):
                    if last and self.dir_only and not is_dir:
                        continue
                    return True
            return False
        rx = _glob_to_re("/".join(self.parts))
        for i in range(len(rel), 0, -1):
            sub = "/".join(rel[:i])
            if rx.fullmatch(sub):
                if i == len(rel) and self.dir_only and not is_dir:
                    continue
                return True
        return False


def default_patterns() -> list[Pattern]:
    out = []
    for group in (EXCLUDE_VCS, EXCLUDE_EXT, EXCLUDE_CI, EXCLUDE_EXTRA):
        for p in group.split(","):
            pat = Pattern.parse(p)
            if pat:
                out.append(pat)
    return out


def read_patterns(text: str, domain: tuple[str, ...] = ()) -> list[Pattern]:
    out = []
    for line in text.splitlines():
        pat = Pattern.parse(line, domain)
        if pat:
            out.append(pat)
    return out


class Matcher:
    """gitignore matching with a per-directory memo: a path inside an ignored directory is
    ignored (git does not look inside excluded directories), otherwise the last pattern that
    matches the path itself decides."""

    def __init__(self, patterns: list[Pattern]):
        self.patterns = patterns
        self._memo: dict[tuple[str, bool], bool] = {}

    def ignored(self, rel: str, is_dir: bool) -> bool:
        if not rel:
            return False
        key = (rel, is_dir)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        if parent and self.ignored(parent, True):
            result = True
        else:
            path = tuple(rel.split("/"))
            result = False
            for p in self.patterns:
                if p.match_exact(path, is_dir):
                    result = not p.negate
        self._memo[key] = result
        return result
