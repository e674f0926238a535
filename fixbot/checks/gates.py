"""The test, lint and type gates, run in the sandbox, and their parsed per-item results.

Results are plain JSON-shaped dicts (they live in checkpointed graph state). fixbot pins the
pytest invocation: its own report path outside the workspace, the cache off, and reads
per-test outcomes from the JUnit report, never from the exit code.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fixbot.checks.junit import parse_junit
from fixbot.proc import Completed
from fixbot.records import (
    COMPLETED,
    DETAIL_CAP,
    FAILING,
    LOG_CAP,
    MESSAGE_CAP,
    CaseResult,
    CheckResult,
    CheckStatus,
    Finding,
    TestOutcome,
)
from fixbot.sandbox import OUTPUTS, WORKSPACE, Limits, RunSpec, Sandbox

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
    # A module that cannot be imported (often the environment's fault) must not hide the
    # outcomes of every other test: pytest would stop after collecting.
    "--continue-on-collection-errors",
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


def run_checks(
    sandbox: Sandbox,
    workspace: Path,
    *,
    lower: Path | None = None,
    prepared: Path | None = None,
    test_command: str,
    lint: bool,
    types: bool,
    readonly: list[str],
    limits: Limits,
    scratch: Path | None = None,
    pytest_options: Sequence[str] = (),
) -> CheckResult:
    """Run the enabled gates, then the tests, over one workspace; every run a fresh sandbox.

    The gates go first: ruff and mypy never run the repository's code, the tests do, and
    nothing the tests leave in the workspace (a `mypy.py` written at run time) can then stand
    in for a gate. The outputs folder is made in `scratch` (the attempt's capped folder).
    `pytest_options` are appended to a pytest command (the prepared environment's plugins)."""
    outputs = Path(tempfile.mkdtemp(prefix="fixbot-out-", dir=scratch))
    try:

        def contained(argv: list[str], env: dict[str, str] | None = None) -> Completed:
            spec = RunSpec(workspace, outputs, lower, prepared, readonly, limits, env)
            return sandbox.run(argv, spec)

        findings: list[Finding] = []
        commands: list[str] = []
        if lint:
            findings += parse_ruff(contained(_RUFF).output)
            commands.append(shlex.join(_RUFF))
        if types:
            findings += parse_mypy(contained(_MYPY).output)
            commands.append(shlex.join(_MYPY))
        argv = command_argv(test_command)
        if is_pytest(argv):
            argv += pytest_options
        run = contained(argv, dict(TEST_ENV))
        result = _test_result(argv, run, outputs / "junit.xml", limits.output_bytes)
        result["findings"] += findings
        result["commands"] += commands
        return result
    finally:
        shutil.rmtree(outputs, ignore_errors=True)


_RUFF = ["python", "-m", "ruff", "check", "--output-format=json", "--no-cache", "--exit-zero", "."]
_MYPY = [
    "python",
    "-m",
    "mypy",
    "--no-incremental",
    "--cache-dir=/dev/null",
    "--show-error-codes",
    "--no-color-output",
    "--no-error-summary",
    "--hide-error-context",
    "--no-pretty",
    ".",
]


def _test_result(argv: list[str], run: Completed, report: Path, output_cap: int) -> CheckResult:
    tests: dict[str, CaseResult] | None = {}
    if is_pytest(argv):
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


def _relative(path: str) -> str:
    return path.removeprefix(WORKSPACE + "/").removeprefix("./")


def parse_ruff(output: str) -> list[Finding]:
    start = output.find("[")
    try:
        items = json.loads(output[start:]) if start >= 0 else []
    except json.JSONDecodeError:
        return [
            Finding(
                tool="ruff",
                path="",
                line=0,
                code="ruff-failed",
                message=output.strip()[:MESSAGE_CAP],
            )
        ]
    return [
        Finding(
            tool="ruff",
            path=_relative(item.get("filename", "")),
            line=int((item.get("location") or {}).get("row", 0)),
            code=str(item.get("code") or "syntax"),
            message=str(item.get("message", ""))[:MESSAGE_CAP],
        )
        for item in items
    ]


_MYPY_LINE = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?:\d+:)? error: (?P<msg>.*?)"
    r"(?:  \[(?P<code>[a-z0-9-]+)\])?$"
)


def parse_mypy(output: str) -> list[Finding]:
    findings = []
    for line in output.splitlines():
        match = _MYPY_LINE.match(line)
        if match:
            findings.append(
                Finding(
                    tool="mypy",
                    path=_relative(match["path"]),
                    line=int(match["line"]),
                    code=match["code"] or "error",
                    message=match["msg"][:MESSAGE_CAP],
                )
            )
    if not findings and "error:" in output and "No module named mypy" not in output:
        findings.append(
            Finding(
                tool="mypy",
                path="",
                line=0,
                code="mypy-failed",
                message=output.strip()[:MESSAGE_CAP],
            )
        )
    return findings
