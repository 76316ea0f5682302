"""The rule catalog: one Markdown file per rule in ``rules/``, metadata in YAML front matter.

The catalog is the reviewable product spec: docs, SARIF rule descriptors, ``fluxgraph rules``
and the check engine all read these files. A test keeps catalog, checks and fixtures in step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fluxgraph.findings import Severity
from fluxgraph.yamlio import load_text

REQUIRED_SECTIONS = ("What it does", "Why is this a hazard?", "Example", "Fix", "Automatic fix", "How to suppress", "References")
_ID_RE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class RuleSpec:
    id: str
    severity: Severity
    summary: str
    fix: str
    tags: tuple[str, ...]
    since: str
    default: bool
    body: str
    path: str
    # whether `fluxgraph fix` repairs it (front matter ``autofix``; section "Automatic fix" says how)
    autofix: bool = False

    def section(self, title: str) -> str:
        m = re.search(rf"^## {re.escape(title)}\s*\n(.*?)(?=^## |\Z)", self.body, re.M | re.S)
        return m.group(1).strip() if m else ""

    @property
    def sections(self) -> list[str]:
        return re.findall(r"^## (.+?)\s*$", self.body, re.M)


def catalog_dir() -> Path:
    packaged = Path(__file__).parent / "_catalog"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "rules"


def parse_rule(text: str, path: str) -> RuleSpec:
    if not text.startswith("---\n"):
        raise ValueError(f"{path}: a rule file starts with YAML front matter (---)")
    end = text.find("\n---\n", 4)
    if end == -1:
        raise ValueError(f"{path}: front matter is not closed with ---")
    [meta] = load_text(text[4:end]) or [{}]
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: front matter must be a mapping")
    rid = str(meta.get("id", ""))
    if not _ID_RE.match(rid):
        raise ValueError(f"{path}: id {rid!r} is not kebab-case")
    for key in ("severity", "summary", "fix"):
        if not meta.get(key):
            raise ValueError(f"{path}: front matter needs {key}")
    if "autofix" in meta and not isinstance(meta["autofix"], bool):
        raise ValueError(f"{path}: autofix is true or false")
    return RuleSpec(
        id=rid,
        severity=Severity.parse(str(meta["severity"])),
        summary=str(meta["summary"]).strip(),
        fix=str(meta["fix"]).strip(),
        tags=tuple(str(t) for t in meta.get("tags") or ()),
        since=str(meta.get("since", "0.1.0")),
        default=bool(meta.get("default", True)),
        autofix=meta.get("autofix") is True,
        body=text[end + 5 :].strip() + "\n",
        path=path,
    )


@lru_cache(maxsize=1)
def load_verdicts() -> dict[str, RuleSpec]:
    """The documented verdicts of ``fluxgraph diff`` (``rules/diff/<code>.md``, the same format
    as a rule's doc; the code is the verdict's ``Effect.code``)."""
    out: dict[str, RuleSpec] = {}
    d = catalog_dir() / "diff"
    for f in sorted(d.glob("*.md")) if d.is_dir() else []:
        spec = parse_rule(f.read_text(encoding="utf-8"), f"diff/{f.name}")
        if spec.id != f.stem:
            raise ValueError(f"diff/{f.name}: id {spec.id!r} does not match the file name")
        out[spec.id] = spec
    return out


@lru_cache(maxsize=1)
def load_catalog() -> dict[str, RuleSpec]:
    out: dict[str, RuleSpec] = {}
    d = catalog_dir()
    for f in sorted(d.glob("*.md")):
        if f.name.lower() == "readme.md":
            continue
        spec = parse_rule(f.read_text(encoding="utf-8"), f.name)
        if spec.id != f.stem:
            raise ValueError(f"{f.name}: id {spec.id!r} does not match the file name")
        out[spec.id] = spec
    return out
