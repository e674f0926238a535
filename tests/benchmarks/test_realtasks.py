"""The real-build fix-rate tasks: the window a baseline is shown, the splice of its reply, and
the judge (real git, a real virtualenv, real bubblewrap) on a small project of our own."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import realtasks

from benchmarks.realcorpus import Case, Materialised, Project, fix_lines_shown, load_corpus

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

SOURCE = '''"""A module."""

LIMIT = 10


def helper(x):
    return x + 1


@staticmethod
def clamp(value, low, high):
    """Clamp value into [low, high]."""
    if value < low:
        return low
    if value > high:
        return low
    return value


class Box:
    def size(self):
        return 3
'''
FIXED = SOURCE.replace(
    "        return low\n    return value", "        return high\n    return value"
)
TEST = """from app.core import clamp


def test_clamp_high():
    assert clamp(12, 0, 10) == 10


def test_clamp_low():
    assert clamp(-1, 0, 10) == 0
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def diff_of(old: str, new: str, path: str = "app/core.py") -> str:
    return realtasks.file_diff(path, old, new)


def test_the_changed_lines_of_a_fix_are_its_removed_lines_and_insertions() -> None:
    diff = diff_of(SOURCE, FIXED)
    line = SOURCE.splitlines().index("        return low", 14) + 1
    assert realtasks.changed_lines(diff, "app/core.py") == [(line, 1)]
    assert realtasks.changed_lines(diff, "other.py") == []
    inserted = SOURCE.replace("    return value\n", "    value = int(value)\n    return value\n")
    spans = realtasks.changed_lines(diff_of(SOURCE, inserted), "app/core.py")
    assert spans == [(SOURCE.splitlines().index("    return value") + 1, 0)]


def test_a_request_shows_a_fix_when_it_holds_every_line_the_fix_changes() -> None:
    diff = diff_of(SOURCE, FIXED)
    old = {"app/core.py": SOURCE}
    clamp = SOURCE[SOURCE.index("@staticmethod") : SOURCE.index("class Box")]
    assert fix_lines_shown(diff, old, f"## the code\n```python\n{clamp}```\n") == (1, 1)
    # The callers or the rest of the file, not the changed line: not shown.
    helper = SOURCE[: SOURCE.index("@staticmethod")]
    assert fix_lines_shown(diff, old, helper + "        return high\n") == (0, 1)
    # An insertion counts the line it goes before.
    inserted = SOURCE.replace("    return value\n", "    value = int(value)\n    return value\n")
    insertion = diff_of(SOURCE, inserted)
    assert fix_lines_shown(insertion, old, "    return value\n") == (1, 1)
    assert fix_lines_shown(insertion, old, "    return low\n") == (0, 1)


def test_the_window_is_the_function_around_the_change_with_its_decorators() -> None:
    diff = diff_of(SOURCE, FIXED)
    (window,) = realtasks.windows_of(
        SOURCE, "app/core.py", realtasks.changed_lines(diff, "app/core.py")
    )
    lines = SOURCE.splitlines()
    assert lines[window.first - 1] == "@staticmethod"
    assert lines[window.last - 1] == "    return value"
    assert window.names == ("clamp",)


def test_a_change_outside_any_function_shows_the_lines_around_it() -> None:
    changed = SOURCE.replace("LIMIT = 10", "LIMIT = 11")
    spans = realtasks.changed_lines(diff_of(SOURCE, changed), "app/core.py")
    (window,) = realtasks.windows_of(SOURCE, "app/core.py", spans)
    assert (window.first, window.names) == (1, ())
    assert window.last == 3 + realtasks.CONTEXT


def test_changes_far_apart_are_separate_windows_and_near_ones_one() -> None:
    text = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(40))
    far = text.replace("return 1\n", "return -1\n").replace("return 35\n", "return -35\n")
    windows = realtasks.windows_of(
        text, "m.py", realtasks.changed_lines(diff_of(text, far, "m.py"), "m.py")
    )
    assert [w.names for w in windows] == [("f1",), ("f35",)]
    near = text.replace("return 1\n", "return -1\n").replace("return 2\n", "return -2\n")
    spans = realtasks.changed_lines(diff_of(text, near, "m.py"), "m.py")
    assert [w.names for w in realtasks.windows_of(text, "m.py", spans)] == [("f1", "f2")]


