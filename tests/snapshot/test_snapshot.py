"""snapshot.py over real git repositories in a temp dir."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from fixbot import proc
from fixbot.commands import gate_files
from fixbot.config import DEFAULT_PROTECTED_PATHS
from fixbot.errors import DirtyWorktree, NotAGitRepo
from fixbot.snapshot import (
    Snapshot,
    find_root,
    fresh_copy,
    is_protected,
    manifest_digest,
    pin_commit,
    repo_files,
    take_snapshot,
)
from fixbot.snapshot.protected import manifest_mismatches, restore_protected

CALC_TEST = "from src.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
FILES = {
    "src/calc.py": "def add(a, b):\n    return a - b\n",
    "src/__init__.py": "",
    "tests/test_calc.py": CALC_TEST,
    "tests/conftest.py": "",
    "pyproject.toml": "[project]\nname = 'calc'\n",
    ".github/workflows/ci.yml": "on: push\n",
    "README.md": "# calc\n",
}
PROTECTED = sorted(
    ["tests/test_calc.py", "tests/conftest.py", "pyproject.toml", ".github/workflows/ci.yml"]
)


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No host git config, no repository above tmp_path, a fixed identity."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-gitconfig"))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Fixbot Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "fixbot@example.invalid")


def git(repo: Path, *args: str) -> str:
    return proc.check(["git", "-C", str(repo), *args], timeout=60).output


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def make_repo(root: Path, files: dict[str, str] = FILES) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def worktree_state(repo: Path) -> tuple[list[tuple[str, bytes]], str]:
    """Every file outside .git with its bytes, and git's own view of the working tree."""
    files = sorted(
        (p.relative_to(repo).as_posix(), p.read_bytes())
        for p in repo.rglob("*")
        if ".git" not in p.relative_to(repo).parts and p.is_file()
    )
    return files, git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored")


def snapshot_of(repo: Path, workdir: Path) -> Snapshot:
    root = find_root(repo)
    commit = pin_commit(root)
    workdir.mkdir()
    return take_snapshot(root, DEFAULT_PROTECTED_PATHS, workdir, commit)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---- find_root and pin_commit


def test_a_plain_folder_is_not_a_git_repo(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    with pytest.raises(NotAGitRepo, match="not a git repository"):
        find_root(folder)
    with pytest.raises(NotAGitRepo):
        pin_commit(folder)


def test_a_missing_folder_is_not_a_git_repo(tmp_path: Path) -> None:
    with pytest.raises(NotAGitRepo, match="not a directory"):
        find_root(tmp_path / "nowhere")
    with pytest.raises(NotAGitRepo):
        pin_commit(tmp_path / "nowhere")


def test_a_repo_without_commits_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "calc.py").write_text("x = 1\n")
    with pytest.raises(NotAGitRepo, match="no commits"):
        pin_commit(repo)


def test_the_top_and_head_are_found_from_a_subfolder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    head = git(repo, "rev-parse", "HEAD").strip()
    root = find_root(repo / "src")
    assert root.resolve() == repo.resolve()
    assert pin_commit(root) == head


@pytest.mark.parametrize(
    "change",
    ["modify", "stage", "delete"],
)
def test_uncommitted_changes_to_tracked_files_are_refused(tmp_path: Path, change: str) -> None:
    repo = make_repo(tmp_path / "repo")
    if change == "delete":
        (repo / "README.md").unlink()
    else:
        (repo / "README.md").write_text("# changed\n")
        if change == "stage":
            git(repo, "add", "README.md")
    with pytest.raises(DirtyWorktree, match="uncommitted changes"):
        pin_commit(repo)


def test_a_staged_change_is_named_in_the_refusal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "README.md").write_text("# changed\n")
    git(repo, "add", "README.md")
    with pytest.raises(DirtyWorktree, match=r"\(README\.md\)"):
        pin_commit(repo)


def test_an_unstaged_change_is_named_in_the_refusal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "README.md").write_text("# changed\n")
    with pytest.raises(DirtyWorktree) as info:
        pin_commit(repo)
    assert "(README.md)" in str(info.value)


def test_untracked_and_ignored_files_are_fine_and_stay_out_of_the_snapshot(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, ".gitignore": "*.log\n"})
    write(repo, {"notes.txt": "scratch\n", "debug.log": "noise\n", "tests/test_new.py": "x\n"})
    snapshot = snapshot_of(repo, tmp_path / "work")
    files = repo_files(snapshot)
    assert "notes.txt" not in files
    assert "debug.log" not in files
    assert "tests/test_new.py" not in files
    assert "tests/test_new.py" not in snapshot.manifest


