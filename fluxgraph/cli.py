"""The ``fluxgraph`` command: a thin click layer over ``fluxgraph.api``.

Exit status: 0 success (no findings at or above the threshold), 1 findings, 2 usage or input
error. Reports go to stdout (or ``--output``), diagnostics to stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from fluxgraph import __version__
from fluxgraph.api import load
from fluxgraph.export import to_json, to_text
from fluxgraph.model import FluxgraphError

if TYPE_CHECKING:
    from fluxgraph.config import Settings

cluster_option = click.option("--cluster", "cluster", metavar="DIR", help="Path (relative to PATH) of the cluster's root Kustomization.")
env_option = click.option("--env", "env", metavar="NAME", help="Shorthand for --cluster clusters/NAME.")
flux_version_option = click.option(
    "--flux-version",
    metavar="X.Y|next",
    default=None,
    help="Flux version to model instead of the one the repository pins (default: the pinned one, else the latest); "
    "'next' models the release after the pinned one: what an upgrade breaks.",
)
strict_option = click.option("--strict/--no-strict", default=None, help="Force strict postBuild substitution on or off.")
config_option = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), default=None, help="Configuration file (default: .fluxgraph.yaml found from PATH upwards)."
)


def _parse_vars(pairs: tuple[str, ...], files: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in files:
        try:
            with open(f, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    line = line.strip()
                    if not line or line.startswith("#"):
                        continue
                    if "=" not in line:
                        raise click.BadParameter(f"{f}:{n}: expected KEY=VALUE", param_hint="--substitute-from")
                    k, v = line.split("=", 1)
                    out[k.strip()] = v
        except OSError as e:
            raise click.BadParameter(f"{f}: {e.strerror}", param_hint="--substitute-from") from None
    for p in pairs:
        if "=" not in p:
            raise click.BadParameter(f"{p!r}: expected KEY=VALUE", param_hint="--substitute")
        k, v = p.split("=", 1)
        out[k] = v
    return out


def substitute_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option(
        "--substitute-from", "substitute_from", multiple=True, metavar="FILE", help="KEY=VALUE file of variables that only exist in the cluster."
    )(f)
    f = click.option("--substitute", "substitute", multiple=True, metavar="KEY=VALUE", help="A variable that only exists in the cluster.")(f)
    return f


def model_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """What every command that builds the model takes: --config, --cluster/--env,
    --flux-version, --strict/--no-strict, --substitute and --substitute-from (in that order in
    --help)."""
    for option in (substitute_options, strict_option, flux_version_option, env_option, cluster_option, config_option):
        f = option(f)
    return f


def _settings(
    path: str,
    model: dict[str, Any],
    *,
    enable: tuple[str, ...] = (),
    disable: tuple[str, ...] = (),
    baseline_path: str | None = None,
    read_baseline_file: bool = True,
) -> Settings:
    """``config.resolve_settings`` from the values of ``model_options`` (--config, --cluster,
    --env, --flux-version, --strict, --substitute, --substitute-from): the one way every
    command reads the configuration and the options. Raises FluxgraphError."""
    from fluxgraph.config import resolve_settings

    return resolve_settings(
        path,
        model["config_path"],
        cluster=model["cluster"],
        env=model["env"],
        flux_version=model["flux_version"],
        strict=model["strict"],
        extra_vars=_parse_vars(model["substitute"], model["substitute_from"]),
        enable=enable,
        disable=disable,
        baseline_path=baseline_path,
        read_baseline_file=read_baseline_file,
    )


def _fail(msg: str) -> None:
    click.echo(f"fluxgraph: error: {msg}", err=True)
    sys.exit(2)


class _Group(click.Group):
    """The last line of defence on untrusted input: an unexpected exception (a fluxgraph bug)
    becomes exit status 2 and one line on stderr, never a traceback in a CI log. The
    exception's notes name the last file read (``api.load``); ``FLUXGRAPH_DEBUG=1`` re-raises."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except BrokenPipeError:
            # the reader went away (`fluxgraph rules | head`): what it read is all it wanted;
            # stdout is pointed at /dev/null so that the exit flush does not fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except Exception as e:
            if os.environ.get("FLUXGRAPH_DEBUG") == "1":
                raise
            notes = "; ".join(getattr(e, "__notes__", ()))
            first = str(e).splitlines()[0] if str(e) else ""
            _fail(f"internal error: {type(e).__name__}: {first}{f' ({notes})' if notes else ''}; please report it (FLUXGRAPH_DEBUG=1 shows where)")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fluxgraph")
