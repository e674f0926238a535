"""Host-side git over a hostile repository: a filter driver for every file, an LFS driver, an
fsmonitor program, hooks, attributes that rewrite content (eol, ident, export-subst,
working-tree-encoding), replace refs, a core.worktree pointing elsewhere, a hostile global
config and GIT_* variables in fixbot's environment, and a secret beside them. A control runs
the commands fixbot ran before, with plain git, and shows each trap springs; fixbot's own
(find_root, pin_commit, take_snapshot, apply_to_worktree) spring none and export the commit's
blobs byte for byte."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fixbot.errors import NotAGitRepo
from fixbot.snapshot import (
    apply_to_worktree,
    find_root,
    pin_commit,
    resolve_commit,
    take_snapshot,
)
from fixbot.snapshot.hostgit import SAFE_CONFIG, environment

SECRET = "sk-fixbot-hostgit-canary-5f1e"
FILES = {
    "plain.txt": "plain\n",
    "crlf.txt": "line one\nline two\n",
    "ident.txt": "$Id$\n",
    "subst.txt": "$Format:%H$\n",
    "hidden.txt": "export-ignore would drop me\n",
    "big.bin": "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n",
}
ATTRIBUTES = (
    "* filter=evil\n"
    "*.bin filter=lfs diff=lfs merge=lfs -text\n"
    "crlf.txt eol=crlf\n"
    "ident.txt ident\n"
    "subst.txt export-subst\n"
    "hidden.txt export-ignore\n"
    "utf16.txt working-tree-encoding=UTF-16LE\n"
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def trap(folder: Path, name: str, marks: Path) -> str:
    """A program that records it ran, and with which environment, then passes stdin through."""
    script = folder / name
    script.write_text(f'#!/bin/sh\necho "{name}" >> {marks}\nenv >> {marks}\ncat\n')
    script.chmod(0o755)
    return str(script)


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(a committed repository whose config, attributes and hooks each run a trap, the file
    every trap writes to); fixbot's environment holds a secret and hostile git variables."""
    repo, traps, marks = tmp_path / "repo", tmp_path / "traps", tmp_path / "marks"
    repo.mkdir()
    traps.mkdir()
    for rel, text in {**FILES, ".gitattributes": ATTRIBUTES}.items():
        (repo / rel).write_text(text)
    (repo / "utf16.txt").write_bytes("héllo\n".encode("utf-16-le"))  # committed as UTF-8
    identity = ["-c", "user.name=t", "-c", "user.email=t@invalid"]
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, *identity, "commit", "-qm", "hostile")
    for key, name in (
        ("filter.evil.smudge", "smudge"),
        ("filter.evil.clean", "clean"),
        ("filter.lfs.smudge", "lfs-smudge"),
        ("filter.lfs.clean", "lfs-clean"),
        ("core.fsmonitor", "fsmonitor"),
    ):
        git(repo, "config", key, trap(traps, name, marks))
    git(repo, "config", "filter.evil.required", "true")
    later = (repo / "plain.txt").stat().st_mtime + 60
    os.utime(repo / "plain.txt", (later, later))  # stat-dirty: status must read it through
    for hook in ("post-index-change", "post-checkout", "pre-commit"):
        trap(repo / ".git" / "hooks", hook, marks)
    global_config = tmp_path / "global-gitconfig"
    global_config.write_text(f"[core]\n\tfsmonitor = {trap(traps, 'global', marks)}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", trap(traps, "external-diff", marks))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    return repo, marks


def test_the_control_shows_every_trap_springs_with_plain_git(
    hostile: tuple[Path, Path], tmp_path: Path
) -> None:
    """What fixbot ran before: read-tree and checkout-index in the repository with its own
    environment. The filter, the fsmonitor and the hook run, and see the secret."""
    repo, marks = hostile
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "index")}
    for args in (["read-tree", "HEAD"], ["checkout-index", "--all", f"--prefix={tmp_path}/x/"]):
        subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)
    ran = marks.read_text()
    for name in ("smudge", "lfs-smudge", "fsmonitor", "post-index-change"):
        assert f"{name}\n" in ran, name
    assert SECRET in ran
    assert (tmp_path / "x" / "crlf.txt").read_bytes() == b"line one\r\nline two\r\n"