# ---- take_snapshot


def test_snapshot_is_exactly_the_committed_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)
    git(repo, "add", "run.sh")
    git(repo, "commit", "-q", "-m", "script")
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(repo, "commit", "-q", "-am", "later")
    (repo / "untracked.py").write_text("x = 1\n")
    workdir = tmp_path / "work"
    workdir.mkdir()

    snapshot = take_snapshot(repo, DEFAULT_PROTECTED_PATHS, workdir, first)

    assert snapshot.commit == first
    assert snapshot.tree == workdir / "tree"
    assert repo_files(snapshot) == sorted([*FILES, "run.sh"])
    for rel, text in FILES.items():
        assert (snapshot.tree / rel).read_text() == text
    assert os.access(snapshot.tree / "run.sh", os.X_OK)
    assert not (workdir / "snapshot.tar").exists()
    assert sorted(os.listdir(workdir)) == ["tree"]


def test_manifest_lists_protected_files_with_their_sha256(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    snapshot = snapshot_of(repo, tmp_path / "work")
    assert snapshot.protected == tuple(PROTECTED)
    assert dict(snapshot.manifest) == {rel: sha256(FILES[rel].encode()) for rel in PROTECTED}


def test_a_committed_protected_symlink_is_recorded_as_a_link(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "tests" / "test_link.py").symlink_to("test_calc.py")
    git(repo, "add", "tests/test_link.py")
    git(repo, "commit", "-q", "-m", "link")
    snapshot = snapshot_of(repo, tmp_path / "work")
    assert (snapshot.tree / "tests" / "test_link.py").is_symlink()
    assert snapshot.manifest["tests/test_link.py"] == sha256(b"symlink:test_calc.py")


def test_export_attributes_do_not_change_the_snapshot(tmp_path: Path) -> None:
    attributes = "tests/** export-ignore\nREADME.md export-subst\n"
    repo = make_repo(tmp_path / "repo", {**FILES, ".gitattributes": attributes,
                                         "README.md": "$Format:%H$\n"})  # fmt: skip
    snapshot = snapshot_of(repo, tmp_path / "work")
    assert "tests/test_calc.py" in snapshot.manifest
    assert (snapshot.tree / "README.md").read_text() == "$Format:%H$\n"


PROTECTED_CASES = [
    ("tests/x.py", True),
    ("tests/unit/deep/test_x.py", True),
    ("tests/data/fixture.json", True),
    ("src/tests/test_deep.py", True),
    ("pkg/test_a.py", True),
    ("test_top.py", True),
    ("a_test.py", True),
    ("pkg/sub/b_test.py", True),
    ("conftest.py", True),
    ("sub/conftest.py", True),
    ("a/b/c/conftest.py", True),
    ("pyproject.toml", True),
    ("setup.cfg", True),
    ("tox.ini", True),
    ("pytest.ini", True),
    ("noxfile.py", True),
    (".github/workflows/ci.yml", True),
    (".fixbot.yml", True),
    ("src/calc.py", False),
    ("testing.py", False),
    ("mytest_helpers.py", False),
    ("src/testsuite.py", False),
    ("tests.py", False),
    ("sub/pyproject.toml", True),
    ("pkg/ruff.toml", True),
    ("a/b/setup.cfg", True),
    ("pkg/mypy.ini", True),
    ("lib/sitecustomize.py", True),
    ("src/extra.pth", True),
    ("pkg/tox.ini", True),
    # what pytest reads before pytest.ini, and the file ruff honours even with --isolated
    (".pytest.ini", True),
    ("pytest.toml", True),
    ("pkg/.pytest.toml", True),
    ("sub/.pytest.ini", True),
    (".ignore", True),
    ("src/pkg/.ignore", True),
    ("src/pkg/calc.pyi", False),  # a new stub is the screen's: one that is there is source
    ("docs/.fixbot.yml", False),
    ("test_a.pyc", False),
    ("src/test_a.py.bak", False),
]


@pytest.mark.parametrize(("path", "protected"), PROTECTED_CASES)
def test_is_protected_over_the_default_globs(path: str, protected: bool) -> None:
    assert is_protected(path, DEFAULT_PROTECTED_PATHS) is protected


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("migrations/**", "migrations/0001_init.py", True),
        ("migrations/**", "app/migrations/0001.py", False),
        ("**/migrations/*.py", "app/migrations/0001.py", True),
        ("**/migrations/*.py", "migrations/0001.py", True),
        ("**/migrations/*.py", "app/migrations/sub/0001.py", False),
        ("data/?.csv", "data/a.csv", True),
        ("data/?.csv", "data/ab.csv", False),
        ("data/?.csv", "data//.csv", False),
        ("a.b", "axb", False),  # a dot is a dot, not a regex wildcard
        ("*.py", "pkg/a.py", False),  # one star stays in one folder
    ],
)
def test_glob_semantics(glob: str, path: str, matches: bool) -> None:
    assert is_protected(path, [glob]) is matches