def main() -> None:
    """Static analyzer for Flux CD GitOps repositories."""


# A young-generation collection runs after this many new container objects (the default: 700).
GC_THRESHOLDS = (1_000_000, 50, 1000)


def entry() -> None:
    """The ``fluxgraph`` program (console script and ``python -m fluxgraph``): ``main`` run as a
    one-shot process, tuned the way mypy tunes itself. Both tunings change how fast, never what
    is computed, and library callers and tests, who call ``main``, get neither:

    * The cyclic garbage collector: the objects of the imported modules are frozen (never
      scanned again) and a young collection runs after a million new objects instead of 700. A
      run builds millions of objects and keeps almost all of them to the end, so each default
      collection rescans live objects for nothing. Cycles are still collected.
    * After the output is flushed the process ends with ``os._exit``, without tearing the model
      down object by object. Files written with ``--output`` are closed before ``main`` returns.

    Measured with ``tests/bench/bench_graph.py`` on `check` of onedr0p and haraldkoch, each
    tuning removed in turn (docs/performance.md, "Speed tricks"): the collector's thresholds
    save 17 % of a haraldkoch run (onedr0p: -4 % and 11 %, noise), the fast exit 10 to 19 %,
    together 24 to 37 %. Raising the thresholds before the package is imported, as a separate
    entry module once did, saved 0.5 % (callgrind): it is not done.
    """
    import gc

    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    code: int
    try:
        main()
        code = 0
    except SystemExit as e:  # click's standalone mode always ends here
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:  # sys.exit("message"): the message to stderr, status 1
            sys.stderr.write(f"{e.code}\n")
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`fluxgraph graph | head`): nothing to add
            pass
    os._exit(code)


GRAPH_FORMAT_NAMES = ["text", "json", "dot", "svg", "png", "mermaid", "html"]


@main.command()
@click.argument("path", default=".", type=click.Path(file_okay=False))
@model_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(GRAPH_FORMAT_NAMES),
    default=None,
    help="Output format. Default: from the --output suffix (.txt .json .dot .gv .svg .png .mmd), else text.",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None, help="Write the graph to FILE.")
