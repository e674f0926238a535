"""The real-build corpus as fix-rate tasks: the same four sides, the real model, one judge.

`python benchmarks/fixrate.py --corpus realbuilds --split design|heldout` measures the cases of
`benchmarks/realbuilds/cases.toml` (benchmarks/realcorpus.py) the way it measures HumanEvalFix:
greedy one-shot, best-of-N at fixbot's number of calls, fix-then-rewrite, and fixbot, the same
model and endpoint, every candidate judged here, outside fixbot. The split `design` is the
manifest's `dev` cases, `heldout` its `heldout` cases (every third case, fixed when the corpus
was written); the task number is the case's place in the manifest.

Per case:

* **Two materialisations of the failing commit** (the fix commit with its source half reverted,
  from the project's git mirror): one for fixbot, untouched, exactly what `realbuilds.py` gives
  it; one for the judge, set up in a plain virtualenv with the case's setup commands (the
  project's CI setup, with the package index: outside any sandbox, as the bare run does).
* **What the baselines are shown.** A real file does not fit a small model's reply (most are
  300-5,500 lines), so a baseline is shown a *window* of each source file: the functions the
  historical fix changed (the innermost `def` around each changed line, its decorators
  included), or 15 lines either side of a change outside any function; regions within 15
  lines of each other are one window. This is the location of the historical fix, which fixbot
  is never given: the baselines get an oracle's hint, the strongest simple script we can
  justify. The reply is each window corrected, one ```python block each in order, spliced back
  over the window's lines (re-indented when the model dropped the window's indentation).
* **The judge.** A candidate diff touching a test path (`judge.is_protected`, any `tests`/`test`
  folder, the case's own test files, `.github/`, `.fixbot.yml`) is `tests-touched`. Otherwise it
  is applied in place to the judge's checkout (the virtualenv's editable install points there),
  the project's own test command runs in bubblewrap without network (`--unshare-net`), and the
  checkout is restored (`git checkout HEAD -- .`, files the diff added removed) whatever
  happened. `pass` needs: the run completed, none of the case's failing tests fails or is
  skipped, nothing else fails (the project's tests known to be flaky upstream aside, as in the
  bare check), and at least as many tests ran as on the failing commit. To save the full
  suite's time on candidates that cannot pass, the case's test files run first (`prefilter`:
  `python -m pytest -p no:cacheprovider FILES`, or `python -m unittest MODULES`); a candidate
  under which a case's failing test still fails there is `fail` without the full run. The
  prefilter is used only where, on the failing commit, it shows every one of the case's failing
  tests failing (checked when the case is prepared).

Nothing here imports fixbot.
"""

from __future__ import annotations

import ast
import difflib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from judge import Verdict, communicate_or_kill, diff_paths, is_protected  # noqa: E402

from benchmarks.realcorpus import (  # noqa: E402
    DEFAULT_MIRRORS,
    Case,
    Materialised,
    canonical_test_id,
    changed_lines,
    is_flaky,
    junit_outcomes,
    load_corpus,
    materialise,
    memory_capped,
    prepare_venv,
    remove_tree,
    unittest_outcomes,
    venv_env,
)

# fixrate's corpus name -> the manifest's batch: `realbuilds`, the corpus as first written;
# `realsmall`, its second batch (small fixes), `realtiny`, its third (tiny fixes), and
# `realmini`, its fourth (tiny fixes in small files), each measured and reported on its own
CORPORA = {"realbuilds": "first", "realsmall": "small", "realtiny": "tiny", "realmini": "mini"}
SPLIT_OF = {"design": "dev", "heldout": "heldout"}  # fixrate's split -> the manifest's
CONTEXT = 15  # lines either side of a change outside any function
TEST_FOLDERS = frozenset({"tests", "test", "testing"})
OUTPUT_CAP = 400_000  # characters of a run's output kept for the failure excerpt
ONESHOT = (
    "The tests fail on this code: `{source}` has a bug, in the lines shown below. Fix the bug; "
    "do not change the tests. Reply with the lines shown, corrected, {reply_shape}, the "
    "indentation kept.\n\n{code}\n"
    "The failing test run (`{command}`):\n```text\n{failure}\n```\n"
)
REWRITE = (
    "The tests fail on this code: `{source}` has a bug in {entry}, in the lines shown below. A "
    "first attempt to fix it did not pass. Do not patch the current code: write it anew from "
    "its specification, what its docstring, its comments and the failing test below say it "
    "must do. Reply with the lines shown, rewritten, {reply_shape}, the indentation kept.\n\n"
    "{code}\n"
    "The failing test run (`{command}`):\n```text\n{failure}\n```\n"
)
# A block closes at a line of backticks alone, not indented past three spaces (CommonMark):
# an indented ```pycon example in a docstring is the code's own. (re.M and re.S with it.)
CLOSING_FENCE = r"(?:(?<=\n)[ \t]{0,3}```[ \t]*$|\Z)"
_PYTHON_BLOCKS = re.compile(
    r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)" + CLOSING_FENCE, re.S | re.I | re.M
)
_UNITTEST_START = re.compile(r"^(?:FAIL|ERROR): ", re.M)
_UNITTEST_END = re.compile(r"^Ran \d+ tests? in ", re.M)
_UNITTEST_SKIPPED = re.compile(r"skipped=(\d+)")