@pytest.mark.parametrize(
    ("files", "named"),
    [
        # ruff's extend, followed from the root config it reads, a chain of them
        ({"ruff.toml": 'extend = "config/base.toml"\n',
          "config/base.toml": 'extend = "more.toml"\n', "config/more.toml": ""},
         ["config/base.toml", "config/more.toml"]),
        ({"pyproject.toml": '[tool.ruff]\nextend = "../outside.toml"\n'}, []),  # not ours
        ({"pyproject.toml": '[tool.ruff]\nextend = "lint.toml"\n'}, []),  # not there
        # mypy's plugins: paths relative to the config, modules where Python finds them
        ({"mypy.ini": "[mypy]\nplugins = tools/plug.py:entry, proj.mypy_plugin\n",
          "tools/plug.py": "", "src/proj/mypy_plugin.py": ""},
         ["tools/plug.py", "src/proj/mypy_plugin.py"]),
        ({"pyproject.toml": '[tool.mypy]\nplugins = ["pydantic.mypy"]\n'}, []),  # installed
        ({"setup.cfg": "[mypy]\nplugins =\n  a.py\n", "a.py": ""}, ["a.py"]),
        ({"README.md": ""}, []),
    ],
)  # fmt: skip
def test_the_files_the_gates_root_configs_name_are_found(
    files: dict[str, str], named: list[str]
) -> None:
    assert gate_files(files.get) == named


def test_the_files_the_gates_root_configs_name_are_in_the_manifest(tmp_path: Path) -> None:
    extra = {"ruff.toml": 'extend = "lint/base.toml"\n', "lint/base.toml": "line-length = 99\n"}
    repo = make_repo(tmp_path / "repo", {**FILES, **extra})
    snapshot = snapshot_of(repo, tmp_path / "work")
    assert "lint/base.toml" in snapshot.manifest and "ruff.toml" in snapshot.manifest


def test_no_globs_protect_nothing() -> None:
    assert not is_protected("tests/test_x.py", [])


# ---- fresh copies, tampering and restoring


def test_fresh_copy_is_independent_of_the_snapshot(tmp_path: Path) -> None:
    snapshot = snapshot_of(make_repo(tmp_path / "repo"), tmp_path / "work")
    copy = fresh_copy(snapshot, tmp_path / "attempt")
    (copy / "src" / "calc.py").write_text("changed\n")
    assert (snapshot.tree / "src" / "calc.py").read_text() == FILES["src/calc.py"]
    with pytest.raises(FileExistsError):
        fresh_copy(snapshot, copy)


def test_an_untouched_copy_has_no_mismatches(tmp_path: Path) -> None:
    snapshot = snapshot_of(make_repo(tmp_path / "repo"), tmp_path / "work")
    assert manifest_mismatches(snapshot, fresh_copy(snapshot, tmp_path / "attempt")) == []