def test_a_reply_is_spliced_over_its_window_and_reindented() -> None:
    text = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n"
    window = realtasks.Window("m.py", 2, 3, ("f",))
    dedented = "def f(self):\n    return 10\n"
    assert realtasks.splice(text, [window], [dedented]) == text.replace("return 1\n", "return 10\n")
    kept = "    def f(self):\n        return 11"
    assert realtasks.splice(text, [window], [kept]) == text.replace("return 1\n", "return 11\n")
    second = realtasks.Window("m.py", 5, 6, ("g",))
    both = realtasks.splice(text, [window, second], [kept, "def g(self):\n    return 22\n"])
    assert both == text.replace("return 1\n", "return 11\n").replace("return 2\n", "return 22\n")
    # a window without a block in the reply stays as it was
    assert realtasks.splice(text, [window, second], [kept]) == realtasks.splice(
        text, [window], [kept]
    )


def test_reply_blocks_are_every_fenced_block_in_order() -> None:
    reply = "Here:\n```python\na = 1\n```\nand\n```\nb = 2\n```\n"
    assert realtasks.reply_blocks(reply) == ["a = 1\n", "b = 2\n"]
    assert realtasks.reply_blocks("a = 1\n") == ["a = 1\n"]
    assert realtasks.reply_blocks("  ") == []


def test_a_docstrings_own_fenced_example_stays_in_its_block() -> None:
    code = (
        'def size(n):\n    """Examples:\n        ```pycon\n        >>> size(1)\n        ```\n'
        '    """\n'
    )
    reply = f"Fixed:\n```python\n{code}```\nand\n```\nb = 2\n```\n"
    assert realtasks.reply_blocks(reply) == [code, "b = 2\n"]


# --- the judge, on a project of our own ---


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> realtasks.RealTask:
    root = tmp_path_factory.mktemp("realtask")
    repo = root / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "app" / "__init__.py").write_text("")
    (repo / "app" / "core.py").write_text(SOURCE)
    (repo / "tests" / "test_core.py").write_text(TEST)
    (repo / "tests" / "test_other.py").write_text("def test_other():\n    assert True\n")
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\npythonpath = ['.']\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "failing")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    project = Project(
        name="demo",
        github="demo/demo",
        mirror="demo+demo",
        kind="pytest",
        setup_command=(),
        test_command="python -m pytest -q",
        ci="",
        properties=(),
    )
    case = Case(
        id="demo-1",
        project=project,
        fix="0" * 40,
        source=("app/core.py",),
        tests=("tests/test_core.py",),
        failing=("tests.test_core.test_clamp_high",),
        batch="first",
        split="dev",
        summary="",
        setup_command=(),
        test_command="python -m pytest -q",
    )
    built = Materialised(case, repo, git(repo, "rev-parse", "HEAD").strip(), diff_of(SOURCE, FIXED))
    real = realtasks.RealTask(case, 0, root, built=built, fixbot_built=built, venv=venv)
    spans = realtasks.changed_lines(built.fix_diff, "app/core.py")
    real.windows = realtasks.windows_of(SOURCE, "app/core.py", spans)
    return real


@pytest.fixture(scope="module")
def judged(task: realtasks.RealTask) -> realtasks.RealJudge:
    judge = realtasks.RealJudge(run_timeout_floor=120)
    baseline = judge.baseline(task)
    assert baseline.collected == 3 and baseline.failed == 1
    assert task.prefilter  # the case's test file shows its failing test failing
    return judge


def pristine(task: realtasks.RealTask) -> None:
    assert git(task.repo, "status", "--porcelain") == ""
    assert (task.repo / "app" / "core.py").read_text() == SOURCE


@needs_bwrap
def test_the_historical_fix_passes_and_the_checkout_is_restored(
    task: realtasks.RealTask, judged: realtasks.RealJudge
) -> None:
    verdict = judged.judge(task, diff_of(SOURCE, FIXED), expected=3)
    assert (verdict.verdict, verdict.fixed) == ("pass", True)
    pristine(task)


@needs_bwrap
def test_a_reply_spliced_into_the_window_is_judged(
    task: realtasks.RealTask, judged: realtasks.RealJudge
) -> None:
    shown = task.shown()
    assert "`app/core.py`, lines" in shown and "def clamp" in shown and "class Box" not in shown
    reply = "```python\ndef clamp(value, low, high):\n    return max(low, min(value, high))\n```"
    diff = task.candidate_diff(reply)
    assert "@staticmethod" in diff  # the decorator was in the window and the reply dropped it
    verdict = judged.judge(task, diff, expected=3)
    assert verdict.fixed
    pristine(task)


