"""fixbot.diff: sloppy model replies in; canonical diffs or named problems out.

Golden cases live in tests/edits/cases/<name>/:

    before/                 the repository before the patch (a small tree)
    reply.md                the model's whole reply: prose, fences and all
    expected.diff           the canonical diff parse_reply must produce, or
    expected_problems.txt   substrings, one a line, that DiffRejected must contain
    after/                  optional: the files the patch must leave (others unchanged)

parse_reply is given before/'s file list, as fixbot gives it the repository's (a diff of a
missing file may apply to the one existing file its hunks fit; a code block naming no file
goes to the one file that defines its functions).

Every expected.diff is also applied with real `git apply` to a git repository made from
before/, and must leave exactly the contents plan_patch planned.

FIXBOT_REGEN_GOLDEN=1 rewrites every expected.diff from the current output; read each
rewritten file before committing it.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from fixbot.edits import (
    DiffRejected,
    FileChange,
    Patch,
    parse_reply,
    plan_patch,
    render_diff,
    write_changes,
)
from fixbot.edits.fences import extract_diff

CASES = Path(__file__).parent / "cases"
CASE_NAMES = sorted(case.name for case in CASES.iterdir() if case.is_dir())
REGEN = os.environ.get("FIXBOT_REGEN_GOLDEN") == "1"
GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "HOME": os.devnull,
}


def read_tree(root: Path) -> dict[str, str]:
    """Repo-relative path -> content, byte for byte (CRLF and missing final newlines kept)."""
    if not root.is_dir():
        return {}
    return {
        path.relative_to(root).as_posix(): path.read_bytes().decode()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def write_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


def git(repo: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", *args], cwd=repo, input=stdin, capture_output=True, env=GIT_ENV, check=False
    )


def planned_tree(before: dict[str, str], patch: Patch) -> dict[str, str]:
    tree = dict(before)
    for change in patch.changes:
        if change.new is None:
            del tree[change.path]
        else:
            tree[change.path] = change.new
    return tree


def plan_reply(case: Path, before: dict[str, str]) -> Patch:
    """The case's reply as fixbot reads it: its diff, else its other edit shapes."""
    reply = (case / "reply.md").read_bytes().decode()
    return parse_reply(reply, before.get, list(before))


# --- golden cases ------------------------------------------------------------------------


def test_there_are_golden_cases() -> None:
    assert len(CASE_NAMES) >= 25


@pytest.mark.parametrize("name", CASE_NAMES)
def test_golden_case(name: str, tmp_path: Path) -> None:
    case = CASES / name
    before = read_tree(case / "before")
    problems_file = case / "expected_problems.txt"
    if problems_file.exists():
        assert not (case / "expected.diff").exists(), "a case expects a diff or problems"
        check_refused(case, before, problems_file.read_text().splitlines())
    else:
        check_accepted(case, before, tmp_path)


def check_refused(case: Path, before: dict[str, str], expected: list[str]) -> None:
    with pytest.raises(DiffRejected) as rejected:
        plan_reply(case, before)
    message = str(rejected.value)
    assert message == "\n".join(rejected.value.problems)
    for substring in filter(None, expected):
        assert substring in message


def check_accepted(case: Path, before: dict[str, str], tmp_path: Path) -> None:
    patch = plan_reply(case, before)
    expected_file = case / "expected.diff"
    if REGEN:
        expected_file.write_bytes(patch.diff.encode())
    assert patch.diff == expected_file.read_bytes().decode()
    after = planned_tree(before, patch)
    expected_after = read_tree(case / "after")
    assert {path: after[path] for path in expected_after} == expected_after
    assert git_applied(before, patch.diff, tmp_path / "repo") == after


def git_applied(before: dict[str, str], diff: str, repo: Path) -> dict[str, str]:
    """The tree that real `git apply` makes of `before` and `diff`."""
    repo.mkdir()
    write_tree(repo, before)
    assert git(repo, "init", "-q").returncode == 0
    for args in (["apply", "--check", "-"], ["apply", "-"]):
        applied = git(repo, *args, stdin=diff.encode())
        assert applied.returncode == 0, applied.stderr.decode()
    return {path: text for path, text in read_tree(repo).items() if not path.startswith(".git/")}


# --- extract_diff -----------------------------------------------------------------------


def test_extract_diff_none_without_a_diff() -> None:
    assert extract_diff("I could not find the bug.") is None
    assert extract_diff("```python\nprint('--- a')\n```\n") is None
    assert extract_diff("```\nplain text\n```\n") is None


def test_extract_diff_concatenates_diff_and_patch_blocks() -> None:
    reply = "a\n```diff\n--- a/x\n+++ b/x\n```\nb\n~~~patch\n--- a/y\n+++ b/y\n~~~\n"
    assert extract_diff(reply) == "--- a/x\n+++ b/x\n--- a/y\n+++ b/y\n"


def test_extract_diff_crlf_and_indented_fence() -> None:
    reply = "Fix:\r\n  ```diff\r\n  @@\r\n  -a\r\n  +b\r\n  ```\r\nDone.\r\n"
    assert extract_diff(reply) == "@@\n-a\n+b\n"


def test_extract_diff_indented_context_line_does_not_close_the_fence() -> None:
    reply = "```diff\n--- a/README.md\n+++ b/README.md\n@@\n ```\n-old\n+new\n```\n"
    assert extract_diff(reply) == "--- a/README.md\n+++ b/README.md\n@@\n ```\n-old\n+new\n"