def tamper(workspace: Path, outside: Path) -> None:
    """Modify one protected file, delete one, swap one for a symlink, one for a folder."""
    (workspace / "tests" / "test_calc.py").write_text("def test_add():\n    pass\n")
    (workspace / "pyproject.toml").unlink()
    conftest = workspace / "tests" / "conftest.py"
    conftest.unlink()
    outside.write_text("def pytest_configure(): pass\n")
    conftest.symlink_to(outside)
    ci = workspace / ".github" / "workflows" / "ci.yml"
    ci.unlink()
    ci.mkdir()
    (ci / "inner.txt").write_text("x\n")
    (workspace / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")


def test_manifest_mismatches_names_each_tampered_file(tmp_path: Path) -> None:
    snapshot = snapshot_of(make_repo(tmp_path / "repo"), tmp_path / "work")
    workspace = fresh_copy(snapshot, tmp_path / "attempt")
    tamper(workspace, tmp_path / "outside.py")
    assert manifest_mismatches(snapshot, workspace) == PROTECTED


def test_a_symlink_to_identical_content_is_still_a_mismatch(tmp_path: Path) -> None:
    snapshot = snapshot_of(make_repo(tmp_path / "repo"), tmp_path / "work")
    workspace = fresh_copy(snapshot, tmp_path / "attempt")
    same = tmp_path / "same.py"
    same.write_text(FILES["tests/test_calc.py"])
    (workspace / "tests" / "test_calc.py").unlink()
    (workspace / "tests" / "test_calc.py").symlink_to(same)
    assert manifest_mismatches(snapshot, workspace) == ["tests/test_calc.py"]


def test_restore_protected_puts_every_protected_file_back(tmp_path: Path) -> None:
    snapshot = snapshot_of(make_repo(tmp_path / "repo"), tmp_path / "work")
    workspace = fresh_copy(snapshot, tmp_path / "attempt")
    outside = tmp_path / "outside.py"
    tamper(workspace, outside)

    restore_protected(snapshot, workspace)

    assert manifest_mismatches(snapshot, workspace) == []
    for rel in PROTECTED:
        path = workspace / rel
        assert path.is_file() and not path.is_symlink(), rel
        assert path.read_text() == FILES[rel]
    # The symlink went, not its target; ordinary files keep the attempt's edits.
    assert outside.read_text() == "def pytest_configure(): pass\n"
    assert (workspace / "src" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_restore_protected_recreates_a_deleted_protected_folder(tmp_path: Path) -> None:
    snapshot = snapshot_of(make_repo(tmp_path / "repo"), tmp_path / "work")
    workspace = fresh_copy(snapshot, tmp_path / "attempt")
    for path in sorted((workspace / "tests").iterdir()):
        path.unlink()
    (workspace / "tests").rmdir()
    restore_protected(snapshot, workspace)
    assert manifest_mismatches(snapshot, workspace) == []


def test_restore_protected_restores_a_protected_symlink_as_a_symlink(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "tests" / "test_link.py").symlink_to("test_calc.py")
    git(repo, "add", "tests/test_link.py")
    git(repo, "commit", "-q", "-m", "link")
    snapshot = snapshot_of(repo, tmp_path / "work")
    workspace = fresh_copy(snapshot, tmp_path / "attempt")
    link = workspace / "tests" / "test_link.py"
    link.unlink()
    link.write_text("def test_nothing(): pass\n")
    assert manifest_mismatches(snapshot, workspace) == ["tests/test_link.py"]
    restore_protected(snapshot, workspace)
    assert link.is_symlink() and os.readlink(link) == "test_calc.py"


def test_an_untouched_committed_protected_symlink_is_no_mismatch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "tests" / "test_link.py").symlink_to("test_calc.py")
    git(repo, "add", "tests/test_link.py")
    git(repo, "commit", "-q", "-m", "link")
    snapshot = snapshot_of(repo, tmp_path / "work")
    assert manifest_mismatches(snapshot, fresh_copy(snapshot, tmp_path / "attempt")) == []


def test_manifest_digest_depends_on_content_not_order() -> None:
    a = {"tests/a.py": "1" * 64, "tests/b.py": "2" * 64}
    b = dict(reversed(list(a.items())))
    assert manifest_digest(a) == manifest_digest(b)
    assert manifest_digest(a) != manifest_digest({**a, "tests/b.py": "3" * 64})
    assert len(manifest_digest({})) == 64


def test_the_users_repository_is_never_touched(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, ".gitignore": "*.log\n"})
    write(repo, {"notes.txt": "scratch\n", "debug.log": "noise\n"})
    before = worktree_state(repo)
    head = git(repo, "rev-parse", "HEAD")
    branches = git(repo, "branch", "--list")

    snapshot = snapshot_of(repo, tmp_path / "work")
    workspace = fresh_copy(snapshot, tmp_path / "attempt")
    tamper(workspace, tmp_path / "outside.py")
    manifest_mismatches(snapshot, workspace)
    restore_protected(snapshot, workspace)

    assert worktree_state(repo) == before
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "branch", "--list") == branches
    assert git(repo, "stash", "list") == ""
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
