"""``.fluxgraph.yaml``: project configuration, found from the analysed path upwards (stopping
at a directory holding ``.git``) or given with ``--config``.

```yaml
rules:
  disable: [flux-dependency-on-other-source]   # rule IDs not to run
  enable: []                                    # if set, run only these
  severity: {shared-namespace-single-pruner: warning}
exclude: ["archive/**", "**/testdata/**"]      # findings in these files are dropped
cluster: clusters/production                    # default --cluster
clusters: [clusters/prod, clusters/staging]     # the clusters, where discovery cannot tell
flux-version: "2.9"
fail-on: error
substitute: {CLUSTER_DOMAIN: example.com}       # variables that only exist in the cluster
baseline: .fluxgraph-baseline.json
```
Command-line options win over the file.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgraph.findings import Severity
from fluxgraph.model import FluxgraphError
from fluxgraph.yamlio import YamlLoadError, load_text

CONFIG_NAMES = (".fluxgraph.yaml", ".fluxgraph.yml")
_KNOWN = {"rules", "exclude", "cluster", "clusters", "env", "flux-version", "fail-on", "substitute", "baseline", "strict"}


@dataclass
class Config:
    path: Path | None = None
    enable: set[str] | None = None
    disable: set[str] = field(default_factory=set)
    severities: dict[str, Severity] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    cluster: str | None = None
    # the clusters' directories, for layouts discovery cannot read (entrypoints set in
    # Terraform, stale bootstrap folders kept in the tree): used instead of discovery
    clusters: list[str] = field(default_factory=list)
    env: str | None = None
    flux_version: str | None = None
    strict: bool | None = None
    fail_on: Severity | None = None
    substitute: dict[str, str] = field(default_factory=dict)
    baseline: str | None = None

    def excluded(self, file: str) -> bool:
        return any(fnmatch.fnmatchcase(file, pat) or fnmatch.fnmatchcase(file, pat.rstrip("/") + "/*") for pat in self.exclude)


def find_config(start: Path) -> Path | None:
    d = start.resolve()
    if d.is_file():
        d = d.parent
    while True:
        for name in CONFIG_NAMES:
            if (d / name).is_file():
                return d / name
        if (d / ".git").exists() or d.parent == d:
            return None
        d = d.parent


def _str_list(v: Any, where: str) -> list[str]:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise FluxgraphError(f"{where} must be a list of strings")
    return list(v)


def load_config(path: Path) -> Config:
    try:
        docs = load_text(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as e:
        raise FluxgraphError(f"cannot read {path}: {e}") from None
    except YamlLoadError as e:
        raise FluxgraphError(f"{path}:{e.line}:{e.column}: {e.message}") from None
    data = docs[0] if docs else {}
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FluxgraphError(f"{path}: the configuration must be a mapping")
    unknown = sorted(set(map(str, data)) - _KNOWN)
    if unknown:
        raise FluxgraphError(f"{path}: unknown key(s) {', '.join(unknown)}")
    cfg = Config(path=path)
    rules = data.get("rules") or {}
    if not isinstance(rules, dict):
        raise FluxgraphError(f"{path}: rules must be a mapping")
    if rules.get("enable") is not None:
        cfg.enable = set(_str_list(rules.get("enable"), f"{path}: rules.enable"))
    cfg.disable = set(_str_list(rules.get("disable"), f"{path}: rules.disable"))
    sev = rules.get("severity") or {}
    if not isinstance(sev, dict):
        raise FluxgraphError(f"{path}: rules.severity must map rule IDs to error, warning or info")
    for rid, s in sev.items():
        try:
            cfg.severities[str(rid)] = Severity.parse(str(s))
        except ValueError as e:
            raise FluxgraphError(f"{path}: rules.severity.{rid}: {e}") from None
    cfg.exclude = _str_list(data.get("exclude"), f"{path}: exclude")
    cfg.clusters = _str_list(data.get("clusters"), f"{path}: clusters")
    if cfg.clusters and (data.get("cluster") is not None or data.get("env") is not None):
        raise FluxgraphError(f"{path}: give either clusters or cluster/env, not both")
    for key, attr in (("cluster", "cluster"), ("env", "env"), ("flux-version", "flux_version"), ("baseline", "baseline")):
        v = data.get(key)
        if v is not None:
            if not isinstance(v, (str, int, float)) or isinstance(v, bool):
                raise FluxgraphError(f"{path}: {key} must be a string")
            setattr(cfg, attr, str(v))
    if data.get("strict") is not None:
        if not isinstance(data["strict"], bool):
            raise FluxgraphError(f"{path}: strict must be true or false")
        cfg.strict = data["strict"]
    if data.get("fail-on") is not None:
        try:
            cfg.fail_on = Severity.parse(str(data["fail-on"]))
        except ValueError as e:
            raise FluxgraphError(f"{path}: fail-on: {e}") from None
    subst = data.get("substitute") or {}
    if not isinstance(subst, dict):
        raise FluxgraphError(f"{path}: substitute must be a mapping of variable names to values")
    cfg.substitute = {str(k): "" if v is None else str(v).lower() if isinstance(v, bool) else str(v) for k, v in subst.items()}
    return cfg
