"""``.fluxgraph.yaml``: project configuration, found from the analysed path upwards (stopping
at a directory holding ``.git``) or given with ``--config``.

```yaml
rules:
  disable: [cross-source-depends-on]            # rule IDs not to run
  enable: []                                    # if set, run only these
  severity: {prunable-shared-namespace: info}
exclude: ["archive/**", "**/testdata/**"]      # findings in these files are dropped
cluster: clusters/production                    # default --cluster
clusters: [clusters/prod, clusters/staging]     # the clusters, where discovery cannot tell
flux-version: "2.9"
fail-on: error
substitute: {CLUSTER_DOMAIN: example.com}       # variables that only exist in the cluster
baseline: .fluxgraph-baseline.json
diff:
  acknowledge:                                  # destructive diff verdicts the change intends
    - object: PersistentVolumeClaim/media/library
      reason: the old library volume goes on purpose
```
Command-line options win over the file. ``resolve_settings`` resolves the file and the options
once into ``Settings``, which every command (``check``, ``fix``, ``graph``, ``explain``,
``diff``) and the library's callers pass on: ``Settings.load_kwargs()`` to ``api.load``,
``Settings.check_kwargs()`` to ``engine.run_checks``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgraph.findings import Severity
from fluxgraph.model import FluxgraphError
from fluxgraph.repofs import FileTooLarge, PathEscape, RepoFS, join
from fluxgraph.yamlio import YamlLoadError, load_text

CONFIG_NAMES = (".fluxgraph.yaml", ".fluxgraph.yml")
_KNOWN = {"rules", "exclude", "cluster", "clusters", "env", "flux-version", "fail-on", "substitute", "baseline", "strict", "diff"}


@dataclass(frozen=True)
class Acknowledgement:
    """A destructive ``diff`` verdict the change means (``diff.acknowledge``): the object it is
    about, as diff names it (``Kind/namespace/name``, ``Kind/name`` for a cluster-scoped one), and
    why."""

    object: str
    reason: str


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
    acknowledge: list[Acknowledgement] = field(default_factory=list)
    _spec: Any = field(default=None, init=False, repr=False, compare=False)  # exclude, compiled once

    def excluded(self, file: str) -> bool:
        """Whether ``file`` (relative to the repository) matches ``exclude``, read as
        .gitignore lines are (pathspec's ``GitIgnoreSpec``): ``*.bak`` at any depth, ``/x`` and
        ``a/b`` from the top, ``dir/`` and ``dir/**`` everything under it, ``!`` negates."""
        if self._spec is None:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(self.exclude)
        return bool(self._spec.match_file(file))


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
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise FluxgraphError(f"cannot read {path}: {e}") from None
    return parse_config(text, path)


def parse_config(text: str, path: Path) -> Config:
    """A configuration file's text (``path`` names it in errors and anchors its relative paths)."""
    try:
        docs = load_text(text, str(path))
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
    cfg.acknowledge = _acknowledgements(data.get("diff"), path)
    return cfg


def _acknowledgements(section: Any, path: Path) -> list[Acknowledgement]:
    if section is None:
        return []
    if not isinstance(section, dict) or set(map(str, section)) - {"acknowledge"}:
        raise FluxgraphError(f"{path}: diff must be a mapping with acknowledge")
    items = section.get("acknowledge") or []
    if not isinstance(items, list):
        raise FluxgraphError(f"{path}: diff.acknowledge must be a list of {{object, reason}}")
    out = []
    for i, item in enumerate(items):
        obj = item.get("object") if isinstance(item, dict) else None
        reason = item.get("reason") if isinstance(item, dict) else None
        if not isinstance(obj, str) or obj.count("/") not in (1, 2) or not isinstance(reason, str) or not reason.strip():
            raise FluxgraphError(
                f"{path}: diff.acknowledge[{i}] needs object (Kind/namespace/name or Kind/name) and a non-empty reason"
            )
        out.append(Acknowledgement(obj, reason.strip()))
    return out


def confined(base: Path, rel: str, what: str) -> None:
    """Refuse a file named by the repository itself (a configuration found from PATH upwards,
    the baseline it names) that leaves ``base`` through a symlink, or cannot be read within the
    limits: such a file is read with the same rules as the repository's own."""
    try:
        RepoFS(base).read_bytes(join("", rel))
    except (PathEscape, FileTooLarge, OSError) as e:
        raise FluxgraphError(f"{what} {rel}: {getattr(e, 'strerror', None) or e}; not read") from None


@dataclass(frozen=True)
class Settings:
    """What a run is configured by, resolved once from ``.fluxgraph.yaml`` and the command
    line (the command line wins). ``enabled``/``disabled`` select rules, ``severities``
    override them, ``exclude`` drops findings by file, ``baseline`` holds the fingerprints of
    known findings."""

    config: Config = field(default_factory=Config)
    cluster: str | None = None
    clusters: tuple[str, ...] | None = None
    env: str | None = None
    flux_version: str | None = None
    strict: bool | None = None
    extra_vars: dict[str, str] = field(default_factory=dict)
    enabled: frozenset[str] | None = None
    disabled: frozenset[str] = frozenset()
    severities: dict[str, Severity] = field(default_factory=dict)
    exclude: Any = None  # a predicate over a finding's file, or None
    baseline: Any = None  # suppress.Baseline, or None

    def load_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``api.load``."""
        return {
            "cluster": self.cluster,
            "clusters": list(self.clusters) if self.clusters else None,
            "env": self.env,
            "flux_version": self.flux_version,
            "strict": self.strict,
            "extra_vars": dict(self.extra_vars),
        }

    def check_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``engine.run_checks``."""
        return {
            "enabled": set(self.enabled) if self.enabled is not None else None,
            "disabled": set(self.disabled),
            "severities": dict(self.severities),
            "exclude": self.exclude,
            "baseline": self.baseline,
        }

    def analyze_kwargs(self) -> dict[str, Any]:
        """Both: the keyword arguments of ``engine.analyze``."""
        return {**self.load_kwargs(), **self.check_kwargs()}


def resolve_settings(
    path: str | Path,
    config_path: str | Path | None = None,
    *,
    cluster: str | None = None,
    env: str | None = None,
    flux_version: str | None = None,
    strict: bool | None = None,
    extra_vars: dict[str, str] | None = None,
    enable: tuple[str, ...] | set[str] = (),
    disable: tuple[str, ...] | set[str] = (),
    baseline_path: str | None = None,
    read_baseline_file: bool = True,
) -> Settings:
    """The configuration (``config_path``, else ``.fluxgraph.yaml`` found from ``path``
    upwards, confined to its directory) merged with what the caller gives: a value given here
    wins over the file's; ``--cluster``/``--env`` win over the file's ``clusters:``; variables
    are the file's ``substitute`` updated with ``extra_vars``. Raises FluxgraphError."""
    from fluxgraph.suppress import read_baseline

    cfg_file = Path(config_path) if config_path else find_config(Path(path))
    if cfg_file is not None and not config_path:
        confined(cfg_file.parent, cfg_file.name, "configuration file")
    cfg = load_config(cfg_file) if cfg_file else Config()
    variables = dict(cfg.substitute)
    variables.update(extra_vars or {})
    baseline = None
    bpath = baseline_path or (str(cfg.path.parent / cfg.baseline) if cfg.baseline and cfg.path else None)
    if bpath and read_baseline_file:
        if not baseline_path and not config_path and cfg.path is not None and cfg.baseline:
            confined(cfg.path.parent, cfg.baseline, "baseline")
        try:
            baseline = read_baseline(bpath)
        except ValueError as e:
            raise FluxgraphError(str(e)) from None
    enabled = set(enable) or cfg.enable
    return Settings(
        config=cfg,
        cluster=cluster if cluster is not None else (cfg.cluster if env is None else None),
        clusters=tuple(cfg.clusters) if cfg.clusters and cluster is None and env is None else None,
        env=env if env is not None else (cfg.env if cluster is None and cfg.cluster is None else None),
        flux_version=flux_version or cfg.flux_version,
        strict=strict if strict is not None else cfg.strict,
        extra_vars=variables,
        enabled=frozenset(enabled) if enabled is not None else None,
        disabled=frozenset(set(disable) | cfg.disable),
        severities=dict(cfg.severities),
        exclude=cfg.excluded if cfg.exclude else None,
        baseline=baseline,
    )