@needs_bwrap
@pytest.mark.parametrize(
    ("change", "verdict"),
    [
        ("    return value\n", "fail"),  # the bug kept: the prefilter fails it
        ("    import pytest; pytest.skip('no')\n", "fail"),  # the failing test skipped
        ("    raise SystemExit(0)\n", "fail"),  # the code exits: a failing test
    ],
)
def test_what_is_not_a_pass(
    task: realtasks.RealTask, judged: realtasks.RealJudge, change: str, verdict: str
) -> None:
    new = FIXED.replace('    """Clamp value into [low, high]."""\n', '    """Clamp."""\n' + change)
    result = judged.judge(task, diff_of(SOURCE, new), expected=3)
    assert (result.verdict, result.fixed) == (verdict, False)
    pristine(task)


@needs_bwrap
def test_a_diff_that_touches_a_test_or_adds_a_file(
    task: realtasks.RealTask, judged: realtasks.RealJudge
) -> None:
    test_diff = realtasks.file_diff("tests/test_core.py", TEST, TEST.replace("== 10", "== 0"))
    assert judged.judge(task, test_diff).verdict == "tests-touched"
    conftest = "--- /dev/null\n+++ b/app/conftest.py\n@@ -0,0 +1 @@\n+x = 1\n"
    assert judged.judge(task, conftest).verdict == "tests-touched"
    added = "--- /dev/null\n+++ b/app/extra.py\n@@ -0,0 +1 @@\n+x = 1\n"
    both = diff_of(SOURCE, FIXED) + added
    assert judged.judge(task, both, expected=3).fixed
    assert not (task.repo / "app" / "extra.py").exists()
    pristine(task)
    assert judged.judge(task, "").verdict == "no-change"
    assert (
        judged.judge(task, "--- a/app/core.py\n+++ b/app/core.py\n@@ -1 +1 @@\n-zz\n+y\n").verdict
        == "no-apply"
    )


@needs_bwrap
def test_the_judge_runs_without_network(
    task: realtasks.RealTask, judged: realtasks.RealJudge
) -> None:
    probe = textwrap.dedent(
        """\
        import socket
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=1)
        except OSError as exc:
            NET = "errno %s" % exc.errno
        else:
            NET = "open"
        assert socket.if_nameindex() == [(1, "lo")], socket.if_nameindex()
        """
    )
    new = probe + FIXED
    verdict = judged.judge(task, diff_of(SOURCE, new), expected=3)
    assert verdict.fixed, verdict.output[-2000:]
    pristine(task)


def test_the_real_corpora_partition_the_manifest_and_keep_the_split_rule() -> None:
    cases = load_corpus().cases
    assert all(case.split == ("heldout" if n % 3 == 2 else "dev") for n, case in enumerate(cases))
    parts = [
        set(realtasks.numbers_of(corpus, split))
        for corpus in realtasks.CORPORA
        for split in ("design", "heldout")
    ]
    assert sum(map(len, parts)) == len(cases) and set().union(*parts) == set(range(len(cases)))
    for corpus, batch in realtasks.CORPORA.items():
        held = realtasks.numbers_of(corpus, "heldout")
        assert held and all(cases[n].batch == batch for n in held), corpus
        assert {
            t.number for t in realtasks.tasks_for(corpus, "heldout", None, Path("/nowhere"))
        } == set(held)


def test_a_suite_that_runs_away_with_memory_fails_with_memory_error_not_the_machine(
    tmp_path: Path,
) -> None:
    """The bare check's and the judge's suites run under a cap a process (more-itertools
    fb89af0 without its fix drained an infinite iterator: 17 GB, until the kernel's OOM killer
    took it, stalling everything beside it). A 16 GiB allocation is refused at once under it."""
    if shutil.which("prlimit") is None:
        pytest.skip("needs util-linux's prlimit")
    from benchmarks.realcorpus import MEMORY_CAP_BYTES, run_logged

    grab = [sys.executable, "-c", f"x = bytearray({2 * MEMORY_CAP_BYTES}); print('he' + 'ld')"]
    log = tmp_path / "log"
    step = run_logged(grab, tmp_path, {"PATH": "/usr/bin:/bin"}, 60, log, capped=True)
    assert step.returncode != 0 and "MemoryError" in log.read_text()
    assert "\nheld" not in log.read_text()