@click.option("--focus", metavar="NAME", default=None, help="Diagram one Kustomization (ns/name or name) with its ancestors and dependents.")
@click.option("--depth", type=click.IntRange(min=0), default=None, metavar="N", help="With --focus: at most N hops from the focus each way.")
@click.option(
    "--group-by",
    "group_by",
    type=click.Choice(["none", "namespace", "folder", "parent"]),
    default="none",
    show_default=True,
    help="Subgraphs per Kustomization namespace, per top folder of its path, or per parent Kustomization.",
)
@click.option(
    "--layout",
    type=click.Choice(["auto", "full", "ranked"]),
    default="auto",
    show_default=True,
    help="ranked: dependsOn in ranks, 'applies' as a box per parent, quiet Kustomizations listed; auto: ranked above 30 Kustomizations.",
)
@click.option("--helmreleases", is_flag=True, help="Draw HelmReleases, their dependsOn and chart sources.")
@click.option("--substitution", is_flag=True, help="Draw substituteFrom/valuesFrom ConfigMaps and Secrets and what applies them.")
@click.option(
    "--sources",
    type=click.Choice(["other", "all", "none"]),
    default="other",
    show_default=True,
    help="sourceRef edges: other = all but the cluster's own repository (drawn once, feeding the root).",
)
@click.option("--findings/--no-findings", "with_findings", default=True, show_default=True, help="Run the checks; colour nodes by worst finding.")
@click.option("--legend/--no-legend", default=True, show_default=True, help="Draw the legend.")
def graph(
    path: str,
    fmt: str | None,
    output: str | None,
    focus: str | None,
    depth: int | None,
    group_by: str,
    layout: str,
    helmreleases: bool,
    substitution: bool,
    sources: str,
    with_findings: bool,
    legend: bool,
    **model: Any,
) -> None:
    """Build the reconcile graph of PATH's clusters and print it (text, JSON) or draw it (DOT,
    SVG, PNG, Mermaid). SVG and PNG need Graphviz's `dot`; without it the DOT is written instead
    (to --output with a .dot suffix, or stdout) and the exit status is 2. See docs/diagrams.md."""
    from fluxgraph.render.graph_formats import (
        GRAPH_FORMATS,
        GraphvizError,
        dot_fallback_path,
        format_for_output,
        run_dot,
    )
    fmt = fmt or format_for_output(output) or "text"
    spec = GRAPH_FORMATS[fmt]
    if not spec.diagram and (focus is not None or depth is not None or group_by != "none" or layout != "auto" or helmreleases or substitution or sources != "other"):
        _fail("--focus, --depth, --group-by, --layout, --helmreleases, --substitution and --sources apply to the dot, svg, png and mermaid formats")
    if spec.binary and output is None and sys.stdout.isatty():
        _fail(f"refusing to write {fmt.upper()} to a terminal; use --output FILE or a pipe")
    try:
        settings = _settings(path, model)
        repo = load(path, **settings.load_kwargs())
    except FluxgraphError as e:
        _fail(str(e))
        return
    if not spec.diagram:
        text = json.dumps(to_json(repo.clusters, repo.problems), indent=2, sort_keys=False) + "\n" if fmt == "json" else to_text(repo.clusters)
        _emit(text, output)
        return
    from fluxgraph.render.graph_view import ViewOptions, build_view

    options = ViewOptions(
        focus=focus, depth=depth, group_by=group_by, helmreleases=helmreleases, substitution=substitution, sources=sources, legend=legend,
        layout=layout,
    )
    try:
        findings = []
        if with_findings:
            from fluxgraph.engine import run_checks

            findings = run_checks(repo, **settings.check_kwargs()).findings
        view = build_view(repo.clusters, findings, options)
    except FluxgraphError as e:
        _fail(str(e))
        return
    if spec.graphviz:
        from fluxgraph.render.graph_dot import render_dot

        dot_text = render_dot(view)
        try:
            data = run_dot(dot_text, fmt)
        except GraphvizError as e:
            fallback = dot_fallback_path(output) if output else None
            click.echo(f"fluxgraph: error: {e}", err=True)
            click.echo(f"fluxgraph: wrote the graph as DOT to {fallback or 'stdout'} instead (render it with `dot -T{fmt}`)", err=True)
            _emit(dot_text, fallback)
            sys.exit(2)
        if output:
            try:
                with open(output, "wb") as fh:
                    fh.write(data)
            except OSError as err:
                _fail(f"cannot write {output}: {err.strerror}")
        else:
            click.echo(data, nl=False)
        return
    rendered = spec.render(view)
    for warning in view.warnings:
        click.echo(f"fluxgraph: warning: {warning}", err=True)
    _emit(rendered if isinstance(rendered, str) else rendered.decode("utf-8"), output)


CHECK_FORMATS = ["text", "json", "sarif", "junit", "github", "html"]


