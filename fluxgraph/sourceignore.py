"""What source-controller leaves out of a GitRepository artifact.

Flux never hands these files to kustomize-controller, so for fluxgraph they do not exist.
Follows fluxcd/pkg ``sourceignore/sourceignore.go`` and ``artifact/storage`` ``SourceIgnoreFilter``:
every ``.sourceignore`` file (scoped to its directory), then ``GitRepository.spec.ignore``, after the
VCS patterns; only when there are none of those, the default patterns (VCS files, images and
archives, CI configs, ``**/.goreleaser.yml``, ``**/.sops.yaml``, ``**/.flux.yaml``). Matching
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


def _parse_groups(*groups: str) -> list[Pattern]:
    out = []
    for group in groups:
        for p in group.split(","):
            pat = Pattern.parse(p)
            if pat:
                out.append(pat)
    return out


def default_patterns() -> list[Pattern]:
    """``NewDefaultMatcher``'s patterns: VCS files, then ``DefaultPatterns`` (images and
    archives, CI configuration, ``.goreleaser.yml``/``.sops.yaml``/``.flux.yaml``)."""
    return _parse_groups(EXCLUDE_VCS, EXCLUDE_EXT, EXCLUDE_CI, EXCLUDE_EXTRA)


def vcs_patterns() -> list[Pattern]:
    return _parse_groups(EXCLUDE_VCS)


def artifact_matcher(patterns: list[Pattern]) -> Matcher:
    """What source-controller leaves out of an artifact, given the patterns of the
    repository's ``.sourceignore`` files and the source's ``spec.ignore``: fluxcd/pkg
    ``artifact/storage`` ``SourceIgnoreFilter`` uses the default matcher (VCS files plus the
    default patterns) only when there are no such patterns; otherwise the VCS patterns and
    the given ones, **without** the defaults (a repository with a ``.sourceignore`` ships its
    images and CI files unless it ignores them itself)."""
    if not patterns:
        return Matcher(default_patterns(), defaults=True)
    return Matcher(vcs_patterns() + patterns)


def read_patterns(text: str, domain: tuple[str, ...] = ()) -> list[Pattern]:
    out = []
    for line in text.splitlines():
        pat = Pattern.parse(line, domain)
        if pat:
            out.append(pat)
    return out


@dataclass(frozen=True)
class _Group:
    """Consecutive patterns with the same domain, negation, directory-only flag and anchoring,
    as one matcher: ``rx`` full-matches the last path component (unanchored) or the path below
    the domain (anchored)."""

    domain: str  # "a/b/" or ""
    negate: bool
    dir_only: bool
    anchored: bool
    rx: _Matcher


def _groups(patterns: list[Pattern]) -> list[_Group]:
    """Patterns whose globs have at most one ``*`` run on ``re``, so neighbours with the same
    flags are joined into one alternation; a glob with more wildcards keeps its own linear-time
    matcher (see ``_glob_to_re``)."""
    out: list[_Group] = []
    run: list[str] = []
    run_key: tuple[tuple[str, ...], bool, bool, bool] | None = None

    def flush() -> None:
        if run and run_key is not None:
            domain, negate, dir_only, anchored = run_key
            rx = _glob_to_re(run[0]) if len(run) == 1 else re.compile("|".join(f"(?:{_glob_regex(g)})" for g in run))
            out.append(_Group("".join(d + "/" for d in domain), negate, dir_only, anchored, rx))
        run.clear()

    for p in patterns:
        glob = "/".join(p.parts) if p.anchored else p.parts[0]
        key = (p.domain, p.negate, p.dir_only, p.anchored)
        if key != run_key or glob.count("*") > 1 or any(g.count("*") > 1 for g in run):
            flush()
            run_key = key
        run.append(glob)
    flush()
    return out


class Matcher:
    """gitignore matching with a per-directory memo: a path inside an ignored directory is
    ignored (git does not look inside excluded directories), otherwise the last pattern that
    matches the path itself decides (``Pattern.match_exact``; patterns are grouped so that a
    path costs a few regular-expression matches, not one per pattern)."""

    def __init__(self, patterns: list[Pattern], *, defaults: bool = False):
        self.patterns = patterns
        self.defaults = defaults  # built from source-controller's default patterns
        self._groups = _groups(patterns)[::-1]  # last first: the first group that matches decides
        self._memo: dict[tuple[str, bool], bool] = {}

    def ignored(self, rel: str, is_dir: bool) -> bool:
        if not rel:
            return False
        key = (rel, is_dir)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        parent, _, name = rel.rpartition("/")
        if parent and self.ignored(parent, True):
            result = True
        else:
            result = False
            for g in self._groups:
                if g.dir_only and not is_dir:
                    continue
                if g.domain:
                    if not rel.startswith(g.domain) or len(rel) == len(g.domain):
                        continue
                    below = rel[len(g.domain) :]
                else:
                    below = rel
                if g.rx.fullmatch(below if g.anchored else name):
                    result = not g.negate
                    break
        self._memo[key] = result
        return result


def ignored_reason(matcher: Matcher, rel: str) -> str:
    """Why source-controller leaves the file ``rel`` out of the artifact, for a message."""
    if matcher.defaults:
        return (
            "source-controller leaves it out of the artifact: with no .sourceignore and no spec.ignore, its "
            f"default ignore rules exclude {EXCLUDE_EXT.replace(',', ', ')} and VCS and CI files"
        )
    return "a .sourceignore of the repository leaves it out of the artifact"
