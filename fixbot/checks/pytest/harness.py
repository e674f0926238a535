"""pytest as fixbot runs it: with its own plugin loaded (`-p fixbot_harness_<random>`), the
per-test results over the report channel, cross-checked, one status decided.

A test past the per-test timeout fails with the stack where it was, and the suite goes on in the
same process. One that cannot be stopped in-process (it swallowed the timeout, or spins in C)
ends the process: it is recorded as failed with its stack, and the whole suite runs again
without it (`--deselect`), at most `max_reruns` times. The whole-command timeout stays the
backstop; a run that still hits it names the test that was running.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from fixbot.checks.pytest.channel import (
    HARNESS_MOUNT,
    Staged,
    Transport,
    open_channel,
    stage_plugin,
)
from fixbot.checks.pytest.crosscheck import cross_check
from fixbot.checks.pytest.events import ChannelReport, parse_lines
from fixbot.checks.pytest.hangs import cut_short, hung_result, hung_test
from fixbot.commands import DEFAULT_TEST_TIMEOUT
from fixbot.proc import Completed
from fixbot.records import FAILING, CaseResult, CheckStatus
from fixbot.sandbox import WORKSPACE, RunSpec, Sandbox, hit_process_cap

# DEFAULT_TEST_TIMEOUT (60, checks[].test_timeout_seconds' default): seconds per phase (setup,
# call, teardown) of one test when the caller names none; 0 turns the per-test timeout off.
DEFAULT_GRACE = 5.0  # seconds between the escalation steps of a per-test timeout
MAX_RERUNS = 2  # suite reruns after tests that ended their process
HANG_SHARE = 0.5  # of the whole command's timeout, for the tests that hang
_OOM_MARK = "[fixbot: memory limit exceeded]"  # what the Docker backend adds to the output


class Launcher(Protocol):
    """Runs argv with the staged plugin folder visible and the channel passed in."""

    @property
    def transport(self) -> Transport: ...

    @property
    def command_timeout(self) -> float:
        """The whole command's timeout: the hang budget is a share of it."""
        ...

    def harness_path(self, staged: Staged) -> str:
        """Where the command sees the staged folder."""
        ...

    def launch(
        self, argv: Sequence[str], *, env: Mapping[str, str], staged: Staged, fds: Sequence[int]
    ) -> Completed: ...


@dataclass(frozen=True)
class SandboxLauncher:
    """A Launcher over a sandbox: the staged plugin read-only at HARNESS_MOUNT, the pipe's
    writing end inherited where the backend can pass it, else the socket in that folder."""

    sandbox: Sandbox
    spec: RunSpec  # everything but the harness: workspace, outputs, limits, the test env

    @property
    def transport(self) -> Transport:
        return "fd" if self.sandbox.passes_fds else "unix"

    @property
    def command_timeout(self) -> float:
        return float(self.spec.limits.timeout_seconds)

    def harness_path(self, staged: Staged) -> str:
        return HARNESS_MOUNT

    @property
    def tree_at(self) -> str:
        """Where the command sees the tree: WORKSPACE, or the persona's path (the host's)."""
        return self.spec.persona.workspace if self.spec.persona else WORKSPACE

    def launch(
        self, argv: Sequence[str], *, env: Mapping[str, str], staged: Staged, fds: Sequence[int]
    ) -> Completed:
        spec = replace(
            self.spec,
            env={**(self.spec.env or {}), **env},
            fds=tuple(fds),
            mounts=(*self.spec.mounts, (staged.folder, HARNESS_MOUNT)),
        )
        return self.sandbox.run(argv, spec)


@dataclass(frozen=True)
class OneRun:
    completed: Completed
    report: ChannelReport
    problems: list[str]  # the cross-check's
    hung: str | None  # the test that ended the process, when it was one
    lines: tuple[bytes, ...] = ()  # the channel as it came, for tests


