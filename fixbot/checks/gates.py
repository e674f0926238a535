"""The checks read per test or by exit status: pytest (the one pytest path) and a plain command.

Results are plain JSON-shaped dicts (they live in checkpointed graph state). fixbot pins the
pytest invocation (the cache off, its own plugin loaded) and reads per-test outcomes from the
report channel (harness.py), never from the exit code or a file the tests could write. A command
(`python -m build`, `mkdocs build`, a legacy test command that is not pytest) is one test,
passed when it exits 0.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from fixbot.checks.part import Part, entry_id
from fixbot.checks.pytest import Launcher, TestRun, out_of_memory, run_pytest, tree_of
from fixbot.checks.pytest import junit_id as test_id
from fixbot.checks.selection import narrowed
from fixbot.commands import CheckSpec, split_words
from fixbot.proc import Completed
from fixbot.records import (
    COMPLETED,
    DETAIL_CAP,
    FAILING,
    LOG_CAP,
    MESSAGE_CAP,
    CaseResult,
    CheckResult,
    CheckRun,
    CheckStatus,
    TestOutcome,
)
from fixbot.sandbox import WORKSPACE, Limits, hit_process_cap

_PYTEST_OPTIONS = (
    "-p",
    "no:cacheprovider",
    "--color=no",
    # No -q: on top of a command's own -q it would silence the summary line the cross-check
    # reads (-qq prints none).
    # A module that cannot be imported (often the environment's fault) must not hide the
    # outcomes of every other test: pytest would stop after collecting.
    "--continue-on-collection-errors",
)
TAMPERING_KEPT = 20  # named disagreements kept in a result, each capped


# Plugins come from the repository's own (protected) configuration, never from whatever happens
# to be installed: `-p NAME` in its pytest config or `pytest_plugins` in its conftest.py.
TEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


class BadTestCommand(Exception):
    """The configured test command cannot be split into an argv."""


def command_argv(test_command: str) -> list[str]:
    try:
        argv = split_words(test_command)
    except ValueError as exc:
        raise BadTestCommand(f"test_command {exc}") from exc
    if is_pytest(argv):
        argv = pinned(argv)
    return argv


def is_pytest(argv: list[str]) -> bool:
    first = Path(argv[0]).name
    return first in {"pytest", "py.test"} or argv[1:3] == ["-m", "pytest"]


def pinned(argv: Sequence[str]) -> list[str]:
    """A pytest command with fixbot's own options (whatever runs it: uv, coverage, python)."""
    return [*argv, *_PYTEST_OPTIONS]


_CONFIG_OPTIONS = ("-c", "--config-file", "--rootdir", "--inifile")


def config_pin(
    argv: Sequence[str], configured: Sequence[str] | None, tree_at: str = WORKSPACE
) -> list[str]:
    """`-c INI --rootdir DIR`: the configuration pytest found for the check on the untouched
    commit, for every later run of it, so that no file a candidate adds (a pytest.ini, read
    before the pyproject.toml it shadows) is ever read instead. [] where the command names
    its own, or nothing was recorded; `-c /dev/null` where the commit had no configuration.
    Recorded as WORKSPACE paths; `tree_at`: where this run sees the tree (a persona's path)."""
    if not configured or len(configured) != 2:
        return []
    if any(w.split("=", 1)[0] in _CONFIG_OPTIONS or w.startswith("-c") for w in argv):
        return []
    rootdir, inifile = (moved(path, tree_at) for path in configured)
    return ["-c", inifile or "/dev/null", f"--rootdir={rootdir}"]


def moved(path: str, tree_at: str) -> str:
    """A path under WORKSPACE as it is where the run sees the tree."""
    if path == WORKSPACE or path.startswith(WORKSPACE + "/"):
        return tree_at + path[len(WORKSPACE) :]
    return path


class Contained(Protocol):
    """One command run in the sandbox over the check's workspace, with this environment added
    (and a larger output cap, for a tool whose every line counts)."""

    def __call__(
        self, argv: list[str], env: dict[str, str] | None = None, *, output_bytes: int = 0
    ) -> Completed: ...


# What a pytest run adds to the whole run's result: why it was tampered with, the test a
# timeout caught running, the tests that hung, the canaries' outcomes, where its modules came
# from (see records.CheckResult).
HARNESS_KEYS = ("tampering", "running", "hung", "canaries", "cut_short", "imports", "compiled")


def pytest_part(
    spec: CheckSpec,
    launcher: Launcher,
    only: Sequence[str] = (),
    *,
    scratch: Path | None = None,
    options: Sequence[str] = (),
    configured: Sequence[str] | None = None,
    laid: Mapping[str, str] | None = None,
) -> Part:
    """The one pytest path: the check's command with fixbot's options pinned (`only`: its
    positional arguments replaced by these node ids, failing first; `options`: appended, e.g.
    the prepared environment's plugins), run with fixbot's plugin over the report channel, each
    test under the check's per-test timeout (`laid`: the tree's code files as fixbot laid them,
    code_digests')."""
    argv = [*pinned(narrowed(spec.argv, only) if only else spec.argv), *options]
    argv += config_pin(spec.argv, configured, tree_of(launcher))
    tested = run_pytest(
        launcher, argv, test_timeout=spec.test_timeout_seconds, scratch=scratch, laid=laid
    )
    result = pytest_result(argv, tested)
    tests = result["tests"]
    failing = sorted(t for t, r in tests.items() if r["outcome"] in FAILING)
    if result["status"] not in COMPLETED:
        why = f"did not complete ({result['status']}, exit code {result['exit_code']})"
    elif failing:
        why = f"{len(failing)} of {len(tests)} tests failed"
        why += f"; {result['cut_short']}" if result.get("cut_short") else ""
    else:
        why = f"{len(tests)} tests passed"
    run = _record(spec, result["status"], result, why, shlex.join(argv))
    run["failing"] = failing
    if only:
        run["selected"] = len(only)
    if tested.configured is not None:
        run["configured"] = list(tested.configured)
    harness = {key: value for key, value in result.items() if key in HARNESS_KEYS}
    return Part(run, tests, [], result["log_tail"], whole=not only, harness=harness)


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
    if run.cut_short:
        result["cut_short"] = run.cut_short
    if run.imports:
        result["imports"] = run.imports
    if run.compiled:
        result["compiled"] = run.compiled
    return result


def command_part(spec: CheckSpec, contained: Contained, limits: Limits) -> Part:
    """A plain command: the whole command is one test, judged by its exit status (output past
    the cap was dropped, head and tail kept: never a reason to discard the verdict)."""
    argv = list(spec.argv)
    result = command_result(argv, contained(argv, dict(TEST_ENV)))
    entry = entry_id(spec)
    tests = {entry: result["tests"][f"command: {shlex.join(argv)}"]} if result["tests"] else {}
    status: CheckStatus = "failed" if result["status"] == "tests_failed" else result["status"]
    code = result["exit_code"]
    why = f"exit code {code}" if status in COMPLETED else f"did not complete ({status})"
    return Part(_record(spec, status, result, why, shlex.join(argv)), tests, [], result["log_tail"])


def command_result(argv: list[str], run: Completed) -> CheckResult:
    """Not pytest: the whole command is the one test fixbot can see, judged by its exit code."""
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
    if hit_process_cap(run.output):
        return "process_limit"
    if out_of_memory(run):
        return "memory_exceeded"
    if run.returncode == 127:
        return "infra_error"  # the test command itself is missing
    return "passed" if run.returncode == 0 else "tests_failed"


def _record(
    spec: CheckSpec, status: CheckStatus, result: Mapping[str, Any], why: str, command: str
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