@main.command()
@click.argument("path", default=".", type=click.Path(file_okay=False))
@model_options
@click.option(
    "--format",
    "fmts",
    type=click.Choice(CHECK_FORMATS),
    multiple=True,
    help="Report format (repeatable, paired in order with --output). Default: text.",
)
@click.option(
    "--output",
    "-o",
    "outputs",
    type=click.Path(dir_okay=False, writable=True),
    multiple=True,
    help="Write the report to FILE (repeatable, one per --format).",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    default=None,
    help="Lowest severity that makes the exit status 1 (default: error).",
)
@click.option("--enable", "enable", multiple=True, metavar="RULE", help="Run only these rules (repeatable).")
@click.option("--disable", "disable", multiple=True, metavar="RULE", help="Do not run these rules (repeatable).")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False), default=None, help="Report only findings not in this baseline file.")
@click.option("--write-baseline", "write_baseline_path", type=click.Path(dir_okay=False), default=None, help="Write every current finding to FILE as the new baseline.")
@click.option("--verbose", "-v", is_flag=True, help="Text: every list in full, and each finding's whole message.")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour in the text report (auto: on a terminal, unless NO_COLOR is set).",
)
def check(
    path: str,
    fmts: tuple[str, ...],
    outputs: tuple[str, ...],
    fail_on: str | None,
    enable: tuple[str, ...],
    disable: tuple[str, ...],
    baseline_path: str | None,
    write_baseline_path: str | None,
    verbose: bool,
    color: str,
    **model: Any,
) -> None:
    """Check PATH for Flux hazards.

    Exit status: 0 when no finding is at or above --fail-on, 1 when one is, 2 for a usage or
    input error (the message says which file).
    """
    from fluxgraph.engine import analyze
    from fluxgraph.findings import Severity
    from fluxgraph.render.formats import FORMATS
    from fluxgraph.suppress import write_baseline

    formats = list(fmts) or ["text"]
    if outputs and len(outputs) != len(formats):
        _fail(f"{len(formats)} --format but {len(outputs)} --output: give one --output per --format")
    if not outputs and len(formats) > 1:
        _fail("several --format need one --output each (only one report can go to stdout)")
    try:
        settings = _settings(
            path, model, enable=enable, disable=disable, baseline_path=baseline_path, read_baseline_file=not write_baseline_path
        )
        report = analyze(path, **settings.analyze_kwargs())
    except FluxgraphError as e:
        _fail(str(e))
        return
    if write_baseline_path:
        try:
            write_baseline(write_baseline_path, report.findings)
        except OSError as e:
            _fail(f"cannot write {write_baseline_path}: {e.strerror}")
        click.echo(f"fluxgraph: wrote {len(report.findings)} findings to {write_baseline_path}", err=True)
    for i, fmt in enumerate(formats):
        out = outputs[i] if outputs else None
        tty = out is None and sys.stdout.isatty()
        colored = fmt == "text" and (color == "always" or (color == "auto" and tty and not os.environ.get("NO_COLOR")))
        width = shutil.get_terminal_size((100, 24)).columns if tty else 100
        _emit(FORMATS[fmt](report, colored, width=width, verbose=verbose), out, color=colored or None)
    threshold = Severity(fail_on) if fail_on else (settings.config.fail_on or Severity.ERROR)
    sys.exit(0 if write_baseline_path else report.exit_code(threshold))