class TaskError(Exception):
    """A case that cannot be measured (its setup failed, its tests do not fail as recorded)."""


# --- the window a baseline is shown ---


@dataclass(frozen=True)
class Window:
    path: str  # relative to the repository
    first: int  # 1-based, inclusive
    last: int
    names: tuple[str, ...]  # the functions it holds (none for a change outside any function)


def windows_of(text: str, path: str, spans: Sequence[tuple[int, int]]) -> tuple[Window, ...]:
    """The functions around `spans` in `text` (else CONTEXT lines around a change outside any
    function); regions that overlap or lie within CONTEXT lines of each other are one window."""
    total = len(text.splitlines())
    functions = [
        node
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    regions: list[tuple[int, int, str]] = []
    for start, count in spans:
        low, high = start, start + max(count, 1) - 1
        around = [f for f in functions if _start(f) <= low and high <= (f.end_lineno or f.lineno)]
        if around:
            inner = max(around, key=lambda f: f.lineno)
            regions.append((_start(inner), inner.end_lineno or inner.lineno, inner.name))
        else:
            regions.append((max(1, low - CONTEXT), min(total, high + CONTEXT), ""))
    merged: list[tuple[int, int, tuple[str, ...]]] = []
    for first, last, name in sorted(regions):
        names = (name,) if name else ()
        if merged and first <= merged[-1][1] + CONTEXT:
            a, b, before = merged.pop()
            merged.append((a, max(b, last), (*before, *names)))
        else:
            merged.append((first, last, names))
    return tuple(Window(path, a, b, tuple(dict.fromkeys(n))) for a, b, n in merged)


def _start(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min([function.lineno, *(d.lineno for d in function.decorator_list)])


def window_text(text: str, window: Window) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[window.first - 1 : window.last])


def reply_blocks(reply: str) -> list[str]:
    """The fenced code blocks of a reply, in order (a reply without any: the whole reply)."""
    found = _PYTHON_BLOCKS.findall(reply)
    return found or ([reply] if reply.strip() else [])


def splice(text: str, windows: Sequence[Window], replies: Sequence[str]) -> str:
    """`text` with each window's lines replaced by its reply (in order; a window without a
    reply unchanged), re-indented to the window's own indentation when a reply's first line
    sits left of it."""
    lines = text.splitlines(keepends=True)
    for window, reply in sorted(zip(windows, replies, strict=False), key=lambda p: -p[0].first):
        shown = lines[window.first - 1 : window.last]
        want = _indent(next((line for line in shown if line.strip()), ""))
        body = reply if reply.endswith("\n") else reply + "\n"
        have = _indent(next((line for line in body.splitlines() if line.strip()), ""))
        if len(have) < len(want):
            body = textwrap.indent(textwrap.dedent(body), want)
        lines[window.first - 1 : window.last] = body.splitlines(keepends=True)
    return "".join(lines)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def file_diff(path: str, old: str, new: str) -> str:
    """A unified diff (git's a/ b/ headers) turning `old` into `new` at `path`."""
    if old == new:
        return ""
    lines = difflib.unified_diff(
        _ended(old).splitlines(keepends=True),
        _ended(new).splitlines(keepends=True),
        f"a/{path}",
        f"b/{path}",
    )
    return "".join(lines)


def _ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


# --- a case as a task ---


@dataclass
class RealTask:
    """One case; `prepare` materialises it (the judge's checkout and virtualenv, fixbot's
    checkout), `close` removes them."""

    case: Case
    number: int
    mirrors: Path
    corpus: str = "realbuilds"
    layout: str = "real"
    scratch: Path | None = None
    built: Materialised | None = None
    fixbot_built: Materialised | None = None
    venv: Path | None = None
    windows: tuple[Window, ...] = ()
    prefilter: bool = False
    setup_seconds: float = 0.0

    @property
    def id(self) -> str:
        return self.case.id

    @property
    def slug(self) -> str:
        return self.case.id

    @property
    def repo(self) -> Path:
        assert self.built is not None, "prepare the task first"
        return self.built.repo

    @property
    def fixbot_repo(self) -> Path:
        assert self.fixbot_built is not None, "prepare the task first"
        return self.fixbot_built.repo

    @property
    def source(self) -> str:
        return self.case.source[0]

    @property
    def entry_point(self) -> str:
        names = tuple(dict.fromkeys(n for w in self.windows for n in w.names))
        return ", ".join(f"`{n}`" for n in names) if names else "the code shown"

    def prepare(self, scratch: Path) -> None:
        self.scratch = scratch
        self.built = materialise(self.case, self.mirrors, scratch / "judge" / "repo")
        self.fixbot_built = materialise(self.case, self.mirrors, scratch / "fixbot" / "repo")
        self.venv = scratch / "judge" / "venv"
        log = scratch / "judge" / "setup.log"
        steps = prepare_venv(self.built.repo, self.venv, self.case, log)
        self.setup_seconds = round(sum(s.seconds for s in steps), 2)
        if not all(s.ok for s in steps):
            failed = next(s for s in steps if not s.ok)
            raise TaskError(f"setup `{failed.command}` exit {failed.returncode}: {failed.tail}")
        if len(self.case.source) != 1:
            raise TaskError(f"{len(self.case.source)} source files: one window each is not built")
        text = (self.built.repo / self.source).read_text(encoding="utf-8")
        spans = changed_lines(self.built.fix_diff, self.source)
        self.windows = windows_of(text, self.source, spans)

    def close(self) -> None:
        if self.scratch is not None:
            remove_tree(self.scratch)

    # what a baseline's prompt shows, and how its reply becomes a diff

    def templates(self) -> tuple[str, str]:
        return ONESHOT, REWRITE

    def shown(self) -> str:
        text = (self.repo / self.source).read_text(encoding="utf-8")
        return "\n".join(
            f"`{w.path}`, lines {w.first}-{w.last}:\n```python\n{_ended(window_text(text, w))}```\n"
            for w in self.windows
        )

    def fields(self) -> dict[str, str]:
        count = len(self.windows)
        shape = (
            "in one ```python block"
            if count == 1
            else f"in {count} ```python blocks, one for each span, in the order shown"
        )
        return {"reply_shape": shape, "command": self.case.test_command}

    def candidate_diff(self, reply: str) -> str:
        old = (self.repo / self.source).read_text(encoding="utf-8")
        blocks = reply_blocks(reply)
        return file_diff(self.source, old, splice(old, self.windows, blocks)) if blocks else ""


def tasks_for(
    corpus: str, split: str, numbers: Sequence[int] | None, mirrors: Path
) -> list[RealTask]:
    cases = load_corpus().cases
    chosen = set(numbers_of(corpus, split))
    return [
        RealTask(case, n, mirrors, corpus)
        for n, case in enumerate(cases)
        if n in chosen and (numbers is None or n in numbers)
    ]


def case_ids() -> tuple[str, ...]:
    """Every case's id, in the manifest's order (a task's number is its place here)."""
    return tuple(case.id for case in load_corpus().cases)


def numbers_of(corpus: str, split: str) -> tuple[int, ...]:
    """The task numbers (places in the manifest) of one corpus's split."""
    batch, wanted = CORPORA[corpus], SPLIT_OF[split]
    cases = load_corpus().cases
    return tuple(n for n, case in enumerate(cases) if case.batch == batch and case.split == wanted)


# --- the judge ---


@dataclass(frozen=True)
class Run:
    returncode: int
    timed_out: bool
    seconds: float
    ran: int
    failing: frozenset[str]
    skipped: frozenset[str]
    skipped_count: int
    output: str


@dataclass
class RealJudge:
    """The project's own test command in its own virtualenv, without network."""

    run_timeout_floor: float = 300.0
    baselines: dict[str, Run] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if shutil.which("bwrap") is None:
            raise SystemExit("judge: needs bubblewrap (apt-get install bubblewrap)")

    def describe(self) -> str:
        return (
            "the project's test command in its own virtualenv, in bubblewrap without network; "
            "the case's test files first (prefilter)"
        )

    def settings(self) -> dict[str, object]:
        return {"kind": "realbuilds", "run_timeout_floor": self.run_timeout_floor}

    def baseline(self, task: RealTask) -> Verdict:
        run = self._suite(task, timeout=3600.0)
        self.baselines[task.id] = run
        expected = {canonical_test_id(t) for t in task.case.failing}
        if run.timed_out or not expected <= run.failing:
            raise TaskError(
                f"the failing commit's run does not fail as recorded: expected {sorted(expected)}, "
                f"failing {sorted(run.failing)[:20]}, timed out {run.timed_out}"
            )
        task.prefilter = expected <= self._prefilter(task, timeout=self._timeout(task)).failing
        return Verdict(
            fixed=False,
            verdict="fail",
            returncode=run.returncode,
            failed=len(run.failing),
            passed=run.ran - len(run.failing),
            collected=run.ran,
            seconds=run.seconds,
            output=run.output,
        )

    def judge(self, task: RealTask, diff: str, expected: int = 1) -> Verdict:
        touched = diff_paths(diff)
        if not diff.strip():
            return Verdict(False, "no-change")
        if any(self.protected(task, path) for path in touched):
            return Verdict(False, "tests-touched", touched=touched)
        repo = task.repo
        applied = subprocess.run(
            ["git", "-C", str(repo), "apply", "--whitespace=nowarn", "-"],
            input=diff if diff.endswith("\n") else diff + "\n",
            capture_output=True,
            text=True,
        )
        if applied.returncode != 0:
            return Verdict(False, "no-apply", touched=touched, output=applied.stderr)
        try:
            verdict = self._judge_applied(task, expected)
        finally:
            restore(repo, added_paths(diff))
        verdict.touched = touched
        return verdict

    def _judge_applied(self, task: RealTask, expected: int) -> Verdict:
        failing = {canonical_test_id(t) for t in task.case.failing}
        timeout = self._timeout(task)
        if task.prefilter:
            early = self._prefilter(task, timeout)
            if early.timed_out or failing & early.failing:
                return self._verdict(early, "hang" if early.timed_out else "fail", prefilter=True)
        run = self._suite(task, timeout)
        flaky = task.case.project.flaky
        others = {t for t in run.failing - failing if not is_flaky(t, flaky)}
        baseline = self.baselines[task.id]
        passed = (
            not run.timed_out
            and not (failing & run.failing)
            and not (failing & run.skipped)
            and not others
            and run.ran >= max(expected, baseline.ran)
            and run.skipped_count <= baseline.skipped_count
            and (run.returncode == 0 or bool(run.failing))
        )
        verdict = "pass" if passed else ("hang" if run.timed_out else "fail")
        return self._verdict(run, verdict, prefilter=False)

    @staticmethod
    def _verdict(run: Run, verdict: str, prefilter: bool) -> Verdict:
        output = run.output if not prefilter else "(prefilter)\n" + run.output
        return Verdict(
            fixed=verdict == "pass",
            verdict=verdict,
            returncode=run.returncode,
            run_timed_out=run.timed_out,
            failed=len(run.failing),
            passed=max(0, run.ran - len(run.failing)),
            collected=run.ran,
            seconds=run.seconds,
            output=output,
        )

    @staticmethod
    def protected(task: RealTask, path: str) -> bool:
        parts = Path(path).parts
        return (
            is_protected(path)
            or path in task.case.tests
            or bool(TEST_FOLDERS & set(parts[:-1]))
            or path.startswith(".github/")
        )

    def _timeout(self, task: RealTask) -> float:
        baseline = self.baselines.get(task.id)
        seconds = baseline.seconds if baseline else 0.0
        return max(self.run_timeout_floor, 4 * seconds + 60)

    def _suite(self, task: RealTask, timeout: float) -> Run:
        argv = shlex.split(task.case.test_command)
        return self._run(task, argv, timeout)

    def _prefilter(self, task: RealTask, timeout: float) -> Run:
        if task.case.kind == "pytest":
            argv = ["python", "-m", "pytest", "-p", "no:cacheprovider", *task.case.tests]
        else:
            modules = [t.removesuffix(".py").replace("/", ".") for t in task.case.tests]
            argv = ["python", "-m", "unittest", *modules]
        return self._run(task, argv, timeout)

    def _run(self, task: RealTask, argv: Sequence[str], timeout: float) -> Run:
        assert task.venv is not None
        with tempfile.TemporaryDirectory(prefix="realjudge-") as scratch:
            report = Path(scratch) / "junit.xml"
            words = list(argv)
            if task.case.kind == "pytest":
                words.append(f"--junit-xml={report}")
            wrapped = ["bwrap", "--dev-bind", "/", "/", "--unshare-net", "--die-with-parent"]
            wrapped += ["--new-session", "--proc", "/proc", "--chdir", str(task.repo), "--"]
            started = time.monotonic()
            child = subprocess.Popen(
                [*wrapped, *memory_capped(words)],
                cwd=task.repo,
                env=venv_env(task.venv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            raw, timed_out = communicate_or_kill(child, timeout)
            seconds = time.monotonic() - started
            output = raw.decode("utf-8", "replace")
            if task.case.kind == "pytest":
                ran, failing, skipped = junit_outcomes(report)
                skipped_count = len(skipped)
            else:
                ran, failing, skipped_count = unittest_counts(output)
                skipped = ()
        if len(output) > OUTPUT_CAP:
            output = output[: OUTPUT_CAP // 4] + "\n[...]\n" + output[-OUTPUT_CAP // 2 :]
        return Run(
            child.returncode,
            timed_out,
            seconds,
            ran,
            frozenset(failing),
            frozenset(skipped),
            skipped_count,
            output,
        )


def unittest_counts(output: str) -> tuple[int, tuple[str, ...], int]:
    """(tests ran, failing ids, skipped count) from unittest's output."""
    ran, failing = unittest_outcomes(output)
    skipped = sum(int(n) for n in _UNITTEST_SKIPPED.findall(output[-2000:]))
    return ran, failing, skipped


def added_paths(diff: str) -> list[str]:
    """The files `diff` creates (`--- /dev/null`)."""
    found, previous = [], ""
    for line in diff.splitlines():
        if line.startswith("+++ ") and previous.startswith("--- /dev/null"):
            found.append(line[len("+++ b/") :] if line.startswith("+++ b/") else line[4:])
        previous = line
    return found


def restore(repo: Path, added: Iterable[str]) -> None:
    """The judge's checkout back to its commit: tracked files as committed, added files gone
    (ignored build outputs of the setup, a venv's editable finder among them, stay)."""
    subprocess.run(["git", "-C", str(repo), "checkout", "--quiet", "HEAD", "--", "."], check=True)
    for path in added:
        target = repo / path
        if target.is_file() or target.is_symlink():
            target.unlink()


def failure_excerpt(task: RealTask, output: str, head: int = 1500, tail: int = 2500) -> str:
    """What a user pastes from the failing run: pytest's FAILURES section, unittest's FAIL and
    ERROR blocks (else the whole output), head and tail kept when long."""
    lines = output.splitlines()
    if task.case.kind == "pytest":
        start = next((i for i, line in enumerate(lines) if "= FAILURES =" in line), 0)
        end = next(
            (i for i, line in enumerate(lines) if "short test summary info" in line), len(lines)
        )
        text = "\n".join(lines[start:end] if start < end else lines)
    else:
        first = _UNITTEST_START.search(output)
        last = _UNITTEST_END.search(output, first.start() if first else 0)
        text = output[first.start() if first else 0 : last.start() if last else len(output)]
    text = text.strip("\n")
    if len(text) > head + tail:
        text = text[:head] + "\n[...]\n" + text[-tail:]
    return text


__all__ = [
    "CLOSING_FENCE",
    "CORPORA",
    "DEFAULT_MIRRORS",
    "RealJudge",
    "RealTask",
    "TaskError",
    "Window",
    "failure_excerpt",
    "numbers_of",
    "reply_blocks",
    "splice",
    "tasks_for",
    "windows_of",
]