def run_once(
    launcher: Launcher, argv: Sequence[str], staged: Staged, *, test_timeout: float, grace: float
) -> OneRun:
    """One pytest process with fixbot's plugin, its channel read, its report cross-checked."""
    run = secrets.token_hex(8)
    settings = {
        "PYTHONPATH": launcher.harness_path(staged),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "FIXBOT_HARNESS_RUN": run,
        "FIXBOT_HARNESS_TIMEOUT": f"{test_timeout:g}",
        "FIXBOT_HARNESS_GRACE": f"{grace:g}",
        # What the tests that hang may take in all, so that the whole command's timeout is never
        # what ends a run of many hanging tests (plugin.py shortens each limit past it).
        "FIXBOT_HARNESS_HANG_BUDGET": f"{HANG_SHARE * launcher.command_timeout:g}",
    }
    full = [*argv, "-p", staged.module]
    with open_channel(launcher.transport, staged, launcher.harness_path(staged)) as channel:
        settings["FIXBOT_HARNESS_CHANNEL"] = channel.address
        completed = launcher.launch(full, env=settings, staged=staged, fds=channel.fds)
    tree_at = tree_of(launcher)
    if tree_at != WORKSPACE:  # what the run said, as at WORKSPACE: one way to read a path
        channel.reader.lines = [relocated(line, tree_at) for line in channel.reader.lines]
        completed = replace(completed, output=relocated_text(completed.output, tree_at))
    report = parse_lines(channel.reader, run)
    problems = cross_check(report, completed)
    lines = tuple(channel.reader.lines)
    return OneRun(completed, report, problems, hung_test(report, completed), lines)


@dataclass(frozen=True)
class TestRun:
    status: CheckStatus
    tests: dict[str, CaseResult]  # by node id, the repository's tests (canaries removed)
    problems: list[str]  # why the run is `tampered` (or, for `no_report`, what went wrong)
    running: str | None  # the test in progress when the whole command timed out
    hung: list[str]  # tests that ended their process and were deselected for a rerun
    runs: list[Completed]
    canaries: dict[str, str]  # role -> reported outcome, for the evidence
    channel_bytes: int = 0  # what came over the channel, every run together
    cut_short: str = ""  # what ran is the result: the run hit its timeout, or a test kept hanging
    # (rootdir, ini file or "") as the sandbox sees them: later runs pinned to them (gates)
    configured: tuple[str, str] | None = None
    imports: dict[str, str] = field(default_factory=dict)  # the last run's: module -> file
    compiled: list[str] = field(default_factory=list)  # every run's: code not laid, that ran


def tree_of(launcher: Launcher) -> str:
    """Where a launcher's command sees the tree (WORKSPACE unless it says otherwise)."""
    found = getattr(launcher, "tree_at", WORKSPACE)
    return found if isinstance(found, str) else WORKSPACE


def relocated(line: bytes, tree_at: str) -> bytes:
    """A channel line with the tree's paths under `tree_at` written as under WORKSPACE (the
    one rule: relocated_text's, on the line's bytes as they are)."""
    text = relocated_text(line.decode("utf-8", "surrogateescape"), tree_at)
    return text.encode("utf-8", "surrogateescape")


def relocated_text(text: str, tree_at: str) -> str:
    """Output with the tree's paths under `tree_at` written as under WORKSPACE."""
    return re.sub(rf"{re.escape(tree_at)}(?=/|\b|$)", WORKSPACE, text)


def out_of_memory(run: Completed) -> bool:
    """The command was killed for memory (SIGKILL from the limit, or the engine's OOM kill)."""
    return run.returncode in (137, -9) or _OOM_MARK in run.output


def decide(one: OneRun, hung: Mapping[str, CaseResult]) -> tuple[CheckStatus, list[str]]:
    """One word for how the run ended, and the problems that made it so."""
    run, report = one.completed, one.report
    problems = list(one.problems)
    if run.timed_out and report.finish is None:
        return ("tampered" if problems else "timeout"), problems
    if hit_process_cap(run.output):  # ended at once: a fork bomb
        return "process_limit", problems
    if out_of_memory(run):
        return "memory_exceeded", problems
    if run.returncode == 127 or "No module named pytest" in run.output[:2000]:
        return "infra_error", problems
    if problems:
        return "tampered", problems
    if report.hello is None:
        return "no_report", ["fixbot's pytest plugin never reported (did it load? pytest 7+)"]
    if report.finish is None and one.hung is None:
        where = report.running or "before any test"
        if run.returncode == 0:
            problems.append(
                f"the process exited 0 but pytest never finished (it stopped at {where})"
            )
            return "tampered", problems
        if "MemoryError" in run.output:
            return "memory_exceeded", problems
        problems.append(f"pytest never finished: the process exited {run.returncode} at {where}")
        return "no_report", problems
    tests = _repository_results(report)
    if not tests and not hung:
        return "no_tests_collected", problems
    failing = any(r["outcome"] in FAILING for r in (*tests.values(), *hung.values()))
    return ("tests_failed" if failing else "passed"), problems


