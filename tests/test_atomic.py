"""fluxgraph.atomic: the files fluxgraph writes (fix --write, --write-baseline) are replaced
whole or not at all."""

from __future__ import annotations

import json
import os

import pytest

from fluxgraph import atomic
from fluxgraph.suppress import read_baseline, write_baseline


def test_a_new_file_gets_the_umask_bits(tmp_path):
    old = os.umask(0o027)
    try:
        atomic.replace_file(tmp_path / "new.json", b"{}\n")
    finally:
        os.umask(old)
    assert (tmp_path / "new.json").read_bytes() == b"{}\n"
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o640


def test_an_existing_file_keeps_its_bits(tmp_path):
    f = tmp_path / "kept.json"
    f.write_text("old\n")
    f.chmod(0o600)
    atomic.replace_file(f, b"new\n")
    assert f.read_text() == "new\n" and f.stat().st_mode & 0o777 == 0o600


def test_interrupted_before_the_rename_leaves_the_old_file(tmp_path, monkeypatch):
    f = tmp_path / "kept.json"
    f.write_text("old\n")

    def interrupted(src, dst):
        raise OSError(5, "interrupted between write and rename")

    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(OSError, match="interrupted"):
        atomic.replace_file(f, b"new\n")
    assert f.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"]  # no temporary left


def test_a_leftover_temporary_name_is_skipped(tmp_path):
    f = tmp_path / "b.json"
    (tmp_path / f".b.json.{os.getpid()}-0.fluxgraph-tmp").write_text("someone else's")
    atomic.replace_file(f, b"x\n")
    assert f.read_text() == "x\n"
    assert (tmp_path / f".b.json.{os.getpid()}-0.fluxgraph-tmp").read_text() == "someone else's"


def test_a_baseline_is_written_atomically(tmp_path, monkeypatch):
    path = tmp_path / "baseline.json"
    write_baseline(path, [])
    before = path.read_bytes()
    assert json.loads(before)["findings"] == [] and read_baseline(path) == set()

    def interrupted(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(OSError):
        write_baseline(path, [])
    assert path.read_bytes() == before


def test_a_baseline_path_that_is_a_symlink_writes_the_file_it_names(tmp_path):
    real = tmp_path / "shared" / "baseline.json"
    real.parent.mkdir()
    real.write_text("{}\n")
    link = tmp_path / "baseline.json"
    link.symlink_to(real)
    write_baseline(link, [])
    assert link.is_symlink() and json.loads(real.read_text())["findings"] == []
