"""The test, lint and type gates, run in the sandbox, and their parsed per-item results.

Results are plain JSON-shaped dicts (they live in checkpointed graph state). fixbot pins the
pytest invocation: its own report path outside the workspace, the cache off, and reads
per-test outcomes from the JUnit report, never from the exit code.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Literal, NotRequired, TypedDict

from fixbot.proc import Completed
from fixbot.sandbox import OUTPUTS, WORKSPACE, Limits, Sandbox

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed"]
FAILING: frozenset[str] = frozenset({"failed", "error"})
MESSAGE_CAP = 600
DETAIL_CAP = 4000
LOG_CAP = 4000

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


class CaseResult(TypedDict):
    outcome: Outcome
    message: str  # the assertion or error message, capped
    detail: str  # head and tail of the traceback, capped


class Finding(TypedDict):
    tool: str  # "ruff" | "mypy"
    path: str
    line: int
    code: str
    message: str


Status = Literal[
    "passed",
    "tests_failed",
    "no_tests_collected",
    "no_report",  # pytest wrote no readable report (it crashed, or was made to exit early)
    "timeout",
    "memory_exceeded",
    "output_exceeded",
    "infra_error",  # the test command is missing: the environment, not the code
]
# The statuses under which per-test outcomes can be trusted and compared.
COMPLETED: frozenset[str] = frozenset({"passed", "tests_failed"})
_OOM_MARK = "[fixbot: memory limit exceeded]"


class CheckResult(TypedDict):
    status: Status
    exit_code: int
    seconds: float
    tests: dict[str, CaseResult]
    findings: list[Finding]
    log_tail: str
    commands: list[str]
    log_ref: NotRequired[str]  # where the full result is on disk, once slimmed for the state


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
) -> CheckResult:
    """Run the enabled gates, then the tests, over one workspace; every run a fresh sandbox.

    The gates go first: ruff and mypy never run the repository's code, the tests do, and
    nothing the tests leave in the workspace (a `mypy.py` written at run time) can then stand
    in for a gate. The outputs folder is made in `scratch` (the attempt's capped folder)."""
    outputs = Path(tempfile.mkdtemp(prefix="fixbot-out-", dir=scratch))
    try:

        def contained(argv: list[str], env: dict[str, str] | None = None) -> Completed:
            return sandbox.run(
                argv,
                workspace=workspace,
                outputs=outputs,
                lower=lower,
                prepared=prepared,
                readonly=readonly,
                limits=limits,
                env=env,
            )

        findings: list[Finding] = []
        commands: list[str] = []
        if lint:
            findings += parse_ruff(contained(_RUFF).output)
            commands.append(shlex.join(_RUFF))
        if types:
            findings += parse_mypy(contained(_MYPY).output)
            commands.append(shlex.join(_MYPY))
        argv = command_argv(test_command)
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
        outcome: Outcome = "passed" if run.returncode == 0 else "failed"
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


def run_status(run: Completed, tests: dict[str, CaseResult] | None, output_cap: int) -> Status:
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


REPORT_CAP = 8 * 1024 * 1024


def parse_junit(report: Path) -> dict[str, CaseResult] | None:
    """Per-test outcomes from a pytest JUnit report; None when it is missing or unreadable.

    The candidate could have left anything at that path: never follow a link, never block
    on a FIFO, never read more than REPORT_CAP.
    """
    try:
        fd = os.open(report, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > REPORT_CAP:
            return None
        data = handle.read(REPORT_CAP + 1)
    if len(data) > REPORT_CAP:
        return None
    try:
        root = ET.fromstring(data)  # noqa: S314 - bounded, and parsed without entity expansion
    except ET.ParseError:
        return None
    tests: dict[str, CaseResult] = {}
    for case in root.iter("testcase"):
        test_id = _test_id(case.get("classname", ""), case.get("name", ""))
        tests[test_id] = _case_result(case)
    return tests


def _test_id(classname: str, name: str) -> str:
    return f"{classname}::{name}" if classname else name


def _case_result(case: ET.Element) -> CaseResult:
    for tag, outcome in (("failure", "failed"), ("error", "error")):
        node = case.find(tag)
        if node is not None:
            return CaseResult(
                outcome=outcome,  # type: ignore[typeddict-item]
                message=(node.get("message") or "")[:MESSAGE_CAP],
                detail=_head_tail(node.text or "", DETAIL_CAP),
            )
    skipped = case.find("skipped")
    if skipped is not None:
        kind: Outcome = "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
        return CaseResult(
            outcome=kind, message=(skipped.get("message") or "")[:MESSAGE_CAP], detail=""
        )
    return CaseResult(outcome="passed", message="", detail="")


def _head_tail(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    half = cap // 2
    return f"{text[:half]}\n[... {len(text) - cap} characters elided ...]\n{text[-half:]}"


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


FINDINGS_KEPT = 50


def slim(result: CheckResult, log_ref: str) -> CheckResult:
    """The result as an older attempt keeps it in the state: every failing test with its
    message (what stuck detection compares), no traceback, no passing test, no log tail; the
    full result is on disk at log_ref. Checkpoints then grow by a bounded amount per attempt."""
    return CheckResult(
        status=result["status"],
        exit_code=result["exit_code"],
        seconds=result["seconds"],
        tests={
            t: CaseResult(outcome=r["outcome"], message=r["message"], detail="")
            for t, r in result["tests"].items()
            if r["outcome"] != "passed"
        },
        findings=result["findings"][:FINDINGS_KEPT],
        log_tail="",
        commands=result["commands"],
        log_ref=log_ref,
    )


def failing_tests(result: CheckResult) -> list[str]:
    return sorted(t for t, r in result["tests"].items() if r["outcome"] in FAILING)