def _repository_results(report: ChannelReport) -> dict[str, CaseResult]:
    canaries = set(report.canaries.values())
    return {t: r for t, r in report.results.items() if t not in canaries}


def run_pytest(
    launcher: Launcher,
    argv: Sequence[str],
    *,
    test_timeout: float | None = None,
    grace: float = DEFAULT_GRACE,
    max_reruns: int = MAX_RERUNS,
    scratch: Path | None = None,
    laid: Mapping[str, str] | None = None,
) -> TestRun:
    """pytest over the launcher with fixbot's plugin; a test that ends its process is recorded
    as failed and the suite runs again without it, at most max_reruns times. `test_timeout`:
    seconds per phase of one test (None: DEFAULT_TEST_TIMEOUT, read when the run starts);
    `laid`: the tree's code files' digests as laid, for the audit (None: it names none)."""
    timeout = DEFAULT_TEST_TIMEOUT if test_timeout is None else test_timeout
    roots = {tree_of(launcher), *([WORKSPACE] if isinstance(launcher, SandboxLauncher) else [])}
    staged = stage_plugin(scratch, None if laid is None else (roots, laid))  # both views
    hung: dict[str, CaseResult] = {}
    runs: list[OneRun] = []
    try:
        while True:
            deselect = [part for nodeid in hung for part in ("--deselect", nodeid)]
            one = run_once(launcher, [*argv, *deselect], staged, test_timeout=timeout, grace=grace)
            runs.append(one)
            if one.hung is None or one.hung in hung or len(runs) > max_reruns:
                break
            hung[one.hung] = hung_result(one.report, one.hung, timeout, grace)
    finally:
        staged.cleanup()
    last = runs[-1]
    problems = [p for one in runs[:-1] for p in one.problems]
    status, last_problems = decide(last, hung)
    problems += last_problems
    if problems and status in ("passed", "tests_failed"):
        status = "tampered"
    if last.hung is not None and status != "tampered":
        status = "timeout"  # still hanging after the reruns: the rest of the suite is unknown
    tests = {**_repository_results(last.report), **hung}
    cut = ""
    if status == "timeout":
        # What ran is the result: the test that was running failed, and the run goes on to
        # the model; the tests that never ran are missing (never a pass).
        status, tests, cut = cut_short(
            last.report, last.hung, tests, launcher.command_timeout, timeout, grace
        )
    canaries: dict[str, str] = {
        role: last.report.results[nodeid]["outcome"]
        for role, nodeid in last.report.canaries.items()
        if nodeid in last.report.results
    }
    running = last.hung or (last.report.running if status == "timeout" or cut else None)
    return TestRun(
        status=status,
        tests=tests,
        problems=problems,
        running=running,
        hung=list(hung),
        runs=[one.completed for one in runs],
        canaries=canaries,
        channel_bytes=sum(one.report.channel_bytes for one in runs),
        cut_short=cut,
        configured=_configured(last.report),
        imports=last.report.imports,
        compiled=sorted({entry for one in runs for entry in one.report.compiled}),
    )


def _configured(report: ChannelReport) -> tuple[str, str] | None:
    hello = report.hello or {}
    rootdir, inifile = hello.get("rootdir"), hello.get("inifile")
    if isinstance(rootdir, str) and rootdir and isinstance(inifile, str):
        return rootdir, inifile
    return None


def junit_id(nodeid: str) -> str:
    """The id pytest's JUnit report gave the same test (`tests.test_x.TestA::test_b[1]` for
    `tests/test_x.py::TestA::test_b[1]`): fixbot's test ids, prompts, policy and lessons keep
    that shape for now; the node id stays in each result."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    classname = ".".join(names[:-1])
    return f"{classname}::{names[-1]}" if classname else names[-1]