def test_extract_diff_unclosed_fence_runs_to_the_end() -> None:
    assert extract_diff("```diff\n@@\n-a\n+b") == "@@\n-a\n+b\n"


def test_extract_diff_takes_an_unfenced_raw_diff() -> None:
    reply = "Here:\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@\n-a\n+b\n"
    assert extract_diff(reply) == "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@\n-a\n+b\n"


# --- render_diff ------------------------------------------------------------------------

ROUND_TRIPS = {
    "modify": [FileChange("a.py", "x = 1\ny = 2\nz = 3\n", "x = 1\ny = 20\nz = 3\n")],
    "create": [FileChange("pkg/new.py", None, "print('hi')\n")],
    "delete": [FileChange("old.py", "gone\n", None)],
    "no final newline": [FileChange("v.txt", "1\n2", "1\n2\n3")],
    "crlf": [FileChange("w.ini", "[a]\r\nk = 1\r\n", "[a]\r\nk = 2\r\nj = 3\r\n")],
    "several": [
        FileChange("a.py", "".join(f"line {i}\n" for i in range(40)), "line 0\nline 39\n"),
        FileChange("b.py", None, ""),
    ],
}


@pytest.mark.parametrize("name", ROUND_TRIPS)
def test_render_then_plan_reproduces_the_changes(name: str) -> None:
    changes = ROUND_TRIPS[name]
    files = {change.path: change.old for change in changes if change.old is not None}
    patch = plan_patch(render_diff(changes), files.get)
    assert patch.changes == tuple(changes)
    assert patch.diff == render_diff(changes)
    assert patch.paths == tuple(change.path for change in changes)


def test_render_diff_git_headers() -> None:
    diff = render_diff(
        [
            FileChange("same.py", "x\n", "x\n"),
            FileChange("new.py", None, "a\n"),
            FileChange("old.py", "b", None),
        ]
    )
    assert diff == (
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n"
        "@@ -0,0 +1 @@\n+a\n"
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-b\n\\ No newline at end of file\n"
    )


# --- DiffRejected and write_changes -----------------------------------------------------


def test_diff_rejected_joins_problems() -> None:
    rejected = DiffRejected("first", "second")
    assert rejected.problems == ("first", "second")
    assert str(rejected) == "first\nsecond"


def test_write_changes_writes_creates_and_deletes(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "old\n", "gone.py": "bye\n"})
    patch = plan_patch(
        render_diff(
            [
                FileChange("a.py", "old\n", "new\n"),
                FileChange("deep/er/b.py", None, "b"),
                FileChange("gone.py", "bye\n", None),
            ]
        ),
        read_tree(tmp_path).get,
    )
    write_changes(patch, tmp_path)
    assert read_tree(tmp_path) == {"a.py": "new\n", "deep/er/b.py": "b"}


def test_write_changes_refuses_a_symlink_out_of_the_root(tmp_path: Path) -> None:
    outside, root = tmp_path / "outside", tmp_path / "repo"
    outside.mkdir()
    root.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    patch = Patch(
        (FileChange("ok.py", None, "fine\n"), FileChange("link/evil.py", None, "x\n")), diff=""
    )
    escaping = re.escape("'link/evil.py' leads outside the repository")
    with pytest.raises(DiffRejected, match=escaping):
        write_changes(patch, root)
    assert list(outside.iterdir()) == []
    assert not (root / "ok.py").exists()


TWICE = (
    "def a(x):\n    import os\n\n    try:\n        x = int(x)\n"
    "    except ValueError:\n        return 0\n    return x\n"
)
TWO_ALIKE = TWICE + "\n\n" + TWICE.replace("def a", "def b")


@pytest.mark.parametrize("start, edited", [(2, 0), (12, 1)])
def test_a_context_that_matches_twice_goes_where_its_header_says(
    tmp_path: Path, start: int, edited: int
) -> None:
    """As git apply takes it (a real project's historical fix, humanize's): the hunk's exact
    context matches two places, and its header names one of them."""
    diff = (
        "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n"
        f"@@ -{start},6 +{start},7 @@\n     import os\n \n     try:\n+        x = x.strip()\n"
        "         x = int(x)\n     except ValueError:\n         return 0\n"
    )
    (tmp_path / "m.py").write_text(TWO_ALIKE)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "fix.diff").write_text(diff)
    subprocess.run(["git", "apply", "fix.diff"], cwd=tmp_path, check=True)
    (change,) = plan_patch(diff, {"m.py": TWO_ALIKE}.get).changes
    assert change.new == (tmp_path / "m.py").read_text()  # where git apply put it
    parts = change.new.split("\n\n\n")
    assert ("x = x.strip()" in parts[edited]) and ("x = x.strip()" not in parts[1 - edited])


def test_a_context_that_matches_twice_away_from_its_header_is_ambiguous() -> None:
    diff = (
        "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n"
        "@@ -7,6 +7,7 @@\n     import os\n \n     try:\n+        x = x.strip()\n"
        "         x = int(x)\n     except ValueError:\n         return 0\n"
    )
    with pytest.raises(DiffRejected, match="ambiguous"):
        plan_patch(diff, {"m.py": TWO_ALIKE}.get)
