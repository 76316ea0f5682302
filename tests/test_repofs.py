import os

import pytest

from fluxgraph.repofs import PathEscape, RepoFS, join, secure_join
from fluxgraph.sourceignore import Matcher, default_patterns, read_patterns


def test_join_refuses_escapes():
    assert join("a/b", "../c") == "a/c"
    assert join("", "./x/") == "x"
    with pytest.raises(PathEscape):
        join("a", "../../etc")
    with pytest.raises(PathEscape):
        join("a", "/etc/passwd")


def test_secure_join_clamps_like_flux():
    assert secure_join("./clusters/prod") == ("clusters/prod", False)
    assert secure_join("/clusters/prod") == ("clusters/prod", False)
    assert secure_join("../../etc") == ("etc", True)


def test_symlink_leaving_root_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("a: 1\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(outside / "secret.yaml", repo / "link.yaml")
    os.symlink(outside, repo / "linkdir")
    (repo / "ok.yaml").write_text("b: 2\n")
    fs = RepoFS(repo)
    assert fs.read_bytes("ok.yaml") == b"b: 2\n"
    with pytest.raises(PathEscape):
        fs.read_bytes("link.yaml")
    with pytest.raises(PathEscape):
        fs.read_bytes("linkdir/secret.yaml")
    assert not fs.is_file("link.yaml")
    assert fs.escapes("linkdir")


def test_default_source_ignore():
    m = Matcher(default_patterns())
    assert m.ignored(".github/workflows/ci.yaml", False)
    assert m.ignored("clusters/prod/.sops.yaml", False)
    assert m.ignored("docs/img.png", False)
    assert not m.ignored("clusters/prod/apps.yaml", False)


def test_sourceignore_scoped_and_negated():
    m = Matcher(default_patterns() + read_patterns("*.yaml\n!keep.yaml\n/top/\n", ("apps",)))
    assert m.ignored("apps/x.yaml", False)
    assert not m.ignored("apps/keep.yaml", False)
    assert not m.ignored("infra/x.yaml", False)
    assert m.ignored("apps/top/a.txt", False)


def test_grouped_matcher_agrees_with_pattern_by_pattern_matching():
    """Matcher joins neighbouring patterns into one regular expression and tries the last group
    first; the verdict must be gitignore's: inside an ignored directory, or else the last
    pattern whose match_exact matches decides."""
    import random

    from fluxgraph.sourceignore import Pattern

    def reference(patterns: list[Pattern], rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if reference(patterns, "/".join(parts[:i]), True):
                return True
        result = False
        for p in patterns:
            if p.match_exact(tuple(parts), is_dir):
                result = not p.negate
        return result

    rnd = random.Random(3)
    names = ["a", "b", "x.yaml", "y.yml", "k.png", ".git", "top", "keep.yaml", "ab"]
    globs = ["*.yaml", "a", "b/", "!keep.yaml", "/top/", "top", "**/x.yaml", "a/**/b", "*a*b*", "!a", "?b", "[ab]", "*.png", "!*.png", "k*"]
    for _ in range(300):
        patterns = default_patterns()
        for _ in range(rnd.randint(1, 4)):
            domain = tuple(rnd.sample(["a", "b"], rnd.randint(0, 1)))
            patterns += read_patterns("\n".join(rnd.choice(globs) for _ in range(rnd.randint(1, 5))), domain)
        m = Matcher(patterns)
        for _ in range(20):
            rel = "/".join(rnd.choice(names) for _ in range(rnd.randint(1, 4)))
            is_dir = rnd.random() < 0.3
            assert m.ignored(rel, is_dir) == reference(patterns, rel, is_dir), (rel, is_dir, patterns)


class _NoKinds(RepoFS):
    """The reference: every entry judged by stat, as before directory entry kinds were used."""

    def _sys_scandir(self, rel):
        return [(name, None) for name in self._sys_listdir(rel)]


def _answers(fs):
    walked = fs.walk_files("")
    probes = sorted(set(walked) | {"link-dir/x.yaml", "out", "out/secret", "loop/loop/a.yaml", "fifo", "deep"})
    return walked, [(p, fs.is_file(p), fs.is_dir(p), fs.escapes(p)) for p in probes], list(fs.escaping), [
        (p.code, p.message) for p in fs.problems
    ]


def test_walk_with_entry_kinds_agrees_with_stat(tmp_path):
    """walk_files takes the kinds of plain files and directories from the directory listing
    (no stat per entry); every answer must stay what stat-by-stat judging gives."""
    root = tmp_path / "repo"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "x.yaml").write_text("a: 1\n")
    (root / "a" / "y.yml").write_text("b: 2\n")
    (root / "link-dir").symlink_to("a/b")
    (root / "link-file.yaml").symlink_to("a/y.yml")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (root / "out").symlink_to(outside)
    (root / "loop").mkdir()
    (root / "loop" / "loop").symlink_to("..")
    (root / "loop" / "a.yaml").write_text("c: 3\n")
    (root / "dangling").symlink_to("nowhere")
    os.mkfifo(root / "fifo")
    deep = root / "deep"
    for _ in range(130):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "z.yaml").write_text("d: 4\n")
    fast, reference = _answers(RepoFS(root)), _answers(_NoKinds(root))
    assert fast == reference
    walked = fast[0]
    assert "a/b/x.yaml" in walked and "link-file.yaml" in walked and "loop/a.yaml" in walked
    assert not any(f.endswith("z.yaml") for f in walked)  # deeper than MAX_PATH_DEPTH


@pytest.mark.parametrize("size", [0, 1, 4095, 65536, 65537, 300_000])
def test_read_gives_the_whole_file_up_to_the_limit(tmp_path, size):
    data = bytes(i % 251 for i in range(size))
    (tmp_path / "f.yaml").write_bytes(data)
    fs = RepoFS(tmp_path)
    assert fs.read_bytes("f.yaml") == data
    for limit in (1, 4096, size, size + 1):
        if limit:
            assert fs._sys_read("f.yaml", limit) == data[:limit]


def test_read_of_a_file_that_grows_after_stat(tmp_path, monkeypatch):
    """The first read is sized by fstat; what was appended since is still read (up to the limit)."""
    (tmp_path / "f.yaml").write_bytes(b"a" * 10 + b"b" * 100_000)

    class Stale:
        st_size = 10  # what fstat said before the file grew

    monkeypatch.setattr(os, "fstat", lambda fd: Stale())
    fs = RepoFS(tmp_path)
    assert fs._sys_read("f.yaml", 1 << 20) == b"a" * 10 + b"b" * 100_000
    assert fs._sys_read("f.yaml", 50_000) == (b"a" * 10 + b"b" * 100_000)[:50_000]