def test_fixbots_git_runs_none_of_them_and_exports_the_blobs(
    hostile: tuple[Path, Path], tmp_path: Path
) -> None:
    repo, marks = hostile
    assert find_root(repo / ".git" / "..") == repo.resolve()
    commit = pin_commit(repo)  # status: fsmonitor, clean filters, post-index-change
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, (), tmp_path / "work", commit)
    assert not marks.exists(), marks.read_text()
    for rel in [*FILES, ".gitattributes", "utf16.txt"]:
        blob = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "blob", f"{commit}:{rel}"],
            check=True,
            capture_output=True,
        ).stdout
        assert (snapshot.tree / rel).read_bytes() == blob, rel  # LF, $Id$, $Format$, UTF-8
    assert (snapshot.tree / "big.bin").read_text().startswith("version https://git-lfs")


def test_applying_the_fix_to_the_working_tree_runs_no_filter_either(
    hostile: tuple[Path, Path],
) -> None:
    repo, marks = hostile
    diff = "--- a/plain.txt\n+++ b/plain.txt\n@@ -1 +1 @@\n-plain\n+fixed\n"
    apply_to_worktree(repo, diff)
    assert (repo / "plain.txt").read_text() == "fixed\n"
    assert not marks.exists(), marks.read_text()


def test_replace_refs_do_not_swap_a_commit(tmp_path: Path) -> None:
    """refs/replace/ makes plain git read another object in place of one: neither the export nor
    a revision fixbot resolves (a `base` such as HEAD~1) follows it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    identity = ["-c", "user.name=t", "-c", "user.email=t@invalid"]
    git(repo, "init", "-q", "-b", "main")
    commits = []
    for text in ("first", "real", "impostor"):
        (repo / "code.py").write_text(f"{text} = True\n")
        git(repo, "add", "-A")
        git(repo, *identity, "commit", "-qm", text)
        commits.append(git(repo, "rev-parse", "HEAD").strip())
    first, real, impostor = commits
    git(repo, "reset", "-q", "--hard", real)
    git(repo, "replace", real, impostor)  # impostor's parent is real, not first
    assert git(repo, "show", f"{real}:code.py") == "impostor = True\n"  # what plain git shows
    assert git(repo, "rev-parse", "HEAD~1").strip() == real
    assert resolve_commit(repo, "HEAD~1") == first
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, (), tmp_path / "work", real)
    assert (snapshot.tree / "code.py").read_text() == "real = True\n"


def test_a_worktree_elsewhere_in_the_config_is_refused(tmp_path: Path) -> None:
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    repo.mkdir()
    elsewhere.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "core.worktree", str(elsewhere))
    assert git(repo, "rev-parse", "--show-toplevel").strip() == str(elsewhere)
    with pytest.raises(NotAGitRepo):
        find_root(repo)


def test_git_sees_only_its_own_environment(
    hostile: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command fixbot's git runs gets exactly environment(): no secret, no GIT_* of the
    caller (GIT_DIR set to another repository here), no system or global config."""
    repo, _ = hostile
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    wrapper, seen = tmp_path / "bin", tmp_path / "seen"
    wrapper.mkdir()
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout
    (wrapper / "git").write_text(f'#!/bin/sh\nenv -0 > {seen}.$$\nexec {real.strip()} "$@"\n')
    (wrapper / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper}:{os.environ['PATH']}")
    commit = pin_commit(repo)
    (tmp_path / "work").mkdir()
    take_snapshot(repo, (), tmp_path / "work", commit)
    dumps = sorted(tmp_path.glob("seen.*"))
    assert len(dumps) >= 4
    expected = set(environment(tmp_path))
    for dump in dumps:
        variables = dict(item.split("=", 1) for item in dump.read_text().split("\0") if item)
        assert SECRET not in "".join(variables.values())
        shadow = {"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"} & set(variables)
        if shadow:  # the export's private git directory, never the caller's GIT_DIR
            assert "fixbot-shadow-" in variables["GIT_DIR"], variables["GIT_DIR"]
        assert set(variables) - {"PWD", "SHLVL", "_", "OLDPWD"} - shadow == expected, dump
        assert variables["GIT_CONFIG_GLOBAL"] == variables["GIT_CONFIG_SYSTEM"] == "/dev/null"
    assert "core.hooksPath=/dev/null" in SAFE_CONFIG and "core.fsmonitor=false" in SAFE_CONFIG
