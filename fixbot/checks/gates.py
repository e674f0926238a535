"""The checks read per test or by exit status: pytest (the one pytest path) and a plain command.

Results are plain JSON-shaped dicts (they live in checkpointed graph state). fixbot pins the
pytest invocation: its own report path outside the workspace, the cache off, and reads
per-test outcomes from the JUnit report, never from the exit code. A command (`python -m build`,
`mkdocs build`, a legacy test command that is not pytest) is one test, passed when it exits 0.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from fixbot.checks.junit import parse_junit
from fixbot.checks.part import Part, entry_id
from fixbot.checks.selection import narrowed
from fixbot.checkspec import CheckSpec
from fixbot.proc import Completed
from fixbot.records import (
    COMPLETED,
    DETAIL_CAP,
    FAILING,
    LOG_CAP,
    CaseResult,
    CheckResult,
    CheckRun,
    CheckStatus,
    TestOutcome,
)
from fixbot.sandbox import OUTPUTS, Limits

_PYTEST_OPTIONS = (
    "-p",
    "no:cacheprovider",
    f"--junitxml={OUTPUTS}/junit.xml",
    "-o",
    "junit_family=xunit2",
    "-o",
    "junit_logging=no",
    "--color=no",
    "-q",
)


# Plugins come from the repository's own (protected) configuration, never from whatever happens
# to be installed: `-p NAME` in its pytest config or `pytest_plugins` in its conftest.py.
TEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


_OOM_MARK = "[fixbot: memory limit exceeded]"


class BadTestCommand(Exception):
    """The configured test command cannot be split into an argv."""


def command_argv(test_command: str) -> list[str]:
    try:
        argv = shlex.split(test_command)
    except ValueError as exc:
        raise BadTestCommand(f"test_command cannot be parsed: {exc}") from exc
    if not argv:
        raise BadTestCommand("test_command is empty")
    if is_pytest(argv):
        argv = [*argv, *_PYTEST_OPTIONS]
    return argv


def is_pytest(argv: list[str]) -> bool:
    first = Path(argv[0]).name
    return first in {"pytest", "py.test"} or argv[1:3] == ["-m", "pytest"]


def pinned(argv: Sequence[str]) -> list[str]:
    """A pytest command with fixbot's own options (whatever runs it: uv, coverage, python)."""
    return [*argv, *_PYTEST_OPTIONS]


class Contained(Protocol):
    """One command run in the sandbox over the check's workspace, with this environment added
    (and a larger output cap, for a tool whose every line counts)."""

    def __call__(
        self, argv: list[str], env: dict[str, str] | None = None, *, output_bytes: int = 0
    ) -> Completed: ...


def pytest_part(
    spec: CheckSpec, contained: Contained, outputs: Path, limits: Limits, only: Sequence[str] = ()
) -> Part:
    """The one pytest path: the check's command with fixbot's options pinned (`only`: its
    positional arguments replaced by these node ids, failing first), per-test outcomes read from
    the report. `spec.test_timeout_seconds` is the per-test timeout for the runner to apply."""
    argv = pinned(narrowed(spec.argv, only) if only else spec.argv)
    completed = contained(argv, dict(TEST_ENV))
    result = _test_result(argv, completed, outputs / "junit.xml", limits.output_bytes)
    tests = result["tests"]
    failing = sorted(t for t, r in tests.items() if r["outcome"] in FAILING)
    if result["status"] not in COMPLETED:
        why = f"did not complete ({result['status']}, exit code {result['exit_code']})"
    elif failing:
        why = f"{len(failing)} of {len(tests)} tests failed"
    else:
        why = f"{len(tests)} tests passed"
    run = _record(spec, result["status"], result, why, shlex.join(argv))
    run["failing"] = failing
    if only:
        run["selected"] = len(only)
    return Part(run, tests, [], result["log_tail"], whole=not only)


def command_part(spec: CheckSpec, contained: Contained, limits: Limits) -> Part:
    """A plain command: the whole command is one test, judged by its exit status."""
    argv = list(spec.argv)
    result = _test_result(argv, contained(argv, dict(TEST_ENV)), None, limits.output_bytes)
    entry = entry_id(spec)
    tests = {entry: result["tests"][f"command: {shlex.join(argv)}"]} if result["tests"] else {}
    status: CheckStatus = "failed" if result["status"] == "tests_failed" else result["status"]
    code = result["exit_code"]
    why = f"exit code {code}" if status in COMPLETED else f"did not complete ({status})"
    return Part(_record(spec, status, result, why, shlex.join(argv)), tests, [], result["log_tail"])


def _record(
    spec: CheckSpec, status: CheckStatus, result: CheckResult, why: str, command: str
) -> CheckRun:
    return CheckRun(
        name=spec.name,
        kind=spec.kind,
        gate=spec.gate,
        status=status,
        exit_code=result["exit_code"],
        seconds=result["seconds"],
        summary=why,
        command=command,
    )


def _test_result(
    argv: list[str], run: Completed, report: Path | None, output_cap: int
) -> CheckResult:
    tests: dict[str, CaseResult] | None = {}
    if report is not None:
        tests = parse_junit(report)
    elif not run.timed_out:
        # Not pytest: the whole command is the one test we can see.
        outcome: TestOutcome = "passed" if run.returncode == 0 else "failed"
        tests = {
            f"command: {shlex.join(argv)}": CaseResult(
                outcome=outcome, message=f"exit code {run.returncode}", detail=run.tail(DETAIL_CAP)
            )
        }
    status = run_status(run, tests, output_cap)
    return CheckResult(
        status=status,
        exit_code=run.returncode,
        seconds=round(run.seconds, 3),
        tests=(tests or {}) if status in COMPLETED else {},
        findings=[],
        log_tail=run.tail(LOG_CAP),
        commands=[shlex.join(argv)],
    )


def run_status(run: Completed, tests: dict[str, CaseResult] | None, output_cap: int) -> CheckStatus:
    """One word for how the test run ended; only passed and tests_failed carry a verdict."""
    if run.timed_out:
        return "timeout"
    if run.output_bytes > output_cap:
        return "output_exceeded"
    if run.returncode in (137, -9) or _OOM_MARK in run.output:
        return "memory_exceeded"
    if run.returncode == 127 or "No module named pytest" in run.output[:2000]:
        return "infra_error"  # the test command itself is missing
    if tests is None:
        return "memory_exceeded" if "MemoryError" in run.output else "no_report"
    if not tests:
        return "no_tests_collected"
    return "tests_failed" if any(r["outcome"] in FAILING for r in tests.values()) else "passed"