@main.command("fix")
@click.argument("path", default=".", type=click.Path(file_okay=False))
@model_options
@click.option(
    "--rule",
    "rules",
    multiple=True,
    metavar="RULE",
    help="Fix only the findings of this rule (repeatable; default: every rule with an automatic fix).",
)
@click.option("--write", is_flag=True, help="Edit the files in place (default: print a unified diff and write nothing).")
def fix_cmd(path: str, rules: tuple[str, ...], write: bool, **model: Any) -> None:
    """Repair the findings of PATH that have one mechanical repair (see `fluxgraph rules`:
    column "fix"), changing only the lines they must. Without --write, print the unified diff of
    what would change and write nothing; with --write, edit the files in place (atomically per
    file). Every fix is re-checked first: one that leaves its finding or adds another is not
    made. Files that ruamel.yaml cannot round-trip exactly are left alone and listed.

    Exit status: without --write 1 when there is something to change, 0 when not; with --write
    0 when the files are written; 2 for a usage or input error or a file that cannot be written.
    """
    from fluxgraph.fix import fix_repository

    try:
        settings = _settings(path, model)
        result = fix_repository(path, rules=set(rules) or None, **settings.analyze_kwargs())
    except FluxgraphError as e:
        _fail(str(e))
        return
    for n in result.not_fixed:
        click.echo(f"fluxgraph: not fixed: {n.finding.location} {n.finding.rule}: {n.reason}", err=True)
    for la in result.left_alone:
        click.echo(f"fluxgraph: left alone (does not round-trip exactly): {la.file}: {la.reason}", err=True)
    if not result.changes:
        click.echo("fluxgraph: nothing to fix", err=True)
        sys.exit(0)
    fixed = len(result.fixed)
    summary = (
        f"{len(result.fixes)} fix{'es' if len(result.fixes) != 1 else ''} for {fixed} finding{'s' if fixed != 1 else ''} "
        f"in {len(result.changes)} file{'s' if len(result.changes) != 1 else ''}"
    )
    if not write:
        click.echo(result.diff(), nl=False)
        click.echo(f"fluxgraph: {summary}; run with --write to apply", err=True)
        sys.exit(1)
    failed = result.write()
    for rel, why in failed:
        click.echo(f"fluxgraph: error: cannot write {rel}: {why}", err=True)
    written = len(result.changes) - len(failed)
    click.echo(f"fluxgraph: {summary}; wrote {written} file{'s' if written != 1 else ''}", err=True)
    sys.exit(2 if failed else 0)


@main.command("rules")
@click.argument("rule_id", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="With --format markdown: write README.md and one page per rule into DIR (docs/rules).",
)
def rules_cmd(rule_id: str | None, fmt: str, output_dir: str | None) -> None:
    """List the rules, print one rule's documentation, or generate the rule pages."""
    from fluxgraph.catalog import load_catalog
    from fluxgraph.render.rule_docs import rule_page, rules_index

    catalog = load_catalog()
    if rule_id:
        spec = catalog.get(rule_id)
        if spec is None and rule_id.startswith("diff/"):
            from fluxgraph.catalog import load_verdicts

            spec = load_verdicts().get(rule_id[len("diff/") :])
        if spec is None:
            _fail(f"unknown rule {rule_id!r} (see `fluxgraph rules`)")
            return
        click.echo(rule_page(spec), nl=False)
        return
    if fmt == "markdown":
        if output_dir:
            from pathlib import Path

            out = Path(output_dir)
            out.mkdir(parents=True, exist_ok=True)
            for old in out.glob("*.md"):
                if old.stem not in catalog and old.name != "README.md":
                    old.unlink()
            (out / "README.md").write_text(rules_index(catalog.values()), encoding="utf-8")
            for spec in catalog.values():
                (out / f"{spec.id}.md").write_text(rule_page(spec), encoding="utf-8")
            click.echo(f"fluxgraph: wrote {len(catalog) + 1} pages to {out}", err=True)
        else:
            click.echo(rules_index(catalog.values()), nl=False)
        return
    width = max((len(r) for r in catalog), default=10)
    for spec in catalog.values():  # "fix": `fluxgraph fix` repairs it
        click.echo(f"{spec.id:<{width}}  {spec.severity.value:<7}  {'fix' if spec.autofix else '-':<3}  {spec.summary}")


def _rel_dir(p: str | None) -> str | None:
    if p is None:
        return None
    p = p.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p.strip("/")


