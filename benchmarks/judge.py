"""The fix-rate benchmark's one judge, outside the system under test.

Every side's candidate (fixbot's `fix.diff`, a baseline's corrected file as `git diff`) is a
unified diff, judged the same way:

1. The diff's paths are read: one that touches a test file or the test configuration
   (`tests/`, `test_*.py`, `*_test.py`, `conftest.py`, `pyproject.toml`, `setup.cfg`,
   `pytest.ini`, `tox.ini`, `.fixbot.yml`) is `tests-touched`, and nothing runs. An empty diff is
   `no-change`.
2. A clean copy of the task's pristine repository gets the diff with `git apply`
   (`no-apply` when it does not apply). Every protected file is then compared with the
   pristine one, byte for byte: a difference is `tests-touched` too.
3. `python -m pytest -q -p no:cacheprovider -p judge_timeout` runs in the copy inside
   bubblewrap: no network (`--unshare-all`), a read-only system, only the copy writable, a clean
   environment with pytest's plugin autoload off (no fixbot plugin, no other), and two
   timeouts: `judge_timeout.py` ends a test after `test_timeout` seconds (a failing test), and
   the whole run is killed after `run_timeout` seconds (a failing run). Memory is capped.
4. `pass` needs exit code 0 and at least as many passed tests as the buggy code's run
   collected; else `fail`, or `hang` when a timeout ended it.

Nothing here imports fixbot: the judge must not share code with what it judges.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

HERE = Path(__file__).resolve().parent
PLUGIN = "judge_timeout"
TEST_ARGV = ("-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", PLUGIN)
PROTECTED_NAMES = frozenset({"conftest.py", "pyproject.toml", "setup.cfg", "pytest.ini"})
PROTECTED_NAMES |= {"tox.ini", ".fixbot.yml"}
MEMORY_BYTES = 4 << 30
OUTPUT_CAP = 20_000
_DIFF_PATH = re.compile(r"^(?:diff --git a/(\S+) b/(\S+)|(?:---|\+\+\+) (?:[ab]/)?(\S+))", re.M)
_COUNTS = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
_TEST_TIMEOUT = re.compile(r"^E\s.*\bJudgeTestTimeout:", re.M)
_HARD_TIMEOUT = re.compile(r"^Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\)!", re.M)  # faulthandler


class JudgedTask(Protocol):
    @property
    def repo(self) -> Path: ...  # pristine: copied, never run in

    @property
    def source(self) -> str: ...  # the file under repair


def is_protected(path: str) -> bool:
    parts = Path(path).parts
    name = parts[-1] if parts else path
    return (
        (bool(parts) and parts[0] == "tests")
        or name in PROTECTED_NAMES
        or (name.startswith("test_") and name.endswith(".py"))
        or name.endswith("_test.py")
    )


def diff_paths(diff: str) -> list[str]:
    paths: list[str] = []
    for match in _DIFF_PATH.finditer(diff):
        for path in match.groups():
            if path and path != "/dev/null" and path not in paths:
                paths.append(path)
    return paths


@dataclass
class Verdict:
    fixed: bool
    verdict: str  # pass | fail | hang | no-change | no-apply | tests-touched | error
    returncode: int = -1
    run_timed_out: bool = False  # the whole run was killed
    test_timeouts: int = 0  # tests judge_timeout ended
    passed: int = 0
    failed: int = 0  # failed and errors
    collected: int = 0
    seconds: float = 0.0
    touched: list[str] = field(default_factory=list)
    output: str = ""  # pytest's output (evidence only: never written into rows)

    def brief(self) -> dict[str, object]:
        """The verdict as a row holds it: counts and names, no task text."""
        return {
            "fixed": self.fixed,
            "verdict": self.verdict,
            "returncode": self.returncode,
            "run_timed_out": self.run_timed_out,
            "test_timeouts": self.test_timeouts,
            "passed": self.passed,
            "failed": self.failed,
            "seconds": round(self.seconds, 2),
            "touched": self.touched,
        }


def _counts(output: str) -> dict[str, int]:
    counts = {"passed": 0, "failed": 0}
    lines = [line for line in output.splitlines() if _COUNTS.search(line)]
    for number, kind in _COUNTS.findall(lines[-1] if lines else ""):
        key = "passed" if kind in ("passed", "xpassed") else "failed"
        if kind not in ("skipped", "xfailed"):
            counts[key] += int(number)
    return counts


def _protected_files(root: Path) -> dict[str, bytes]:
    found = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        if relative.startswith((".git/", ".fixbot/")) or not path.is_file():
            continue
        if is_protected(relative):
            found[relative] = path.read_bytes()
    return found


def copy_repo(repo: Path, dest: Path) -> Path:
    shutil.copytree(repo, dest, ignore=shutil.ignore_patterns(".fixbot"), symlinks=True)
    return dest


def working_diff(repo: Path) -> str:
    """`git diff` of a working copy against its commit (what a baseline's candidate changed)."""
    done = subprocess.run(
        ["git", "-C", str(repo), "diff", "--no-color", "--no-ext-diff"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def file_diff(task: JudgedTask, text: str) -> str:
    """The diff that turns the task's file under repair into `text`."""
    with tempfile.TemporaryDirectory(prefix="judge-diff-") as scratch:
        work = copy_repo(task.repo, Path(scratch) / "repo")
        (work / task.source).write_text(text, encoding="utf-8")
        return working_diff(work)


class Judge:
    def __init__(self, test_timeout: float = 15.0, run_timeout: float = 90.0) -> None:
        if shutil.which("bwrap") is None:
            raise SystemExit("judge: needs bubblewrap (apt-get install bubblewrap)")
        self.test_timeout = test_timeout
        self.run_timeout = run_timeout
        self.python = os.path.realpath(sys.executable)

    def describe(self) -> str:
        return (
            f"`python {' '.join(TEST_ARGV)}` in bubblewrap (no network), "
            f"{self.test_timeout:g} s a test, {self.run_timeout:g} s a run"
        )

    def settings(self) -> dict[str, object]:
        return {"test_timeout": self.test_timeout, "run_timeout": self.run_timeout}

    def baseline(self, task: JudgedTask) -> Verdict:
        """The buggy code as built, run the same way (its output is what a user would paste)."""
        return self._judge(task, "", baseline=True, expected=0)

    def judge(self, task: JudgedTask, diff: str, expected: int = 1) -> Verdict:
        """`diff` on a clean copy of the task; `expected`: the tests the buggy code's run had."""
        return self._judge(task, diff, baseline=False, expected=expected)

    def _judge(self, task: JudgedTask, diff: str, baseline: bool, expected: int) -> Verdict:
        touched = diff_paths(diff)
        if not baseline and not diff.strip():
            return Verdict(False, "no-change")
        if any(is_protected(path) for path in touched):
            return Verdict(False, "tests-touched", touched=touched)
        with tempfile.TemporaryDirectory(prefix="judge-") as scratch:
            work = copy_repo(task.repo, Path(scratch) / "repo")
            if diff.strip():
                applied = subprocess.run(
                    ["git", "-C", str(work), "apply", "--whitespace=nowarn", "-"],
                    input=diff if diff.endswith("\n") else diff + "\n",
                    capture_output=True,
                    text=True,
                )
                if applied.returncode != 0:
                    return Verdict(False, "no-apply", touched=touched, output=applied.stderr)
            if _protected_files(work) != _protected_files(task.repo):
                return Verdict(False, "tests-touched", touched=touched)
            verdict = self.run(work)
        verdict.touched = touched
        if verdict.verdict == "pass" and verdict.passed < expected:
            verdict.fixed, verdict.verdict = False, "fail"
        return verdict

    def sandbox_argv(self, work: Path) -> list[str]:
        prefixes = sorted({os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)})
        argv = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all"]
        argv += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for link in ("bin", "lib", "lib64", "sbin"):
            if Path(f"/{link}").is_symlink():
                argv += ["--symlink", os.readlink(f"/{link}"), f"/{link}"]
        for prefix in prefixes:
            argv += ["--ro-bind", prefix, prefix]
        argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        argv += ["--bind", str(work), "/task", "--ro-bind", str(HERE / f"{PLUGIN}.py")]
        argv += [f"/judge/{PLUGIN}.py", "--chdir", "/task", "--clearenv"]
        environment = {
            "PATH": f"{Path(self.python).parent}:/usr/bin:/bin",
            "HOME": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONPATH": "/judge",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "JUDGE_TEST_TIMEOUT": f"{self.test_timeout:g}",
        }
        for name, value in environment.items():
            argv += ["--setenv", name, value]
        return [*argv, "--", self.python, *TEST_ARGV]

    def run(self, work: Path) -> Verdict:
        """The tests in `work`, sandboxed, with both timeouts."""
        started = time.monotonic()
        child = subprocess.Popen(
            self.sandbox_argv(work),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_limit_memory,  # the caller is single-threaded
        )
        raw, timed_out = communicate_or_kill(child, self.run_timeout)
        seconds = time.monotonic() - started
        output = raw.decode("utf-8", "replace")
        if len(output) > OUTPUT_CAP:
            output = output[: OUTPUT_CAP // 4] + "\n[...]\n" + output[-OUTPUT_CAP // 2 :]
        counts = _counts(output)
        test_timeouts = len(_TEST_TIMEOUT.findall(output)) + len(_HARD_TIMEOUT.findall(output))
        if child.returncode == 0 and not timed_out and not counts["failed"]:
            verdict = "pass"
        elif timed_out or test_timeouts or child.returncode in (-signal.SIGKILL, 124):
            verdict = "hang"
        elif "bwrap:" in output and not counts["passed"] + counts["failed"]:
            verdict = "error"  # the sandbox itself failed
        else:
            verdict = "fail"
        return Verdict(
            fixed=verdict == "pass",
            verdict=verdict,
            returncode=child.returncode,
            run_timed_out=timed_out,
            test_timeouts=test_timeouts,
            passed=counts["passed"],
            failed=counts["failed"],
            collected=counts["passed"] + counts["failed"],
            seconds=seconds,
            output=output,
        )


def communicate_or_kill(child: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, bool]:
    """`child`'s output to its end, or to `timeout` and then its whole process group killed
    (it was started in a session of its own); True when it was killed."""
    try:
        raw, _ = child.communicate(timeout=timeout)
        return raw, False
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        raw, _ = child.communicate()
        return raw, True


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def failure_excerpt(output: str, head: int = 1500, tail: int = 2500) -> str:
    """What a user pastes from a failing run: the FAILURES section (else the whole output),
    its head and tail when long."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if "= FAILURES =" in line), 0)
    end = next((i for i, line in enumerate(lines) if "short test summary info" in line), len(lines))
    text = "\n".join(lines[start:end] if start < end else lines).strip("\n")
    if len(text) > head + tail:
        text = text[:head] + "\n[...]\n" + text[-tail:]
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """`python benchmarks/judge.py REPO [DIFF]`: judge a diff (or the repository as it is)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("repo", type=Path)
    parser.add_argument("diff", type=Path, nargs="?")

    @dataclass(frozen=True)
    class Repo:
        repo: Path
        source: str = ""

    args = parser.parse_args(argv)
    judge = Judge()
    task = Repo(args.repo.resolve())
    if args.diff is None:
        verdict = judge.baseline(task)
    else:
        verdict = judge.judge(task, args.diff.read_text(encoding="utf-8"))
    print(verdict.output)
    print(verdict.brief())
    return 0 if verdict.fixed else 1


if __name__ == "__main__":
    raise SystemExit(main())
