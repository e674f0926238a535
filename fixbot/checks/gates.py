"""The test, lint and type gates, run in the sandbox, and their parsed per-item results.

Results are plain JSON-shaped dicts (they live in checkpointed graph state). fixbot pins the
pytest invocation (the cache off, its own plugin loaded) and reads per-test outcomes from the
report channel (harness.py), never from the exit code or a file the tests could write.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fixbot.checks.harness import (
    SandboxLauncher,
    TestRun,
    out_of_memory,
    run_pytest,
)
from fixbot.checks.harness import junit_id as test_id
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
from fixbot.sandbox import WORKSPACE, Limits, RunSpec, Sandbox

_PYTEST_OPTIONS = ("-p", "no:cacheprovider", "--color=no", "-q")
TAMPERING_KEPT = 20  # named disagreements kept in a result, each capped


# Plugins come from the repository's own (protected) configuration, never from whatever happens
# to be installed: `-p NAME` in its pytest config or `pytest_plugins` in its conftest.py.
TEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


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
    test_timeout: float | None = None,
    pytest_options: Sequence[str] = (),
) -> CheckResult:
    """Run the enabled gates, then the tests, over one workspace; every run a fresh sandbox.

    The gates go first: ruff and mypy never run the repository's code, the tests do, and
    nothing the tests leave in the workspace (a `mypy.py` written at run time) can then stand
    in for a gate. The outputs folder and the staged plugin are made in `scratch` (the
    attempt's capped folder). `test_timeout`: seconds each phase of one test may take (None:
    DEFAULT_TEST_TIMEOUT, 60); `pytest_options`: appended to a pytest command (the seam
    for the prepared environment's plugins)."""
    outputs = Path(tempfile.mkdtemp(prefix="fixbot-out-", dir=scratch))
    try:

        def spec(env: dict[str, str] | None = None) -> RunSpec:
            return RunSpec(workspace, outputs, lower, prepared, readonly, limits, env)

        def contained(argv: list[str], env: dict[str, str] | None = None) -> Completed:
            return sandbox.run(argv, spec(env))

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
            launcher = SandboxLauncher(sandbox, spec(dict(TEST_ENV)))
            tested = run_pytest(launcher, argv, test_timeout=test_timeout, scratch=scratch)
            result = pytest_result(argv, tested)
        else:
            result = command_result(argv, contained(argv, dict(TEST_ENV)))
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


def pytest_result(argv: list[str], run: TestRun) -> CheckResult:
    """A pytest run as fixbot records it: results keyed by JUnit-style id (each keeping its
    node id), the named disagreements of a tampered run, the test a timeout caught running,
    the tests that hung, the canaries' outcomes. Output past the cap was dropped, head and tail
    kept; it never discards the report, which came over the channel."""
    last = run.runs[-1]
    tests: dict[str, CaseResult] = {}
    for nodeid, case in run.tests.items():
        key = test_id(nodeid)
        if key not in tests or tests[key]["outcome"] not in FAILING:  # a clash keeps the failure
            tests[key] = case
    result = CheckResult(
        status=run.status,
        exit_code=last.returncode,
        seconds=round(sum(r.seconds for r in run.runs), 3),
        tests=tests if run.status in COMPLETED else {},
        findings=[],
        log_tail=last.tail(LOG_CAP),
        commands=[shlex.join(argv)],
        canaries=run.canaries,
    )
    if run.status == "tampered":
        result["tampering"] = [p[:MESSAGE_CAP] for p in run.problems[:TAMPERING_KEPT]]
    elif run.problems and run.status not in COMPLETED:
        said = "".join(f"fixbot: {problem[:MESSAGE_CAP]}\n" for problem in run.problems[:3])
        result["log_tail"] = said + result["log_tail"][len(said) :]
    if run.running:
        result["running"] = run.running
    if run.hung:
        result["hung"] = run.hung
    return result


def command_result(argv: list[str], run: Completed) -> CheckResult:
    """Not pytest: the whole command is the one test fixbot can see, judged by its exit code
    (output past the cap was dropped, head and tail kept: never a reason to discard it)."""
    tests: dict[str, CaseResult] = {}
    if not run.timed_out:
        outcome: TestOutcome = "passed" if run.returncode == 0 else "failed"
        tests[f"command: {shlex.join(argv)}"] = CaseResult(
            outcome=outcome, message=f"exit code {run.returncode}", detail=run.tail(DETAIL_CAP)
        )
    status = command_status(run)
    return CheckResult(
        status=status,
        exit_code=run.returncode,
        seconds=round(run.seconds, 3),
        tests=tests if status in COMPLETED else {},
        findings=[],
        log_tail=run.tail(LOG_CAP),
        commands=[shlex.join(argv)],
    )


def command_status(run: Completed) -> CheckStatus:
    """One word for how a command that is not pytest ended."""
    if run.timed_out:
        return "timeout"
    if out_of_memory(run):
        return "memory_exceeded"
    if run.returncode == 127:
        return "infra_error"  # the test command itself is missing
    return "passed" if run.returncode == 0 else "tests_failed"


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