@main.command("explain")
@click.argument("target")
@click.argument("path", default=".", type=click.Path(file_okay=False))
@model_options
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("--to", "move_to", metavar="KUSTOMIZATION", default=None, help="Plan moving TARGET to this Kustomization (namespace/name; new or existing).")
@click.option("--to-path", "move_path", metavar="DIR", default=None, help="With --to and a new Kustomization: the folder it will build.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None, help="Write the report to FILE.")
def explain_cmd(
    target: str,
    path: str,
    fmt: str,
    move_to: str | None,
    move_path: str | None,
    output: str | None,
    **model: Any,
) -> None:
    """Explain TARGET (a folder or file of PATH, a Kustomization, or Kind/namespace/name): who
    applies it and how, what it contributes, the variables it needs, who depends on it, the
    findings that touch it, and with --to what moving it would do.

    Exit status: 0, or 2 for a usage or input error (an unknown target).
    """
    from fluxgraph.explain import explain, findings_for, resolve_target
    from fluxgraph.render.explain_report import FORMATS as EXPLAIN_FORMATS

    if move_path is not None and move_to is None:
        _fail("--to-path needs --to")
    try:
        settings = _settings(path, model)
        repo = load(path, **settings.load_kwargs())
        tgt = resolve_target(repo, target)
        findings = findings_for(repo, tgt, **settings.check_kwargs())
        ex = explain(repo, tgt, findings=findings, move_to=move_to, move_path=_rel_dir(move_path))
    except FluxgraphError as e:
        _fail(str(e))
        return
    if not ex.clusters:
        click.echo(f"fluxgraph: {tgt.describe()} is in no cluster's build", err=True)
    _emit(EXPLAIN_FORMATS[fmt](ex), output)


@main.command("move")
@click.argument("target")
@click.argument("path", default=".", type=click.Path(file_okay=False))
@model_options
@click.option("--to", "move_to", metavar="KUSTOMIZATION", required=True, help="The Kustomization TARGET moves to (namespace/name; new or existing).")
@click.option("--to-path", "move_path", metavar="DIR", default=None, help="With a new Kustomization: the folder it will build.")
@click.option("--write", is_flag=True, help="Make the first stage in the files (default: print its unified diff and write nothing).")
def move_cmd(target: str, path: str, move_to: str, move_path: str | None, write: bool, **model: Any) -> None:
    """Make the first stage of moving TARGET to the Kustomization --to, proven by fluxgraph:
    where the move races its old owner's garbage collection, the objects that move are
    annotated `kustomize.toolkit.fluxcd.io/prune: disabled`; the stage is rebuilt in memory and
    compared (only those annotations change, no finding or verdict appears) and the move is
    planned again from it (no race left). Then the next stages are printed: merge them after the
    first has reconciled. A move that races nothing needs no first stage: its steps are printed.

    Exit status: without --write 1 when there is a stage to make, 0 when not; with --write 0
    when it is written; 2 when the stage cannot be made (the reasons are printed), a file cannot
    be written, or for a usage or input error.
    """
    from fluxgraph.move import move_component

    try:
        settings = _settings(path, model)
        result = move_component(path, target, move_to, _rel_dir(move_path), **settings.analyze_kwargs())
    except FluxgraphError as e:
        _fail(str(e))
        return
    for why in result.refused:
        click.echo(f"fluxgraph: move: {why}", err=True)
    for note in result.notes:
        click.echo(f"fluxgraph: move: note: {note}", err=True)
    if result.refused:
        sys.exit(2)

    def later(stage: int) -> None:
        for cm in result.moves:
            plan = cm.after or cm.plan
            when = " (merge after the stage before has reconciled)" if stage > 1 else ""
            click.echo(f"Stage {stage}, cluster {cm.cluster}{when}:", err=True)
            for i, step in enumerate(plan.steps, 1):
                click.echo(f"  {i}. {step}", err=True)
                for n, alt in plan.alternatives:
                    if n == i:
                        click.echo(f"     alternative to step {i}: {alt}", err=True)

    for p in result.proven:
        click.echo(f"fluxgraph: move: proven: {p}", err=True)
    if not result.changes:
        click.echo(f"fluxgraph: move: {result.target}: nothing fluxgraph can write; the steps:", err=True)
        later(1)
        sys.exit(0)
    what = "stage 1 (protect the objects that move)" if result.stage == "protect" else "the move"
    fix = result.as_fix()
    if not write:
        click.echo(fix.diff(), nl=False)
        click.echo(f"fluxgraph: move: {what}, {len(fix.changes)} file(s); run with --write to make it", err=True)
    else:
        failed = fix.write()
        for rel, why in failed:
            click.echo(f"fluxgraph: error: cannot write {rel}: {why}", err=True)
        if failed:
            sys.exit(2)
        click.echo(f"fluxgraph: move: {what} written ({len(fix.changes)} file(s)): merge it and let it reconcile", err=True)
    if result.stage == "protect":
        later(2)
        click.echo(
            "Then run `fluxgraph move` again: with the objects protected the move races nothing, and it writes the move itself.",
            err=True,
        )
        click.echo(
            f"Stage 3: once the move has reconciled, remove the {len([1 for m in result.moves for o in m.plan.objects if o.verdict in ('race', 'recreate')])} "
            "kustomize.toolkit.fluxcd.io/prune: disabled annotation(s) stage 1 added; merge.",
            err=True,
        )
    else:
        for cm in result.moves:
            for step in (cm.after or cm.plan).steps:
                if step.startswith("`flux "):
                    click.echo(f"  then: {step}", err=True)
    sys.exit(0 if write else 1)


@main.command("diff")
@click.argument("path", default=".", type=click.Path(file_okay=False))
@click.option("--base", "base_rev", required=True, metavar="REV", help="The git revision to compare from (e.g. origin/main).")
@click.option("--head", "head_rev", default=None, metavar="REV", help="The git revision to compare to (default: the working tree).")
@click.option(
    "--merge-base",
    "use_merge_base",
    is_flag=True,
    help="Compare from the merge base of --base and --head (or HEAD), as a pull request from it into --base is reviewed.",
)
@model_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "sarif", "github", "mermaid", "dot", "html"]),
    default="text",
    show_default=True,
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    default="error",
    show_default=True,
    help="Lowest severity (of a verdict or a new finding) that makes the exit status 1.",
)
@click.option(
    "--noise",
    is_flag=True,
    help="Keep, in the content diffs, the annotations and labels that tools rewrite on every render (helm.sh/chart, checksum/*).",
)
@click.option("--full", is_flag=True, help="Show the content of added and removed objects too (by default they are listed).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None, help="Write the report to FILE.")
def diff_cmd(
    path: str,
    base_rev: str,
    head_rev: str | None,
    use_merge_base: bool,
    fmt: str,
    fail_on: str,
    noise: bool,
    full: bool,
    output: str | None,
    **model: Any,
) -> None:
    """Compare the clusters of PATH at git revision --base with --head (default: the working
    tree): objects added, removed and moved, what garbage collection will delete and whether a
    move races its old owner's prune, Kustomizations renamed or removed, dependsOn and
    substitution changes, and rule findings new at head.

    Exit status: 0, 1 when a verdict or a new finding is at or above --fail-on, 2 for a usage
    or input error (PATH not in a git repository, an unknown revision).
    """
    from fluxgraph.diff import diff_revisions
    from fluxgraph.findings import Severity
    from fluxgraph.render import diff_annotations
    from fluxgraph.render.diff_graph import render_dot, render_mermaid
    from fluxgraph.render.diff_report import render_json as diff_json
    from fluxgraph.render.diff_report import render_markdown, render_text
    from fluxgraph.render.html_report import render_diff_html

    try:
        if use_merge_base:
            from fluxgraph import gitrev

            base_rev = gitrev.merge_base(path, base_rev, head_rev or "HEAD")
        report = diff_revisions(path, base_rev, head_rev, settings=_settings(path, model), noise=noise, full=full)
    except FluxgraphError as e:
        _fail(str(e))
        return
    threshold = Severity(fail_on)
    renderers = {
        "text": render_text,
        "json": lambda r: diff_json(r, threshold),
        "markdown": render_markdown,
        "sarif": diff_annotations.render_sarif,
        "github": diff_annotations.render_github,
        "mermaid": render_mermaid,
        "dot": render_dot,
        "html": render_diff_html,
    }
    _emit(renderers[fmt](report), output)
    sys.exit(report.exit_code(threshold))


def _emit(text: str, output: str | None, color: bool | None = None) -> None:
    """``text`` to ``output`` or stdout; ``color`` True keeps the escape codes that click strips
    from output that is not a terminal (``--color always``)."""
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as e:
            _fail(f"cannot write {output}: {e.strerror}")
    else:
        click.echo(text, nl=False, color=color)
