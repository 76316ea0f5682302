"""The ``fluxgraph`` program as a process: ``cli.entry`` tunes the garbage collector and ends
with ``os._exit`` after flushing, so these check what a shell sees: complete output, the exit
status, files written with ``--output``, and no traceback when the reader goes away."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOMELAB = REPO / "fixtures" / "repos" / "homelab"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fluxgraph", *args], capture_output=True, text=True, timeout=120, check=False)


def test_findings_exit_1_with_the_whole_report_on_stdout():
    proc = run("check", str(HOMELAB), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)  # complete: the last byte was flushed before exiting
    assert report["summary"]["findings"]["error"] >= 1


def test_clean_run_exits_0_and_usage_errors_exit_2():
    assert run("--version").returncode == 0
    proc = run("graph", str(REPO / "no-such-dir"))
    assert proc.returncode == 2
    assert "no such directory" in proc.stderr
    assert run("check", "--no-such-option").returncode == 2


def test_output_file_is_complete(tmp_path):
    out = tmp_path / "graph.json"
    proc = run("graph", str(HOMELAB), "--format", "json", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["clusters"]


def test_reader_closing_the_pipe_early_is_not_a_traceback():
    proc = subprocess.Popen(
        [sys.executable, "-m", "fluxgraph", "graph", str(HOMELAB), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) in (0, 1, 120, -13)
    assert "Traceback" not in err


def test_reader_closing_the_pipe_during_the_command_is_silent():
    """`fluxgraph rules | head -1`: the command itself meets the closed pipe; that is no
    internal error, and nothing is said on stderr."""
    proc = subprocess.run(
        f"{sys.executable} -m fluxgraph rules | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.stdout.startswith("cascading-child-deletion") and proc.stderr == ""


def test_entry_tunes_the_collector_and_leaves_main_alone(monkeypatch):
    import gc

    from fluxgraph import cli

    seen = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(gc.get_threshold()))
    monkeypatch.setattr(cli.os, "_exit", lambda code: seen.append(code))
    before = gc.get_threshold()
    try:
        cli.entry()
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
    assert seen == [cli.GC_THRESHOLDS, 0] and cli.GC_THRESHOLDS[0] == 1_000_000
