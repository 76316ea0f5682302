"""Suppressions where they live, and the baseline.

1. An annotation on the object: ``fluxgraph.io/ignore: "<rule>[, <rule>]: <reason>"`` (several
   entries separated by newlines or ``;``) suppresses those rules for findings inside that
   object's document.
2. A YAML comment ``# fluxgraph: ignore[<rule>, ...] <reason>``: at the end of a line it covers
   that line; on a line of its own it covers the next content line, and the whole object when
   that line starts a document. Comments never reach the cluster (ruamel and kustomize drop
   them), so they are the way to annotate objects Flux generates or that must stay unchanged.
3. A baseline file (``check --write-baseline FILE``, then ``--baseline FILE``): findings whose
   fingerprint (rule + file + subject, not the line) is listed are not reported again.

A suppression without a reason or naming an unknown rule is reported (``invalid-suppression``),
and one that suppresses nothing (``unused-suppression``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgraph.atomic import replace_file
from fluxgraph.filecache import FileCache
from fluxgraph.findings import Finding
from fluxgraph.model import Location
from fluxgraph.repofs import FileTooLarge, PathEscape

ANNOTATION = "fluxgraph.io/ignore"
_COMMENT_RE = re.compile(r"(?:^|\s)#\s*fluxgraph:\s*ignore\[([^\]]*)\]\s*(.*?)\s*$")
BASELINE_VERSION = 1


@dataclass
class Suppression:
    rules: tuple[str, ...]
    reason: str
    location: Location
    kind: str  # "annotation" | "comment"
    first_line: int
    last_line: int
    used: bool = field(default=False, compare=False)

    def covers(self, f: Finding) -> bool:
        return (
            f.location.file == self.location.file
            and self.first_line <= f.location.line <= self.last_line
            and f.rule in self.rules
        )


def _parse_entries(text: str) -> list[tuple[tuple[str, ...], str]]:
    out = []
    for entry in re.split(r"[;\n]", text):
        entry = entry.strip()
        if not entry:
            continue
        rules_part, _, reason = entry.partition(":")
        rules = tuple(r.strip() for r in rules_part.split(",") if r.strip())
        out.append((rules, reason.strip()))
    return out


def _doc_spans(cache: FileCache, file: str) -> list[tuple[int, int, Any]]:
    """(first line, last line, data) of each document of a file (1-based, inclusive)."""
    docs, _ = cache.documents(file)
    text = docs[0].source if docs and docs[0].source is not None else ""
    n_lines = text.count("\n") + 1
    spans = []
    for i, d in enumerate(docs):
        end = (docs[i + 1].line - 1) if i + 1 < len(docs) else n_lines
        spans.append((d.line, end, d.data))
    return spans


def collect(cache: FileCache, files: set[str]) -> list[Suppression]:
    out: list[Suppression] = []
    for file in sorted(files):
        try:
            raw = cache.read_bytes(file)
        except (OSError, PathEscape, FileTooLarge):
            continue  # reported by the build that read it
        if b"fluxgraph" not in raw:
            continue  # both forms of suppression contain the word: no need to parse the file
        docs, _ = cache.documents(file)
        if not docs or docs[0].source is None or "fluxgraph" not in docs[0].source:
            continue
        spans = _doc_spans(cache, file)
        # annotations
        for doc, (first, last, data) in zip(docs, spans, strict=True):
            md = data.get("metadata") if isinstance(data, dict) else None
            ann = md.get("annotations") if isinstance(md, dict) else None
            value = ann.get(ANNOTATION) if isinstance(ann, dict) else None
            if isinstance(value, str):
                aline, acol = doc.position(("metadata", "annotations", ANNOTATION))
                for rules, reason in _parse_entries(value):
                    out.append(Suppression(rules, reason, Location(file, aline, acol), "annotation", first, last))
        # comments
        lines: list[str] = docs[0].source.splitlines()
        for idx, line in enumerate(lines):
            if "fluxgraph" not in line:
                continue
            m = _COMMENT_RE.search(line)
            if not m:
                continue
            lineno = idx + 1
            rules = tuple(r.strip() for r in m.group(1).split(",") if r.strip())
            reason = m.group(2)
            col = line.index("#", m.start()) + 1
            if line[: m.start()].strip():  # trailing comment
                first = last = lineno
            else:
                nxt = next(
                    (j + 1 for j in range(idx + 1, len(lines)) if lines[j].strip() and not lines[j].lstrip().startswith("#")),
                    lineno,
                )
                if lines[nxt - 1].strip() == "---":
                    nxt = next((j + 1 for j in range(nxt, len(lines)) if lines[j].strip() and not lines[j].lstrip().startswith("#")), nxt)
                first = last = nxt
                for start, end, _ in spans:
                    if start == nxt:
                        last = end
            out.append(Suppression(rules, reason, Location(file, lineno, col), "comment", first, last))
    return out


def apply(findings: list[Finding], suppressions: list[Suppression]) -> tuple[list[Finding], list[Finding]]:
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    for f in findings:
        hit = False
        for s in suppressions:
            if s.reason and s.covers(f):
                s.used = True
                hit = True
        (suppressed if hit else kept).append(f)
    return kept, suppressed


def write_baseline(path: str | Path, findings: list[Finding]) -> None:
    doc = {
        "fluxgraphBaseline": BASELINE_VERSION,
        "findings": sorted(
            ({"rule": f.rule, "file": f.location.file, "fingerprint": f.fingerprint, "message": f.message} for f in findings),
            key=lambda d: (d["file"], d["rule"], d["fingerprint"]),
        ),
    }
    # through a symlink to the file it names, as writing to the path would
    replace_file(Path(os.path.realpath(path)), (json.dumps(doc, indent=2) + "\n").encode("utf-8"))


def read_baseline(path: str | Path) -> set[tuple[str, str]]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read baseline {path}: {e}") from None
    if not isinstance(doc, dict) or doc.get("fluxgraphBaseline") != BASELINE_VERSION or not isinstance(doc.get("findings"), list):
        raise ValueError(f"{path} is not a fluxgraph baseline (version {BASELINE_VERSION})")
    return {(str(e.get("rule")), str(e.get("fingerprint"))) for e in doc["findings"] if isinstance(e, dict)}
